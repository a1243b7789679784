/*
 * First-fit allocator over heap offsets. It never touches heap memory, so
 * a bad free cannot corrupt anything: the block table lives on the host and
 * every free is checked against it. Every rank runs the same sequence of
 * calls on the same table, which is what makes allocations symmetric.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static weft_status reserve(weft_allocator *a, size_t count) {
  if (count <= a->capacity)
    return WEFT_SUCCESS;
  size_t cap = a->capacity ? a->capacity * 2 : 64;
  weft_block *b = realloc(a->blocks, cap * sizeof *b);
  if (!b)
    return weft_fail(WEFT_ERROR_OUT_OF_MEMORY, "allocator: out of host memory");
  a->blocks = b;
  a->capacity = cap;
  return WEFT_SUCCESS;
}

weft_status weft_allocator_init(weft_allocator *a, uint64_t begin, uint64_t end) {
  memset(a, 0, sizeof *a);
  a->begin = begin;
  a->end = end;
  weft_status st = reserve(a, 1);
  if (st != WEFT_SUCCESS)
    return st;
  a->blocks[0] = (weft_block){begin, end - begin, 0};
  a->count = 1;
  return WEFT_SUCCESS;
}

void weft_allocator_destroy(weft_allocator *a) {
  free(a->blocks);
  memset(a, 0, sizeof *a);
}

static uint64_t largest_free(const weft_allocator *a) {
  uint64_t best = 0;
  for (size_t i = 0; i < a->count; ++i)
    if (!a->blocks[i].used && a->blocks[i].size > best)
      best = a->blocks[i].size;
  return best;
}

static long first_fit(const weft_allocator *a, uint64_t size) {
  for (size_t i = 0; i < a->count; ++i)
    if (!a->blocks[i].used && a->blocks[i].size >= size)
      return (long)i;
  return -1;
}

weft_status weft_allocator_check_alloc(weft_allocator *a, uint64_t size) {
  if (first_fit(a, size) >= 0)
    /* A split may need one more table entry. */
    return reserve(a, a->count + 1);
  return weft_fail(WEFT_ERROR_OUT_OF_MEMORY,
                   "weft_malloc: symmetric heap exhausted: requested %llu "
                   "bytes, largest free block %llu bytes (heap %llu bytes; "
                   "raise WEFT_HEAP_SIZE)",
                   (unsigned long long)size,
                   (unsigned long long)largest_free(a),
                   (unsigned long long)a->end);
}

uint64_t weft_allocator_alloc(weft_allocator *a, uint64_t size) {
  size_t i = (size_t)first_fit(a, size);
  weft_block *b = &a->blocks[i];
  uint64_t offset = b->offset;
  if (b->size > size) {
    memmove(b + 2, b + 1, (a->count - i - 1) * sizeof *b);
    b[1] = (weft_block){offset + size, b->size - size, 0};
    ++a->count;
  }
  b->size = size;
  b->used = 1;
  return offset;
}

/* The block containing offset, or -1. */
static long find(const weft_allocator *a, uint64_t offset) {
  size_t lo = 0, hi = a->count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const weft_block *b = &a->blocks[mid];
    if (offset < b->offset)
      hi = mid;
    else if (offset >= b->offset + b->size)
      lo = mid + 1;
    else
      return (long)mid;
  }
  return -1;
}

weft_status weft_allocator_check_free(const weft_allocator *a, uint64_t offset) {
  long i = find(a, offset);
  if (i < 0)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "weft_free: heap offset 0x%llx is in the runtime-reserved "
                     "region, not an allocation", (unsigned long long)offset);
  const weft_block *b = &a->blocks[i];
  if (!b->used)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "weft_free: heap offset 0x%llx is not allocated (double "
                     "free?)", (unsigned long long)offset);
  if (b->offset != offset)
    return weft_fail(WEFT_ERROR_INVALID_ARGUMENT,
                     "weft_free: heap offset 0x%llx points into the allocation "
                     "at 0x%llx, not at its start",
                     (unsigned long long)offset, (unsigned long long)b->offset);
  return WEFT_SUCCESS;
}

void weft_allocator_free(weft_allocator *a, uint64_t offset) {
  size_t i = (size_t)find(a, offset);
  a->blocks[i].used = 0;
  /* Coalesce with the free neighbours so fragments do not accumulate. */
  if (i + 1 < a->count && !a->blocks[i + 1].used) {
    a->blocks[i].size += a->blocks[i + 1].size;
    memmove(&a->blocks[i + 1], &a->blocks[i + 2],
            (a->count - i - 2) * sizeof(weft_block));
    --a->count;
  }
  if (i > 0 && !a->blocks[i - 1].used) {
    a->blocks[i - 1].size += a->blocks[i].size;
    memmove(&a->blocks[i], &a->blocks[i + 1],
            (a->count - i - 1) * sizeof(weft_block));
    --a->count;
  }
}

const weft_block *weft_allocator_find(const weft_allocator *a, uint64_t offset) {
  size_t lo = 0, hi = a->count;
  while (lo < hi) { /* the last block starting at or before offset */
    size_t mid = lo + (hi - lo) / 2;
    if (a->blocks[mid].offset <= offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return NULL;
  const weft_block *b = &a->blocks[lo - 1];
  return b->used && offset - b->offset < b->size ? b : NULL;
}
