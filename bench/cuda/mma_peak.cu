// The tensor-core ceiling of warp-level MMA on this GPU: mma.sync
// m16n8k16 bf16 -> f32 on operands held in registers (no memory traffic),
// many independent accumulators per warp, every multiprocessor full. What
// a GEMM built on mma.sync can reach at best, against which weft.ops.matmul
// with warp_mma=True (bench/gemm.py --warp-mma) and cuBLAS are read
// (bench/README.md). Built and run by bench/run_mma_peak.sh.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

namespace {

constexpr int kChains = 16;  // independent accumulators per warp: hides the latency
constexpr int kThreads = 256;
constexpr int kFlopsPerMma = 2 * 16 * 8 * 16;

__global__ void mma_loop(int iterations, float *sink) {
  unsigned a[4], b[2];
  for (int i = 0; i < 4; ++i)
    a[i] = 0x3f803f80u ^ (threadIdx.x + i);  // bf16 pairs near 1.0
  for (int i = 0; i < 2; ++i)
    b[i] = 0x3f803f80u ^ (threadIdx.x * 3 + i);
  float c[kChains][4] = {};
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < kChains; ++j)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
          "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
          : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float sum = 0;
  for (int j = 0; j < kChains; ++j)
    sum += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  if (sum == 12345.0f)  // never, but the compiler cannot know
    *sink = sum;
}

int check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "mma_peak: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
  return 0;
}

}  // namespace

int main() {
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  float *sink;
  check(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
  const int iterations = 4096;
  std::printf("gpu,blocks_per_sm,warps_per_sm,tflops\n");
  for (int perSm : {1, 2, 4}) {
    int blocks = prop.multiProcessorCount * perSm;
    mma_loop<<<blocks, kThreads>>>(iterations, sink);  // warm-up (clocks up)
    check(cudaDeviceSynchronize(), "warm-up");
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    float best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
      check(cudaEventRecord(start), "cudaEventRecord");
      mma_loop<<<blocks, kThreads>>>(iterations, sink);
      check(cudaEventRecord(stop), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      best = ms < best ? ms : best;
    }
    double flops = double(blocks) * (kThreads / 32) * iterations * kChains * kFlopsPerMma;
    std::printf("%s,%d,%d,%.1f\n", prop.name, perSm, perSm * kThreads / 32,
                flops / (best * 1e-3) / 1e12);
  }
  return 0;
}
