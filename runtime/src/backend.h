/*
 * The seam between the backend-independent runtime (bootstrap, allocator,
 * error handling, module bookkeeping) and one device backend (host, cuda,
 * hip). A backend owns its driver (loaded with dlopen, so one libweft runs
 * with or without a GPU) and the memory behind the symmetric heap.
 */
#ifndef WEFT_RUNTIME_BACKEND_H
#define WEFT_RUNTIME_BACKEND_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/runtime.h"

typedef struct weft_bootstrap weft_bootstrap;

/* Collectives over the rendezvous sockets, usable by backends while they
 * set up the heap. Implemented in bootstrap.c. */
weft_status weft_bootstrap_allgather(weft_bootstrap *bs, const void *mine,
                                     size_t len, void *all /* len * nranks */);
/* Every rank contributes one file descriptor (passed with SCM_RIGHTS);
 * fds[r] receives this process's descriptor for rank r's (fds[rank] is a
 * dup of myfd). The caller closes them. */
weft_status weft_bootstrap_allgather_fd(weft_bootstrap *bs, int myfd, int *fds);
weft_status weft_bootstrap_barrier(weft_bootstrap *bs);
/* Collective, for setup steps that can fail on some ranks only. Every rank
 * contributes its local verdict `mine` (when it is a failure, the calling
 * thread's weft_fail message goes with it) and `len` bytes of payload.
 * Every rank returns its own failure if it had one, else the first failing
 * rank's ("rank N: message"), else success with all[] (len * number of
 * ranks bytes) filled in. */
weft_status weft_bootstrap_agree(weft_bootstrap *bs, weft_status mine,
                                 const void *payload, size_t len, void *all);

/* Records a failure for the calling thread and returns `status`, so that
 * backends can write `return weft_fail(WEFT_ERROR_BACKEND, "...", ...)`.
 * The public entry points copy the message into the context. */
weft_status weft_fail(weft_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

typedef struct weft_backend_params {
  int rank;
  int num_ranks;
  int local_rank;
  int device; /* device ordinal for GPU backends */
  weft_bootstrap *bootstrap;      /* every rank */
  /* The ranks of this node (rank / local_size), numbered rank %
   * local_size; the same as bootstrap when the job is one node. Only it
   * passes descriptors. */
  weft_bootstrap *node_bootstrap;
  int local_size;
  int num_nodes;
  /* The symmetric heap's allocations (an engine checks ranges with them). */
  const struct weft_allocator *allocator;
} weft_backend_params;

/* What a backend's heap gives the kernel context. */
typedef struct weft_heap_layout {
  /* This process's address of rank r's heap (device addresses on GPU
   * backends), NULL for a rank on another node. */
  void *bases[WEFT_MAX_RANKS];
  /* 0 unless the user opted in (WEFT_ENABLE_MULTICAST=1) and the platform
   * supports it. */
  uint64_t multicast_base;
  /* What the kernel context's `engine` carries (abi.h), NULL where kernels
   * need none. */
  void *engine;
  /* WEFT_CTX_ENGINE when the job runs an engine for unmapped peers. */
  uint32_t flags;
} weft_heap_layout;

typedef struct weft_backend_ops {
  const char *name;  /* "host", "cuda", "hip" */
  uint32_t warp_size;
  /* 1 when the driver loads and a device is present; never fails loudly. */
  int (*available)(void);
  weft_status (*open)(const weft_backend_params *params, void **state);
  weft_status (*close)(void *state);

  /* Collective. Creates this rank's heap of `size` bytes, exchanges it
   * with every peer of its node and maps theirs, and says how kernels
   * reach the rest (*out, zeroed by the caller). */
  weft_status (*heap_map)(void *state, size_t size, weft_heap_layout *out);
  weft_status (*heap_unmap)(void *state);

  /* This rank's own memory outside the heap (weft_malloc_local): at least
   * WEFT_HEAP_ALIGN-aligned, allowed while the calling thread captures a
   * graph; free runs after the caller made sure nothing launched still
   * uses it. */
  weft_status (*local_alloc)(void *state, size_t size, void **out);
  weft_status (*local_free)(void *state, void *ptr);

  /* Copies between host memory and this rank's device memory (plain
   * memcpy on the host backend). Synchronous. */
  weft_status (*copy_to_device)(void *state, void *dst, const void *src, size_t n);
  weft_status (*copy_to_host)(void *state, void *dst, const void *src, size_t n);
  weft_status (*memset_device)(void *state, void *dst, int value, size_t n);
  /* The same on `stream` (NULL: the backend's own), ordered like a launch
   * and not waited for (a memset node under graph capture). */
  weft_status (*memset_async)(void *state, void *dst, int value, size_t n, void *stream);

  /* weft_put_fork, weft_put_signal_async (dst and signal this process's
   * addresses of the peer's memory) and weft_put_join. */
  weft_status (*put_fork)(void *state, void *stream);
  weft_status (*put_signal)(void *state, const weft_put *puts, size_t count);
  weft_status (*put_join)(void *state, void *stream);
  /* weft_put_wait, checked; timeout_ns (0: none) bounds a wait that the
   * backend makes on the calling thread. */
  weft_status (*put_wait)(void *state, const void *count, uint32_t value,
                        uint64_t timeout_ns);

  weft_status (*module_load)(void *state, const void *image, size_t size,
                             weft_module_format format, void **module);
  weft_status (*module_unload)(void *state, void *module);
  weft_status (*module_get_function)(void *state, void *module,
                                     const char *name, void **function);
  /* Appends *kctx by value after args. Asynchronous on GPU backends. */
  weft_status (*launch)(void *state, void *function,
                        const weft_launch_config *config, void **args,
                        size_t num_args, const weft_kernel_context *kctx);
  weft_status (*synchronize)(void *state, void *stream);
  /* How many programs of `function`, num_threads threads and shared_bytes
   * of dynamic shared memory each, in clusters of the (validated) cluster
   * shape where the device has clusters, it runs at once (with nothing
   * else running): 0 when not even one fits. weft_launch keeps whole
   * clusters of them. */
  weft_status (*resident_programs)(void *state, void *function, uint32_t num_threads,
                                   uint32_t shared_bytes, const uint32_t cluster[3],
                                   uint32_t *out);

  /* Optional; NULL where there are no graphs (host). weft_graph_begin,
   * _end (*exec NULL and the status the reason where capturing failed),
   * _launch and _destroy (runtime.h) on a NULL or the caller's stream. */
  weft_status (*graph_begin)(void *state, void *stream);
  weft_status (*graph_end)(void *state, void *stream, void **exec);
  weft_status (*graph_launch)(void *state, void *exec, void *stream);
  weft_status (*graph_destroy)(void *state, void *exec);

  /* Optional; NULL where kernels make no bulk tensor copies (descriptors
   * keep a zero map). Encodes the 128-byte, 64-byte aligned tensor map at
   * map128 for a map that weft_tensor_desc_encode has checked, dimensions
   * outermost first as there: map dimension j has extents[j] coordinates,
   * byte_strides[j] bytes between neighbours (byte_strides[map_rank-1] is
   * elem_size) and map[j].box coordinates per copy. */
  weft_status (*encode_tensor_map)(void *state, void *map128, const void *base,
                                   size_t elem_size, int map_rank,
                                   const weft_tensor_map_dim *map,
                                   const uint64_t *extents, const uint64_t *byte_strides,
                                   int swizzle);
} weft_backend_ops;

extern const weft_backend_ops weft_backend_host;
extern const weft_backend_ops weft_backend_cuda;
extern const weft_backend_ops weft_backend_hip;

#endif /* WEFT_RUNTIME_BACKEND_H */
