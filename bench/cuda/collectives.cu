// Hand-written CUDA versions of two Weft collectives, for the ratio that
// shows what the compiler costs (bench/README.md). Same algorithm as
// python/weft/collectives/_kernels.py: pull from every rank's copy on the
// symmetric heap, pairwise per-program flag phases with epochs kept on the
// device, the same grid and block size; 16-byte vectors where the Weft
// kernels use the compiler's choice. Built by nvcc on the GPU machine and
// launched through weft_launch, which appends the kernel context.
#include <stdint.h>

#include <cuda_bf16.h>

#include "weft/abi.h"

namespace {

constexpr int kMaxPrograms = 64;  // _kernels.MAX_PROGRAMS

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

// out = sum over ranks of x (n elements), each rank reading every rank's x
// in rank order and accumulating in f32, 16 bytes per thread per step.
template <typename T>
__device__ void one_shot_all_reduce(const T *x, T *out, int64_t *flags, int64_t *epochs,
                                    int64_t n, const weft_kernel_context &ctx) {
  constexpr int kVec = 16 / sizeof(T);
  int64_t epoch = epochs[blockIdx.x] + 1;
  sync_phase(flags, 0, epoch, ctx);
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t nvec = n / kVec;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += stride) {
    float acc[kVec] = {};
    for (int p = 0; p < ctx.num_ranks; ++p) {
      uint4 raw = ((const uint4 *)peer_addr(x, p, ctx))[i];
      const T *v = (const T *)&raw;
      for (int k = 0; k < kVec; ++k)
        acc[k] += to_f32(v[k]);
    }
    uint4 raw;
    T *o = (T *)&raw;
    for (int k = 0; k < kVec; ++k)
      from_f32(acc[k], &o[k]);
    ((uint4 *)out)[i] = raw;
  }
  for (int64_t i = nvec * kVec + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float acc = 0;
    for (int p = 0; p < ctx.num_ranks; ++p)
      acc += to_f32(peer_addr(x, p, ctx)[i]);
    from_f32(acc, &out[i]);
  }
  sync_phase(flags, 2, epoch, ctx);
  if (threadIdx.x == 0)
    epochs[blockIdx.x] = epoch;
}

}  // namespace

extern "C" __global__ void one_shot_all_reduce_f32(const float *x, float *out, int64_t *flags,
                                                   int64_t *epochs, int64_t n,
                                                   weft_kernel_context ctx) {
  one_shot_all_reduce(x, out, flags, epochs, n, ctx);
}

extern "C" __global__ void one_shot_all_reduce_bf16(const __nv_bfloat16 *x, __nv_bfloat16 *out,
                                                    int64_t *flags, int64_t *epochs, int64_t n,
                                                    weft_kernel_context ctx) {
  one_shot_all_reduce(x, out, flags, epochs, n, ctx);
}

// out[p * nbytes .. (p + 1) * nbytes) = rank p's x, pulled; nbytes a
// multiple of 16 (the benchmark's sizes are).
extern "C" __global__ void all_gather(const uint4 *x, uint4 *out, int64_t *flags,
                                      int64_t *epochs, int64_t nbytes,
                                      weft_kernel_context ctx) {
  int64_t epoch = epochs[blockIdx.x] + 1;
  sync_phase(flags, 0, epoch, ctx);
  int64_t nvec = nbytes / 16, stride = (int64_t)gridDim.x * blockDim.x;
  for (int p = 0; p < ctx.num_ranks; ++p) {
    const uint4 *src = peer_addr(x, p, ctx);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += stride)
      out[p * nvec + i] = src[i];
  }
  sync_phase(flags, 2, epoch, ctx);
  if (threadIdx.x == 0)
    epochs[blockIdx.x] = epoch;
}
