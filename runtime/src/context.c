/* weft_init / weft_finalize: environment, bootstrap, backend and heap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define DEFAULT_CONNECT_TIMEOUT_S 60.0
#define DEFAULT_COLLECTIVE_TIMEOUT_S 300.0
#define GPU_HEAP_GRANULE (2u << 20) /* CUDA VMM / HIP allocation granularity */

void weft_init_options_default(weft_init_options *opts) {
  if (!opts)
    return;
  memset(opts, 0, sizeof *opts);
  opts->backend = WEFT_BACKEND_DEFAULT;
  opts->rank = opts->world_size = opts->local_rank = opts->device = -1;
  opts->local_size = -1;
}

static weft_status pick_backend(weft_backend requested, weft_backend *out) {
  if (requested == WEFT_BACKEND_DEFAULT) {
    const char *env = getenv("WEFT_BACKEND");
    if (env && *env) {
      if (!strcmp(env, "host"))
        requested = WEFT_BACKEND_HOST;
      else if (!strcmp(env, "cuda"))
        requested = WEFT_BACKEND_CUDA;
      else if (!strcmp(env, "hip"))
        requested = WEFT_BACKEND_HIP;
      else
        return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "WEFT_BACKEND='%s': "
                         "expected host, cuda or hip", env);
    } else {
      requested = weft_backend_cuda.available() ? WEFT_BACKEND_CUDA
                                                : WEFT_BACKEND_HOST;
    }
  }
  if (requested < WEFT_BACKEND_HOST || requested > WEFT_BACKEND_HIP)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "unknown backend %d",
                     (int)requested);
  *out = requested;
  return WEFT_SUCCESS;
}

static const weft_backend_ops *backend_ops(weft_backend b) {
  return b == WEFT_BACKEND_CUDA  ? &weft_backend_cuda
         : b == WEFT_BACKEND_HIP ? &weft_backend_hip
                                 : &weft_backend_host;
}

static weft_status pick_heap_size(const weft_init_options *o, weft_backend b,
                                  size_t *out) {
  size_t size = o->heap_size;
  int gpu = b != WEFT_BACKEND_HOST;
  if (!size) {
    const char *env = getenv("WEFT_HEAP_SIZE");
    if (env && *env) {
      weft_status st = weft_parse_size(env, &size);
      if (st != WEFT_SUCCESS)
        return weft_fail(st, "WEFT_HEAP_SIZE: %s", weft_thread_error());
    } else {
      size = gpu ? (size_t)1 << 30 : (size_t)256 << 20;
    }
  }
  size_t granule = gpu ? GPU_HEAP_GRANULE : (size_t)sysconf(_SC_PAGESIZE);
  if (size <= WEFT_RESERVED_BYTES || size > ((size_t)1 << 46))
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "heap size %zu bytes: must "
                     "exceed the %u-byte reserved region and be at most 64 TiB",
                     size, WEFT_RESERVED_BYTES);
  *out = (size + granule - 1) / granule * granule;
  return WEFT_SUCCESS;
}

/* Every rank must run the same backend, heap size and node size, and the
 * ranks of a node must share a host: check it once. */
typedef struct setup_record {
  uint64_t heap_size;
  int32_t backend;
  uint32_t abi_version;
  int32_t local_size;
  uint32_t pad_;
  uint64_t host; /* this machine: its name and boot id, hashed */
} setup_record;

/* A machine's identity: the host name alone repeats across containers. */
static uint64_t host_identity(void) {
  char text[512] = "";
  gethostname(text, 256);
  text[255] = 0;
  size_t n = strlen(text);
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (!fgets(text + n, (int)(sizeof text - n), f))
      text[n] = 0;
    fclose(f);
  }
  return weft_hash_string(text);
}

static weft_status check_setup(weft_context *ctx) {
  setup_record mine = {ctx->heap_size, (int32_t)ctx->backend, WEFT_ABI_VERSION,
                       ctx->local_size, 0, host_identity()};
  setup_record all[WEFT_MAX_RANKS];
  weft_status st = weft_bootstrap_allgather(ctx->bootstrap, &mine, sizeof mine, all);
  if (st != WEFT_SUCCESS)
    return st;
  for (int r = 1; r < ctx->num_ranks; ++r) {
    const setup_record *a = &all[0], *b = &all[r];
    if (a->heap_size != b->heap_size || a->backend != b->backend ||
        a->abi_version != b->abi_version)
      return weft_fail(WEFT_ERROR_ASYMMETRIC,
                       "weft_init: ranks disagree: rank 0 has backend %s and "
                       "a %llu-byte heap, rank %d backend %s and a %llu-byte "
                       "heap (set WEFT_BACKEND and WEFT_HEAP_SIZE alike)",
                       backend_ops(a->backend)->name,
                       (unsigned long long)a->heap_size, r,
                       backend_ops(b->backend)->name,
                       (unsigned long long)b->heap_size);
    if (a->local_size != b->local_size)
      return weft_fail(WEFT_ERROR_ASYMMETRIC, "weft_init: ranks disagree on the "
                       "ranks per node: rank 0 has %d, rank %d has %d (set "
                       "WEFT_LOCAL_SIZE alike)", a->local_size, r, b->local_size);
    int first = r - r % ctx->local_size; /* the first rank of r's node */
    if (b->host != all[first].host)
      return weft_fail(WEFT_ERROR_BOOTSTRAP, "weft_init: ranks %d and %d are "
                       "on node %d (%d ranks per node, in rank order) but on "
                       "different hosts; a node's ranks share a host", first, r,
                       r / ctx->local_size, ctx->local_size);
  }
  return WEFT_SUCCESS;
}

/* The world's bootstrap (over TCP when the job spans nodes and names an
 * address, else on this host), and the node's: a Unix one among its ranks,
 * over which descriptors travel (the world's itself on one node). */
static weft_status open_bootstraps(weft_context *ctx, const char *job_id,
                                   double connect_s, double collective_s) {
  char address[WEFT_BOOTSTRAP_ADDRESS_MAX] = "";
  weft_status st;
  if (ctx->num_nodes > 1 &&
      (st = weft_bootstrap_address(address, sizeof address)) != WEFT_SUCCESS)
    return st;
  weft_bootstrap_config world = {ctx->rank, ctx->num_ranks, job_id, connect_s,
                                 collective_s, address[0] ? address : NULL};
  if ((st = weft_bootstrap_open(&world, &ctx->bootstrap)) != WEFT_SUCCESS) {
    if (ctx->num_nodes == 1 || address[0])
      return st;
    /* Nodes on one host meet on a Unix socket; on several they cannot. */
    char why[WEFT_ERROR_MAX];
    snprintf(why, sizeof why, "%s", weft_thread_error());
    return weft_fail(st, "%s; a job across hosts meets over TCP: set MASTER_ADDR "
                     "and MASTER_PORT, or WEFT_BOOTSTRAP_ADDR=host:port, alike on "
                     "every rank", why);
  }
  if (ctx->num_nodes == 1) {
    ctx->node_bootstrap = ctx->bootstrap;
    return WEFT_SUCCESS;
  }
  char node_job[sizeof ((weft_env_info *)0)->job_id + 32];
  snprintf(node_job, sizeof node_job, "%s#node%d", job_id, ctx->node);
  weft_bootstrap_config node = {ctx->rank % ctx->local_size, ctx->local_size,
                                node_job, connect_s, collective_s, NULL};
  return weft_bootstrap_open(&node, &ctx->node_bootstrap);
}

static void teardown(weft_context *ctx) {
  weft_graphs_destroy_all(ctx); /* before the modules their kernels are in */
  weft_modules_unload_all(ctx);
  weft_local_free_all(ctx);
  if (ctx->heap_mapped)
    ctx->ops->heap_unmap(ctx->state);
  if (ctx->state)
    ctx->ops->close(ctx->state);
  if (ctx->node_bootstrap != ctx->bootstrap)
    weft_bootstrap_close(ctx->node_bootstrap);
  weft_bootstrap_close(ctx->bootstrap);
  weft_allocator_destroy(&ctx->allocator);
  free(ctx);
}

static weft_status init(const weft_init_options *o, weft_context *ctx) {
  weft_env_info env;
  weft_status st = weft_env_detect(&env);
  if (st != WEFT_SUCCESS && !(o->rank >= 0 && o->world_size > 0))
    return st;
  int rank = o->rank >= 0 ? o->rank : env.rank;
  int size = o->world_size > 0 ? o->world_size : env.world_size;
  if (size > WEFT_MAX_RANKS || rank >= size)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_init: rank %d of %d "
                     "ranks is out of range (at most %d ranks)", rank, size,
                     WEFT_MAX_RANKS);
  const char *job_id = o->job_id ? o->job_id : env.job_id;
  if (size > 1 && !o->job_id && (env.job_id_defaulted || !env.job_id[0]))
    return weft_fail(WEFT_ERROR_BOOTSTRAP, "weft_init: %d ranks but no job "
                     "id (set opts->job_id or WEFT_JOB_ID alike on every rank)",
                     size);
  ctx->rank = rank;
  ctx->num_ranks = size;
  ctx->local_rank = o->local_rank >= 0 ? o->local_rank
                                       : (o->rank >= 0 ? rank : env.local_rank);
  ctx->device = o->device >= 0 ? o->device : ctx->local_rank;
  ctx->local_size = o->local_size > 0 ? o->local_size
                    : o->world_size > 0 ? size : env.local_size;
  if (ctx->local_size < 1 || size % ctx->local_size)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_init: %d ranks per "
                     "node do not divide the job's %d ranks", ctx->local_size,
                     size);
  ctx->node = rank / ctx->local_size;
  ctx->num_nodes = size / ctx->local_size;

  if ((st = pick_backend(o->backend, &ctx->backend)) != WEFT_SUCCESS)
    return st;
  ctx->ops = backend_ops(ctx->backend);
  if ((st = pick_heap_size(o, ctx->backend, &ctx->heap_size)) != WEFT_SUCCESS)
    return st;
  double connect_s = o->timeout_s, collective_s, wait_s;
  if (connect_s <= 0 &&
      (st = weft_env_seconds("WEFT_BOOTSTRAP_TIMEOUT", DEFAULT_CONNECT_TIMEOUT_S,
                             &connect_s)) != WEFT_SUCCESS)
    return st;
  if ((st = weft_env_seconds("WEFT_COLLECTIVE_TIMEOUT",
                             DEFAULT_COLLECTIVE_TIMEOUT_S, &collective_s)) ||
      (st = weft_env_seconds("WEFT_WAIT_TIMEOUT", 0, &wait_s)))
    return st;

  if ((st = open_bootstraps(ctx, job_id, connect_s, collective_s)) ||
      (st = check_setup(ctx)))
    return st;
  if ((st = weft_allocator_init(&ctx->allocator, WEFT_RESERVED_BYTES,
                                ctx->heap_size)))
    return st;
  weft_backend_params params = {rank, size, ctx->local_rank, ctx->device,
                                ctx->bootstrap, ctx->node_bootstrap,
                                ctx->local_size, ctx->num_nodes, &ctx->allocator};
  if ((st = ctx->ops->open(&params, &ctx->state)) != WEFT_SUCCESS)
    return st;

  weft_heap_layout heap;
  memset(&heap, 0, sizeof heap);
  if ((st = ctx->ops->heap_map(ctx->state, ctx->heap_size, &heap)))
    return st;
  ctx->heap_mapped = 1;
  weft_kernel_context *k = &ctx->kctx;
  k->rank = rank;
  k->num_ranks = size;
  k->flags = heap.flags | (heap.multicast_base ? WEFT_CTX_MULTICAST : 0);
  k->abi_version = WEFT_ABI_VERSION;
  k->heap_size = ctx->heap_size;
  k->multicast_base = heap.multicast_base;
  k->wait_timeout_ns = (uint64_t)(wait_s * 1e9);
  for (int r = 0; r < size; ++r)
    k->heap_base[r] = (uint64_t)(uintptr_t)heap.bases[r];
  k->local_rank = rank % ctx->local_size;
  k->local_size = ctx->local_size;
  k->node = ctx->node;
  k->num_nodes = ctx->num_nodes;
  k->engine = (uint64_t)(uintptr_t)heap.engine;

  /* Zero the reserved region, and let no rank launch before every peer's
   * region is clean. */
  if ((st = ctx->ops->memset_device(ctx->state, heap.bases[rank], 0,
                                    WEFT_RESERVED_BYTES)) ||
      (st = ctx->ops->synchronize(ctx->state, NULL)))
    return st;
  return weft_bootstrap_barrier(ctx->bootstrap);
}

weft_status weft_init(const weft_init_options *opts, weft_context **out) {
  if (!out)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_init: out is NULL");
  *out = NULL;
  weft_init_options defaults;
  weft_init_options_default(&defaults);
  weft_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "weft_init: out of host memory");
  weft_status st = init(opts ? opts : &defaults, ctx);
  if (st != WEFT_SUCCESS) {
    teardown(ctx);
    return st;
  }
  *out = ctx;
  return WEFT_SUCCESS;
}

weft_status weft_finalize(weft_context *ctx) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_finalize: ctx is NULL");
  /* No rank unmaps its heap while a peer may still be using it. */
  weft_status st = ctx->ops->synchronize(ctx->state, NULL);
  weft_status bar = weft_bootstrap_barrier(ctx->bootstrap);
  teardown(ctx);
  return st != WEFT_SUCCESS ? st : bar;
}

weft_status weft_barrier(weft_context *ctx) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_barrier: ctx is NULL");
  weft_status st = weft_synchronize(ctx);
  /* Enter the barrier even after a local failure, so peers do not wait. */
  weft_status bar = weft_bootstrap_barrier(ctx->bootstrap);
  if (st != WEFT_SUCCESS) {
    weft_fail(st, "%s", ctx->last_error);
    return st;
  }
  return weft_ctx_fail(ctx, bar);
}

int weft_rank(const weft_context *ctx) { return ctx ? ctx->rank : -1; }
int weft_num_ranks(const weft_context *ctx) { return ctx ? ctx->num_ranks : 0; }
int weft_local_rank(const weft_context *ctx) { return ctx ? ctx->local_rank : -1; }
int weft_local_size(const weft_context *ctx) { return ctx ? ctx->local_size : 0; }
int weft_node(const weft_context *ctx) { return ctx ? ctx->node : -1; }
int weft_num_nodes(const weft_context *ctx) { return ctx ? ctx->num_nodes : 0; }

weft_backend weft_context_backend(const weft_context *ctx) {
  return ctx ? ctx->backend : WEFT_BACKEND_DEFAULT;
}
