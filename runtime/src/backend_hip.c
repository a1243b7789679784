/*
 * The HIP backend, on a dlopen'ed libamdhip64. Each rank drives one device
 * and one non-blocking stream. The symmetric heap is fine-grained device
 * memory (coherent across the GPUs of a node, as peer flags need) shared
 * through HIP IPC handles; every peer's heap is mapped into this process.
 * AMD GPUs have no multicast, so multicast_base is always 0.
 *
 * What does not call the runtime library (opening the device with the peer
 * checks, the IPC-handle exchange, launch parameters) is gpu.c's, shared
 * with the CUDA backend.
 *
 * Compile-verified only: no AMD GPU was available where this was written.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hip_runtime_api.h>

#include "gpu.h"

#define WARP_SIZE 64

/* X(function, return type, parameters), as hip_runtime_api.h declares them;
 * checked against the header below. */
#define HIP_FUNCTIONS(X)                                                       \
  X(hipGetErrorName, const char *, (hipError_t))                               \
  X(hipGetErrorString, const char *, (hipError_t))                             \
  X(hipInit, hipError_t, (unsigned int))                                       \
  X(hipGetDeviceCount, hipError_t, (int *))                                    \
  X(hipSetDevice, hipError_t, (int))                                           \
  X(hipDeviceGetPCIBusId, hipError_t, (char *, int, int))                      \
  X(hipDeviceGetByPCIBusId, hipError_t, (int *, const char *))                 \
  X(hipDeviceCanAccessPeer, hipError_t, (int *, int, int))                     \
  X(hipStreamCreateWithFlags, hipError_t, (hipStream_t *, unsigned int))       \
  X(hipStreamDestroy, hipError_t, (hipStream_t))                               \
  X(hipStreamSynchronize, hipError_t, (hipStream_t))                           \
  X(hipStreamWaitEvent, hipError_t, (hipStream_t, hipEvent_t, unsigned int))   \
  X(hipEventCreateWithFlags, hipError_t, (hipEvent_t *, unsigned int))         \
  X(hipEventDestroy, hipError_t, (hipEvent_t))                                 \
  X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))                     \
  X(hipThreadExchangeStreamCaptureMode, hipError_t, (hipStreamCaptureMode *))  \
  X(hipExtMallocWithFlags, hipError_t, (void **, size_t, unsigned int))        \
  X(hipFree, hipError_t, (void *))                                             \
  X(hipIpcGetMemHandle, hipError_t, (hipIpcMemHandle_t *, void *))             \
  X(hipIpcOpenMemHandle, hipError_t, (void **, hipIpcMemHandle_t, unsigned int)) \
  X(hipIpcCloseMemHandle, hipError_t, (void *))                                \
  X(hipMemcpyAsync, hipError_t,                                                \
    (void *, const void *, size_t, hipMemcpyKind, hipStream_t))                \
  X(hipMemsetAsync, hipError_t, (void *, int, size_t, hipStream_t))            \
  X(hipStreamWaitValue32, hipError_t,                                          \
    (hipStream_t, void *, uint32_t, unsigned int, uint32_t))                   \
  X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *))              \
  X(hipModuleUnload, hipError_t, (hipModule_t))                                \
  X(hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *)) \
  X(hipModuleLaunchKernel, hipError_t,                                         \
    (hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int,    \
     unsigned int, unsigned int, unsigned int, hipStream_t, void **, void **)) \
  X(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, hipError_t,           \
    (int *, hipFunction_t, int, size_t))                                       \
  X(hipDeviceGetAttribute, hipError_t, (int *, hipDeviceAttribute_t, int))        \
  X(hipStreamIsCapturing, hipError_t, (hipStream_t, hipStreamCaptureStatus *)) \
  X(hipStreamBeginCapture, hipError_t, (hipStream_t, hipStreamCaptureMode))    \
  X(hipStreamEndCapture, hipError_t, (hipStream_t, hipGraph_t *))              \
  X(hipGraphInstantiateWithFlags, hipError_t,                                  \
    (hipGraphExec_t *, hipGraph_t, unsigned long long))                        \
  X(hipGraphLaunch, hipError_t, (hipGraphExec_t, hipStream_t))                 \
  X(hipGraphExecDestroy, hipError_t, (hipGraphExec_t))                         \
  X(hipGraphDestroy, hipError_t, (hipGraph_t))

#define TYPEDEF(name, ret, params) typedef ret (*name##_fn) params;
HIP_FUNCTIONS(TYPEDEF)
#undef TYPEDEF

#if defined(__GNUC__)
/* Unevaluated: references no symbol, so nothing links against HIP. */
#define SAME_AS_HEADER(name, ret, params)                                      \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&name), name##_fn),   \
                 #name " does not match hip_runtime_api.h");
HIP_FUNCTIONS(SAME_AS_HEADER)
#undef SAME_AS_HEADER
#endif

/* ---- the runtime library, loaded once per process ---- */

#define FIELD(name, ret, params) name##_fn name;
static struct {
  HIP_FUNCTIONS(FIELD)
  void *lib;
  weft_status status; /* of loading and hipInit */
  char error[256];
} hip;
#undef FIELD

static pthread_once_t hip_once = PTHREAD_ONCE_INIT;

static weft_status hip_check(hipError_t r, const char *call) {
  if (r == hipSuccess)
    return WEFT_SUCCESS;
  const char *name = hip.hipGetErrorName ? hip.hipGetErrorName(r) : NULL;
  const char *text = hip.hipGetErrorString ? hip.hipGetErrorString(r) : NULL;
  return weft_fail(WEFT_ERROR_BACKEND, "hip backend: %s: %s: %s", call,
                   name ? name : "hipErrorUnknown", text ? text : "unknown error");
}

/* HIP(hipFoo, args...): calls HIP, turns an error into a weft_fail. */
#define HIP(fn, ...) hip_check(hip.fn(__VA_ARGS__), #fn)

static void load_hip(void) {
  static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.6",
                                      "libamdhip64.so.5"};
  const char *why = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !hip.lib; ++i)
    if (!(hip.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) && !why)
      why = dlerror();
  if (!hip.lib) {
    hip.status = WEFT_ERROR_UNSUPPORTED;
    snprintf(hip.error, sizeof hip.error, "hip backend: cannot load "
             "libamdhip64 (no ROCm runtime?): %s", why ? why : "?");
    return;
  }
#define RESOLVE(name, ret, params)                                             \
  if (hip.status == WEFT_SUCCESS && !weft_gpu_resolve(hip.lib, #name, &hip.name)) {              \
    hip.status = WEFT_ERROR_UNSUPPORTED;                                       \
    snprintf(hip.error, sizeof hip.error, "hip backend: libamdhip64 has no "   \
             "%s (too old)", #name);                                           \
  }
  HIP_FUNCTIONS(RESOLVE)
#undef RESOLVE
  if (hip.status != WEFT_SUCCESS)
    return;
  hipError_t r = hip.hipInit(0);
  if (r != hipSuccess) {
    /* ROCm answers "no GPU" with either code. */
    int no_gpu = r == hipErrorNoDevice || r == hipErrorInvalidDevice;
    hip.status = no_gpu ? WEFT_ERROR_UNSUPPORTED : WEFT_ERROR_BACKEND;
    snprintf(hip.error, sizeof hip.error, "hip backend: hipInit: %s: %s%s",
             hip.hipGetErrorName(r), hip.hipGetErrorString(r),
             no_gpu ? " (no usable AMD GPU)" : "");
  }
}

static weft_status hip_ready(void) {
  pthread_once(&hip_once, load_hip);
  if (hip.status != WEFT_SUCCESS)
    return weft_fail(hip.status, "%s", hip.error);
  return WEFT_SUCCESS;
}

/* ---- state ---- */

typedef struct hip_state {
  weft_gpu gpu; /* first; gpu.device is the ordinal, gpu.stream a hipStream_t */
  size_t heap_size;
  void *bases[WEFT_MAX_RANKS]; /* own: hipExtMallocWithFlags; peers: IPC */
} hip_state;

typedef struct hip_module {
  hipModule_t module;
  /* HIP does not promise to copy the code object: keep it until unload. */
  void *image;
} hip_module;

/* The current device is per thread: set it for callers on threads other
 * than the one that ran weft_init. */
static weft_status enter(hip_state *s) { return HIP(hipSetDevice, s->gpu.device); }

static hipStream_t own_stream(const weft_gpu *g) { return (hipStream_t)g->stream; }

/* ---- open / close ---- */

static weft_status hip_close(void *state) {
  hip_state *s = state;
  weft_status st = WEFT_SUCCESS;
  if (s->gpu.stream) {
    st = enter(s);
    weft_keep(&st, HIP(hipStreamDestroy, own_stream(&s->gpu)));
  }
  if (s->gpu.copy_stream)
    weft_keep(&st, HIP(hipStreamDestroy, (hipStream_t)s->gpu.copy_stream));
  if (s->gpu.event)
    weft_keep(&st, HIP(hipEventDestroy, (hipEvent_t)s->gpu.event));
  free(s);
  return st;
}

static weft_status device_count(int *count) {
  return HIP(hipGetDeviceCount, count);
}

/* g->ordinal is in range. */
static weft_status open_device(weft_gpu *g) {
  hip_state *s = (hip_state *)g;
  hipStream_t stream = NULL, copy_stream = NULL;
  hipEvent_t event = NULL;
  weft_status st;
  g->device = g->ordinal;
  /* Blocking, as on CUDA: ordered with the null stream torch uses. */
  if ((st = enter(s)) ||
      (st = HIP(hipDeviceGetPCIBusId, g->bus_id, (int)sizeof g->bus_id, g->device)) ||
      (st = HIP(hipStreamCreateWithFlags, &stream, hipStreamDefault)))
    return st;
  g->stream = stream;
  /* The puts' stream: ordered only by events, as on CUDA. */
  if ((st = HIP(hipStreamCreateWithFlags, &copy_stream, hipStreamNonBlocking)))
    return st;
  g->copy_stream = copy_stream;
  if ((st = HIP(hipEventCreateWithFlags, &event, hipEventDisableTiming)))
    return st;
  g->event = event;
  return WEFT_SUCCESS;
}

static int device_by_bus_id(int *device, const char *bus_id) {
  return hip.hipDeviceGetByPCIBusId(device, bus_id) == hipSuccess;
}

static weft_status can_access_peer(int *can, int device, int peer_device) {
  return HIP(hipDeviceCanAccessPeer, can, device, peer_device);
}


/* ---- the symmetric heap ---- */

static weft_status hip_heap_unmap(void *state) {
  hip_state *s = state;
  weft_status st = enter(s);
  for (int r = 0; r < s->gpu.num_ranks; ++r) {
    if (!s->bases[r])
      continue;
    weft_keep(&st, r == s->gpu.rank ? HIP(hipFree, s->bases[r])
                           : HIP(hipIpcCloseMemHandle, s->bases[r]));
    s->bases[r] = NULL;
  }
  return st;
}

static weft_status create_local(hip_state *s, hipIpcMemHandle_t *handle) {
  weft_status st = enter(s);
  if (st == WEFT_SUCCESS)
    st = HIP(hipExtMallocWithFlags, &s->bases[s->gpu.rank], s->heap_size,
             hipDeviceMallocFinegrained);
  if (st == WEFT_SUCCESS)
    st = HIP(hipIpcGetMemHandle, handle, s->bases[s->gpu.rank]);
  return st;
}

_Static_assert(sizeof(hipIpcMemHandle_t) <= WEFT_GPU_HANDLE_MAX,
               "a HIP IPC handle must fit weft_gpu_share_handles");

static weft_status open_peer(weft_gpu *g, int peer, const void *handle) {
  hip_state *s = (hip_state *)g;
  hipIpcMemHandle_t h;
  memcpy(&h, handle, sizeof h);
  return HIP(hipIpcOpenMemHandle, &s->bases[peer], h,
             hipIpcMemLazyEnablePeerAccess);
}

static weft_status hip_heap_map(void *state, size_t size, weft_heap_layout *out) {
  hip_state *s = state;
  s->heap_size = size;
  hipIpcMemHandle_t mine;
  memset(&mine, 0, sizeof mine);
  weft_status st = weft_gpu_share_handles(&s->gpu, create_local(s, &mine), &mine,
                                          sizeof mine, open_peer);
  if (st != WEFT_SUCCESS)
    return weft_gpu_undo(st, hip_heap_unmap, s);
  for (int r = 0; r < s->gpu.num_ranks; ++r)
    out->bases[r] = s->bases[r];
  weft_gpu_debug(&s->gpu, "fine-grained ipc heap", s->heap_size, 0);
  return WEFT_SUCCESS;
}

/* ---- the driver calls of gpu.c's copies, memory and launches ---- */

static weft_status hip_enter(weft_gpu *g) { return enter((hip_state *)g); }

static weft_status copy_async(weft_gpu *g, void *dst, const void *src, size_t n,
                              int to_device) {
  return HIP(hipMemcpyAsync, dst, src, n,
             to_device ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost, own_stream(g));
}

static weft_status memset_async(weft_gpu *g, void *dst, int value, size_t n, void *stream) {
  (void)g;
  return HIP(hipMemsetAsync, dst, value, n, (hipStream_t)stream);
}

static weft_status stream_synchronize(weft_gpu *g, void *stream) {
  (void)g;
  return HIP(hipStreamSynchronize, (hipStream_t)stream);
}

static weft_status stream_after(weft_gpu *g, void *stream, void *after) {
  weft_status st = HIP(hipEventRecord, (hipEvent_t)g->event, (hipStream_t)after);
  return st != WEFT_SUCCESS ? st
                            : HIP(hipStreamWaitEvent, (hipStream_t)stream,
                                  (hipEvent_t)g->event, 0);
}

static weft_status copy_device_async(weft_gpu *g, void *dst, const void *src, size_t n,
                                     void *stream) {
  (void)g;
  return HIP(hipMemcpyAsync, dst, src, n, hipMemcpyDefault, (hipStream_t)stream);
}

/* The word counts up from 0 to below 2^31: HIP's unsigned >= agrees with
 * CUDA's wrapping one. */
static weft_status stream_wait_value(weft_gpu *g, void *stream, const void *word,
                                     uint32_t value) {
  (void)g;
  return HIP(hipStreamWaitValue32, (hipStream_t)stream, (void *)(uintptr_t)word, value,
             hipStreamWaitValueGte, 0xffffffffu);
}

static weft_status exchange_capture_mode(int *mode) {
  hipStreamCaptureMode m = (hipStreamCaptureMode)*mode;
  weft_status st = HIP(hipThreadExchangeStreamCaptureMode, &m);
  *mode = (int)m;
  return st;
}

/* ---- graphs ---- */

static weft_status capturing(weft_gpu *g, void *stream, int *out) {
  (void)g;
  hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
  weft_status st = HIP(hipStreamIsCapturing, (hipStream_t)stream, &status);
  *out = status != hipStreamCaptureStatusNone;
  return st;
}

static weft_status capture_begin(weft_gpu *g, void *stream) {
  (void)g;
  return HIP(hipStreamBeginCapture, (hipStream_t)stream, hipStreamCaptureModeThreadLocal);
}

static weft_status capture_end(weft_gpu *g, void *stream, void **exec) {
  (void)g;
  hipGraph_t graph = NULL;
  hipGraphExec_t made = NULL;
  weft_status st = HIP(hipStreamEndCapture, (hipStream_t)stream, &graph);
  if (st == WEFT_SUCCESS)
    st = HIP(hipGraphInstantiateWithFlags, &made, graph, 0);
  if (graph)
    weft_keep(&st, HIP(hipGraphDestroy, graph)); /* the instance keeps what it needs */
  *exec = st == WEFT_SUCCESS ? made : NULL;
  return st;
}

static weft_status graph_launch(weft_gpu *g, void *exec, void *stream) {
  (void)g;
  return HIP(hipGraphLaunch, (hipGraphExec_t)exec, (hipStream_t)stream);
}

static weft_status graph_destroy(weft_gpu *g, void *exec) {
  (void)g;
  return HIP(hipGraphExecDestroy, (hipGraphExec_t)exec);
}

static weft_status device_alloc(weft_gpu *g, size_t size, void **out) {
  (void)g;
  return HIP(hipExtMallocWithFlags, out, size, hipDeviceMallocDefault);
}

static weft_status device_free(weft_gpu *g, void *ptr) {
  (void)g;
  return HIP(hipFree, ptr);
}

/* ---- modules and launch ---- */

static weft_status hip_module_load(void *state, const void *image, size_t size,
                                   weft_module_format format, void **module) {
  (void)format; /* HSACO: module.c admits nothing else to this backend */
  weft_status st = enter(state);
  if (st != WEFT_SUCCESS)
    return st;
  hip_module *m = calloc(1, sizeof *m);
  if (!m || !(m->image = malloc(size))) {
    free(m);
    return weft_gpu_no_memory(state);
  }
  memcpy(m->image, image, size);
  hipError_t r = hip.hipModuleLoadData(&m->module, m->image);
  if (r != hipSuccess) {
    st = weft_fail(WEFT_ERROR_MODULE, "hip backend: hipModuleLoadData "
                   "(HSACO): %s: %s", hip.hipGetErrorName(r),
                   hip.hipGetErrorString(r));
    free(m->image);
    free(m);
    return st;
  }
  *module = m;
  return WEFT_SUCCESS;
}

static weft_status hip_module_unload(void *state, void *module) {
  hip_module *m = module;
  weft_status st = enter(state);
  weft_keep(&st, HIP(hipModuleUnload, m->module));
  free(m->image);
  free(m);
  return st;
}

static weft_status find_function(weft_gpu *g, void *module, const char *name,
                                 void **function, int *found) {
  (void)g;
  hipFunction_t f = NULL;
  hipError_t r = hip.hipModuleGetFunction(&f, ((hip_module *)module)->module,
                                          name);
  if (r == hipErrorNotFound)
    return WEFT_SUCCESS;
  *found = 1;
  *function = f;
  return hip_check(r, "hipModuleGetFunction");
}

/* Dynamic LDS up to the device limit needs no opt-in on AMD GPUs; HIP
 * copies the parameters into the kernarg segment. */
static weft_status launch_kernel(weft_gpu *g, void *function, const weft_launch_config *config,
                                 void **params, unsigned block) {
  return HIP(hipModuleLaunchKernel, (hipFunction_t)function, config->grid[0],
             config->grid[1], config->grid[2], block, 1, 1, config->shared_bytes,
             config->stream ? (hipStream_t)config->stream : own_stream(g), params, NULL);
}

/* AMD GPUs have no clusters: a cluster is only a grouping of programs. */
static weft_status hip_resident_programs(void *state, void *function,
                                         uint32_t num_threads, uint32_t shared_bytes,
                                         const uint32_t cluster[3], uint32_t *out) {
  hip_state *s = state;
  (void)cluster;
  int per_cu = 0, cus = 0;
  weft_status st = enter(s);
  if (st == WEFT_SUCCESS)
    st = HIP(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, &per_cu,
             (hipFunction_t)function, (int)num_threads, (size_t)shared_bytes);
  if (st == WEFT_SUCCESS)
    st = HIP(hipDeviceGetAttribute, &cus, hipDeviceAttributeMultiprocessorCount,
             s->gpu.device);
  if (st == WEFT_SUCCESS)
    *out = (uint32_t)per_cu * (uint32_t)cus;
  return st;
}

static const weft_gpu_ops gpu_ops = {
    .backend = &weft_backend_hip,
    .interconnect = "xGMI",
    .visible_devices = "HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES",
    .state_size = sizeof(hip_state),
    .ready = hip_ready,
    .device_count = device_count,
    .open_device = open_device,
    .device_by_bus_id = device_by_bus_id,
    .can_access_peer = can_access_peer,
    .enter = hip_enter,
    .copy_async = copy_async,
    .memset_async = memset_async,
    .stream_synchronize = stream_synchronize,
    .stream_after = stream_after,
    .copy_device_async = copy_device_async,
    .stream_wait_value = stream_wait_value,
    .exchange_capture_mode = exchange_capture_mode,
    .relaxed_capture = hipStreamCaptureModeRelaxed,
    .device_alloc = device_alloc,
    .device_free = device_free,
    .find_function = find_function,
    .launch_kernel = launch_kernel,
    .capturing = capturing,
    .capture_begin = capture_begin,
    .capture_end = capture_end,
    .graph_launch = graph_launch,
    .graph_destroy = graph_destroy,
};

static int hip_available(void) { return weft_gpu_available(&gpu_ops); }

static weft_status hip_open(const weft_backend_params *params, void **state) {
  return weft_gpu_open(&gpu_ops, params, state);
}

const weft_backend_ops weft_backend_hip = {
    .name = "hip",
    .warp_size = WARP_SIZE,
    .available = hip_available,
    .open = hip_open,
    .close = hip_close,
    .heap_map = hip_heap_map,
    .heap_unmap = hip_heap_unmap,
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
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .module_get_function = weft_gpu_module_get_function,
    .launch = weft_gpu_launch,
    .resident_programs = hip_resident_programs,
    .synchronize = weft_gpu_synchronize,
    .graph_begin = weft_gpu_graph_begin,
    .graph_end = weft_gpu_graph_end,
    .graph_launch = weft_gpu_graph_launch,
    .graph_destroy = weft_gpu_graph_destroy,
};
