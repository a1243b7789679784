/* Kernel launch, synchronisation and the report of the records kernels
 * leave in the reserved region: failed debug checks, timed-out waits. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host_engine.h"
#include "internal.h"

static const char *cmp_name(uint32_t cmp) {
  static const char *const names[] = {"==", "!=", ">=", ">", "<=", "<"};
  return cmp < 6 ? names[cmp] : "?";
}

/* "rank 2's heap offset 0x40" for an address in some rank's heap. */
static void describe_address(const weft_context *ctx, uint64_t address,
                             char *out, size_t size) {
  for (int r = 0; r < ctx->num_ranks; ++r)
    if (address - ctx->kctx.heap_base[r] < ctx->heap_size) {
      snprintf(out, size, "rank %d's heap offset 0x%" PRIx64, r,
               address - ctx->kctx.heap_base[r]);
      return;
    }
  snprintf(out, size, "address 0x%" PRIx64 " (outside the symmetric heap)",
           address);
}

/* A timed-out wait (abi.h, weft_wait_error) as WEFT_ERROR_TIMEOUT. */
static weft_status check_wait_error(weft_context *ctx) {
  weft_wait_error rec;
  void *where = (void *)(uintptr_t)(ctx->kctx.heap_base[ctx->rank] +
                                    offsetof(weft_reserved, wait_error));
  weft_status st = ctx->ops->copy_to_host(ctx->state, &rec, where, sizeof rec);
  if (st != WEFT_SUCCESS || rec.status != WEFT_WAIT_TIMED_OUT)
    return st;
  /* Reset first, so the next launch starts clean whatever the caller does. */
  st = ctx->ops->memset_device(ctx->state, where, 0, sizeof rec);
  if (st != WEFT_SUCCESS)
    return st;
  char flag[96];
  describe_address(ctx, rec.flag_address, flag, sizeof flag);
  return weft_fail(WEFT_ERROR_TIMEOUT,
                   "wait timed out on rank %d, program (%u,%u,%u): flag at "
                   "%s, expected %s %" PRIu64 ", last seen %" PRIu64
                   " (WEFT_WAIT_TIMEOUT=%g s)",
                   rec.rank, rec.program[0], rec.program[1], rec.program[2],
                   flag, cmp_name(rec.cmp), rec.expected,
                   rec.last_seen, (double)ctx->kctx.wait_timeout_ns * 1e-9);
}

/* A failed debug check (abi.h, weft_debug_error) as WEFT_ERROR_INVALID_ARGUMENT
 * naming the kernel and the source location the compiler stored. */
static weft_status check_debug_error(weft_context *ctx) {
  weft_debug_error rec;
  void *where = (void *)(uintptr_t)(ctx->kctx.heap_base[ctx->rank] +
                                    offsetof(weft_reserved, debug_error));
  weft_status st = ctx->ops->copy_to_host(ctx->state, &rec, where, sizeof rec);
  if (st != WEFT_SUCCESS || rec.kind == WEFT_DEBUG_OK)
    return st;
  st = ctx->ops->memset_device(ctx->state, where, 0, sizeof rec);
  if (st != WEFT_SUCCESS)
    return st;
  /* The location string is a constant of the kernel's module (device memory
   * on GPUs), location_size bytes without a NUL. */
  char location[512] = "an unknown kernel";
  size_t size = rec.location_size < sizeof location - 1 ? rec.location_size
                                                        : sizeof location - 1;
  if (rec.location && size &&
      ctx->ops->copy_to_host(ctx->state, location,
                             (void *)(uintptr_t)rec.location,
                             size) == WEFT_SUCCESS)
    location[size] = '\0';
  if (rec.kind == WEFT_DEBUG_ASSERT)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "device assertion failed in kernel %s, rank %d program "
                     "(%u,%u,%u)",
                     location, rec.rank, rec.program[0], rec.program[1],
                     rec.program[2]);
  char what[WEFT_ERROR_MAX];
  const weft_host_engine *engine =
      (const weft_host_engine *)(uintptr_t)ctx->kctx.engine;
  if (rec.kind == WEFT_DEBUG_BAD_PEER)
    snprintf(what, sizeof what, "bad peer %d (of %d ranks)", rec.peer,
             ctx->num_ranks);
  else if (rec.kind == WEFT_DEBUG_OFF_NODE)
    snprintf(what, sizeof what, "peer %d is on node %d, not on this rank's "
             "node %d: loads, stores and atomics reach only the ranks of their "
             "node (use wl.put / wl.get)", rec.peer, rec.peer / ctx->local_size,
             ctx->node);
  else if (rec.kind == WEFT_DEBUG_OUTSIDE_ALLOC || rec.kind == WEFT_DEBUG_ENGINE)
    snprintf(what, sizeof what, "%s", weft_host_engine_reason(engine));
  else
    snprintf(what, sizeof what,
             "pointer 0x%" PRIx64 " outside rank %d's heap (translate to %d)",
             rec.pointer, rec.rank, rec.peer);
  weft_host_engine_clear(engine);
  int engine_failed = rec.kind == WEFT_DEBUG_ENGINE;
  return weft_fail(engine_failed ? WEFT_ERROR_BACKEND : WEFT_ERROR_INVALID_ARGUMENT,
                   "%s: %s in kernel %s, rank %d program (%u,%u,%u)",
                   engine_failed ? "off-node operation failed" : "debug check failed",
                   what, location, rec.rank, rec.program[0], rec.program[1],
                   rec.program[2]);
}

/* Both records are read and cleared. A failed debug check stops its
 * program, which may leave others waiting for it: that record is the cause,
 * so its report is the one that stands. */
static weft_status check_kernel_records(weft_context *ctx) {
  weft_status wait = check_wait_error(ctx);
  weft_status debug = check_debug_error(ctx);
  return debug != WEFT_SUCCESS ? debug : wait;
}

/* WEFT_LAUNCH_RESIDENT: at most the programs the device runs at once. */
static weft_status clamp_to_resident(weft_context *ctx, weft_kernel *kernel,
                                     weft_launch_config *c) {
  if (c->grid[1] != 1 || c->grid[2] != 1)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_launch: a resident launch "
                     "takes a 1-D grid, not %ux%ux%u", c->grid[0], c->grid[1], c->grid[2]);
  uint32_t threads = weft_launch_threads(c, ctx->ops->warp_size);
  uint32_t resident = kernel->resident;
  if (!resident || kernel->resident_threads != threads ||
      kernel->resident_shared != c->shared_bytes ||
      memcmp(kernel->resident_cluster, c->cluster, sizeof c->cluster)) {
    weft_status st = ctx->ops->resident_programs(ctx->state, kernel->function, threads,
                                                 c->shared_bytes, c->cluster, &resident);
    if (st != WEFT_SUCCESS)
      return st;
    kernel->resident = resident;
    kernel->resident_threads = threads;
    kernel->resident_shared = c->shared_bytes;
    memcpy(kernel->resident_cluster, c->cluster, sizeof c->cluster);
  }
  /* A 1-D grid of whole clusters: only cluster[0] can exceed 1. */
  resident = resident / c->cluster[0] * c->cluster[0];
  if (!resident)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_launch: not one %s of "
                     "%u threads and %u bytes of shared memory fits the device",
                     c->cluster[0] > 1 ? "cluster of programs" : "program", threads,
                     c->shared_bytes);
  if (c->grid[0] > resident)
    c->grid[0] = resident;
  return WEFT_SUCCESS;
}

weft_status weft_launch(weft_kernel *kernel, const weft_launch_config *config,
                        void **args, size_t num_args) {
  if (!kernel)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_launch: kernel is NULL");
  weft_context *ctx = kernel->module->ctx;
  if (num_args && !args)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_launch: %zu arguments but args is NULL", num_args));
  weft_launch_config c = {{1, 1, 1}, 0, 0, NULL, 0, {1, 1, 1}};
  if (config)
    c = *config;
  uint32_t unknown = c.flags & ~(uint32_t)(WEFT_LAUNCH_EARLY_START | WEFT_LAUNCH_RESIDENT);
  if (unknown)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_launch: unknown flags 0x%x", unknown));
  for (int i = 0; i < 3; ++i) {
    if (!c.grid[i])
      c.grid[i] = 1;
    if (!c.cluster[i])
      c.cluster[i] = 1;
  }
  if (c.grid[0] % c.cluster[0] || c.grid[1] % c.cluster[1] || c.grid[2] % c.cluster[2])
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_launch: grid %ux%ux%u is not a whole number of clusters "
                         "of %ux%ux%u", c.grid[0], c.grid[1], c.grid[2], c.cluster[0],
                         c.cluster[1], c.cluster[2]));
  if (c.flags & WEFT_LAUNCH_RESIDENT) {
    weft_status st = clamp_to_resident(ctx, kernel, &c);
    if (st != WEFT_SUCCESS)
      return weft_ctx_fail(ctx, st);
  }
  weft_status st = ctx->ops->launch(ctx->state, kernel->function, &c, args,
                                    num_args, &ctx->kctx);
  /* The host backend has finished the launch: report its records now. */
  if (st == WEFT_SUCCESS && ctx->backend == WEFT_BACKEND_HOST)
    st = check_kernel_records(ctx);
  return weft_ctx_fail(ctx, st);
}

weft_status weft_synchronize(weft_context *ctx) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_synchronize: ctx is NULL");
  weft_status st = ctx->ops->synchronize(ctx->state, NULL);
  if (st == WEFT_SUCCESS)
    st = check_kernel_records(ctx);
  return weft_ctx_fail(ctx, st);
}

weft_status weft_get_kernel_context(weft_context *ctx, weft_kernel_context *out) {
  if (!ctx || !out)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "weft_get_kernel_context: NULL argument");
  *out = ctx->kctx;
  return WEFT_SUCCESS;
}
