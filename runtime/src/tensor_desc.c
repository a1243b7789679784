/*
 * weft_tensor_desc_encode. The rules of sm_90's bulk tensor copies (TMA)
 * are checked here, for every backend: the compiler may then assume them
 * on every target (abi.h), and a tensor a GPU would refuse fails on the
 * host backend, in CI, the same way. Only the tensor map itself is the
 * backend's (encode_tensor_map).
 */
#include <inttypes.h>
#include <string.h>

#include "internal.h"

#define BAD(...) \
  weft_fail(WEFT_ERROR_INVALID_ARGUMENT, "weft_tensor_desc_encode: " __VA_ARGS__)

static weft_status check_tensor(const void *base, size_t elem_size, int rank,
                                const int64_t *shape, const int64_t *strides) {
  if (!shape || !strides)
    return BAD("%s is NULL", shape ? "strides" : "shape");
  if (!base)
    return BAD("base is NULL");
  if (rank < 1 || rank > WEFT_TENSOR_DESC_MAX_RANK)
    return BAD("rank %d is not in 1..%d", rank, WEFT_TENSOR_DESC_MAX_RANK);
  if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8)
    return BAD("elem_size %zu is not 1, 2, 4 or 8", elem_size);
  if ((uintptr_t)base % 16)
    return BAD("base %p is not 16-byte aligned", base);
  for (int i = 0; i < rank; ++i)
    if (shape[i] < 1 || shape[i] > (int64_t)1 << 32)
      return BAD("shape[%d] = %" PRId64 " is not in 1..2^32", i, shape[i]);
  if (strides[rank - 1] != 1)
    return BAD("strides[%d] = %" PRId64 ": the innermost dimension must be "
               "contiguous (stride 1)", rank - 1, strides[rank - 1]);
  const int64_t size = (int64_t)elem_size;
  for (int i = 0; i < rank - 1; ++i) {
    if (strides[i] < 1)
      return BAD("strides[%d] = %" PRId64 " is not positive", i, strides[i]);
    /* Compared in elements: in bytes the product could overflow. */
    if (strides[i] >= ((int64_t)1 << 40) / size)
      return BAD("strides[%d] = %" PRId64 " elements of %zu bytes is not below "
                 "2^40 bytes", i, strides[i], elem_size);
    if (strides[i] * size % 16)
      return BAD("strides[%d] = %" PRId64 " elements of %zu bytes (%" PRId64
                 " bytes) is not a multiple of 16 bytes", i, strides[i],
                 elem_size, strides[i] * size);
  }
  return WEFT_SUCCESS;
}

/* map_rank > 0, after check_tensor: the view is well formed and stays
 * inside the tensor. Fills extents[j] (coordinates along map dimension j)
 * and byte_strides[j] (bytes between neighbours along it), outermost
 * first like map. */
static weft_status check_map(size_t elem_size, int rank, const int64_t *shape,
                             const int64_t *strides, int map_rank,
                             const weft_tensor_map_dim *map, int swizzle,
                             uint64_t *extents, uint64_t *byte_strides) {
  if (!map)
    return BAD("map is NULL (map_rank %d)", map_rank);
  for (int j = 0; j < map_rank; ++j) {
    const weft_tensor_map_dim *m = &map[j];
    if (m->dim < 0 || m->dim >= rank)
      return BAD("map[%d].dim = %" PRId32 " is not in 0..%d", j, m->dim, rank - 1);
    if (m->step < 1)
      return BAD("map[%d].step = %" PRId32 " is not positive", j, m->step);
    if (m->size < 0)
      return BAD("map[%d].size = %" PRId32 " is negative", j, m->size);
    if (m->box < 1 || m->box > 256)
      return BAD("map[%d].box = %" PRId32 " is not in 1..256", j, m->box);
  }
  const int last = map_rank - 1;
  if (map[last].dim != rank - 1 || map[last].step != 1)
    return BAD("map[%d] (the innermost) walks dimension %" PRId32 " in steps of %" PRId32
               ": it must walk dimension %d (the innermost) in steps of 1", last,
               map[last].dim, map[last].step, rank - 1);
  const int64_t size = (int64_t)elem_size;
  for (int j = 0; j < map_rank; ++j) {
    const weft_tensor_map_dim *m = &map[j];
    const int64_t n = shape[m->dim];
    if (m->size == 0 && n % m->step)
      return BAD("map[%d] steps shape[%" PRId32 "] = %" PRId64 " in steps of %" PRId32
                 ": not whole", j, m->dim, n, m->step);
    /* In 1..2^32 by construction: size is an int32_t, and a whole
     * shape[dim] / step is at least 1 and at most shape[dim] <= 2^32. */
    extents[j] = m->size ? (uint64_t)m->size : (uint64_t)(n / m->step);
    const int64_t stride = strides[m->dim];
    if (j < last) {
      /* Compared in elements: in bytes the product could overflow. Both
       * factors are positive: step * stride < L iff stride <= (L - 1) / step. */
      const int64_t limit = ((int64_t)1 << 40) / size;
      if (stride > (limit - 1) / m->step)
        return BAD("map[%d]: step %" PRId32 " x strides[%" PRId32 "] = %" PRId32 " x %"
                   PRId64 " elements of %zu bytes is not below 2^40 bytes", j, m->step,
                   m->dim, m->step, stride, elem_size);
      const int64_t bytes = m->step * stride * size;
      if (bytes % 16)
        return BAD("map[%d]: step %" PRId32 " x strides[%" PRId32 "] = %" PRId64
                   " elements of %zu bytes (%" PRId64 " bytes) is not a multiple of "
                   "16 bytes", j, m->step, m->dim, m->step * stride, elem_size, bytes);
      byte_strides[j] = (uint64_t)bytes;
    } else {
      byte_strides[j] = elem_size; /* stride 1, step 1 */
    }
  }
  /* No overflow: a term (E_j - 1) * step_j is below 2^62 (E_j <= 2^31 - 1
   * with step_j <= 2^31 - 1, or (E_j - 1) * step_j < shape <= 2^32), and
   * the innermost one's below 2^32, so a sum of five is below 2^64. */
  for (int d = 0; d < rank; ++d) {
    uint64_t reach = 0;
    for (int j = 0; j < map_rank; ++j)
      if (map[j].dim == d)
        reach += (extents[j] - 1) * (uint64_t)map[j].step;
    if (reach > (uint64_t)(shape[d] - 1))
      return BAD("the map reaches index %" PRIu64 " of dimension %d, beyond shape[%d] = %"
                 PRId64, reach, d, d, shape[d]);
  }
  const int32_t box = map[last].box;
  const int32_t inner = box * (int32_t)elem_size;
  if (inner % 16)
    return BAD("map[%d].box = %" PRId32 " elements of %zu bytes (%" PRId32 " bytes) "
               "is not a multiple of 16 bytes", last, box, elem_size, inner);
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return BAD("swizzle %d is not 0, 32, 64 or 128", swizzle);
  if (swizzle && inner > swizzle)
    return BAD("map[%d].box = %" PRId32 " elements of %zu bytes (%" PRId32 " bytes) "
               "is wider than the %d-byte swizzle", last, box, elem_size, inner, swizzle);
  return WEFT_SUCCESS;
}

weft_status weft_tensor_desc_encode(weft_context *ctx, const void *base, size_t elem_size,
                                    int rank, const int64_t *shape, const int64_t *strides,
                                    int map_rank, const weft_tensor_map_dim *map, int swizzle,
                                    weft_tensor_desc *out) {
  if (!ctx)
    return BAD("ctx is NULL");
  if (!out)
    return weft_ctx_fail(ctx, BAD("out is NULL"));
  /* Written as bytes, never through its type: callers such as ctypes
   * cannot give it the type's 64-byte alignment. */
  void *dst = (void *)(uintptr_t)out;
  memset(dst, 0, sizeof(weft_tensor_desc));
  uint64_t extents[WEFT_TENSOR_DESC_MAX_RANK], byte_strides[WEFT_TENSOR_DESC_MAX_RANK];
  weft_status st = check_tensor(base, elem_size, rank, shape, strides);
  if (st == WEFT_SUCCESS && (map_rank < 0 || map_rank > WEFT_TENSOR_DESC_MAX_RANK))
    st = BAD("map_rank %d is not in 0..%d", map_rank, WEFT_TENSOR_DESC_MAX_RANK);
  if (st == WEFT_SUCCESS && map_rank > 0)
    st = check_map(elem_size, rank, shape, strides, map_rank, map, swizzle, extents,
                   byte_strides);
  if (st != WEFT_SUCCESS)
    return weft_ctx_fail(ctx, st);

  /* Built here, where the tensor map has the alignment the driver needs. */
  weft_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.base = (uint64_t)(uintptr_t)base;
  for (int i = 0; i < rank; ++i) {
    d.shape[i] = shape[i];
    d.strides[i] = strides[i];
  }
  if (map_rank > 0 && ctx->ops->encode_tensor_map &&
      (st = ctx->ops->encode_tensor_map(ctx->state, d.tensor_map, base, elem_size,
                                        map_rank, map, extents, byte_strides,
                                        swizzle)) != WEFT_SUCCESS)
    return weft_ctx_fail(ctx, st);
  memcpy(dst, &d, sizeof d);
  return WEFT_SUCCESS;
}
