/*
 * weft_malloc / weft_free / weft_peer_ptr: the collective, symmetric face of
 * the allocator. Each of those calls exchanges (call number, operation,
 * argument, local verdict) among all ranks first, so a rank that asks for
 * something different, or whose local check failed, fails the call on
 * every rank instead of leaving the heaps out of step. weft_memcpy /
 * weft_memset: host access to the local part and to weft_malloc_local
 * blocks (local.c); weft_memset_async: a stream-ordered fill of any of the
 * device's memory; weft_put_fork / weft_put_signal_async / weft_put_wait /
 * weft_put_join: the copy engine's puts to peers, checked and translated
 * here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

enum { OP_MALLOC = 1, OP_FREE = 2 };

#define NOT_IN_HEAP UINT64_MAX

typedef struct call_record {
  uint64_t seq;
  uint64_t arg; /* malloc: requested bytes; free: heap offset */
  uint32_t op;
  int32_t status; /* this rank's local verdict */
} call_record;

/* Appends a description of c to buf[*len..n), clamping *len at n - 1. */
static void describe(char *buf, size_t n, size_t *len, const call_record *c,
                     int rank, uint64_t seq) {
  char at[48] = "";
  if (c->seq != seq)
    snprintf(at, sizeof at, " (its call #%" PRIu64 ")", c->seq);
  char *p = buf + *len;
  size_t room = n - *len;
  int k;
  if (c->op == OP_MALLOC)
    k = snprintf(p, room, "rank %d asked %" PRIu64 " bytes%s", rank, c->arg, at);
  else if (c->arg == NOT_IN_HEAP)
    k = snprintf(p, room, "rank %d freed a pointer outside the heap%s", rank, at);
  else if (c->arg == 0)
    k = snprintf(p, room, "rank %d freed NULL%s", rank, at);
  else
    k = snprintf(p, room, "rank %d freed heap offset 0x%" PRIx64 "%s", rank,
                 c->arg, at);
  *len += k < 0 ? 0 : (size_t)k;
  if (*len >= n)
    *len = n - 1;
}

/* Exchanges this rank's record; fails on every rank alike when the ranks
 * disagree or any of them failed its local check. */
static weft_status agree(weft_context *ctx, const char *what, call_record *mine,
                         weft_status local) {
  char local_message[WEFT_ERROR_MAX];
  snprintf(local_message, sizeof local_message, "%s", weft_thread_error());
  mine->seq = ++ctx->collective_seq;
  mine->status = (int32_t)local;
  call_record all[WEFT_MAX_RANKS];
  weft_status st = weft_bootstrap_allgather(ctx->bootstrap, mine, sizeof *mine, all);
  if (st != WEFT_SUCCESS) {
    /* E.g. a peer was in weft_barrier instead: this call did not happen. */
    --ctx->collective_seq;
    return st;
  }
  char msg[WEFT_ERROR_MAX];
  size_t len = (size_t)snprintf(msg, sizeof msg, "%s: asymmetric call #%" PRIu64
                                ": ", what, mine->seq);
  int differs = 0;
  for (int r = 1; r < ctx->num_ranks; ++r) {
    const call_record *c = &all[r];
    if (c->seq == all[0].seq && c->op == all[0].op && c->arg == all[0].arg)
      continue;
    if (!differs)
      describe(msg, sizeof msg, &len, &all[0], 0, mine->seq);
    differs = 1;
    if (len + 2 < sizeof msg) {
      memcpy(msg + len, ", ", 3);
      len += 2;
    }
    describe(msg, sizeof msg, &len, c, r, mine->seq);
  }
  if (differs)
    return weft_fail(WEFT_ERROR_ASYMMETRIC, "%s", msg);
  if (local != WEFT_SUCCESS)
    return weft_fail(local, "%s", local_message);
  for (int r = 0; r < ctx->num_ranks; ++r)
    if (all[r].status != WEFT_SUCCESS)
      return weft_fail((weft_status)all[r].status, "%s: failed on rank %d "
                       "(%s)", what, r, weft_status_string(all[r].status));
  return WEFT_SUCCESS;
}

weft_status weft_malloc(weft_context *ctx, size_t size, void **out) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_malloc: ctx is NULL");
  if (out)
    *out = NULL;
  weft_status local = WEFT_SUCCESS;
  /* Size 0 still gets a distinct, aligned block. */
  uint64_t need = size ? ((uint64_t)size + WEFT_HEAP_ALIGN - 1) &
                             ~(uint64_t)(WEFT_HEAP_ALIGN - 1)
                       : WEFT_HEAP_ALIGN;
  if (!out)
    local = weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_malloc: out is NULL");
  else if (need < size)
    local = weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "weft_malloc: %zu bytes is "
                      "more than any heap", size);
  else
    local = weft_allocator_check_alloc(&ctx->allocator, need);
  call_record mine = {0, size, OP_MALLOC, 0};
  weft_status st = agree(ctx, "weft_malloc", &mine, local);
  if (st != WEFT_SUCCESS)
    return weft_ctx_fail(ctx, st);
  uint64_t offset = weft_allocator_alloc(&ctx->allocator, need);
  *out = (char *)(uintptr_t)ctx->kctx.heap_base[ctx->rank] + offset;
  return WEFT_SUCCESS;
}

/* The heap offset of ptr in this rank's heap, or NOT_IN_HEAP. */
static uint64_t heap_offset(const weft_context *ctx, const void *ptr) {
  uintptr_t base = (uintptr_t)ctx->kctx.heap_base[ctx->rank];
  uintptr_t p = (uintptr_t)ptr;
  return p >= base && p - base < ctx->heap_size ? (uint64_t)(p - base)
                                                : NOT_IN_HEAP;
}

weft_status weft_free(weft_context *ctx, void *ptr) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_free: ctx is NULL");
  uint64_t offset = ptr ? heap_offset(ctx, ptr) : 0;
  weft_status local = WEFT_SUCCESS;
  if (offset == NOT_IN_HEAP)
    local = weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_free: %p is not in "
                      "this rank's symmetric heap [%p, +0x%zx)", ptr,
                      (void *)(uintptr_t)ctx->kctx.heap_base[ctx->rank],
                      ctx->heap_size);
  else if (ptr)
    local = weft_allocator_check_free(&ctx->allocator, offset);
  call_record mine = {0, offset, OP_FREE, 0};
  weft_status st = agree(ctx, "weft_free", &mine, local);
  if (st != WEFT_SUCCESS)
    return weft_ctx_fail(ctx, st);
  if (ptr)
    weft_allocator_free(&ctx->allocator, offset);
  return WEFT_SUCCESS;
}

weft_status weft_peer_ptr(weft_context *ctx, const void *ptr, int peer, void **out) {
  if (!ctx || !out)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_peer_ptr: %s is NULL",
                     ctx ? "out" : "ctx");
  *out = NULL;
  uint64_t offset = heap_offset(ctx, ptr);
  if (offset == NOT_IN_HEAP)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_peer_ptr: %p is not in this rank's symmetric "
                         "heap", ptr));
  if (peer < 0 || peer >= ctx->num_ranks)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_peer_ptr: peer %d is not a rank (0..%d)", peer,
                         ctx->num_ranks - 1));
  if (!ctx->kctx.heap_base[peer])
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_peer_ptr: rank %d is on node %d, not on this "
                         "rank's node %d: its memory is not mapped here "
                         "(reach it with weft.put / weft.get)", peer,
                         peer / ctx->local_size, ctx->node));
  *out = (char *)(uintptr_t)ctx->kctx.heap_base[peer] + offset;
  return WEFT_SUCCESS;
}

/* 1 when [ptr, ptr + size) lies in this rank's memory: its heap or one of
 * its weft_malloc_local blocks. */
static int in_rank_memory(const weft_context *ctx, const void *ptr, size_t size) {
  uint64_t offset = heap_offset(ctx, ptr);
  return (offset != NOT_IN_HEAP && size <= ctx->heap_size - offset) ||
         weft_local_contains(ctx, ptr, size);
}

weft_status weft_memcpy(weft_context *ctx, void *dst, const void *src, size_t size) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_memcpy: ctx is NULL");
  if (size == 0)
    return WEFT_SUCCESS;
  if (!dst || !src)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_memcpy: %s is NULL", dst ? "src" : "dst"));
  int to_device = in_rank_memory(ctx, dst, size);
  if (to_device == in_rank_memory(ctx, src, size))
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_memcpy: %s of %p and %p (%zu bytes) lies in "
                         "this rank's memory (its symmetric heap [%p, +0x%zx) "
                         "or a weft_malloc_local block); exactly one must",
                         to_device ? "each" : "neither", dst, src, size,
                         (void *)(uintptr_t)ctx->kctx.heap_base[ctx->rank],
                         ctx->heap_size));
  weft_status st = to_device ? ctx->ops->copy_to_device(ctx->state, dst, src, size)
                             : ctx->ops->copy_to_host(ctx->state, dst, src, size);
  return weft_ctx_fail(ctx, st);
}

weft_status weft_memset(weft_context *ctx, void *ptr, int value, size_t size) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_memset: ctx is NULL");
  if (size == 0)
    return WEFT_SUCCESS;
  if (!in_rank_memory(ctx, ptr, size))
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_memset: [%p, +%zu) is neither in this rank's "
                         "symmetric heap [%p, +0x%zx) nor in a "
                         "weft_malloc_local block", ptr, size,
                         (void *)(uintptr_t)ctx->kctx.heap_base[ctx->rank],
                         ctx->heap_size));
  return weft_ctx_fail(ctx, ctx->ops->memset_device(ctx->state, ptr, value, size));
}

weft_status weft_memset_async(weft_context *ctx, void *ptr, int value, size_t size,
                              void *stream) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_memset_async: ctx is NULL");
  if (size == 0)
    return WEFT_SUCCESS;
  if (!ptr)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                                        "weft_memset_async: ptr is NULL"));
  return weft_ctx_fail(ctx, ctx->ops->memset_async(ctx->state, ptr, value, size, stream));
}

/* Where put i's range [p, +size) lies on its peer, or a failure naming it. */
static weft_status peer_range(weft_context *ctx, size_t i, const char *what, void *p,
                              size_t size, int peer, void **out) {
  uint64_t offset = heap_offset(ctx, p);
  if (offset == NOT_IN_HEAP || size > ctx->heap_size - offset)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_signal_async: put %zu: %s "
                     "[%p, +%zu) is not in this rank's symmetric heap [%p, +0x%zx)", i,
                     what, p, size, (void *)(uintptr_t)ctx->kctx.heap_base[ctx->rank],
                     ctx->heap_size);
  *out = (char *)(uintptr_t)ctx->kctx.heap_base[peer] + offset;
  return WEFT_SUCCESS;
}

/* put with its dst and signal on its peer, after the checks. */
static weft_status translate_put(weft_context *ctx, size_t i, const weft_put *put,
                                 weft_put *out) {
  *out = *put;
  if (put->peer < 0 || put->peer >= ctx->num_ranks || !ctx->kctx.heap_base[put->peer])
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_signal_async: put %zu: peer "
                     "%d is not a rank of this node (ranks %d..%d)", i, put->peer,
                     ctx->node * ctx->local_size, (ctx->node + 1) * ctx->local_size - 1);
  if ((put->size && !put->src) || !put->signal_src)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_signal_async: put %zu: %s is "
                     "NULL", i, put->signal_src ? "src" : "signal_src");
  if ((uintptr_t)put->signal % 8)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_signal_async: put %zu: "
                     "signal %p is not 8-byte aligned", i, put->signal);
  weft_status st = WEFT_SUCCESS;
  if (put->size)
    st = peer_range(ctx, i, "dst", put->dst, put->size, put->peer, &out->dst);
  return st ? st : peer_range(ctx, i, "signal", put->signal, 8, put->peer, &out->signal);
}

#define PUT_BATCH 32 /* puts translated on the stack at a time */

weft_status weft_put_fork(weft_context *ctx, void *stream) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_fork: ctx is NULL");
  return weft_ctx_fail(ctx, ctx->ops->put_fork(ctx->state, stream));
}

weft_status weft_put_signal_async(weft_context *ctx, const weft_put *puts, size_t count) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_signal_async: ctx is NULL");
  if (count && !puts)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                                        "weft_put_signal_async: puts is NULL"));
  weft_put batch[PUT_BATCH];
  for (size_t i = 0; i < count; i++)  /* all checked before any is made */
    if (translate_put(ctx, i, &puts[i], &batch[0]))
      return weft_ctx_fail(ctx, WEFT_ERROR_INVALID_ARGUMENT);
  for (size_t first = 0; first < count; first += PUT_BATCH) {
    size_t n = count - first < PUT_BATCH ? count - first : PUT_BATCH;
    for (size_t i = 0; i < n; i++)
      translate_put(ctx, first + i, &puts[first + i], &batch[i]);
    weft_status st = ctx->ops->put_signal(ctx->state, batch, n);
    if (st)
      return weft_ctx_fail(ctx, st);
  }
  return WEFT_SUCCESS;
}

weft_status weft_put_wait(weft_context *ctx, const void *count, uint32_t value) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_wait: ctx is NULL");
  if (!count || (uintptr_t)count % 4)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_wait: "
                                        "count %p is not a 4-byte aligned address", count));
  if (value == 0 || value > INT32_MAX)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_wait: value "
                                        "%" PRIu32 " is not in 1 .. 2^31 - 1", value));
  return weft_ctx_fail(ctx, ctx->ops->put_wait(ctx->state, count, value,
                                               ctx->kctx.wait_timeout_ns));
}

weft_status weft_put_join(weft_context *ctx, void *stream) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_put_join: ctx is NULL");
  return weft_ctx_fail(ctx, ctx->ops->put_join(ctx->state, stream));
}
