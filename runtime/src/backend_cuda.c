/*
 * The CUDA backend, on the driver API of a dlopen'ed libcuda.so.1. Each
 * rank drives one device through its primary context and one blocking
 * stream (ordered with the legacy default stream). The symmetric heap is
 * cuda_heap.c's: every peer's is mapped into this process, so kernels reach
 * it by plain loads and stores.
 *
 * What the CUDA and HIP backends share (opening the device with the peer
 * checks, the IPC-handle exchange, copies, memsets, local memory, launches)
 * is gpu.c's, over this file's driver calls.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_backend.h"
#include "nvshmem.h"

/* ---- the driver, loaded once per process ---- */

weft_cuda_driver weft_cuda;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t multicast_lock = PTHREAD_MUTEX_INITIALIZER;

/* What describe (cuGetErrorName or cuGetErrorString) says about r. */
static const char *cu_describe(cuGetErrorName_fn describe, CUresult r,
                               const char *unknown) {
  const char *s = NULL;
  if (!describe || describe(r, &s) != CUDA_SUCCESS || !s)
    return unknown;
  return s;
}

static const char *cu_name(CUresult r) {
  return cu_describe(weft_cuda.cuGetErrorName, r, "CUDA_ERROR_UNKNOWN");
}

static const char *cu_string(CUresult r) {
  return cu_describe(weft_cuda.cuGetErrorString, r, "unknown error");
}

weft_status weft_cuda_check(CUresult r, const char *call) {
  if (r == CUDA_SUCCESS)
    return WEFT_SUCCESS;
  return weft_fail(WEFT_ERROR_BACKEND, "cuda backend: %s: %s: %s", call,
                   cu_name(r), cu_string(r));
}


static void load_driver(void) {
  weft_cuda.lib = dlopen(LIBCUDA, RTLD_NOW | RTLD_LOCAL);
  if (!weft_cuda.lib) {
    const char *why = dlerror();
    weft_cuda.status = WEFT_ERROR_UNSUPPORTED;
    snprintf(weft_cuda.error, sizeof weft_cuda.error, "cuda backend: cannot load %s (no "
             "NVIDIA driver?): %s", LIBCUDA, why ? why : "?");
    return;
  }
#define RESOLVE(field, symbol, params)                                         \
  if (weft_cuda.status == WEFT_SUCCESS && !weft_gpu_resolve(weft_cuda.lib, symbol, &weft_cuda.field)) {            \
    weft_cuda.status = WEFT_ERROR_UNSUPPORTED;                                       \
    snprintf(weft_cuda.error, sizeof weft_cuda.error, "cuda backend: %s has no %s (the "   \
             "driver is too old)", LIBCUDA, symbol);                           \
  }
  WEFT_CUDA_DRIVER_FUNCTIONS(RESOLVE)
  if (weft_cuda.status != WEFT_SUCCESS)
    return;
#define RESOLVE_OPTIONAL(field, symbol, params) \
  weft_gpu_resolve(weft_cuda.lib, symbol, &weft_cuda.field);
  WEFT_CUDA_OPTIONAL_FUNCTIONS(RESOLVE_OPTIONAL)
  CUresult r = weft_cuda.cuInit(0);
  if (r != CUDA_SUCCESS) {
    weft_cuda.status = r == CUDA_ERROR_NO_DEVICE ? WEFT_ERROR_UNSUPPORTED
                                           : WEFT_ERROR_BACKEND;
    snprintf(weft_cuda.error, sizeof weft_cuda.error, "cuda backend: cuInit: %s: %s",
             cu_name(r), cu_string(r));
  }
}

weft_status weft_cuda_load_multicast(void) {
  weft_status st = WEFT_SUCCESS;
  pthread_mutex_lock(&multicast_lock);
#define RESOLVE_MC(field, symbol, params)                                      \
  if (st == WEFT_SUCCESS && !weft_cuda.field && !weft_gpu_resolve(weft_cuda.lib, symbol, &weft_cuda.field))      \
    st = weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: %s has no %s "       \
                   "(multicast needs CUDA 12.1 or later)", LIBCUDA, symbol);
  WEFT_CUDA_MULTICAST_FUNCTIONS(RESOLVE_MC)
  pthread_mutex_unlock(&multicast_lock);
  return st;
}

static weft_status driver_ready(void) {
  pthread_once(&drv_once, load_driver);
  if (weft_cuda.status != WEFT_SUCCESS)
    return weft_fail(weft_cuda.status, "%s", weft_cuda.error);
  return WEFT_SUCCESS;
}

/* ---- state ---- */

/* The primary context is current per thread. */
weft_status weft_cuda_enter(cuda_state *s) { return CU(cuCtxSetCurrent, s->ctx); }

static CUstream own_stream(const weft_gpu *g) { return (CUstream)g->stream; }

/* ---- open / close ---- */

static weft_status cuda_close(void *state) {
  cuda_state *s = state;
  weft_status st = WEFT_SUCCESS;
  if (s->ctx) {
    weft_keep(&st, weft_cuda_enter(s));
    weft_gpu_kernel_graphs_free(&s->gpu);
    weft_gpu_paces_free(&s->gpu);
    if (s->gpu.stream)
      weft_keep(&st, CU(cuStreamDestroy, own_stream(&s->gpu)));
    if (s->gpu.copy_stream)
      weft_keep(&st, CU(cuStreamDestroy, (CUstream)s->gpu.copy_stream));
    if (s->gpu.event)
      weft_keep(&st, CU(cuEventDestroy, (CUevent)s->gpu.event));
    weft_keep(&st, CU(cuDevicePrimaryCtxRelease, s->gpu.device));
  }
  free(s);
  return st;
}

static weft_status device_count(int *count) {
  return CU(cuDeviceGetCount, count);
}

/* g->ordinal is in range. */
static weft_status open_device(weft_gpu *g) {
  cuda_state *s = (cuda_state *)g;
  CUcontext ctx = NULL;
  CUstream stream = NULL, copy_stream = NULL;
  CUevent event = NULL;
  weft_status st;
  if ((st = CU(cuDeviceGet, &g->device, g->ordinal)) ||
      (st = CU(cuDeviceGetPCIBusId, g->bus_id, (int)sizeof g->bus_id, g->device)) ||
      (st = CU(cuDevicePrimaryCtxRetain, &ctx, g->device)))
    return st;
  s->ctx = ctx;
  /* A blocking stream: ordered with the legacy default stream, where torch
   * and most libraries work unless told otherwise, so tensors handed to a
   * launch and read after it need no explicit synchronisation. */
  if ((st = weft_cuda_enter(s)) ||
      (st = CU(cuStreamCreate, &stream, CU_STREAM_DEFAULT)))
    return st;
  g->stream = stream;
  /* The puts' stream is ordered only by the events between it and the
   * streams the puts come from. */
  if ((st = CU(cuStreamCreate, &copy_stream, CU_STREAM_NON_BLOCKING)))
    return st;
  g->copy_stream = copy_stream;
  if ((st = CU(cuEventCreate, &event, CU_EVENT_DISABLE_TIMING)))
    return st;
  g->event = event;
  return WEFT_SUCCESS;
}

static int device_by_bus_id(int *device, const char *bus_id) {
  return weft_cuda.cuDeviceGetByPCIBusId(device, bus_id) == CUDA_SUCCESS;
}

static weft_status can_access_peer(int *can, int device, int peer_device) {
  return CU(cuDeviceCanAccessPeer, can, device, peer_device);
}

/* ---- the driver calls of gpu.c's copies, memory and launches ---- */

static weft_status cuda_enter(weft_gpu *g) { return weft_cuda_enter((cuda_state *)g); }

static weft_status copy_async(weft_gpu *g, void *dst, const void *src, size_t n,
                              int to_device) {
  CUdeviceptr device = (CUdeviceptr)(uintptr_t)(to_device ? dst : src);
  return to_device ? CU(cuMemcpyHtoDAsync, device, src, n, own_stream(g))
                   : CU(cuMemcpyDtoHAsync, dst, device, n, own_stream(g));
}

static weft_status memset_async(weft_gpu *g, void *dst, int value, size_t n, void *stream) {
  (void)g;
  return CU(cuMemsetD8Async, (CUdeviceptr)(uintptr_t)dst, (unsigned char)value, n,
            (CUstream)stream);
}

static weft_status stream_after(weft_gpu *g, void *stream, void *after) {
  weft_status st = CU(cuEventRecord, (CUevent)g->event, (CUstream)after);
  return st != WEFT_SUCCESS ? st
                            : CU(cuStreamWaitEvent, (CUstream)stream, (CUevent)g->event, 0);
}

static weft_status copy_device_async(weft_gpu *g, void *dst, const void *src, size_t n,
                                     void *stream) {
  (void)g;
  return CU(cuMemcpyAsync, (CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n,
            (CUstream)stream);
}

static weft_status stream_wait_value(weft_gpu *g, void *stream, const void *word,
                                     uint32_t value) {
  (void)g;
  return CU(cuStreamWaitValue32, (CUstream)stream, (CUdeviceptr)(uintptr_t)word, value,
            CU_STREAM_WAIT_VALUE_GEQ);
}

static weft_status stream_synchronize(weft_gpu *g, void *stream) {
  (void)g;
  return CU(cuStreamSynchronize, (CUstream)stream);
}

static weft_status exchange_capture_mode(int *mode) {
  CUstreamCaptureMode m = (CUstreamCaptureMode)*mode;
  weft_status st = CU(cuThreadExchangeStreamCaptureMode, &m);
  *mode = (int)m;
  return st;
}

/* ---- graphs ---- */

static weft_status graphs_missing(void) {
  return weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: %s has no stream capture "
                   "(graphs need CUDA 11.4 or later)", LIBCUDA);
}

static weft_status capturing(weft_gpu *g, void *stream, int *out) {
  (void)g;
  if (!weft_cuda.cuStreamIsCapturing)
    return graphs_missing();
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  weft_status st = CU(cuStreamIsCapturing, (CUstream)stream, &status);
  *out = status != CU_STREAM_CAPTURE_STATUS_NONE;
  return st;
}

static weft_status capture_begin(weft_gpu *g, void *stream) {
  (void)g;
  if (!weft_cuda.cuStreamBeginCapture || !weft_cuda.cuGraphInstantiate)
    return graphs_missing();
  return CU(cuStreamBeginCapture, (CUstream)stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
}

static weft_status capture_end(weft_gpu *g, void *stream, void **exec) {
  (void)g;
  CUgraph graph = NULL;
  CUgraphExec made = NULL;
  weft_status st = CU(cuStreamEndCapture, (CUstream)stream, &graph);
  if (st == WEFT_SUCCESS)
    st = CU(cuGraphInstantiate, &made, graph, 0);
  if (graph)
    weft_keep(&st, CU(cuGraphDestroy, graph)); /* the instance keeps what it needs */
  *exec = st == WEFT_SUCCESS ? made : NULL;
  return st;
}

static weft_status graph_launch(weft_gpu *g, void *exec, void *stream) {
  (void)g;
  return CU(cuGraphLaunch, (CUgraphExec)exec, (CUstream)stream);
}

static weft_status graph_destroy(weft_gpu *g, void *exec) {
  (void)g; /* one still running is freed when it completes */
  return CU(cuGraphExecDestroy, (CUgraphExec)exec);
}

/* Local memory: with NVSHMEM's heap, also NVSHMEM's to reach (nvshmem.h). */
static weft_status device_alloc(weft_gpu *g, size_t size, void **out) {
  CUdeviceptr p = 0;
  weft_status st = CU(cuMemAlloc, &p, size);
  *out = (void *)(uintptr_t)p;
  if (st == WEFT_SUCCESS && ((cuda_state *)g)->kind == HEAP_NVSHMEM &&
      (st = weft_nvshmem_register(*out, size)) != WEFT_SUCCESS) {
    CU(cuMemFree, p);
    *out = NULL;
  }
  return st;
}

static weft_status device_free(weft_gpu *g, void *ptr) {
  if (((cuda_state *)g)->kind == HEAP_NVSHMEM)
    weft_nvshmem_unregister(ptr);
  return CU(cuMemFree, (CUdeviceptr)(uintptr_t)ptr);
}

/* ---- modules and launch ---- */

static weft_status cuda_module_load(void *state, const void *image, size_t size,
                                    weft_module_format format, void **module) {
  weft_status st = weft_cuda_enter(state);
  if (st != WEFT_SUCCESS)
    return st;
  const void *given = image;
  char *text = NULL;
  if (format == WEFT_MODULE_PTX) { /* the driver wants it NUL-terminated */
    if (!(text = malloc(size + 1)))
      return weft_gpu_no_memory(state);
    memcpy(text, image, size);
    text[size] = 0;
    image = text;
  }
  char log[WEFT_ERROR_MAX] = "";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)sizeof log};
  CUmodule m = NULL;
  CUresult r = weft_cuda.cuModuleLoadDataEx(&m, image, 2, options, values);
  free(text);
  if (r != CUDA_SUCCESS)
    return weft_fail(WEFT_ERROR_MODULE, "cuda backend: cuModuleLoadDataEx "
                     "(%s): %s: %s%s%s", weft_module_format_name(format),
                     cu_name(r), cu_string(r), log[0] ? ": " : "", log);
  if ((st = weft_nvshmem_module_loaded(m, given, size)) != WEFT_SUCCESS) {
    weft_cuda.cuModuleUnload(m);
    return st;
  }
  *module = m;
  return WEFT_SUCCESS;
}

static weft_status cuda_module_unload(void *state, void *module) {
  weft_status st = weft_cuda_enter(state);
  if (st != WEFT_SUCCESS)
    return st;
  weft_gpu_kernel_graphs_free(state);
  weft_nvshmem_module_unloading((CUmodule)module);
  return CU(cuModuleUnload, (CUmodule)module);
}

static weft_status find_function(weft_gpu *g, void *module, const char *name,
                                 void **function, int *found) {
  (void)g;
  CUfunction f = NULL;
  CUresult r = weft_cuda.cuModuleGetFunction(&f, (CUmodule)module, name);
  if (r == CUDA_ERROR_NOT_FOUND)
    return WEFT_SUCCESS;
  *found = 1;
  *function = f;
  return weft_cuda_check(r, "cuModuleGetFunction");
}

/* Past 48 KiB, static and dynamic together, a kernel must opt in: any
 * dynamic shared memory may take it there. */
static weft_status allow_shared(CUfunction f, uint32_t shared_bytes) {
  return shared_bytes ? CU(cuFuncSetAttribute, f,
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           (int)shared_bytes)
                      : WEFT_SUCCESS;
}

static weft_status cuda_resident_programs(void *state, void *function,
                                          uint32_t num_threads, uint32_t shared_bytes,
                                          const uint32_t cluster[3], uint32_t *out) {
  cuda_state *s = state;
  CUfunction f = function;
  weft_status st = weft_cuda_enter(s);
  if (st == WEFT_SUCCESS)
    st = allow_shared(f, shared_bytes);
  if (st != WEFT_SUCCESS)
    return st;
  uint32_t size = cluster[0] * cluster[1] * cluster[2];
  if (size == 1) {
    int per_sm = 0, sms = 0;
    st = CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &per_sm, f, (int)num_threads,
            (size_t)shared_bytes);
    if (st == WEFT_SUCCESS)
      st = CU(cuDeviceGetAttribute, &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
              s->gpu.device);
    if (st == WEFT_SUCCESS)
      *out = (uint32_t)per_sm * (uint32_t)sms;
    return st;
  }
  /* A cluster's programs run on the multiprocessors of one GPC, so what
   * fits is counted in clusters, not in programs per multiprocessor. */
  if (!weft_cuda.cuOccupancyMaxActiveClusters)
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: %s has no "
                     "cuOccupancyMaxActiveClusters (a resident launch in clusters needs "
                     "CUDA 11.8 or later)", LIBCUDA);
  CUlaunchAttribute shape = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                             .value.clusterDim = {cluster[0], cluster[1], cluster[2]}};
  CUlaunchConfig c = {cluster[0], cluster[1], cluster[2], num_threads, 1, 1,
                      shared_bytes, own_stream(&s->gpu), &shape, 1};
  int clusters = 0;
  st = CU(cuOccupancyMaxActiveClusters, &clusters, f, &c);
  if (st == WEFT_SUCCESS)
    *out = (uint32_t)clusters * size;
  return st;
}

static weft_status launch_kernel(weft_gpu *g, void *function, const weft_launch_config *config,
                                 void **params, unsigned block) {
  CUfunction f = function;
  weft_status st = allow_shared(f, config->shared_bytes);
  CUstream stream = config->stream ? (CUstream)config->stream : own_stream(g);
  if (st == WEFT_SUCCESS && (config->flags & WEFT_LAUNCH_EARLY_START) &&
      weft_cuda.cuLaunchKernelEx) {
    CUlaunchAttribute early = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                               .value.programmaticStreamSerializationAllowed = 1};
    CUlaunchConfig c = {config->grid[0], config->grid[1], config->grid[2],
                        block, 1, 1, config->shared_bytes, stream, &early, 1};
    st = CU(cuLaunchKernelEx, &c, f, params, NULL);
  } else if (st == WEFT_SUCCESS) {
    st = CU(cuLaunchKernel, f, config->grid[0], config->grid[1], config->grid[2],
            block, 1, 1, config->shared_bytes, stream, params, NULL);
  }
  return st;
}

static CUDA_KERNEL_NODE_PARAMS node_params(const weft_gpu_kernel_graph *k,
                                           void **params) {
  return (CUDA_KERNEL_NODE_PARAMS){.func = k->function, .gridDimX = k->grid[0],
                                   .gridDimY = k->grid[1], .gridDimZ = k->grid[2],
                                   .blockDimX = k->block, .blockDimY = 1, .blockDimZ = 1,
                                   .sharedMemBytes = k->shared_bytes,
                                   .kernelParams = params};
}

static weft_status kernel_graph_make(weft_gpu *g, weft_gpu_kernel_graph *k,
                                     void **params) {
  (void)g;
  if (!weft_cuda.cuGraphCreate || !weft_cuda.cuGraphAddKernelNode ||
      !weft_cuda.cuGraphExecKernelNodeSetParams || !weft_cuda.cuGraphInstantiate)
    return graphs_missing();
  CUDA_KERNEL_NODE_PARAMS p = node_params(k, params);
  CUgraph graph = NULL;
  CUgraphNode node = NULL;
  CUgraphExec exec = NULL;
  weft_status st = allow_shared(k->function, k->shared_bytes);
  if (st == WEFT_SUCCESS)
    st = CU(cuGraphCreate, &graph, 0);
  if (st == WEFT_SUCCESS)
    st = CU(cuGraphAddKernelNode, &node, graph, NULL, 0, &p);
  if (st == WEFT_SUCCESS)
    st = CU(cuGraphInstantiate, &exec, graph, 0);
  if (st != WEFT_SUCCESS) {
    if (graph)
      weft_cuda.cuGraphDestroy(graph);
    return st;
  }
  /* The graph stays: its node is how the instance's arguments are set. */
  k->graph = graph, k->exec = exec, k->node = node;
  return WEFT_SUCCESS;
}

static weft_status kernel_graph_launch(weft_gpu *g, const weft_gpu_kernel_graph *k,
                                       void **params) {
  (void)g;
  CUDA_KERNEL_NODE_PARAMS p = node_params(k, params);
  weft_status st = CU(cuGraphExecKernelNodeSetParams, (CUgraphExec)k->exec,
                      (CUgraphNode)k->node, &p);
  return st != WEFT_SUCCESS ? st
                            : CU(cuGraphLaunch, (CUgraphExec)k->exec, (CUstream)k->stream);
}

static int param_sizes(void *function, size_t count, size_t *sizes) {
  size_t offset;
  if (!weft_cuda.cuFuncGetParamInfo)
    return 0;
  for (size_t i = 0; i < count; ++i)
    if (weft_cuda.cuFuncGetParamInfo((CUfunction)function, i, &offset, &sizes[i]))
      return 0;
  return 1;
}

static weft_status kernel_graph_destroy(weft_gpu *g, weft_gpu_kernel_graph *k) {
  weft_status st = graph_destroy(g, k->exec);
  weft_keep(&st, CU(cuGraphDestroy, (CUgraph)k->graph));
  return st;
}

static weft_status mark(weft_gpu *g, void *stream, void **out) {
  (void)g;
  CUevent event = *out;
  weft_status st = event ? WEFT_SUCCESS : CU(cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
  *out = event;
  return st != WEFT_SUCCESS ? st : CU(cuEventRecord, event, (CUstream)stream);
}

static weft_status mark_passed(weft_gpu *g, void *mark, int *passed) {
  (void)g; /* quiet: not ready (or failed) reads as not passed */
  *passed = weft_cuda.cuEventQuery((CUevent)mark) == CUDA_SUCCESS;
  return WEFT_SUCCESS;
}

static weft_status mark_destroy(weft_gpu *g, void *mark) {
  (void)g;
  return CU(cuEventDestroy, (CUevent)mark);
}

/* ---- tensor maps ---- */

_Static_assert(sizeof(CUtensorMap) == sizeof(((weft_tensor_desc *)0)->tensor_map) &&
                   _Alignof(CUtensorMap) == 64 &&
                   offsetof(weft_tensor_desc, tensor_map) == 0,
               "weft_tensor_desc.tensor_map must hold a CUtensorMap");

/* The driver counts dimensions innermost first (its dimension i is map
 * dimension map_rank - 1 - i), and takes the strides of all but the
 * innermost in bytes; they need not grow outwards, so one map can walk a
 * tensor dimension several times. Out-of-bounds coordinates read as zero
 * bits, so the data type only needs the element's size. */
static weft_status cuda_encode_tensor_map(void *state, void *map128, const void *base,
                                          size_t elem_size, int map_rank,
                                          const weft_tensor_map_dim *map,
                                          const uint64_t *extents,
                                          const uint64_t *byte_strides, int swizzle) {
  if (!weft_cuda.cuTensorMapEncodeTiled)
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: %s has no "
                     "cuTensorMapEncodeTiled (tensor maps need CUDA 12.0 or "
                     "later)", LIBCUDA);
  /* The encoding touches no device, but the driver may still want a
   * context (it documents CUDA_ERROR_INVALID_CONTEXT). */
  weft_status st = weft_cuda_enter(state);
  if (st != WEFT_SUCCESS)
    return st;
  cuuint64_t dims[WEFT_TENSOR_DESC_MAX_RANK], strides[WEFT_TENSOR_DESC_MAX_RANK] = {0};
  cuuint32_t box_dims[WEFT_TENSOR_DESC_MAX_RANK], element_strides[WEFT_TENSOR_DESC_MAX_RANK];
  for (int i = 0; i < map_rank; ++i) {
    int j = map_rank - 1 - i; /* the driver's dimension i is map[j] */
    dims[i] = (cuuint64_t)extents[j];
    box_dims[i] = (cuuint32_t)map[j].box;
    element_strides[i] = 1;
    if (i > 0)
      strides[i - 1] = (cuuint64_t)byte_strides[j];
  }
  CUtensorMapDataType type = elem_size == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                             : elem_size == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                             : elem_size == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                              : CU_TENSOR_MAP_DATA_TYPE_UINT64;
  CUtensorMapSwizzle mode = swizzle == 32    ? CU_TENSOR_MAP_SWIZZLE_32B
                            : swizzle == 64  ? CU_TENSOR_MAP_SWIZZLE_64B
                            : swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                             : CU_TENSOR_MAP_SWIZZLE_NONE;
  return CU(cuTensorMapEncodeTiled, (CUtensorMap *)map128, type, (cuuint32_t)map_rank,
            (void *)(uintptr_t)base, dims, strides, box_dims, element_strides,
            CU_TENSOR_MAP_INTERLEAVE_NONE, mode, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

static const weft_gpu_ops gpu_ops = {
    .backend = &weft_backend_cuda,
    .interconnect = "NVLink",
    .engine = "NVSHMEM",
    .visible_devices = "CUDA_VISIBLE_DEVICES",
    .state_size = sizeof(cuda_state),
    .ready = driver_ready,
    .device_count = device_count,
    .open_device = open_device,
    .device_by_bus_id = device_by_bus_id,
    .can_access_peer = can_access_peer,
    .enter = cuda_enter,
    .copy_async = copy_async,
    .memset_async = memset_async,
    .stream_synchronize = stream_synchronize,
    .stream_after = stream_after,
    .copy_device_async = copy_device_async,
    .stream_wait_value = stream_wait_value,
    .exchange_capture_mode = exchange_capture_mode,
    .relaxed_capture = CU_STREAM_CAPTURE_MODE_RELAXED,
    .device_alloc = device_alloc,
    .device_free = device_free,
    .find_function = find_function,
    .launch_kernel = launch_kernel,
    .capturing = capturing,
    .capture_begin = capture_begin,
    .capture_end = capture_end,
    .graph_launch = graph_launch,
    .graph_destroy = graph_destroy,
    .kernel_graph_make = kernel_graph_make,
    .kernel_graph_launch = kernel_graph_launch,
    .kernel_graph_destroy = kernel_graph_destroy,
    .param_sizes = param_sizes,
    .mark = mark,
    .mark_passed = mark_passed,
    .mark_destroy = mark_destroy,
};

static int cuda_available(void) { return weft_gpu_available(&gpu_ops); }

static weft_status cuda_open(const weft_backend_params *params, void **state) {
  return weft_gpu_open(&gpu_ops, params, state);
}

const weft_backend_ops weft_backend_cuda = {
    .name = "cuda",
    .warp_size = 32,
    .available = cuda_available,
    .open = cuda_open,
    .close = cuda_close,
    .heap_map = weft_cuda_heap_map,
    .heap_unmap = weft_cuda_heap_unmap,
    .local_alloc = weft_gpu_local_alloc,
    .local_free = weft_gpu_local_free,
    .copy_to_device = weft_gpu_copy_to_device,
    .copy_to_host = weft_gpu_copy_to_host,
    .memset_device = weft_gpu_memset,
    .memset_async = weft_gpu_memset_async,
    .put_fork = weft_gpu_put_fork,
    .put_signal = weft_gpu_put_signal,
    .put_join = weft_gpu_put_join,
    .put_wait = weft_gpu_put_wait,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .module_get_function = weft_gpu_module_get_function,
    .launch = weft_gpu_launch,
    .resident_programs = cuda_resident_programs,
    .synchronize = weft_gpu_synchronize,
    .encode_tensor_map = cuda_encode_tensor_map,
    .graph_begin = weft_gpu_graph_begin,
    .graph_end = weft_gpu_graph_end,
    .graph_launch = weft_gpu_graph_launch,
    .graph_destroy = weft_gpu_graph_destroy,
};
