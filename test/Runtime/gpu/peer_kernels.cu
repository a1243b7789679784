// Kernels for peer_test.c, built by nvcc on the GPU machine
// (scripts/gpu/validate_runtime.sh). Every kernel takes its arguments and
// then the weft_kernel_context by value, as weft_launch appends it.
#include <stdint.h>

#include "weft/abi.h"

// This process's address of peer's copy of the symmetric object at p.
__device__ static void *peer_addr(const void *p, int peer,
                                  const weft_kernel_context &ctx) {
  return (void *)((uintptr_t)p - ctx.heap_base[ctx.rank] + ctx.heap_base[peer]);
}

__device__ static uint64_t pattern(uint32_t tag, uint64_t i) {
  return (uint64_t)tag << 40 | i;
}

__device__ static uint64_t first_index() {
  return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ static uint64_t stride() { return (uint64_t)gridDim.x * blockDim.x; }

// Writes pattern(tag, i) into word i of peer's copy of p[0..n).
extern "C" __global__ void fill_words(uint64_t *p, uint64_t n, uint32_t tag,
                                      int peer, weft_kernel_context ctx) {
  uint64_t *dst = (uint64_t *)peer_addr(p, peer, ctx);
  for (uint64_t i = first_index(); i < n; i += stride())
    dst[i] = pattern(tag, i);
}

// Counts the words of peer's copy of p[0..n) that are not pattern(tag, i)
// into *errors (this rank's), printing the first few.
extern "C" __global__ void check_words(const uint64_t *p, uint64_t n,
                                       uint32_t tag, int peer,
                                       unsigned long long *errors,
                                       weft_kernel_context ctx) {
  const uint64_t *src = (const uint64_t *)peer_addr(p, peer, ctx);
  for (uint64_t i = first_index(); i < n; i += stride()) {
    uint64_t got = src[i], want = pattern(tag, i);
    if (got != want && atomicAdd(errors, 1ull) < 4)
      printf("rank %d: rank %d's copy, word %llu: got %#llx, expected %#llx\n",
             ctx.rank, peer, (unsigned long long)i, (unsigned long long)got,
             (unsigned long long)want);
  }
}

// Fails the launch (and so weft_synchronize) when *errors is not zero.
extern "C" __global__ void expect_zero(unsigned long long *errors, int check,
                                       weft_kernel_context ctx) {
  if (first_index() == 0 && *errors) {
    printf("rank %d: check %d: %llu wrong words\n", ctx.rank, check, *errors);
    __trap();
  }
}

extern "C" __global__ void zero(unsigned long long *word, weft_kernel_context ctx) {
  (void)ctx;
  if (first_index() == 0)
    *word = 0;
}

// Copies n16 16-byte words between this rank and the next one:
// pull (read): next's src -> own dst; push (write): own src -> next's dst.
extern "C" __global__ void copy_next(uint4 *dst, const uint4 *src, uint64_t n16,
                                     int pull, weft_kernel_context ctx) {
  int next = (ctx.rank + 1) % ctx.num_ranks;
  if (pull)
    src = (const uint4 *)peer_addr(src, next, ctx);
  else
    dst = (uint4 *)peer_addr(dst, next, ctx);
  uint64_t i = first_index(), s = stride();
  // Four loads in flight per thread before the stores.
  for (; i + 3 * s < n16; i += 4 * s) {
    uint4 a = src[i], b = src[i + s], c = src[i + 2 * s], d = src[i + 3 * s];
    dst[i] = a;
    dst[i + s] = b;
    dst[i + 2 * s] = c;
    dst[i + 3 * s] = d;
  }
  for (; i < n16; i += s)
    dst[i] = src[i];
}

// Stores through a null-page pointer: the launch must fail with an illegal
// address that weft_synchronize reports.
extern "C" __global__ void fault(weft_kernel_context ctx) {
  *(volatile int *)(uintptr_t)16 = ctx.rank;
}
