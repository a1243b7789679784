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

/* Every rank must run the same backend and heap size: check it once. */
typedef struct setup_record {
  uint64_t heap_size;
  int32_t backend;
  uint32_t abi_version;
} setup_record;

static weft_status check_setup(weft_context *ctx) {
  setup_record mine = {ctx->heap_size, (int32_t)ctx->backend, WEFT_ABI_VERSION};
  setup_record all[WEFT_MAX_RANKS];
  weft_status st = weft_bootstrap_allgather(ctx->bootstrap, &mine, sizeof mine, all);
  if (st != WEFT_SUCCESS)
    return st;
  for (int r = 1; r < ctx->num_ranks; ++r)
    if (memcmp(&all[r], &all[0], sizeof mine) != 0)
      return weft_fail(WEFT_ERROR_ASYMMETRIC,
                       "weft_init: ranks disagree: rank 0 has backend %s and "
                       "a %llu-byte heap, rank %d backend %s and a %llu-byte "
                       "heap (set WEFT_BACKEND and WEFT_HEAP_SIZE alike)",
                       backend_ops(all[0].backend)->name,
                       (unsigned long long)all[0].heap_size, r,
                       backend_ops(all[r].backend)->name,
                       (unsigned long long)all[r].heap_size);
  return WEFT_SUCCESS;
}

static void teardown(weft_context *ctx) {
  weft_modules_unload_all(ctx);
  weft_local_free_all(ctx);
  if (ctx->heap_mapped)
    ctx->ops->heap_unmap(ctx->state);
  if (ctx->state)
    ctx->ops->close(ctx->state);
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

  weft_bootstrap_config bc = {rank, size, job_id, connect_s, collective_s};
  if ((st = weft_bootstrap_open(&bc, &ctx->bootstrap)) != WEFT_SUCCESS)
    return st;
  if ((st = check_setup(ctx)) != WEFT_SUCCESS)
    return st;
  weft_backend_params params = {rank, size, ctx->local_rank, ctx->device,
                                ctx->bootstrap};
  if ((st = ctx->ops->open(&params, &ctx->state)) != WEFT_SUCCESS)
    return st;

  void *bases[WEFT_MAX_RANKS] = {0};
  uint64_t multicast = 0;
  if ((st = ctx->ops->heap_map(ctx->state, ctx->heap_size, bases, &multicast)))
    return st;
  ctx->heap_mapped = 1;
  weft_kernel_context *k = &ctx->kctx;
  k->rank = rank;
  k->num_ranks = size;
  k->flags = multicast ? WEFT_CTX_MULTICAST : 0;
  k->abi_version = WEFT_ABI_VERSION;
  k->heap_size = ctx->heap_size;
  k->multicast_base = multicast;
  k->wait_timeout_ns = (uint64_t)(wait_s * 1e9);
  for (int r = 0; r < size; ++r)
    k->heap_base[r] = (uint64_t)(uintptr_t)bases[r];

  /* Zero the reserved region, and let no rank launch before every peer's
   * region is clean. */
  if ((st = ctx->ops->memset_device(ctx->state, bases[rank], 0,
                                    WEFT_RESERVED_BYTES)) ||
      (st = ctx->ops->synchronize(ctx->state, NULL)) ||
      (st = weft_allocator_init(&ctx->allocator, WEFT_RESERVED_BYTES,
                                ctx->heap_size)))
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

weft_backend weft_context_backend(const weft_context *ctx) {
  return ctx ? ctx->backend : WEFT_BACKEND_DEFAULT;
}
