// Hand-written CUDA versions of two Weft collectives, for the ratio that
// shows what the compiler costs (bench/README.md). Same algorithm as
// python/weft/collectives/_kernels.py: pull from every rank's copy on the
// symmetric heap (one-shot) or push into it (all-gather), pairwise
// per-program flag phases with epochs kept on the device, the same grid and
// block size; 16-byte vectors where the Weft kernels use the compiler's
// choice. Built by nvcc on the GPU machine and
// launched through weft_launch, which appends the kernel context.
#include <stdint.h>

#include <cuda_bf16.h>

#include "weft/abi.h"

namespace {

constexpr int kMaxPrograms = 256;  // _kernels.MAX_PROGRAMS

template <typename T>
__device__ T *peer_addr(T *p, int peer, const weft_kernel_context &ctx) {
  return (T *)((uintptr_t)p - ctx.heap_base[ctx.rank] + ctx.heap_base[peer]);
}

// _sync: set my slot in every rank's row of this phase to epoch (release,
// sys), then wait until every slot of my row is >= epoch (acquire, sys).
// One thread per peer; the barriers order the block's accesses around it.
__device__ void sync_phase(int64_t *flags, int phase, int64_t epoch,
                           const weft_kernel_context &ctx) {
  __syncthreads();
  int64_t *row = flags + (int64_t)(phase * kMaxPrograms + blockIdx.x) * ctx.num_ranks;
  for (int p = threadIdx.x; p < ctx.num_ranks; p += blockDim.x) {
    int64_t *slot = peer_addr(row + ctx.rank, p, ctx);
    asm volatile("st.release.sys.global.s64 [%0], %1;" ::"l"(slot), "l"(epoch) : "memory");
  }
  for (int p = threadIdx.x; p < ctx.num_ranks; p += blockDim.x) {
    int64_t seen;
    do {
      asm volatile("ld.acquire.sys.global.s64 %0, [%1];" : "=l"(seen) : "l"(row + p) : "memory");
    } while (seen < epoch);
  }
  __syncthreads();
}

__device__ float to_f32(float v) { return v; }
__device__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ void from_f32(float v, float *out) { *out = v; }
__device__ void from_f32(float v, __nv_bfloat16 *out) { *out = __float2bfloat16(v); }

// The Weft kernels' blocks: BLOCK elements per program per step, thread t
// holding 16-byte vectors t, t + blockDim, ... of the block (kVecs of them;
// kVecs = BLOCK * sizeof(T) / (16 * blockDim)), all loaded before use.

// out = sum over ranks of x (n elements), each rank reading every rank's x
// in rank order and accumulating in f32.
template <typename T, int kVecs>
__device__ void one_shot_all_reduce(const T *x, T *out, int64_t *flags, int64_t *epochs,
                                    int64_t n, const weft_kernel_context &ctx) {
  constexpr int kElems = 16 / sizeof(T);
  int64_t epoch = epochs[blockIdx.x] + 1;
  sync_phase(flags, 0, epoch, ctx);
  int64_t nvec = n / kElems, block = (int64_t)blockDim.x * kVecs;
  for (int64_t base = blockIdx.x * block; base < nvec; base += gridDim.x * block) {
    float acc[kVecs][kElems] = {};
    for (int p = 0; p < ctx.num_ranks; ++p) {
      const uint4 *src = (const uint4 *)peer_addr(x, p, ctx);
      uint4 raw[kVecs];
      for (int j = 0; j < kVecs; ++j) {
        int64_t i = base + threadIdx.x + j * blockDim.x;
        raw[j] = i < nvec ? src[i] : make_uint4(0, 0, 0, 0);
      }
      for (int j = 0; j < kVecs; ++j)
        for (int k = 0; k < kElems; ++k)
          acc[j][k] += to_f32(((const T *)&raw[j])[k]);
    }
    for (int j = 0; j < kVecs; ++j) {
      int64_t i = base + threadIdx.x + j * blockDim.x;
      uint4 raw;
      for (int k = 0; k < kElems; ++k)
        from_f32(acc[j][k], &((T *)&raw)[k]);
      if (i < nvec)
        ((uint4 *)out)[i] = raw;
    }
  }
  for (int64_t i = nvec * kElems + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    float acc = 0;
    for (int p = 0; p < ctx.num_ranks; ++p)
      acc += to_f32(peer_addr(x, p, ctx)[i]);
    from_f32(acc, &out[i]);
  }
  sync_phase(flags, 1, epoch, ctx);  // phases 0 and 1: _kernels.NUM_PHASES
  if (threadIdx.x == 0)
    epochs[blockIdx.x] = epoch;
}

// Every rank's out[me * nbytes .. (me + 1) * nbytes) = my x, pushed, peers
// in the order after me; nbytes a multiple of 16 (the benchmark's are).
template <int kVecs>
__device__ void all_gather(const uint4 *x, uint4 *out, int64_t *flags, int64_t *epochs,
                           int64_t nbytes, const weft_kernel_context &ctx) {
  int64_t epoch = epochs[blockIdx.x] + 1;
  sync_phase(flags, 0, epoch, ctx);
  int64_t nvec = nbytes / 16, block = (int64_t)blockDim.x * kVecs;
  for (int64_t base = blockIdx.x * block; base < nvec; base += gridDim.x * block) {
    uint4 v[kVecs];
    for (int j = 0; j < kVecs; ++j) {
      int64_t i = base + threadIdx.x + j * blockDim.x;
      if (i < nvec)
        v[j] = x[i];
    }
    for (int r = 1; r <= ctx.num_ranks; ++r) {
      uint4 *dst = peer_addr(out, (ctx.rank + r) % ctx.num_ranks, ctx) + ctx.rank * nvec;
      for (int j = 0; j < kVecs; ++j) {
        int64_t i = base + threadIdx.x + j * blockDim.x;
        if (i < nvec)
          dst[i] = v[j];
      }
    }
  }
  sync_phase(flags, 1, epoch, ctx);  // phases 0 and 1: _kernels.NUM_PHASES
  if (threadIdx.x == 0)
    epochs[blockIdx.x] = epoch;
}

}  // namespace

// One entry point per dtype and vectors per thread (the Weft grids' blocks:
// 1024 or 8192 elements of bf16 or f32 on 128 threads).
#define WEFT_BENCH_KERNELS(V)                                                                  \
  extern "C" __global__ void one_shot_all_reduce_f32_v##V(                                     \
      const float *x, float *out, int64_t *flags, int64_t *epochs, int64_t n,                  \
      weft_kernel_context ctx) {                                                               \
    one_shot_all_reduce<float, V>(x, out, flags, epochs, n, ctx);                              \
  }                                                                                            \
  extern "C" __global__ void one_shot_all_reduce_bf16_v##V(                                    \
      const __nv_bfloat16 *x, __nv_bfloat16 *out, int64_t *flags, int64_t *epochs, int64_t n,  \
      weft_kernel_context ctx) {                                                               \
    one_shot_all_reduce<__nv_bfloat16, V>(x, out, flags, epochs, n, ctx);                      \
  }                                                                                            \
  extern "C" __global__ void all_gather_v##V(const uint4 *x, uint4 *out, int64_t *flags,       \
                                             int64_t *epochs, int64_t nbytes,                  \
                                             weft_kernel_context ctx) {                        \
    all_gather<V>(x, out, flags, epochs, nbytes, ctx);                                         \
  }

WEFT_BENCH_KERNELS(1)
WEFT_BENCH_KERNELS(2)
WEFT_BENCH_KERNELS(8)
WEFT_BENCH_KERNELS(16)
