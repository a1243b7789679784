/*
 * Internal to the CUDA backend, shared by backend_cuda.c (the driver,
 * devices, modules, launches, tensor maps) and cuda_heap.c (the symmetric
 * heap): the driver's entry points, the backend's state and the CU() call
 * wrapper.
 */
#ifndef WEFT_RUNTIME_CUDA_BACKEND_H
#define WEFT_RUNTIME_CUDA_BACKEND_H

#include "cuda_driver.h"
#include "gpu.h"

#define LIBCUDA "libcuda.so.1"

/* The driver's entry points, resolved from a dlopen'ed libcuda once per
 * process (backend_cuda.c). */
#define FIELD(field, symbol, params) field##_fn field;
typedef struct weft_cuda_driver {
  WEFT_CUDA_DRIVER_FUNCTIONS(FIELD)
  WEFT_CUDA_MULTICAST_FUNCTIONS(FIELD)
  WEFT_CUDA_OPTIONAL_FUNCTIONS(FIELD)
  void *lib;
  weft_status status; /* of loading and cuInit */
  char error[256];
} weft_cuda_driver;
#undef FIELD
extern weft_cuda_driver weft_cuda;

/* weft_fail's r as "cuda backend: call: NAME: description"; success for
 * CUDA_SUCCESS. CU(cuFoo, args...) calls the driver through it. */
weft_status weft_cuda_check(CUresult r, const char *call);
#define CU(fn, ...) weft_cuda_check(weft_cuda.fn(__VA_ARGS__), #fn)

/* Looks up the multicast entry points, only for users who opted in. */
weft_status weft_cuda_load_multicast(void);

/* HEAP_NVSHMEM: NVSHMEM's symmetric heap, for jobs across nodes. */
typedef enum heap_kind { HEAP_VMM = 1, HEAP_IPC = 2, HEAP_NVSHMEM = 3 } heap_kind;

typedef struct rank_heap {
  CUdeviceptr va;                      /* this process's address; 0: none */
  CUmemGenericAllocationHandle handle; /* VMM: created or imported */
  unsigned char has_handle, mapped;
} rank_heap;

typedef struct cuda_state {
  weft_gpu gpu;  /* first; gpu.device is the CUdevice, gpu.stream a CUstream */
  CUcontext ctx; /* the device's primary context, retained */

  heap_kind kind;
  const char *kind_reason; /* why this kind, for WEFT_DEBUG */
  size_t heap_size;        /* mapped bytes per rank (granularity-rounded) */
  rank_heap heaps[WEFT_MAX_RANKS];
  void *nvshmem_heap;      /* HEAP_NVSHMEM: this rank's, from nvshmem_malloc */

  /* WEFT_ENABLE_MULTICAST=1 only. */
  CUmemGenericAllocationHandle mc_handle;
  CUdeviceptr mc_va;
  size_t mc_granule;
  unsigned char has_mc_handle, mc_bound, mc_mapped;
} cuda_state;

/* The primary context is current per thread: makes it current for callers
 * on threads other than the one that ran weft_init. */
weft_status weft_cuda_enter(cuda_state *s);

/* The symmetric heap (cuda_heap.c): weft_backend_ops' heap_map and
 * heap_unmap. */
weft_status weft_cuda_heap_map(void *state, size_t size, weft_heap_layout *out);
weft_status weft_cuda_heap_unmap(void *state);

#endif /* WEFT_RUNTIME_CUDA_BACKEND_H */
