/*
 * weft_malloc_local / weft_free_local: memory of this rank alone, outside
 * the symmetric heap, so a rank can keep scratch without its peers taking
 * part (weft_malloc is collective). The context lists the blocks, so that
 * weft_memcpy / weft_memset can check an address range against them and
 * weft_finalize frees what is left.
 */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

weft_status weft_malloc_local(weft_context *ctx, size_t size, void **out) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_malloc_local: ctx is NULL");
  if (!out)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                                        "weft_malloc_local: out is NULL"));
  *out = NULL;
  weft_local_block *b = malloc(sizeof *b);
  if (!b)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_OUT_OF_MEMORY,
                                        "weft_malloc_local: out of host memory"));
  /* Size 0 still gets a distinct block, as from weft_malloc. */
  b->size = size ? size : WEFT_HEAP_ALIGN;
  weft_status st = ctx->ops->local_alloc(ctx->state, b->size, &b->ptr);
  if (st != WEFT_SUCCESS) {
    free(b);
    return weft_ctx_fail(ctx, st);
  }
  b->next = ctx->local_blocks;
  ctx->local_blocks = b;
  *out = b->ptr;
  return WEFT_SUCCESS;
}

weft_status weft_free_local(weft_context *ctx, void *ptr) {
  if (!ctx)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_free_local: ctx is NULL");
  if (!ptr)
    return WEFT_SUCCESS;
  weft_local_block **link = &ctx->local_blocks;
  while (*link && (*link)->ptr != ptr)
    link = &(*link)->next;
  weft_local_block *b = *link;
  if (!b)
    return weft_ctx_fail(ctx, weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                         "weft_free_local: %p is not a live weft_malloc_local "
                         "block", ptr));
  *link = b->next;
  weft_status st = ctx->ops->local_free(ctx->state, b->ptr);
  free(b);
  return weft_ctx_fail(ctx, st);
}

int weft_local_contains(const weft_context *ctx, const void *ptr, size_t size) {
  uintptr_t p = (uintptr_t)ptr;
  for (const weft_local_block *b = ctx->local_blocks; b; b = b->next) {
    uintptr_t base = (uintptr_t)b->ptr;
    if (p >= base && p - base <= b->size && size <= b->size - (p - base))
      return 1;
  }
  return 0;
}

void weft_local_free_all(weft_context *ctx) {
  while (ctx->local_blocks) {
    weft_local_block *b = ctx->local_blocks;
    ctx->local_blocks = b->next;
    ctx->ops->local_free(ctx->state, b->ptr);
    free(b);
  }
}
