/*
 * Host kernels for the runtime tests, written by hand against abi.h the way
 * the compiler's host target emits them: one exported function per kernel
 * following weft_host_kernel_fn, peers reached through ctx->heap_base.
 */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "weft/abi.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t linear_id(const weft_host_program *p) {
  return p->id[0] + p->num[0] * (p->id[1] + p->num[1] * p->id[2]);
}

static uint32_t num_programs(const weft_host_program *p) {
  return p->num[0] * p->num[1] * p->num[2];
}

/* Translation as the compiler emits it: p - base[rank] + base[peer]. */
static void *translate(const weft_kernel_context *ctx, const void *p, int peer) {
  return (char *)(uintptr_t)ctx->heap_base[peer] +
         ((uintptr_t)p - (uintptr_t)ctx->heap_base[ctx->rank]);
}

/* The wait the compiler emits (eq and ge only, here): poll with acquire; past wait_timeout_ns the
 * first timed-out program records itself, and later waits return at once. */
enum { CMP_EQ = 0, CMP_GE = 2 };

static int wait_for(const weft_kernel_context *ctx, const weft_host_program *p,
                    uint64_t *flag, uint32_t cmp, uint64_t value) {
  weft_reserved *res = (weft_reserved *)(uintptr_t)ctx->heap_base[ctx->rank];
  uint64_t start = now_ns();
  for (;;) {
    uint64_t seen = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
    if (cmp == CMP_EQ ? seen == value : seen >= value)
      return 1;
    if (__atomic_load_n(&res->wait_error.status, __ATOMIC_ACQUIRE))
      return 0;
    if (ctx->wait_timeout_ns && now_ns() - start > ctx->wait_timeout_ns) {
      uint32_t idle = 0;
      if (__atomic_compare_exchange_n(&res->wait_error.status, &idle, 2u, 0,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        res->wait_error.rank = ctx->rank;
        for (int i = 0; i < 3; ++i)
          res->wait_error.program[i] = p->id[i];
        res->wait_error.cmp = cmp;
        res->wait_error.flag_address = (uintptr_t)flag;
        res->wait_error.expected = value;
        res->wait_error.last_seen = seen;
        __atomic_store_n(&res->wait_error.status, WEFT_WAIT_TIMED_OUT,
                         __ATOMIC_RELEASE);
      }
      return 0;
    }
    sched_yield();
  }
}

/* args: int64_t *table (num_ranks * programs slots), int64_t base.
 * Every program writes its slot in every rank's copy of table. */
void ring_write(void **args, const weft_kernel_context *ctx,
                const weft_host_program *p) {
  int64_t *table = *(int64_t **)args[0];
  int64_t base = *(int64_t *)args[1];
  uint32_t id = linear_id(p), n = num_programs(p);
  for (int peer = 0; peer < ctx->num_ranks; ++peer) {
    int64_t *dst = translate(ctx, table, peer);
    dst[(uint32_t)ctx->rank * n + id] = base + ctx->rank * 1000 + id;
  }
}

/* args: uint64_t *flags (2 * programs), uint64_t epoch. Program i signals
 * program i of the next rank and program i-1 of its own rank, then waits
 * for both: it only finishes if every program of every rank is resident. */
void spin_ring(void **args, const weft_kernel_context *ctx,
               const weft_host_program *p) {
  uint64_t *flags = *(uint64_t **)args[0];
  uint64_t epoch = *(uint64_t *)args[1];
  uint32_t id = linear_id(p), n = num_programs(p);
  int next = (ctx->rank + 1) % ctx->num_ranks;
  uint64_t *remote = translate(ctx, &flags[id], next);
  __atomic_store_n(remote, epoch, __ATOMIC_RELEASE);
  __atomic_store_n(&flags[n + (id + n - 1) % n], epoch, __ATOMIC_RELEASE);
  /* The previous rank may already be one launch ahead: wait for >=. */
  if (!wait_for(ctx, p, &flags[id], CMP_GE, epoch))
    return;
  wait_for(ctx, p, &flags[n + id], CMP_EQ, epoch);
}

/* args: uint64_t *flag. Waits for a 1 that never comes. */
void wait_forever(void **args, const weft_kernel_context *ctx,
                  const weft_host_program *p) {
  wait_for(ctx, p, *(uint64_t **)args[0], CMP_EQ, 1);
}

/* args: int32_t *out. Records the kernel context fields it was given. */
void read_context(void **args, const weft_kernel_context *ctx,
                  const weft_host_program *p) {
  int32_t *out = *(int32_t **)args[0];
  if (linear_id(p) == 0) {
    out[0] = ctx->rank;
    out[1] = ctx->num_ranks;
    out[2] = (int32_t)ctx->abi_version;
    out[3] = (int32_t)(p->num[0] * p->num[1] * p->num[2]);
  }
}

/* What the compiler emits when an engine entry fails: the first failure of
 * the launch claims the debug record, and the program stops. */
static void record_engine_failure(const weft_kernel_context *ctx,
                                  const weft_host_program *p, uint32_t kind,
                                  int peer) {
  weft_reserved *res = (weft_reserved *)(uintptr_t)ctx->heap_base[ctx->rank];
  uint32_t idle = WEFT_DEBUG_OK;
  if (__atomic_compare_exchange_n(&res->debug_error.kind, &idle, kind, 0,
                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    res->debug_error.rank = ctx->rank;
    for (int i = 0; i < 3; ++i)
      res->debug_error.program[i] = p->id[i];
    res->debug_error.peer = peer;
  }
}

/* args: int64_t *src, int64_t *dst, uint64_t *flag, int64_t count, uint64_t
 * epoch. Program 0 puts count elements of src into the next rank's dst and
 * sets its flag to epoch, through the engine when that rank is on another
 * node and by stores otherwise (as weft.put lowers), then waits for its own
 * flag. */
void put_ring(void **args, const weft_kernel_context *ctx, const weft_host_program *p) {
  if (linear_id(p) != 0)
    return;
  int64_t *src = *(int64_t **)args[0], *dst = *(int64_t **)args[1];
  uint64_t *flag = *(uint64_t **)args[2];
  int64_t count = *(int64_t *)args[3];
  uint64_t epoch = *(uint64_t *)args[4];
  int next = (ctx->rank + 1) % ctx->num_ranks;
  if (ctx->heap_base[next]) {
    int64_t *to = translate(ctx, dst, next);
    for (int64_t i = 0; i < count; ++i)
      to[i] = src[i];
    __atomic_store_n((uint64_t *)translate(ctx, flag, next), epoch, __ATOMIC_RELEASE);
  } else {
    const weft_host_engine *e = (const weft_host_engine *)(uintptr_t)ctx->engine;
    uint32_t bad = e->put(e->state, (uintptr_t)dst, (uintptr_t)src,
                          (uint64_t)count * sizeof *src, next, (uintptr_t)flag, epoch,
                          WEFT_ENGINE_SIGNAL_SET);
    if (bad) {
      record_engine_failure(ctx, p, bad, next);
      return;
    }
  }
  wait_for(ctx, p, flag, CMP_EQ, epoch);
}

/* args: int64_t *local, int64_t *src, int64_t count. Program 0 copies the
 * previous rank's src into local: a get when that rank is on another node. */
void get_previous(void **args, const weft_kernel_context *ctx,
                  const weft_host_program *p) {
  if (linear_id(p) != 0)
    return;
  int64_t *local = *(int64_t **)args[0], *src = *(int64_t **)args[1];
  int64_t count = *(int64_t *)args[2];
  int prev = (ctx->rank + ctx->num_ranks - 1) % ctx->num_ranks;
  if (ctx->heap_base[prev]) {
    const int64_t *from = translate(ctx, src, prev);
    for (int64_t i = 0; i < count; ++i)
      local[i] = from[i];
    return;
  }
  const weft_host_engine *e = (const weft_host_engine *)(uintptr_t)ctx->engine;
  uint32_t bad = e->get(e->state, (uintptr_t)local, (uintptr_t)src,
                        (uint64_t)count * sizeof *src, prev);
  if (bad)
    record_engine_failure(ctx, p, bad, prev);
}
