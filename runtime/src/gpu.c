/* The GPU backends' common part (see gpu.h); no driver is called directly. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

static const char *name_of(const weft_gpu *g) { return g->ops->backend->name; }

static weft_status no_memory(const char *name) {
  return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "%s backend: out of host memory",
                   name);
}

int weft_gpu_resolve(void *lib, const char *symbol, void *slot) {
  void *p = dlsym(lib, symbol);
  memcpy(slot, &p, sizeof p);
  return p != NULL;
}

int weft_gpu_available(const weft_gpu_ops *ops) {
  int count = 0;
  return ops->ready() == WEFT_SUCCESS &&
         ops->device_count(&count) == WEFT_SUCCESS && count > 0;
}

void weft_keep(weft_status *first, weft_status st) {
  if (*first == WEFT_SUCCESS)
    *first = st;
}

weft_status weft_gpu_no_memory(const weft_gpu *g) { return no_memory(name_of(g)); }

weft_status weft_gpu_undo(weft_status st, weft_status (*undo)(void *state),
                          void *state) {
  char why[WEFT_ERROR_MAX];
  snprintf(why, sizeof why, "%s", weft_thread_error());
  undo(state);
  return weft_fail(st, "%s", why);
}

weft_status weft_gpu_agree(const weft_gpu *g, weft_status mine) {
  return weft_bootstrap_agree(g->bs, mine, NULL, 0, NULL);
}

/* ---- open ---- */

static weft_status open_device(weft_gpu *g) {
  int count = 0;
  weft_status st = g->ops->device_count(&count);
  if (st != WEFT_SUCCESS)
    return st;
  if (g->ordinal < 0 || g->ordinal >= count)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "%s backend: rank %d "
                     "wants device %d, but this process sees %d device%s "
                     "(the device is the local rank unless opts->device says "
                     "otherwise)", name_of(g), g->rank, g->ordinal, count,
                     count == 1 ? "" : "s");
  return g->ops->open_device(g);
}

/* What every rank tells the others about its GPU. */
typedef struct device_info {
  int32_t ordinal;
  char bus_id[32];
} device_info;

/* Every pair of ranks of a node must be on distinct GPUs that reach each
 * other (the engine reaches other nodes). */
static weft_status check_peers(const weft_gpu *g, const device_info *all) {
  const char *name = name_of(g);
  for (int r = 0; r < g->num_ranks; ++r) {
    if (r == g->rank || r / g->local_size != g->rank / g->local_size)
      continue;
    const device_info *p = &all[r];
    if (!strcmp(p->bus_id, g->bus_id))
      return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "%s backend: ranks %d "
                       "and %d both use the GPU at PCI %s: each rank needs a "
                       "GPU of its own (set opts->device or start at most one "
                       "rank per GPU)", name, r < g->rank ? r : g->rank,
                       r < g->rank ? g->rank : r, g->bus_id);
    int peer;
    if (!g->ops->device_by_bus_id(&peer, p->bus_id))
      return weft_fail(WEFT_ERROR_UNSUPPORTED, "%s backend: rank %d's GPU "
                       "(PCI %s) is not visible to rank %d, so they cannot "
                       "map each other's heaps (give every rank the same "
                       "%s)", name, r, p->bus_id, g->rank,
                       g->ops->visible_devices);
    int can = 0;
    weft_status st = g->ops->can_access_peer(&can, g->device, peer);
    if (st != WEFT_SUCCESS)
      return st;
    if (!can)
      return weft_fail(WEFT_ERROR_UNSUPPORTED, "%s backend: no peer access "
                       "from rank %d's GPU %d (PCI %s) to rank %d's GPU %d "
                       "(PCI %s): the symmetric heap needs %s or PCIe P2P "
                       "between every pair", name, g->rank, g->ordinal,
                       g->bus_id, r, p->ordinal, p->bus_id,
                       g->ops->interconnect);
  }
  return WEFT_SUCCESS;
}

weft_status weft_gpu_open(const weft_gpu_ops *ops,
                          const weft_backend_params *params, void **state) {
  *state = NULL;
  weft_gpu *g = calloc(1, ops->state_size);
  if (!g)
    return no_memory(ops->backend->name);
  g->ops = ops;
  g->rank = params->rank;
  g->num_ranks = params->num_ranks;
  g->ordinal = params->device;
  g->bs = params->bootstrap;
  g->local_size = params->local_size;
  g->num_nodes = params->num_nodes;
  g->graph_launches = !weft_env_is("WEFT_KERNEL_GRAPHS", "0");
  weft_status st = ops->ready();
  if (st == WEFT_SUCCESS && params->num_nodes > 1 && !ops->engine)
    st = weft_fail(WEFT_ERROR_UNSUPPORTED, "%s backend: the job spans %d nodes "
                   "of %d ranks, and this backend reaches only the ranks of "
                   "one node", name_of(g), params->num_nodes, params->local_size);
  if (st == WEFT_SUCCESS)
    st = open_device(g);
  device_info mine = {g->ordinal, ""}, all[WEFT_MAX_RANKS];
  memcpy(mine.bus_id, g->bus_id, sizeof mine.bus_id);
  st = weft_bootstrap_agree(g->bs, st, &mine, sizeof mine, all);
  if (st == WEFT_SUCCESS)
    st = weft_gpu_agree(g, check_peers(g, all));
  if (st != WEFT_SUCCESS)
    return weft_gpu_undo(st, ops->backend->close, g);
  *state = g;
  return WEFT_SUCCESS;
}

/* ---- the heap ---- */

static weft_status open_peers(weft_gpu *g, const char *handles, size_t len,
                              weft_gpu_open_peer_fn open_peer) {
  for (int r = 0; r < g->num_ranks; ++r) {
    if (r == g->rank)
      continue;
    weft_status st = open_peer(g, r, handles + (size_t)r * len);
    if (st != WEFT_SUCCESS)
      return st;
  }
  return WEFT_SUCCESS;
}

weft_status weft_gpu_share_handles(weft_gpu *g, weft_status mine,
                                   const void *handle, size_t len,
                                   weft_gpu_open_peer_fn open_peer) {
  char all[WEFT_MAX_RANKS * WEFT_GPU_HANDLE_MAX];
  weft_status st = weft_bootstrap_agree(g->bs, mine, handle, len, all);
  if (st == WEFT_SUCCESS)
    st = weft_gpu_agree(g, open_peers(g, all, len, open_peer));
  return st;
}

void weft_gpu_debug(const weft_gpu *g, const char *heap, size_t bytes,
                    int multicast) {
  if (weft_env_is("WEFT_DEBUG", "1"))
    fprintf(stderr, "weft: rank %d: %s backend: device %d (PCI %s), %s, %zu "
            "bytes per rank, multicast %s\n", g->rank, name_of(g), g->ordinal,
            g->bus_id, heap, bytes, multicast ? "on" : "off");
}

/* ---- memory, copies, launches ---- */

static weft_status copy(weft_gpu *g, void *dst, const void *src, size_t n,
                        int to_device) {
  weft_status st;
  if ((st = g->ops->enter(g)) || (st = g->ops->copy_async(g, dst, src, n, to_device)))
    return st;
  return g->ops->stream_synchronize(g, g->stream);
}

weft_status weft_gpu_copy_to_device(void *state, void *dst, const void *src, size_t n) {
  return copy(state, dst, src, n, 1);
}

weft_status weft_gpu_copy_to_host(void *state, void *dst, const void *src, size_t n) {
  return copy(state, dst, src, n, 0);
}

weft_status weft_gpu_memset_async(void *state, void *dst, int value, size_t n,
                                  void *stream) {
  weft_gpu *g = state;
  weft_status st = g->ops->enter(g);
  return st != WEFT_SUCCESS ? st
                            : g->ops->memset_async(g, dst, value, n,
                                                   stream ? stream : g->stream);
}

weft_status weft_gpu_memset(void *state, void *dst, int value, size_t n) {
  weft_gpu *g = state;
  weft_status st = weft_gpu_memset_async(state, dst, value, n, NULL);
  return st != WEFT_SUCCESS ? st : g->ops->stream_synchronize(g, g->stream);
}

weft_status weft_gpu_local_alloc(void *state, size_t size, void **out) {
  weft_gpu *g = state;
  void *p = NULL;
  weft_status st = g->ops->enter(g);
  if (st != WEFT_SUCCESS)
    return st;
  int mode = g->ops->relaxed_capture;
  if ((st = g->ops->exchange_capture_mode(&mode)))
    return st;
  st = g->ops->device_alloc(g, size, &p);
  weft_keep(&st, g->ops->exchange_capture_mode(&mode));
  if (st == WEFT_SUCCESS)
    *out = p;
  else if (p)
    g->ops->device_free(g, p);
  return st;
}

weft_status weft_gpu_local_free(void *state, void *ptr) {
  weft_gpu *g = state;
  weft_status st = g->ops->enter(g);
  return st != WEFT_SUCCESS ? st : g->ops->device_free(g, ptr);
}

weft_status weft_gpu_module_get_function(void *state, void *module,
                                         const char *name, void **function) {
  weft_gpu *g = state;
  int found = 0;
  weft_status st = g->ops->enter(g);
  if (st == WEFT_SUCCESS)
    st = g->ops->find_function(g, module, name, function, &found);
  if (st == WEFT_SUCCESS && !found)
    return weft_fail(WEFT_ERROR_NOT_FOUND, "%s: no kernel '%s' in the module",
                     name_of(g), name);
  return st;
}

/* ---- launches ---- */

/* One lock for every context's graphs and paces (a process rarely has
 * more than one): two threads must not set one graph's arguments at once. */
static pthread_mutex_t kernel_graphs_lock = PTHREAD_MUTEX_INITIALIZER;

static void forget(weft_gpu *g, weft_gpu_kernel_graph *k) {
  if (k->exec)
    g->ops->kernel_graph_destroy(g, k);
  free(k->param_sizes);
  free(k->held);
  memset(k, 0, sizeof *k);
}

/* Room for the bytes of k's count arguments, where the backend tells
 * their sizes and the last is the kernel context's, as for every kernel
 * Weft compiles (the driver is not asked past the parameters a kernel
 * has: a sanitizer reports that); else every launch sets them. */
static void make_room_for_params(weft_gpu *g, weft_gpu_kernel_graph *k, size_t count) {
  size_t *sizes = g->ops->param_sizes ? malloc(count * sizeof *sizes) : NULL;
  if (!sizes || !g->ops->param_sizes(k->function, count, sizes) ||
      sizes[count - 1] != sizeof(weft_kernel_context)) {
    free(sizes);
    return;
  }
  size_t total = 0;
  for (size_t i = 0; i < count; ++i)
    total += sizes[i];
  k->held = malloc(total ? total : 1);
  if (!k->held) {
    free(sizes);
    return;
  }
  k->num_params = count, k->param_sizes = sizes;
}

/* Whether params are what k's node holds; from where they differ on,
 * `held` takes them (valid once the caller has set the node's). */
static int same_params(weft_gpu_kernel_graph *k, void **params) {
  int same = k->holds;
  unsigned char *at = k->held;
  for (size_t i = 0; i < k->num_params; at += k->param_sizes[i++]) {
    if (same && !memcmp(at, params[i], k->param_sizes[i]))
      continue;
    same = 0;
    memcpy(at, params[i], k->param_sizes[i]);
  }
  return same;
}

static weft_gpu_kernel_graph *kernel_graph_slot(weft_gpu *g, void *function,
                                                const uint32_t grid[3]) {
  uintptr_t h = (uintptr_t)function >> 4;
  for (int i = 0; i < 3; ++i)
    h = h * 31 + grid[i];
  return &g->kernel_graphs[h % WEFT_GPU_KERNEL_GRAPHS];
}

/* The pace of `stream`, counting this launch: a slot of its own (a new
 * stream takes the next, round robin), a mark every WEFT_GPU_PACE_EVERY
 * launches, and whether the previous one was passed by then. Whether the
 * GPU is behind; a mark the driver cannot make or read says it is not. */
static int behind(weft_gpu *g, void *stream) {
  weft_gpu_pace *p = g->paces;
  while (p < g->paces + WEFT_GPU_PACED_STREAMS && p->stream != stream)
    ++p;
  if (p == g->paces + WEFT_GPU_PACED_STREAMS) {
    p = &g->paces[g->next_pace++ % WEFT_GPU_PACED_STREAMS];
    if (p->mark)
      g->ops->mark_destroy(g, p->mark);
    *p = (weft_gpu_pace){.stream = stream};
  }
  if (++p->launches % WEFT_GPU_PACE_EVERY == 0) {
    int passed = 1;
    if (p->mark)
      g->ops->mark_passed(g, p->mark, &passed);
    p->behind = !passed;
    g->ops->mark(g, stream, &p->mark);
  }
  return p->behind;
}

void weft_gpu_paces_free(weft_gpu *g) {
  pthread_mutex_lock(&kernel_graphs_lock);
  for (int i = 0; i < WEFT_GPU_PACED_STREAMS; ++i) {
    if (g->paces[i].mark)
      g->ops->mark_destroy(g, g->paces[i].mark);
    g->paces[i] = (weft_gpu_pace){0};
  }
  pthread_mutex_unlock(&kernel_graphs_lock);
}

/* The launch through slot k's graph: the first launch of a slot's kind
 * only claims the slot (a launch made once is not worth a graph), the
 * second makes the graph; a graph the driver cannot make leaves that
 * launch eager. *done: it went through the graph. */
static weft_status launch_in_slot(weft_gpu *g, weft_gpu_kernel_graph *k, void *function,
                                  const weft_launch_config *config, void *stream,
                                  void **params, size_t num_params, unsigned block,
                                  int *done) {
  if (k->function != function || k->stream != stream || k->block != block ||
      k->shared_bytes != config->shared_bytes ||
      memcmp(k->grid, config->grid, sizeof k->grid)) {
    forget(g, k);
    *k = (weft_gpu_kernel_graph){.function = function, .stream = stream, .block = block,
                                 .shared_bytes = config->shared_bytes};
    memcpy(k->grid, config->grid, sizeof k->grid);
    return WEFT_SUCCESS;
  }
  if (!k->exec && !k->failed) {
    /* Relaxed: another thread's capture must not take this for its own. */
    int mode = g->ops->relaxed_capture;
    if (g->ops->exchange_capture_mode(&mode) == WEFT_SUCCESS) {
      k->failed = g->ops->kernel_graph_make(g, k, params) != WEFT_SUCCESS;
      g->ops->exchange_capture_mode(&mode);
    } else {
      k->failed = 1;
    }
    if (k->exec)
      make_room_for_params(g, k, num_params);
  }
  if (!k->exec)
    return WEFT_SUCCESS;
  *done = 1;
  /* Setting the node's arguments (the kernel context alone is 1.1 KiB)
   * costs the host 0.5-1.3 us: a repeat of the same ones skips it. */
  int kept = k->held && k->num_params == num_params;
  if (kept && same_params(k, params))
    return g->ops->graph_launch(g, k->exec, k->stream);
  weft_status st = g->ops->kernel_graph_launch(g, k, params);
  k->holds = kept && st == WEFT_SUCCESS;
  return st;
}

/* The launch through its one-launch graph where gpu.h says so (*done
 * set), else nothing: not onto a stream being captured (the capture
 * records the launch itself), nor one the GPU is behind (the slot keeps
 * its graph for when the GPU catches up). */
static weft_status launch_by_graph(weft_gpu *g, void *function,
                                   const weft_launch_config *config, void **params,
                                   size_t num_params, unsigned block, int *done) {
  void *stream = config->stream ? config->stream : g->stream;
  int capturing = 1;
  if (!g->graph_launches || !g->ops->kernel_graph_launch ||
      g->ops->capturing(g, stream, &capturing) != WEFT_SUCCESS || capturing)
    return WEFT_SUCCESS;
  pthread_mutex_lock(&kernel_graphs_lock);
  weft_status st = WEFT_SUCCESS;
  if (!behind(g, stream))
    st = launch_in_slot(g, kernel_graph_slot(g, function, config->grid), function, config,
                        stream, params, num_params, block, done);
  pthread_mutex_unlock(&kernel_graphs_lock);
  return st;
}

weft_status weft_gpu_launch(void *state, void *function,
                            const weft_launch_config *config, void **args,
                            size_t num_args, const weft_kernel_context *kctx) {
  weft_gpu *g = state;
  weft_status st = g->ops->enter(g);
  if (st != WEFT_SUCCESS)
    return st;
  void *on_stack[WEFT_GPU_STACK_ARGS + 1];
  void **params = num_args < WEFT_GPU_STACK_ARGS
                      ? on_stack
                      : malloc((num_args + 1) * sizeof *params);
  if (!params)
    return weft_gpu_no_memory(g);
  for (size_t i = 0; i < num_args; ++i)
    params[i] = args[i];
  params[num_args] = (void *)kctx;
  unsigned block = weft_launch_threads(config, g->ops->backend->warp_size);
  int done = 0;
  st = launch_by_graph(g, function, config, params, num_args + 1, block, &done);
  if (!done)
    st = g->ops->launch_kernel(g, function, config, params, block);
  if (params != on_stack)
    free(params);
  return st;
}

void weft_gpu_kernel_graphs_free(weft_gpu *g) {
  pthread_mutex_lock(&kernel_graphs_lock);
  for (int i = 0; i < WEFT_GPU_KERNEL_GRAPHS; ++i)
    forget(g, &g->kernel_graphs[i]);
  pthread_mutex_unlock(&kernel_graphs_lock);
}

weft_status weft_gpu_synchronize(void *state, void *stream) {
  weft_gpu *g = state;
  weft_status st = g->ops->enter(g);
  if (st != WEFT_SUCCESS)
    return st;
  return g->ops->stream_synchronize(g, stream ? stream : g->stream);
}

/* ---- the copy engine's puts ---- */

/* Work launched on `stream` from now on waits for `after`'s so far: the
 * copy stream after the caller's (fork), or the caller's after the copy
 * stream's (join). */
static weft_status order(weft_gpu *g, void *stream, void *after) {
  weft_status st = g->ops->enter(g);
  return st != WEFT_SUCCESS ? st : g->ops->stream_after(g, stream, after);
}

weft_status weft_gpu_put_fork(void *state, void *stream) {
  weft_gpu *g = state;
  return order(g, g->copy_stream, stream ? stream : g->stream);
}

weft_status weft_gpu_put_signal(void *state, const weft_put *puts, size_t count) {
  weft_gpu *g = state;
  weft_status st = g->ops->enter(g);
  /* Each signal after its bytes on one stream: it lands once they have. */
  for (size_t i = 0; i < count && st == WEFT_SUCCESS; i++)
    if (!puts[i].size || (st = g->ops->copy_device_async(g, puts[i].dst, puts[i].src,
                                                         puts[i].size, g->copy_stream)) ==
                             WEFT_SUCCESS)
      st = g->ops->copy_device_async(g, puts[i].signal, puts[i].signal_src, 8,
                                     g->copy_stream);
  return st;
}

weft_status weft_gpu_put_wait(void *state, const void *count, uint32_t value,
                              uint64_t timeout_ns) {
  weft_gpu *g = state;
  (void)timeout_ns; /* the copy engine waits without one */
  weft_status st = g->ops->enter(g);
  return st != WEFT_SUCCESS ? st : g->ops->stream_wait_value(g, g->copy_stream, count, value);
}

weft_status weft_gpu_put_join(void *state, void *stream) {
  weft_gpu *g = state;
  return order(g, stream ? stream : g->stream, g->copy_stream);
}

/* ---- graphs of a stream's work ---- */

/* WEFT_ERROR_UNSUPPORTED where someone captures `stream`: that capture is
 * to record the work itself, not our graph of it. */
static weft_status not_captured(weft_gpu *g, void *stream) {
  int capturing = 0;
  weft_status st = g->ops->enter(g);
  if (st == WEFT_SUCCESS)
    st = g->ops->capturing(g, stream, &capturing);
  if (st == WEFT_SUCCESS && capturing)
    return weft_fail(WEFT_ERROR_UNSUPPORTED, "%s: the stream is being captured "
                     "(its graph records the launches themselves)", name_of(g));
  return st;
}

weft_status weft_gpu_graph_begin(void *state, void *stream) {
  weft_gpu *g = state;
  stream = stream ? stream : g->stream;
  weft_status st = not_captured(g, stream);
  return st != WEFT_SUCCESS ? st : g->ops->capture_begin(g, stream);
}

weft_status weft_gpu_graph_end(void *state, void *stream, void **exec) {
  weft_gpu *g = state;
  weft_status st = g->ops->enter(g);
  return st != WEFT_SUCCESS ? st : g->ops->capture_end(g, stream ? stream : g->stream, exec);
}

weft_status weft_gpu_graph_launch(void *state, void *exec, void *stream) {
  weft_gpu *g = state;
  stream = stream ? stream : g->stream;
  weft_status st = not_captured(g, stream);
  return st != WEFT_SUCCESS ? st : g->ops->graph_launch(g, exec, stream);
}

weft_status weft_gpu_graph_destroy(void *state, void *exec) {
  weft_gpu *g = state;
  weft_status st = g->ops->enter(g);
  return st != WEFT_SUCCESS ? st : g->ops->graph_destroy(g, exec);
}
