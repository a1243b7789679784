/*
 * The part of the CUDA driver API that the cuda backend uses, declared here
 * so that libweft builds without the CUDA toolkit: libcuda.so.1 is
 * dlopen'ed and these entry points resolved by name. Values and layouts are
 * those of CUDA 13's cuda.h (all of them stable since CUDA 12.1), and each
 * symbol is the versioned one that cuda.h maps the plain name to.
 */
#ifndef WEFT_RUNTIME_CUDA_DRIVER_H
#define WEFT_RUNTIME_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_FOUND = 500,
};

/* CUdevice_attribute */
typedef int CUdevice_attribute;
enum {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
  CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132,
};

enum { CU_STREAM_DEFAULT = 0x0, CU_STREAM_NON_BLOCKING = 0x1 };
enum { CU_STREAM_WAIT_VALUE_GEQ = 0x0 };
enum { CU_EVENT_DISABLE_TIMING = 0x2 };
enum { CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1 };
#define CU_IPC_HANDLE_SIZE 64
typedef struct CUipcMemHandle {
  char reserved[CU_IPC_HANDLE_SIZE];
} CUipcMemHandle;

/* CUfunction_attribute */
typedef int CUfunction_attribute;
enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

/* Launches with attributes (cuLaunchKernelEx, CUDA 12.0). */
typedef int CUlaunchAttributeID;
enum {
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
};
typedef union CUlaunchAttributeValue {
  char pad[64];
  struct {
    unsigned int x, y, z;
  } clusterDim;
  int programmaticStreamSerializationAllowed;
} CUlaunchAttributeValue;
typedef struct CUlaunchAttribute {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned int numAttrs;
} CUlaunchConfig;
_Static_assert(sizeof(CUlaunchAttribute) == 72 && sizeof(CUlaunchConfig) == 56 &&
                   offsetof(CUlaunchConfig, hStream) == 32,
               "CUlaunchAttribute and CUlaunchConfig as in cuda.h");

/* CUjit_option */
typedef int CUjit_option;
enum {
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

/* Virtual memory management. The enums are C enums in cuda.h, so int-sized
 * members of the structs below. */
typedef int CUmemAllocationHandleType;
enum { CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1 };
typedef int CUmemAllocationGranularity_flags;
enum { CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0 };
typedef int CUmulticastGranularity_flags;
enum { CU_MULTICAST_GRANULARITY_MINIMUM = 0x0 };
enum { CU_MEM_LOCATION_TYPE_DEVICE = 0x1 };
enum { CU_MEM_ALLOCATION_TYPE_PINNED = 0x1 };
enum { CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3 };

typedef struct CUmemLocation {
  int type;
  int id;
} CUmemLocation;

typedef struct CUmemAllocationProp {
  int type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void *win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc {
  CUmemLocation location;
  int flags;
} CUmemAccessDesc;

typedef struct CUmulticastObjectProp {
  unsigned int numDevices;
  size_t size;
  unsigned long long handleTypes;
  unsigned long long flags;
} CUmulticastObjectProp;

/* Tensor maps (sm_90 bulk tensor copies). cuda.h declares CUtensorMap
 * 128-byte aligned; the driver needs 64 (cuTensorMapEncodeTiled), which is
 * what weft_tensor_desc gives it. */
typedef struct CUtensorMap {
  _Alignas(64) cuuint64_t opaque[16];
} CUtensorMap;
typedef int CUtensorMapDataType;
enum {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
};
typedef int CUtensorMapInterleave;
enum { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
typedef int CUtensorMapSwizzle;
enum {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
};
typedef int CUtensorMapL2promotion;
enum { CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3 };
typedef int CUtensorMapFloatOOBfill;
enum { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };

typedef int CUstreamCaptureMode;
enum { CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1, CU_STREAM_CAPTURE_MODE_RELAXED = 2 };
typedef int CUstreamCaptureStatus;
enum { CU_STREAM_CAPTURE_STATUS_NONE = 0 };
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUkern_st *CUkernel;
typedef struct CUDA_KERNEL_NODE_PARAMS {
  CUfunction func;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  void **kernelParams;
  void **extra;
  CUkernel kern;  /* used where func is NULL */
  CUcontext ctx;  /* ignored where func is set */
} CUDA_KERNEL_NODE_PARAMS;

/* X(field, symbol, parameters): every entry point the backend calls. */
#define WEFT_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuGetErrorName, "cuGetErrorName", (CUresult, const char **))               \
  X(cuGetErrorString, "cuGetErrorString", (CUresult, const char **))           \
  X(cuInit, "cuInit", (unsigned int))                                          \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int *))                             \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice *, int))                             \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute",                              \
    (int *, CUdevice_attribute, CUdevice))                                     \
  X(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", (char *, int, CUdevice))       \
  X(cuDeviceGetByPCIBusId, "cuDeviceGetByPCIBusId", (CUdevice *, const char *)) \
  X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", (int *, CUdevice, CUdevice)) \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice)) \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))     \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                           \
  X(cuStreamCreate, "cuStreamCreate", (CUstream *, unsigned int))              \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream))                         \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream))                    \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream, CUevent, unsigned int)) \
  X(cuEventCreate, "cuEventCreate", (CUevent *, unsigned int))                 \
  X(cuEventDestroy, "cuEventDestroy_v2", (CUevent))                            \
  X(cuEventRecord, "cuEventRecord", (CUevent, CUstream))                       \
  X(cuEventQuery, "cuEventQuery", (CUevent))                                   \
  X(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode",    \
    (CUstreamCaptureMode *))                                                   \
  X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity",            \
    (size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags)) \
  X(cuMemCreate, "cuMemCreate",                                                \
    (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,      \
     unsigned long long))                                                      \
  X(cuMemRelease, "cuMemRelease", (CUmemGenericAllocationHandle))              \
  X(cuMemExportToShareableHandle, "cuMemExportToShareableHandle",              \
    (void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType,          \
     unsigned long long))                                                      \
  X(cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle",          \
    (CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType))       \
  X(cuMemAddressReserve, "cuMemAddressReserve",                                \
    (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))          \
  X(cuMemAddressFree, "cuMemAddressFree", (CUdeviceptr, size_t))               \
  X(cuMemMap, "cuMemMap",                                                      \
    (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,                \
     unsigned long long))                                                      \
  X(cuMemUnmap, "cuMemUnmap", (CUdeviceptr, size_t))                           \
  X(cuMemSetAccess, "cuMemSetAccess",                                          \
    (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t))                    \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                      \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                  \
  X(cuIpcGetMemHandle, "cuIpcGetMemHandle", (CUipcMemHandle *, CUdeviceptr))   \
  X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2",                               \
    (CUdeviceptr *, CUipcMemHandle, unsigned int))                             \
  X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr))                 \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                 \
    (CUdeviceptr, const void *, size_t, CUstream))                             \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                 \
    (void *, CUdeviceptr, size_t, CUstream))                                   \
  X(cuMemcpyAsync, "cuMemcpyAsync",                                            \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
  X(cuMemsetD8Async, "cuMemsetD8Async",                                        \
    (CUdeviceptr, unsigned char, size_t, CUstream))                            \
  X(cuStreamWaitValue32, "cuStreamWaitValue32_v2",                             \
    (CUstream, CUdeviceptr, cuuint32_t, unsigned int))                         \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                  \
    (CUmodule *, const void *, unsigned int, CUjit_option *, void **))         \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule))                              \
  X(cuModuleGetFunction, "cuModuleGetFunction",                                \
    (CUfunction *, CUmodule, const char *))                                    \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2",                                 \
    (CUdeviceptr *, size_t *, CUmodule, const char *))                         \
  X(cuFuncSetAttribute, "cuFuncSetAttribute",                                  \
    (CUfunction, CUfunction_attribute, int))                                   \
  X(cuLaunchKernel, "cuLaunchKernel",                                          \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,       \
     unsigned int, unsigned int, unsigned int, CUstream, void **, void **))    \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor,                               \
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",                             \
    (int *, CUfunction, int, size_t))

/* Looked up only when the user opts into multicast (WEFT_ENABLE_MULTICAST). */
#define WEFT_CUDA_MULTICAST_FUNCTIONS(X)                                       \
  X(cuMulticastCreate, "cuMulticastCreate",                                    \
    (CUmemGenericAllocationHandle *, const CUmulticastObjectProp *))           \
  X(cuMulticastAddDevice, "cuMulticastAddDevice",                              \
    (CUmemGenericAllocationHandle, CUdevice))                                  \
  X(cuMulticastBindMem, "cuMulticastBindMem",                                  \
    (CUmemGenericAllocationHandle, size_t, CUmemGenericAllocationHandle,       \
     size_t, size_t, unsigned long long))                                      \
  X(cuMulticastUnbind, "cuMulticastUnbind",                                    \
    (CUmemGenericAllocationHandle, CUdevice, size_t, size_t))                  \
  X(cuMulticastGetGranularity, "cuMulticastGetGranularity",                    \
    (size_t *, const CUmulticastObjectProp *, CUmulticastGranularity_flags))

/* Looked up with the others but optional: NULL where the driver predates
 * them (tensor maps: CUDA 12.0; cluster occupancy: 11.8; graphs of a
 * stream's work: 11.4; kernel nodes of these parameters: 12.0; parameter
 * sizes: 12.4), which fails only the calls that need them (launches with
 * attributes, CUDA 12.0, fall back to plain ones; one-launch graphs to
 * eager launches, or to setting their arguments at every launch). */
#define WEFT_CUDA_OPTIONAL_FUNCTIONS(X)                                        \
  X(cuLaunchKernelEx, "cuLaunchKernelEx",                                      \
    (const CUlaunchConfig *, CUfunction, void **, void **))                    \
  X(cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters",              \
    (int *, CUfunction, const CUlaunchConfig *))                               \
  X(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled",                          \
    (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,                   \
     const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,               \
     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,            \
     CUtensorMapL2promotion, CUtensorMapFloatOOBfill))                        \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream, CUstreamCaptureMode)) \
  X(cuStreamEndCapture, "cuStreamEndCapture", (CUstream, CUgraph *))           \
  X(cuStreamIsCapturing, "cuStreamIsCapturing", (CUstream, CUstreamCaptureStatus *)) \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags",                         \
    (CUgraphExec *, CUgraph, unsigned long long))                              \
  X(cuGraphLaunch, "cuGraphLaunch", (CUgraphExec, CUstream))                   \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec))                   \
  X(cuGraphDestroy, "cuGraphDestroy", (CUgraph))                               \
  X(cuGraphCreate, "cuGraphCreate", (CUgraph *, unsigned int))                 \
  X(cuGraphAddKernelNode, "cuGraphAddKernelNode_v2",                           \
    (CUgraphNode *, CUgraph, const CUgraphNode *, size_t,                      \
     const CUDA_KERNEL_NODE_PARAMS *))                                         \
  X(cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2",       \
    (CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *))                \
  X(cuFuncGetParamInfo, "cuFuncGetParamInfo", (CUfunction, size_t, size_t *, size_t *))

/* cuFoo_fn: the type of a pointer to cuFoo. */
#define WEFT_CUDA_TYPEDEF(field, symbol, params) \
  typedef CUresult (*field##_fn) params;
WEFT_CUDA_DRIVER_FUNCTIONS(WEFT_CUDA_TYPEDEF)
WEFT_CUDA_MULTICAST_FUNCTIONS(WEFT_CUDA_TYPEDEF)
WEFT_CUDA_OPTIONAL_FUNCTIONS(WEFT_CUDA_TYPEDEF)
#undef WEFT_CUDA_TYPEDEF

#endif /* WEFT_RUNTIME_CUDA_DRIVER_H */
