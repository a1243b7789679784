/*
 * The Weft runtime: rank bootstrap, the symmetric heap, module load and
 * kernel launch. C11, link with -lweft.
 *
 * Every call that can fail returns a weft_status and leaves a message for
 * weft_last_error(). Nothing here aborts or exits the process.
 */
#ifndef WEFT_RUNTIME_H
#define WEFT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "weft/abi.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_context weft_context;
typedef struct weft_module weft_module;
typedef struct weft_kernel weft_kernel;

typedef enum weft_backend {
  WEFT_BACKEND_DEFAULT = 0, /* WEFT_BACKEND, else cuda if a GPU is usable, else host */
  WEFT_BACKEND_HOST = 1,
  WEFT_BACKEND_CUDA = 2,
  WEFT_BACKEND_HIP = 3,
} weft_backend;

typedef struct weft_init_options {
  weft_backend backend;
  int rank;        /* -1: from the environment */
  int world_size;  /* -1: from the environment */
  int local_rank;  /* -1: from the environment */
  int device;      /* -1: local_rank */
  const char *job_id;   /* NULL: WEFT_JOB_ID (or a single-rank default) */
  size_t heap_size;     /* 0: WEFT_HEAP_SIZE, else 1 GiB (GPU) / 256 MiB (host) */
  double timeout_s;     /* bootstrap timeout; <= 0: WEFT_BOOTSTRAP_TIMEOUT or 60 */
  /* Ranks per node, the job's ranks in order forming nodes of as many:
   * -1 from the environment (WEFT_LOCAL_SIZE, else the launcher's count of
   * a host's ranks), else the whole job when rank and world_size are
   * given. docs/multinode.md. */
  int local_size;
} weft_init_options;

/* Fills *opts with "everything from the environment". */
void weft_init_options_default(weft_init_options *opts);

/* Collective: every rank of the job calls it. opts may be NULL. */
weft_status weft_init(const weft_init_options *opts, weft_context **out);
/* Collective. Frees every allocation and module of ctx. */
weft_status weft_finalize(weft_context *ctx);

int weft_rank(const weft_context *ctx);
int weft_num_ranks(const weft_context *ctx);
/* This process's index among the ranks on its machine (it picks the
 * device). */
int weft_local_rank(const weft_context *ctx);
/* The node layout: nodes of weft_local_size consecutive ranks; this rank
 * is on node weft_node of weft_num_nodes. Peers on other nodes are reached
 * only by the engine's operations (weft.put/get/signal), not by loads and
 * stores (weft_peer_ptr refuses them). */
int weft_local_size(const weft_context *ctx);
int weft_node(const weft_context *ctx);
int weft_num_nodes(const weft_context *ctx);
weft_backend weft_context_backend(const weft_context *ctx);

/* The message of the last failed call on ctx; with ctx == NULL, the last
 * failure of this thread (for weft_init). Never NULL. */
const char *weft_last_error(const weft_context *ctx);

/* Collective and symmetric: every rank asks for the same sizes in the same
 * order and gets the same heap offset. Alignment is WEFT_HEAP_ALIGN. */
#define WEFT_HEAP_ALIGN 256u
weft_status weft_malloc(weft_context *ctx, size_t size, void **out);
/* Collective. */
weft_status weft_free(weft_context *ctx, void *ptr);
/* This rank's own memory, outside the symmetric heap: device memory on GPU
 * backends, host memory on the host backend. Kernels, weft_memcpy and
 * weft_memset reach it as they reach this rank's part of the heap; peers
 * cannot (no peer= or weft_peer_ptr on it). Not collective: what one
 * rank's local work allocates, such as weft.ops.matmul's default out.
 * Aligned to WEFT_HEAP_ALIGN, not cleared. Allowed while this thread
 * captures a CUDA/HIP graph (the allocation is made at once, not recorded
 * in the graph). */
weft_status weft_malloc_local(weft_context *ctx, size_t size, void **out);
/* Frees a weft_malloc_local block; not collective. No launched work may
 * still use it. weft_finalize frees the blocks left. */
weft_status weft_free_local(weft_context *ctx, void *ptr);
/* This process's address of peer's copy of the symmetric object at ptr. */
weft_status weft_peer_ptr(weft_context *ctx, const void *ptr, int peer, void **out);

/* Copies size bytes between host memory and this rank's memory (its part
 * of the symmetric heap or a weft_malloc_local block): exactly one of dst
 * and src lies in one of those, whole. Ordered
 * after this rank's launched work; returns when the copy is done. On the
 * host backend it is a plain copy. */
weft_status weft_memcpy(weft_context *ctx, void *dst, const void *src, size_t size);
/* Sets size bytes of this rank's memory (as weft_memcpy's) at ptr to
 * (unsigned char)value, ordered and complete like weft_memcpy. */
weft_status weft_memset(weft_context *ctx, void *ptr, int value, size_t size);
/* Sets size bytes of this rank's device memory at ptr (in the heap or not:
 * any allocation of the context's device) to (unsigned char)value, ordered
 * on `stream` (a CUstream or hipStream_t; NULL: the context's stream) like
 * a launch and not waited for, so a CUDA graph capture records it (a
 * memset node). On the host backend it is a plain memset. */
weft_status weft_memset_async(weft_context *ctx, void *ptr, int value, size_t size,
                              void *stream);

/* One transfer of weft_put_signal_async: `size` bytes from src (this
 * rank's device memory: its heap, a weft_malloc_local block or any other
 * allocation of its device) to peer's copy of the symmetric range at dst
 * (an address in this rank's heap), then the 8 bytes at signal_src (this
 * rank's device memory) to peer's copy of the symmetric, 8-byte aligned
 * word at signal: a kernel on peer that sees the word (an acquire at
 * system scope, as wl.wait's) sees the bytes. Copy engines do not promise
 * to write the 8 bytes at once: a reader should wait for values that
 * differ from the old one in their low 4 bytes only (weft.ops' epochs
 * stay below 2^32). */
typedef struct weft_put {
  void *dst;
  const void *src;
  size_t size;
  void *signal;
  const void *signal_src;
  int peer;
} weft_put;

/* The copy engine's puts run on a stream of the context's own, in order,
 * after the last weft_put_fork and beside what is launched after it:
 * weft_put_fork(ctx, s), a launch on s, weft_put_signal_async (the puts
 * start once the work launched on s before the fork has finished, while
 * the launch runs), weft_put_join(ctx, s) (later work on s waits for the
 * puts). `stream` is a CUstream or hipStream_t, NULL: the context's
 * stream. A CUDA/HIP graph capture of the stream records them (memcpy
 * nodes; the capture must reach weft_put_join before it ends). On the
 * host backend, whose launches have finished when they return, each put
 * is a copy and a releasing store, made before the call returns. */
weft_status weft_put_fork(weft_context *ctx, void *stream);
/* Makes `count` puts with the device's copy engines rather than its
 * cores. Peers of this rank's node only (any rank, this one included). */
weft_status weft_put_signal_async(weft_context *ctx, const weft_put *puts, size_t count);
/* The puts made after this call start once the 32-bit word at `count`
 * (this rank's device memory, 4-byte aligned, counting up from 0) has
 * reached `value` (1 .. 2^31 - 1). A launch made after weft_put_fork
 * counts there as it writes what those puts carry (each count after a
 * release at system scope, as wl.signal's), so they leave while it runs
 * instead of after it; the word is the caller's to zero before the next
 * such launch. On GPUs the copy engine's wait has no timeout: a launch
 * that never reaches the count leaves these puts, and the work joined
 * after them, waiting. On the host backend, whose launches have finished
 * when they return, the call waits for the count itself, until the
 * context's wait timeout (WEFT_ERROR_TIMEOUT). */
weft_status weft_put_wait(weft_context *ctx, const void *count, uint32_t value);
/* Work launched on `stream` after this call waits for every put made
 * before it: their reads of src are done and their bytes have landed. */
weft_status weft_put_join(weft_context *ctx, void *stream);

/* Graphs (CUDA, HIP): what this thread launches, sets and puts on `stream`
 * (NULL: the context's) between weft_graph_begin and weft_graph_end is
 * recorded into one graph, not run; weft_graph_launch runs all of it on
 * any stream for the host cost of about one launch (on an H200 2 us,
 * against 4.4 per launch: Python's kept calls replay this way,
 * docs/python.md). weft_graph_begin is WEFT_ERROR_UNSUPPORTED on the host
 * backend, without the driver's graphs, and where the stream is being
 * captured already (that capture is to record the launches themselves),
 * and so is weft_graph_launch on a stream being captured. weft_graph_end
 * always ends the capture; where a call made during it failed or could
 * not be captured, *out is NULL and the status says why. Graphs left at
 * weft_finalize are destroyed there; one destroyed while it runs is freed
 * when it completes. */
typedef struct weft_graph weft_graph;
weft_status weft_graph_begin(weft_context *ctx, void *stream);
weft_status weft_graph_end(weft_context *ctx, void *stream, weft_graph **out);
weft_status weft_graph_launch(weft_graph *graph, void *stream);
weft_status weft_graph_destroy(weft_graph *graph);

/* One dimension of a tensor map (outermost first in a map): coordinate c
 * along it is element c * step along the tensor's dimension `dim`; `size`
 * coordinates, or 0 for the tensor's shape[dim] / step (which must be
 * whole); one bulk copy covers `box` of them. The compiler reports a
 * kernel's maps (compiler.h, "kernels": tensor_maps). */
typedef struct weft_tensor_map_dim {
  int32_t dim;
  int32_t step;
  int32_t size;
  int32_t box;
} weft_tensor_map_dim;

/* Fills *out, a descriptor (abi.h, weft_tensor_desc) of a tensor of `rank`
 * dimensions (1..WEFT_TENSOR_DESC_MAX_RANK) of `elem_size`-byte elements
 * (1, 2, 4 or 8) at `base`: memory the context's device reads (device
 * memory on GPU backends, in the heap or not; host memory on the host
 * backend). shape[i] elements along dimension i, outermost first;
 * strides[i] elements between neighbours along i. What sm_90's bulk tensor
 * copies (TMA) require holds on every backend, else
 * WEFT_ERROR_INVALID_ARGUMENT names the value: base 16-byte aligned,
 * shape[i] in 1..2^32, strides[rank-1] == 1 and every other stride
 * positive, a multiple of 16 bytes and below 2^40 bytes.
 *
 * map_rank 0 (map may then be NULL): out->tensor_map stays zero (swizzle
 * is ignored). Otherwise the tensor map is a view of the tensor of
 * map_rank (1..WEFT_TENSOR_DESC_MAX_RANK) dimensions map[j], outermost
 * first; several may walk one tensor dimension in different steps, in any
 * order, so one box can gather rows in an interleaved order (docs/runtime.md,
 * "Tensor descriptors"). Each map[j] has dim in 0..rank-1, step >= 1,
 * size >= 0 and box in 1..256; its extent E_j (size_j, or shape[dim_j] /
 * step_j, which must divide exactly) is in 1..2^32. The innermost,
 * map[map_rank-1], walks the tensor's innermost dimension (dim rank-1) in
 * steps of 1, and its box spans a multiple of 16 bytes; every other map
 * dimension's stride, step_j * strides[dim_j] * elem_size bytes, is a
 * multiple of 16 bytes and below 2^40 bytes. The map stays inside the
 * tensor: for each dimension d, the sum of (E_j - 1) * step_j over the
 * map dimensions with dim_j == d is at most shape[d] - 1. swizzle is the
 * shared-memory swizzle the kernel expects in bytes, 0 or else 32, 64 or
 * 128 and at least the innermost box's bytes. The cuda backend then
 * encodes out->tensor_map (cuTensorMapEncodeTiled, boxes reaching past
 * E_j read as zero); other backends make no bulk copies and leave it zero.
 * Dimensions beyond rank are zero. *out needs no particular alignment, and
 * is all zeros when the call fails. */
weft_status weft_tensor_desc_encode(weft_context *ctx, const void *base, size_t elem_size,
                                    int rank, const int64_t *shape, const int64_t *strides,
                                    int map_rank, const weft_tensor_map_dim *map, int swizzle,
                                    weft_tensor_desc *out);

/* Host-side barrier across all ranks (waits for this rank's device work). */
weft_status weft_barrier(weft_context *ctx);
/* Waits for this rank's launched work; reports device wait timeouts. */
weft_status weft_synchronize(weft_context *ctx);

/* The context every launch appends (for hand-written kernels and tests). */
weft_status weft_get_kernel_context(weft_context *ctx, weft_kernel_context *out);

typedef enum weft_module_format {
  WEFT_MODULE_AUTO = 0, /* detected from the image */
  WEFT_MODULE_PTX = 1,
  WEFT_MODULE_CUBIN = 2,
  WEFT_MODULE_HSACO = 3,
  WEFT_MODULE_HOST_SO = 4,
} weft_module_format;

weft_status weft_module_load(weft_context *ctx, const void *image, size_t size,
                             weft_module_format format, weft_module **out);
weft_status weft_module_load_file(weft_context *ctx, const char *path,
                                  weft_module_format format, weft_module **out);
weft_status weft_module_unload(weft_module *module);
weft_status weft_module_get_kernel(weft_module *module, const char *name,
                                   weft_kernel **out);

/* weft_launch_config.flags */
enum {
  /* The kernel may start while the stream's previous kernel still runs: it
   * waits for that kernel's grid, memory included, before it touches
   * memory (what the compiler's "kernels" artifact marks "early_start", and
   * only such kernels may take it). What overlaps is the launch and the
   * programs' start-up. CUDA: programmatic dependent launch, where the
   * driver has cuLaunchKernelEx; elsewhere launches are plain. */
  WEFT_LAUNCH_EARLY_START = 1u << 0,
  /* At most as many programs as the device runs at once, for a kernel
   * whose programs wait for each other (each takes items i, i +
   * num_programs, ...): grid[0] is the most wanted, cut to what fits, so
   * every program launched is running together once the work launched
   * before it has finished; in clusters, whole clusters of those that fit.
   * 1-D grids only; the host backend runs every program at once anyway (up
   * to WEFT_HOST_MAX_PROGRAMS). */
  WEFT_LAUNCH_RESIDENT = 1u << 1,
};

typedef struct weft_launch_config {
  uint32_t grid[3];      /* programs; 0 is taken as 1 */
  uint32_t num_threads;  /* threads per program (num_warps * warp size); host: ignored */
  uint32_t shared_bytes; /* dynamic shared memory */
  void *stream;          /* CUstream / hipStream_t; NULL: the context's stream */
  uint32_t flags;        /* WEFT_LAUNCH_* */
  /* Programs per thread block cluster along each axis, 0 taken as 1: the
   * kernel's weft.cluster shape ("cluster" in the compiler's "kernels"
   * artifact), of which the grid must be whole. CUDA runs the clusters
   * from the kernel's own attribute; this tells a resident launch which
   * clusters fit, and keeps it whole clusters on every backend. */
  uint32_t cluster[3];
} weft_launch_config;

/* args[i] points at the value of the i-th kernel argument; the kernel
 * context is appended by the runtime. Asynchronous on GPU backends; on the
 * host backend it returns once every program has finished. */
weft_status weft_launch(weft_kernel *kernel, const weft_launch_config *config,
                        void **args, size_t num_args);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_RUNTIME_H */
