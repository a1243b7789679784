/*
 * What the GPU backends (cuda, hip) share beyond their drivers: opening the
 * device with the exchange of every rank's GPU identity and the peer checks,
 * the exchange of IPC handles, copies, memsets, local memory, launches and
 * synchronization (the backends' entry points for these are the
 * weft_gpu_* below), the WEFT_DEBUG line and failure bookkeeping. A
 * backend's state begins with a weft_gpu; the driver comes in through
 * weft_gpu_ops. Messages name the backend ("cuda backend: ...").
 *
 * Setup steps are collective: after each one every rank learns whether any
 * rank failed (weft_bootstrap_agree), so a local failure fails the whole job
 * with its message instead of leaving peers waiting in the next exchange.
 */
#ifndef WEFT_RUNTIME_GPU_H
#define WEFT_RUNTIME_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define WEFT_GPU_STACK_ARGS 32 /* launch parameters without a malloc */
#define WEFT_GPU_HANDLE_MAX 64 /* bytes of one IPC handle (CUDA's, HIP's) */

#define WEFT_GPU_KERNEL_GRAPHS 64 /* launches kept as one-launch graphs */
#define WEFT_GPU_PACED_STREAMS 8  /* streams whose backlog launches watch */
#define WEFT_GPU_PACE_EVERY 8     /* launches between two looks at a backlog */

typedef struct weft_gpu weft_gpu;

/* A launch that repeats, kept as a graph of that one launch (see
 * weft_gpu_launch): the launch, then the driver's graph, its instance and
 * its kernel node (NULL until made). */
typedef struct weft_gpu_kernel_graph {
  void *function, *stream; /* stream: resolved (never NULL) */
  uint32_t grid[3], block, shared_bytes;
  void *graph, *exec, *node;
  int failed; /* the driver could not make it: this launch stays eager */
  /* The arguments the node holds, byte for byte (`held`, valid when
   * `holds`), and each one's size: a launch with the same bytes launches
   * the instance without setting them. NULL where the backend cannot tell
   * the kernel's parameter sizes (every launch sets them). */
  size_t num_params, *param_sizes;
  unsigned char *held;
  int holds;
} weft_gpu_kernel_graph;

/* How far the GPU is behind a stream's launches (see weft_gpu_launch): a
 * mark recorded on it every WEFT_GPU_PACE_EVERY launches; `behind` when
 * the previous mark had not passed by then. */
typedef struct weft_gpu_pace {
  void *stream, *mark; /* mark: the backend's event, made on first use */
  unsigned launches;
  int behind;
} weft_gpu_pace;

typedef struct weft_gpu_ops {
  const weft_backend_ops *backend; /* its name, warp size and close */
  const char *interconnect;        /* "NVLink", "xGMI" */
  /* What reaches ranks on other nodes ("NVSHMEM"); NULL: the backend
   * takes jobs of one node only. */
  const char *engine;
  const char *visible_devices;     /* the variables that pick visible GPUs */
  size_t state_size;               /* the backend's state, a weft_gpu first */
  /* Loads the driver (once per process); weft_fail's when it cannot. */
  weft_status (*ready)(void);
  weft_status (*device_count)(int *count);
  /* Opens g->ordinal (in range): sets g->device and g->bus_id, and makes
   * whatever else the backend keeps (context, stream). */
  weft_status (*open_device)(weft_gpu *g);
  /* 1 and *device when this process sees the GPU at PCI bus_id; quiet. */
  int (*device_by_bus_id)(int *device, const char *bus_id);
  weft_status (*can_access_peer)(int *can, int device, int peer_device);

  /* The driver calls the shared entry points are made of; a NULL stream
   * is the backend's own (g->stream). */
  /* Makes g's device current on this thread. */
  weft_status (*enter)(weft_gpu *g);
  /* Starts copying n bytes from host src to device dst (to_device), else
   * from device src to host dst, on g's stream. */
  weft_status (*copy_async)(weft_gpu *g, void *dst, const void *src, size_t n,
                            int to_device);
  weft_status (*memset_async)(weft_gpu *g, void *dst, int value, size_t n,
                              void *stream);
  weft_status (*stream_synchronize)(weft_gpu *g, void *stream);
  /* Exchanges this thread's stream-capture mode with *mode; relaxed_capture
   * is the relaxed mode's value, in which a thread that captures a graph
   * may allocate (the allocation is made at once, not recorded). */
  weft_status (*exchange_capture_mode)(int *mode);
  int relaxed_capture;
  weft_status (*device_alloc)(weft_gpu *g, size_t size, void **out);
  weft_status (*device_free)(weft_gpu *g, void *ptr);
  /* Looks kernel `name` up in a loaded module: *found is 0 (and the status
   * a success) when the module has none. Loading differs per driver (CUDA
   * JIT-compiles PTX with a log, HIP keeps the image alive), so each backend
   * keeps its own module_load. */
  weft_status (*find_function)(weft_gpu *g, void *module, const char *name,
                               void **function, int *found);
  /* Work launched on `stream` from now on waits for what was launched on
   * `after` so far (g->event recorded there, waited for here). */
  weft_status (*stream_after)(weft_gpu *g, void *stream, void *after);
  /* Starts copying n bytes between two device addresses (this device's or
   * a mapped peer's) on `stream`. */
  weft_status (*copy_device_async)(weft_gpu *g, void *dst, const void *src, size_t n,
                                   void *stream);
  /* Work on `stream` from now on waits until the 32-bit word at `word`
   * has reached `value` (a stream memory operation). */
  weft_status (*stream_wait_value)(weft_gpu *g, void *stream, const void *word,
                                   uint32_t value);
  /* Launches function with params (the arguments, then the kernel context)
   * in blocks of `block` threads, on config->stream, else g's stream. */
  weft_status (*launch_kernel)(weft_gpu *g, void *function,
                               const weft_launch_config *config, void **params,
                               unsigned block);
  /* Graphs of a stream's work (weft_graph_begin): *capturing is whether
   * `stream` is being captured; capture_begin starts capturing it for
   * this thread only; capture_end stops and instantiates (*exec NULL where
   * the capture failed, which the status says); then launch and destroy.
   * WEFT_ERROR_UNSUPPORTED where the driver has no graphs. */
  weft_status (*capturing)(weft_gpu *g, void *stream, int *capturing);
  weft_status (*capture_begin)(weft_gpu *g, void *stream);
  weft_status (*capture_end)(weft_gpu *g, void *stream, void **exec);
  weft_status (*graph_launch)(weft_gpu *g, void *exec, void *stream);
  weft_status (*graph_destroy)(weft_gpu *g, void *exec);
  /* One-launch graphs (weft_gpu_launch); NULL where the backend keeps
   * every launch eager. kernel_graph_make makes k's graph, instance and
   * node from k's launch with params; kernel_graph_launch sets the node's
   * params, then launches the instance on k->stream; kernel_graph_destroy
   * frees what make made. */
  weft_status (*kernel_graph_make)(weft_gpu *g, weft_gpu_kernel_graph *k, void **params);
  weft_status (*kernel_graph_launch)(weft_gpu *g, const weft_gpu_kernel_graph *k,
                                     void **params);
  weft_status (*kernel_graph_destroy)(weft_gpu *g, weft_gpu_kernel_graph *k);
  /* 1 and the sizes in bytes of function's first `count` parameters where
   * the driver can tell, else 0; quiet. NULL: never. */
  int (*param_sizes)(void *function, size_t count, size_t *sizes);
  /* Marks for the pace of a stream: mark records *mark (made first where
   * NULL) on `stream`; *passed: the GPU has run everything before it. */
  weft_status (*mark)(weft_gpu *g, void *stream, void **mark);
  weft_status (*mark_passed)(weft_gpu *g, void *mark, int *passed);
  weft_status (*mark_destroy)(weft_gpu *g, void *mark);
} weft_gpu_ops;

struct weft_gpu {
  const weft_gpu_ops *ops;
  int rank, num_ranks;
  int local_size, num_nodes; /* nodes of local_size consecutive ranks */
  int ordinal;     /* the device as this process counts them */
  int device;      /* the driver's handle of it (CUdevice; HIP: the ordinal) */
  void *stream;    /* the backend's own stream (CUstream, hipStream_t) */
  void *copy_stream; /* where the copy engine's puts run */
  void *event;       /* stream_after's */
  weft_bootstrap *bs;
  char bus_id[32]; /* PCI */
  weft_gpu_kernel_graph kernel_graphs[WEFT_GPU_KERNEL_GRAPHS];
  weft_gpu_pace paces[WEFT_GPU_PACED_STREAMS];
  unsigned next_pace;  /* the slot a new stream takes (round robin) */
  int graph_launches;  /* WEFT_KERNEL_GRAPHS unset or 1; 0 turns them off */
};

/* Stores dlsym(lib, symbol) into the function pointer at slot (POSIX lets
 * a void * carry a function address); 0 when the symbol is missing. */
int weft_gpu_resolve(void *lib, const char *symbol, void *slot);

/* The backend's `available`: the driver loads and shows a device. */
int weft_gpu_available(const weft_gpu_ops *ops);

/* The backend's `open`, collective: allocates the state, loads the driver,
 * opens the device, then every rank exchanges its GPU's bus id and checks
 * that each pair of ranks of a node has distinct GPUs that reach each
 * other (a job across nodes needs the backend's engine). On failure the
 * state is closed again and *state stays NULL. */
weft_status weft_gpu_open(const weft_gpu_ops *ops,
                          const weft_backend_params *params, void **state);

/* Collective: weft_bootstrap_agree without a payload. */
weft_status weft_gpu_agree(const weft_gpu *g, weft_status mine);

/* Collective: after this rank's verdict `mine` on creating its memory,
 * exchanges every rank's `len`-byte IPC handle (len <= WEFT_GPU_HANDLE_MAX,
 * which the backends assert at compile time) and opens every peer's with
 * open_peer, then agrees on that. */
typedef weft_status (*weft_gpu_open_peer_fn)(weft_gpu *g, int peer,
                                             const void *handle);
weft_status weft_gpu_share_handles(weft_gpu *g, weft_status mine,
                                   const void *handle, size_t len,
                                   weft_gpu_open_peer_fn open_peer);

/* Undoes a failed step with undo(state) (unmap, close) and returns st with
 * the failure's message, which the undoing may have overwritten. */
weft_status weft_gpu_undo(weft_status st, weft_status (*undo)(void *state),
                          void *state);

/* First failure wins; cleanup goes on regardless. */
void weft_keep(weft_status *first, weft_status st);

weft_status weft_gpu_no_memory(const weft_gpu *g);

/* With WEFT_DEBUG=1: "weft: rank R: cuda backend: device D (PCI ...), HEAP,
 * N bytes per rank, multicast on|off" on stderr. */
void weft_gpu_debug(const weft_gpu *g, const char *heap, size_t bytes,
                    int multicast);

/* The entry points of weft_backend_ops that both backends take from here
 * (backend.h says what each does); `state` is the backend's, a weft_gpu
 * first. Copies and memset complete before they return; local memory is
 * allocated in relaxed capture mode, so that a thread may allocate while it
 * captures a graph; a launch passes args, then the kernel context by value
 * (the driver copies it at launch), in blocks of config's threads, else
 * four warps.
 *
 * A launch onto a stream that is not being captured, the same as the
 * previous launch of its slot (function, stream, grid, block, shared
 * memory), goes through a graph of that one launch, its arguments set
 * each time, unless the GPU is behind that stream: setting and launching
 * the graph costs the driver's host about 1.4 us less than an eager
 * launch, and the GPU about 1.2 us more (the graph's own launch, and no
 * early start against the kernel ahead). So the graphs pay while the GPU
 * keeps up with the launches (small kernels, eager decode steps) and cost
 * once launches queue up behind it; every WEFT_GPU_PACE_EVERY launches
 * the stream gets a mark, and a mark the GPU has not passed by the next
 * one (that many launches queued) sends launches eager until one is
 * passed (bench/README.md, "Launches through one-launch graphs").
 * WEFT_KERNEL_GRAPHS=0 keeps every launch eager. */
weft_status weft_gpu_copy_to_device(void *state, void *dst, const void *src, size_t n);
weft_status weft_gpu_copy_to_host(void *state, void *dst, const void *src, size_t n);
weft_status weft_gpu_memset_async(void *state, void *dst, int value, size_t n,
                                  void *stream);
weft_status weft_gpu_memset(void *state, void *dst, int value, size_t n);
weft_status weft_gpu_local_alloc(void *state, size_t size, void **out);
weft_status weft_gpu_local_free(void *state, void *ptr);
weft_status weft_gpu_module_get_function(void *state, void *module,
                                         const char *name, void **function);
weft_status weft_gpu_launch(void *state, void *function,
                            const weft_launch_config *config, void **args,
                            size_t num_args, const weft_kernel_context *kctx);
weft_status weft_gpu_synchronize(void *state, void *stream);
/* Frees every one-launch graph: before a module is unloaded (a graph may
 * hold one of its kernels) and, with the streams' marks, before the device
 * is closed. */
void weft_gpu_kernel_graphs_free(weft_gpu *g);
void weft_gpu_paces_free(weft_gpu *g);
/* weft_put_fork, weft_put_signal_async (translated puts), weft_put_wait
 * and weft_put_join, on g->copy_stream. */
weft_status weft_gpu_put_fork(void *state, void *stream);
weft_status weft_gpu_put_signal(void *state, const weft_put *puts, size_t count);
weft_status weft_gpu_put_wait(void *state, const void *count, uint32_t value,
                              uint64_t timeout_ns);
weft_status weft_gpu_put_join(void *state, void *stream);
/* weft_graph_begin, _end, _launch and _destroy (backend.h). */
weft_status weft_gpu_graph_begin(void *state, void *stream);
weft_status weft_gpu_graph_end(void *state, void *stream, void **exec);
weft_status weft_gpu_graph_launch(void *state, void *exec, void *stream);
weft_status weft_gpu_graph_destroy(void *state, void *exec);

#endif /* WEFT_RUNTIME_GPU_H */
