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

// Early start (WEFT_LAUNCH_EARLY_START). release_and_spin lets the next
// kernel on the stream launch at once (griddepcontrol.launch_dependents),
// then spins until that kernel has set *flag; after `timeout_ns` it gives
// up and counts an error instead. Only a launch that starts before this
// kernel completes can set the flag in time: set_flag does not wait.
extern "C" __global__ void release_and_spin(volatile unsigned *flag,
                                            unsigned long long *errors,
                                            unsigned long long timeout_ns,
                                            weft_kernel_context ctx) {
  (void)ctx;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      if (threadIdx.x == 0)
        atomicAdd(errors, 1ull);
      return;
    }
  } while (*flag == 0);
}

extern "C" __global__ void set_flag(volatile unsigned *flag, weft_kernel_context ctx) {
  (void)ctx;
  *flag = 1;
}

// p[i] += 1 once the kernels this launch depends on have completed, which
// every kernel of the weft compiler waits for before it touches memory
// (griddepcontrol.wait).
extern "C" __global__ void increment_after_wait(uint32_t *p, uint64_t n,
                                                weft_kernel_context ctx) {
  (void)ctx;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  for (uint64_t i = first_index(); i < n; i += stride())
    p[i] += 1;
}

// Thread 0 initialises `bar` for one arrival expecting `bytes` and starts
// the bulk copy `copy` (which completes on it); then every thread waits
// for the copy to land.
template <typename Copy>
__device__ void bulk_copy(uint32_t bar_s, uint32_t bytes, Copy copy) {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_s) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_s),
                 "r"(bytes) : "memory");
    copy();
  }
  __syncthreads();
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar_s) : "memory");
}

// One bulk tensor copy (TMA) of the 8 x 64 box of 16-bit elements at
// (row0, col0) of the 2-D tensor that desc's tensor map describes, into
// shared memory; the box's 1024 bytes then go to out as they landed there
// (swizzled when the map says so). Elements outside the tensor read as 0.
extern "C" __global__ void tma_load_box(const __grid_constant__ weft_tensor_desc desc,
                                        int32_t row0, int32_t col0, uint4 *out,
                                        weft_kernel_context ctx) {
  (void)ctx;
  // 1024: the alignment a 128-byte swizzle needs.
  __shared__ alignas(1024) uint4 tile[64];
  __shared__ alignas(8) uint64_t bar;
  uint32_t tile_s = (uint32_t)__cvta_generic_to_shared(tile);
  uint32_t bar_s = (uint32_t)__cvta_generic_to_shared(&bar);
  bulk_copy(bar_s, sizeof tile, [&] {
    // The tensor map's coordinates count the innermost dimension first.
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile"
                 ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(tile_s), "l"(&desc.tensor_map), "r"(col0), "r"(row0), "r"(bar_s)
                 : "memory");
  });
  for (uint32_t i = threadIdx.x; i < 64; i += blockDim.x)
    out[i] = tile[i];
}

// One bulk tensor copy (TMA) of a box of a 4-D tensor map (a view of a
// 2-D tensor: peer_test.c's split view) at coordinates c0..c3, innermost
// first, into shared memory, unswizzled; its `bytes` (at most 16 KiB) then
// go to out as they landed there. Coordinates past the map read as 0.
extern "C" __global__ void tma_load_box4(const __grid_constant__ weft_tensor_desc desc,
                                         int32_t c0, int32_t c1, int32_t c2, int32_t c3,
                                         uint32_t bytes, uint4 *out,
                                         weft_kernel_context ctx) {
  (void)ctx;
  __shared__ alignas(128) uint4 tile[1024];
  __shared__ alignas(8) uint64_t bar;
  uint32_t tile_s = (uint32_t)__cvta_generic_to_shared(tile);
  uint32_t bar_s = (uint32_t)__cvta_generic_to_shared(&bar);
  bulk_copy(bar_s, bytes, [&] {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile"
                 ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                 ::"r"(tile_s), "l"(&desc.tensor_map), "r"(c0), "r"(c1), "r"(c2),
                 "r"(c3), "r"(bar_s)
                 : "memory");
  });
  for (uint32_t i = threadIdx.x; i < bytes / 16; i += blockDim.x)
    out[i] = tile[i];
}

// Counts the programs of its launch (one per block).
extern "C" __global__ void count_programs(unsigned *count, weft_kernel_context ctx) {
  (void)ctx;
  if (threadIdx.x == 0)
    atomicAdd(count, 1u);
}
