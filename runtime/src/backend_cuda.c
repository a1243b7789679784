/*
 * The CUDA backend, on the driver API of a dlopen'ed libcuda.so.1. Each
 * rank drives one device through its primary context and one non-blocking
 * stream. The symmetric heap is CUDA VMM memory exported as POSIX file
 * descriptors (WEFT_CUDA_HEAP=vmm, the default) or cuMemAlloc memory shared
 * through legacy IPC handles (WEFT_CUDA_HEAP=ipc, and the fallback where
 * the device cannot export descriptors). Every peer's heap is mapped into
 * this process, so kernels reach it by plain loads and stores.
 *
 * What does not call the driver (opening the device with the peer checks,
 * the IPC-handle exchange, launch parameters) is gpu.c's, shared with the
 * HIP backend.
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

#include "cuda_driver.h"
#include "gpu.h"

#define LIBCUDA "libcuda.so.1"

/* ---- the driver, loaded once per process ---- */

#define FIELD(field, symbol, params) field##_fn field;
static struct {
  WEFT_CUDA_DRIVER_FUNCTIONS(FIELD)
  WEFT_CUDA_MULTICAST_FUNCTIONS(FIELD)
  WEFT_CUDA_OPTIONAL_FUNCTIONS(FIELD)
  void *lib;
  weft_status status; /* of loading and cuInit */
  char error[256];
} drv;
#undef FIELD

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
  return cu_describe(drv.cuGetErrorName, r, "CUDA_ERROR_UNKNOWN");
}

static const char *cu_string(CUresult r) {
  return cu_describe(drv.cuGetErrorString, r, "unknown error");
}

static weft_status cu_check(CUresult r, const char *call) {
  if (r == CUDA_SUCCESS)
    return WEFT_SUCCESS;
  return weft_fail(WEFT_ERROR_BACKEND, "cuda backend: %s: %s: %s", call,
                   cu_name(r), cu_string(r));
}

/* CU(cuFoo, args...): calls the driver, turns an error into a weft_fail. */
#define CU(fn, ...) cu_check(drv.fn(__VA_ARGS__), #fn)

static void load_driver(void) {
  drv.lib = dlopen(LIBCUDA, RTLD_NOW | RTLD_LOCAL);
  if (!drv.lib) {
    const char *why = dlerror();
    drv.status = WEFT_ERROR_UNSUPPORTED;
    snprintf(drv.error, sizeof drv.error, "cuda backend: cannot load %s (no "
             "NVIDIA driver?): %s", LIBCUDA, why ? why : "?");
    return;
  }
#define RESOLVE(field, symbol, params)                                         \
  if (drv.status == WEFT_SUCCESS && !weft_gpu_resolve(drv.lib, symbol, &drv.field)) {            \
    drv.status = WEFT_ERROR_UNSUPPORTED;                                       \
    snprintf(drv.error, sizeof drv.error, "cuda backend: %s has no %s (the "   \
             "driver is too old)", LIBCUDA, symbol);                           \
  }
  WEFT_CUDA_DRIVER_FUNCTIONS(RESOLVE)
  if (drv.status != WEFT_SUCCESS)
    return;
#define RESOLVE_OPTIONAL(field, symbol, params) \
  weft_gpu_resolve(drv.lib, symbol, &drv.field);
  WEFT_CUDA_OPTIONAL_FUNCTIONS(RESOLVE_OPTIONAL)
  CUresult r = drv.cuInit(0);
  if (r != CUDA_SUCCESS) {
    drv.status = r == CUDA_ERROR_NO_DEVICE ? WEFT_ERROR_UNSUPPORTED
                                           : WEFT_ERROR_BACKEND;
    snprintf(drv.error, sizeof drv.error, "cuda backend: cuInit: %s: %s",
             cu_name(r), cu_string(r));
  }
}

/* Multicast entry points are looked up only for users who opted in. */
static weft_status load_multicast(void) {
  weft_status st = WEFT_SUCCESS;
  pthread_mutex_lock(&multicast_lock);
#define RESOLVE_MC(field, symbol, params)                                      \
  if (st == WEFT_SUCCESS && !drv.field && !weft_gpu_resolve(drv.lib, symbol, &drv.field))      \
    st = weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: %s has no %s "       \
                   "(multicast needs CUDA 12.1 or later)", LIBCUDA, symbol);
  WEFT_CUDA_MULTICAST_FUNCTIONS(RESOLVE_MC)
  pthread_mutex_unlock(&multicast_lock);
  return st;
}

static weft_status driver_ready(void) {
  pthread_once(&drv_once, load_driver);
  if (drv.status != WEFT_SUCCESS)
    return weft_fail(drv.status, "%s", drv.error);
  return WEFT_SUCCESS;
}

/* ---- state ---- */

typedef enum heap_kind { HEAP_VMM = 1, HEAP_IPC = 2 } heap_kind;

typedef struct rank_heap {
  CUdeviceptr va;                      /* this process's address; 0: none */
  CUmemGenericAllocationHandle handle; /* VMM: created or imported */
  unsigned char has_handle, mapped;
} rank_heap;

typedef struct cuda_state {
  weft_gpu gpu;  /* first; gpu.device is the CUdevice */
  CUcontext ctx; /* the device's primary context, retained */
  CUstream stream;

  heap_kind kind;
  const char *kind_reason; /* why this kind, for WEFT_DEBUG */
  size_t heap_size;        /* mapped bytes per rank (granularity-rounded) */
  rank_heap heaps[WEFT_MAX_RANKS];

  /* WEFT_ENABLE_MULTICAST=1 only. */
  CUmemGenericAllocationHandle mc_handle;
  CUdeviceptr mc_va;
  size_t mc_granule;
  unsigned char has_mc_handle, mc_bound, mc_mapped;
} cuda_state;

/* The primary context is current per thread: make it current for callers
 * on threads other than the one that ran weft_init. */
static weft_status enter(cuda_state *s) { return CU(cuCtxSetCurrent, s->ctx); }

/* ---- open / close ---- */

static weft_status cuda_close(void *state) {
  cuda_state *s = state;
  weft_status st = WEFT_SUCCESS;
  if (s->ctx) {
    weft_keep(&st, enter(s));
    if (s->stream)
      weft_keep(&st, CU(cuStreamDestroy, s->stream));
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
  CUstream stream = NULL;
  weft_status st;
  if ((st = CU(cuDeviceGet, &g->device, g->ordinal)) ||
      (st = CU(cuDeviceGetPCIBusId, g->bus_id, (int)sizeof g->bus_id, g->device)) ||
      (st = CU(cuDevicePrimaryCtxRetain, &ctx, g->device)))
    return st;
  s->ctx = ctx;
  /* A blocking stream: ordered with the legacy default stream, where torch
   * and most libraries work unless told otherwise, so tensors handed to a
   * launch and read after it need no explicit synchronisation. */
  if ((st = enter(s)) ||
      (st = CU(cuStreamCreate, &stream, CU_STREAM_DEFAULT)))
    return st;
  s->stream = stream;
  return WEFT_SUCCESS;
}

static int device_by_bus_id(int *device, const char *bus_id) {
  return drv.cuDeviceGetByPCIBusId(device, bus_id) == CUDA_SUCCESS;
}

static weft_status can_access_peer(int *can, int device, int peer_device) {
  return CU(cuDeviceCanAccessPeer, can, device, peer_device);
}

static const weft_gpu_ops gpu_ops = {
    .backend = &weft_backend_cuda,
    .interconnect = "NVLink",
    .visible_devices = "CUDA_VISIBLE_DEVICES",
    .state_size = sizeof(cuda_state),
    .ready = driver_ready,
    .device_count = device_count,
    .open_device = open_device,
    .device_by_bus_id = device_by_bus_id,
    .can_access_peer = can_access_peer,
};

static int cuda_available(void) { return weft_gpu_available(&gpu_ops); }

static weft_status cuda_open(const weft_backend_params *params, void **state) {
  return weft_gpu_open(&gpu_ops, params, state);
}

/* ---- the symmetric heap ---- */

static const char *kind_name(int32_t kind) {
  return kind == HEAP_VMM ? "vmm" : kind == HEAP_IPC ? "ipc" : "?";
}

static CUmemAllocationProp vmm_prop(const cuda_state *s) {
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = s->gpu.device;
  return prop;
}

static CUmemAccessDesc read_write(const cuda_state *s) {
  CUmemAccessDesc desc = {{CU_MEM_LOCATION_TYPE_DEVICE, s->gpu.device},
                          CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  return desc;
}

typedef struct heap_plan {
  int32_t kind;
  uint32_t pad_;
  uint64_t size;
} heap_plan;

/* WEFT_CUDA_HEAP picks the kind; VMM falls back to IPC where the device
 * cannot export memory as file descriptors. */
static weft_status plan_heap(cuda_state *s, size_t size, heap_plan *plan) {
  const char *want = getenv("WEFT_CUDA_HEAP");
  plan->size = size;
  if (want && *want && strcmp(want, "vmm") && strcmp(want, "ipc"))
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "cuda backend: "
                     "WEFT_CUDA_HEAP='%s': expected vmm or ipc", want);
  if (want && !strcmp(want, "ipc")) {
    plan->kind = HEAP_IPC;
    s->kind_reason = "WEFT_CUDA_HEAP=ipc";
    return WEFT_SUCCESS;
  }
  int vmm = 0, fd = 0;
  weft_status st;
  if ((st = CU(cuDeviceGetAttribute, &vmm,
               CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
               s->gpu.device)) ||
      (st = CU(cuDeviceGetAttribute, &fd,
               CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
               s->gpu.device)))
    return st;
  if (!vmm || !fd) {
    plan->kind = HEAP_IPC;
    s->kind_reason = "fallback: the device cannot export VMM memory as file "
                     "descriptors";
    return WEFT_SUCCESS;
  }
  plan->kind = HEAP_VMM;
  s->kind_reason = want && *want ? "WEFT_CUDA_HEAP=vmm" : "default";
  CUmemAllocationProp prop = vmm_prop(s);
  size_t granule = 0;
  if ((st = CU(cuMemGetAllocationGranularity, &granule, &prop,
               CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
    return st;
  if (granule)
    plan->size = (size + granule - 1) / granule * granule;
  return WEFT_SUCCESS;
}

/* Creates this rank's memory and what peers need to reach it: a file
 * descriptor (VMM) or an IPC handle. */
static weft_status create_local(cuda_state *s, int *fd, CUipcMemHandle *ipc) {
  rank_heap *h = &s->heaps[s->gpu.rank];
  weft_status st;
  if (s->kind == HEAP_IPC) {
    if ((st = CU(cuMemAlloc, &h->va, s->heap_size)))
      return st;
    return CU(cuIpcGetMemHandle, ipc, h->va);
  }
  CUmemAllocationProp prop = vmm_prop(s);
  if ((st = CU(cuMemCreate, &h->handle, s->heap_size, &prop, 0)))
    return st;
  h->has_handle = 1;
  return CU(cuMemExportToShareableHandle, fd, h->handle,
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
}

static weft_status map_range(cuda_state *s, rank_heap *h) {
  CUmemAccessDesc desc = read_write(s);
  weft_status st;
  if ((st = CU(cuMemAddressReserve, &h->va, s->heap_size, 0, 0, 0)) ||
      (st = CU(cuMemMap, h->va, s->heap_size, 0, h->handle, 0)))
    return st;
  h->mapped = 1;
  return CU(cuMemSetAccess, h->va, s->heap_size, &desc, 1);
}

/* fds[r]: rank r's exported heap (closed here). */
static weft_status map_vmm(cuda_state *s, int *fds) {
  weft_status st = WEFT_SUCCESS;
  for (int r = 0; r < s->gpu.num_ranks; ++r) {
    rank_heap *h = &s->heaps[r];
    if (r != s->gpu.rank && st == WEFT_SUCCESS) {
      st = CU(cuMemImportFromShareableHandle, &h->handle,
              (void *)(uintptr_t)fds[r], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      h->has_handle = st == WEFT_SUCCESS;
    }
    close(fds[r]);
  }
  for (int r = 0; r < s->gpu.num_ranks && st == WEFT_SUCCESS; ++r)
    st = map_range(s, &s->heaps[r]);
  return st;
}

_Static_assert(sizeof(CUipcMemHandle) <= WEFT_GPU_HANDLE_MAX,
               "a CUDA IPC handle must fit weft_gpu_share_handles");

static weft_status open_ipc(weft_gpu *g, int peer, const void *handle) {
  cuda_state *s = (cuda_state *)g;
  CUipcMemHandle h;
  memcpy(&h, handle, sizeof h);
  return CU(cuIpcOpenMemHandle, &s->heaps[peer].va, h,
            CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
}

/*
 * Multicast (NVLS), only with WEFT_ENABLE_MULTICAST=1 and a VMM heap. Rank 0
 * creates the object and passes it on as a descriptor; every rank adds its
 * device, binds its own heap and maps the object. UNTESTED: multicast
 * objects must not be created on the machines this was developed on.
 */
static weft_status multicast_map(cuda_state *s, uint64_t *base) {
  CUmulticastObjectProp prop = {(unsigned)s->gpu.num_ranks, s->heap_size,
                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0};
  int supported = 0;
  weft_status st = WEFT_SUCCESS;
  /* A driver without the entry points is a platform without multicast. */
  if (s->kind == HEAP_VMM && load_multicast() == WEFT_SUCCESS)
    st = CU(cuDeviceGetAttribute, &supported,
            CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, s->gpu.device);
  if (st == WEFT_SUCCESS && supported)
    st = CU(cuMulticastGetGranularity, &s->mc_granule, &prop,
            CU_MULTICAST_GRANULARITY_MINIMUM);
  int32_t usable = st == WEFT_SUCCESS && supported && s->mc_granule &&
                   s->heap_size % s->mc_granule == 0;
  int32_t all[WEFT_MAX_RANKS];
  st = weft_bootstrap_agree(s->gpu.bs, st, &usable, sizeof usable, all);
  for (int r = 0; st == WEFT_SUCCESS && r < s->gpu.num_ranks; ++r)
    usable &= all[r];
  if (st != WEFT_SUCCESS || !usable)
    return st;

  int fd = -1;
  if (s->gpu.rank == 0) {
    if ((st = CU(cuMulticastCreate, &s->mc_handle, &prop)) == WEFT_SUCCESS) {
      s->has_mc_handle = 1;
      st = CU(cuMemExportToShareableHandle, &fd, s->mc_handle,
              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    }
  } else if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    /* Every rank passes a descriptor; only rank 0's is the object. */
    st = weft_fail(WEFT_ERROR_BACKEND, "cuda backend: cannot open /dev/null");
  }
  if ((st = weft_gpu_agree(&s->gpu, st)) != WEFT_SUCCESS) {
    if (fd >= 0)
      close(fd);
    return st;
  }
  int fds[WEFT_MAX_RANKS];
  st = weft_bootstrap_allgather_fd(s->gpu.bs, fd, fds);
  close(fd);
  if (st != WEFT_SUCCESS)
    return st;
  if (s->gpu.rank != 0) {
    st = CU(cuMemImportFromShareableHandle, &s->mc_handle,
            (void *)(uintptr_t)fds[0], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    s->has_mc_handle = st == WEFT_SUCCESS;
  }
  for (int r = 0; r < s->gpu.num_ranks; ++r)
    close(fds[r]);
  if (st == WEFT_SUCCESS)
    st = CU(cuMulticastAddDevice, s->mc_handle, s->gpu.device);
  /* Binding and mapping block until every device has joined: a rank that
   * failed to join would leave the others hanging there. */
  if ((st = weft_gpu_agree(&s->gpu, st)) != WEFT_SUCCESS)
    return st;
  rank_heap *own = &s->heaps[s->gpu.rank];
  st = CU(cuMulticastBindMem, s->mc_handle, 0, own->handle, 0, s->heap_size, 0);
  s->mc_bound = st == WEFT_SUCCESS;
  CUmemAccessDesc desc = read_write(s);
  if (st == WEFT_SUCCESS &&
      (st = CU(cuMemAddressReserve, &s->mc_va, s->heap_size, s->mc_granule, 0,
               0)) == WEFT_SUCCESS &&
      (st = CU(cuMemMap, s->mc_va, s->heap_size, 0, s->mc_handle, 0)) ==
          WEFT_SUCCESS) {
    s->mc_mapped = 1;
    st = CU(cuMemSetAccess, s->mc_va, s->heap_size, &desc, 1);
  }
  if ((st = weft_gpu_agree(&s->gpu, st)) == WEFT_SUCCESS)
    *base = s->mc_va;
  return st;
}

static weft_status cuda_heap_unmap(void *state) {
  cuda_state *s = state;
  weft_status st = enter(s);
  if (s->mc_mapped)
    weft_keep(&st, CU(cuMemUnmap, s->mc_va, s->heap_size));
  if (s->mc_va)
    weft_keep(&st, CU(cuMemAddressFree, s->mc_va, s->heap_size));
  if (s->mc_bound)
    weft_keep(&st, CU(cuMulticastUnbind, s->mc_handle, s->gpu.device, 0,
                      s->heap_size));
  if (s->has_mc_handle)
    weft_keep(&st, CU(cuMemRelease, s->mc_handle));
  s->mc_va = 0;
  s->mc_mapped = s->mc_bound = s->has_mc_handle = 0;
  for (int r = 0; r < s->gpu.num_ranks; ++r) {
    rank_heap *h = &s->heaps[r];
    if (s->kind == HEAP_IPC && h->va)
      weft_keep(&st, r == s->gpu.rank ? CU(cuMemFree, h->va)
                                      : CU(cuIpcCloseMemHandle, h->va));
    if (h->mapped)
      weft_keep(&st, CU(cuMemUnmap, h->va, s->heap_size));
    if (s->kind == HEAP_VMM && h->va)
      weft_keep(&st, CU(cuMemAddressFree, h->va, s->heap_size));
    if (h->has_handle)
      weft_keep(&st, CU(cuMemRelease, h->handle));
    memset(h, 0, sizeof *h);
  }
  return st;
}

static weft_status map_all(cuda_state *s, size_t size) {
  heap_plan mine = {0, 0, size}, plans[WEFT_MAX_RANKS];
  weft_status st = enter(s);
  if (st == WEFT_SUCCESS)
    st = plan_heap(s, size, &mine);
  st = weft_bootstrap_agree(s->gpu.bs, st, &mine, sizeof mine, plans);
  for (int r = 1; st == WEFT_SUCCESS && r < s->gpu.num_ranks; ++r)
    if (plans[r].kind != plans[0].kind || plans[r].size != plans[0].size)
      st = weft_fail(WEFT_ERROR_ASYMMETRIC, "cuda backend: ranks disagree on "
                     "the heap: rank 0 maps a %s heap of %llu bytes, rank %d "
                     "a %s heap of %llu bytes (set WEFT_CUDA_HEAP alike)",
                     kind_name(plans[0].kind), (unsigned long long)plans[0].size,
                     r, kind_name(plans[r].kind),
                     (unsigned long long)plans[r].size);
  if (st != WEFT_SUCCESS)
    return st;
  s->kind = (heap_kind)mine.kind;
  s->heap_size = mine.size;

  int fd = -1;
  CUipcMemHandle ipc;
  memset(&ipc, 0, sizeof ipc);
  st = create_local(s, &fd, &ipc);
  if (s->kind == HEAP_IPC)
    return weft_gpu_share_handles(&s->gpu, st, &ipc, sizeof ipc, open_ipc);
  int fds[WEFT_MAX_RANKS];
  if ((st = weft_gpu_agree(&s->gpu, st)) == WEFT_SUCCESS &&
      (st = weft_bootstrap_allgather_fd(s->gpu.bs, fd, fds)) == WEFT_SUCCESS)
    st = weft_gpu_agree(&s->gpu, map_vmm(s, fds));
  if (fd >= 0)
    close(fd);
  return st;
}

static weft_status cuda_heap_map(void *state, size_t size, void **bases,
                                 uint64_t *multicast_base) {
  cuda_state *s = state;
  *multicast_base = 0;
  weft_status st = map_all(s, size);
  if (st == WEFT_SUCCESS && weft_env_is("WEFT_ENABLE_MULTICAST", "1"))
    st = multicast_map(s, multicast_base);
  if (st != WEFT_SUCCESS) {
    *multicast_base = 0;
    return weft_gpu_undo(st, cuda_heap_unmap, s);
  }
  for (int r = 0; r < s->gpu.num_ranks; ++r)
    bases[r] = (void *)(uintptr_t)s->heaps[r].va;
  char heap[160];
  snprintf(heap, sizeof heap, "%s heap (%s)", kind_name(s->kind), s->kind_reason);
  weft_gpu_debug(&s->gpu, heap, s->heap_size, *multicast_base != 0);
  return WEFT_SUCCESS;
}

/* ---- copies ---- */

/* to_device: host src to device dst; else device src to host dst. */
static weft_status copy(cuda_state *s, void *dst, const void *src, size_t n,
                        int to_device) {
  CUdeviceptr device = (CUdeviceptr)(uintptr_t)(to_device ? dst : src);
  weft_status st;
  if ((st = enter(s)) ||
      (st = to_device ? CU(cuMemcpyHtoDAsync, device, src, n, s->stream)
                      : CU(cuMemcpyDtoHAsync, dst, device, n, s->stream)))
    return st;
  return CU(cuStreamSynchronize, s->stream);
}

static weft_status cuda_copy_to_device(void *state, void *dst, const void *src,
                                       size_t n) {
  return copy(state, dst, src, n, 1);
}

static weft_status cuda_copy_to_host(void *state, void *dst, const void *src,
                                     size_t n) {
  return copy(state, dst, src, n, 0);
}

static weft_status cuda_memset_async(void *state, void *dst, int value, size_t n,
                                     void *stream) {
  cuda_state *s = state;
  weft_status st = enter(s);
  if (st != WEFT_SUCCESS)
    return st;
  return CU(cuMemsetD8Async, (CUdeviceptr)(uintptr_t)dst, (unsigned char)value, n,
            stream ? (CUstream)stream : s->stream);
}

static weft_status cuda_memset(void *state, void *dst, int value, size_t n) {
  cuda_state *s = state;
  weft_status st = cuda_memset_async(state, dst, value, n, NULL);
  return st != WEFT_SUCCESS ? st : CU(cuStreamSynchronize, s->stream);
}

/* ---- local memory ---- */

/* In relaxed capture mode, so that this thread may allocate while it
 * captures a CUDA graph (the allocation is made at once, not recorded). */
static weft_status cuda_local_alloc(void *state, size_t size, void **out) {
  CUdeviceptr p = 0;
  weft_status st = enter(state);
  if (st != WEFT_SUCCESS)
    return st;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if ((st = CU(cuThreadExchangeStreamCaptureMode, &mode)))
    return st;
  st = CU(cuMemAlloc, &p, size);
  weft_keep(&st, CU(cuThreadExchangeStreamCaptureMode, &mode));
  if (st == WEFT_SUCCESS)
    *out = (void *)(uintptr_t)p;
  else if (p)
    drv.cuMemFree(p);
  return st;
}

static weft_status cuda_local_free(void *state, void *ptr) {
  weft_status st = enter(state);
  return st != WEFT_SUCCESS ? st : CU(cuMemFree, (CUdeviceptr)(uintptr_t)ptr);
}

/* ---- modules and launch ---- */

static weft_status cuda_module_load(void *state, const void *image, size_t size,
                                    weft_module_format format, void **module) {
  weft_status st = enter(state);
  if (st != WEFT_SUCCESS)
    return st;
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
  CUresult r = drv.cuModuleLoadDataEx(&m, image, 2, options, values);
  free(text);
  if (r != CUDA_SUCCESS)
    return weft_fail(WEFT_ERROR_MODULE, "cuda backend: cuModuleLoadDataEx "
                     "(%s): %s: %s%s%s", weft_module_format_name(format),
                     cu_name(r), cu_string(r), log[0] ? ": " : "", log);
  *module = m;
  return WEFT_SUCCESS;
}

static weft_status cuda_module_unload(void *state, void *module) {
  weft_status st = enter(state);
  return st != WEFT_SUCCESS ? st : CU(cuModuleUnload, (CUmodule)module);
}

static weft_status cuda_module_get_function(void *state, void *module,
                                            const char *name, void **function) {
  weft_status st = enter(state);
  if (st != WEFT_SUCCESS)
    return st;
  CUfunction f = NULL;
  CUresult r = drv.cuModuleGetFunction(&f, (CUmodule)module, name);
  if (r == CUDA_ERROR_NOT_FOUND)
    return weft_fail(WEFT_ERROR_NOT_FOUND, "cuda backend: no kernel '%s' in "
                     "the module", name);
  if ((st = cu_check(r, "cuModuleGetFunction")) != WEFT_SUCCESS)
    return st;
  *function = f;
  return WEFT_SUCCESS;
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
  weft_status st = enter(s);
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
  if (!drv.cuOccupancyMaxActiveClusters)
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: %s has no "
                     "cuOccupancyMaxActiveClusters (a resident launch in clusters needs "
                     "CUDA 11.8 or later)", LIBCUDA);
  CUlaunchAttribute shape = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                             .value.clusterDim = {cluster[0], cluster[1], cluster[2]}};
  CUlaunchConfig c = {cluster[0], cluster[1], cluster[2], num_threads, 1, 1,
                      shared_bytes, s->stream, &shape, 1};
  int clusters = 0;
  st = CU(cuOccupancyMaxActiveClusters, &clusters, f, &c);
  if (st == WEFT_SUCCESS)
    *out = (uint32_t)clusters * size;
  return st;
}

static weft_status cuda_launch(void *state, void *function,
                               const weft_launch_config *config, void **args,
                               size_t num_args, const weft_kernel_context *kctx) {
  cuda_state *s = state;
  CUfunction f = function;
  weft_gpu_launch l;
  weft_status st = enter(s);
  if (st == WEFT_SUCCESS)
    st = weft_gpu_launch_begin(&s->gpu, &l, config, args, num_args, kctx);
  if (st != WEFT_SUCCESS)
    return st;
  st = allow_shared(f, config->shared_bytes);
  CUstream stream = config->stream ? (CUstream)config->stream : s->stream;
  if (st == WEFT_SUCCESS && (config->flags & WEFT_LAUNCH_EARLY_START) &&
      drv.cuLaunchKernelEx) {
    CUlaunchAttribute early = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                               .value.programmaticStreamSerializationAllowed = 1};
    CUlaunchConfig c = {config->grid[0], config->grid[1], config->grid[2],
                        l.block, 1, 1, config->shared_bytes, stream, &early, 1};
    st = CU(cuLaunchKernelEx, &c, f, l.params, NULL);
  } else if (st == WEFT_SUCCESS) {
    st = CU(cuLaunchKernel, f, config->grid[0], config->grid[1], config->grid[2],
            l.block, 1, 1, config->shared_bytes, stream, l.params, NULL);
  }
  weft_gpu_launch_end(&l);
  return st;
}

static weft_status cuda_synchronize(void *state, void *stream) {
  cuda_state *s = state;
  weft_status st = enter(s);
  if (st != WEFT_SUCCESS)
    return st;
  return CU(cuStreamSynchronize, stream ? (CUstream)stream : s->stream);
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
  if (!drv.cuTensorMapEncodeTiled)
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "cuda backend: %s has no "
                     "cuTensorMapEncodeTiled (tensor maps need CUDA 12.0 or "
                     "later)", LIBCUDA);
  /* The encoding touches no device, but the driver may still want a
   * context (it documents CUDA_ERROR_INVALID_CONTEXT). */
  weft_status st = enter(state);
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

const weft_backend_ops weft_backend_cuda = {
    .name = "cuda",
    .warp_size = 32,
    .available = cuda_available,
    .open = cuda_open,
    .close = cuda_close,
    .heap_map = cuda_heap_map,
    .heap_unmap = cuda_heap_unmap,
    .local_alloc = cuda_local_alloc,
    .local_free = cuda_local_free,
    .copy_to_device = cuda_copy_to_device,
    .copy_to_host = cuda_copy_to_host,
    .memset_device = cuda_memset,
    .memset_async = cuda_memset_async,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .module_get_function = cuda_module_get_function,
    .launch = cuda_launch,
    .resident_programs = cuda_resident_programs,
    .synchronize = cuda_synchronize,
    .encode_tensor_map = cuda_encode_tensor_map,
};
