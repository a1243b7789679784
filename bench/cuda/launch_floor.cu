// The host cost of one kernel launch by the CUDA runtime, for the floor
// under weft_launch (bench/README.md, "Latency"): an empty kernel with six
// 8-byte arguments; the same with Weft's kernel context
// (weft_kernel_context, include/weft/abi.h) appended by value as
// weft_launch appends it; and that launch with the attribute Weft's early
// start sets (programmatic stream serialization, cudaLaunchKernelEx).
// Prints microseconds per launch, median of 7 batches, the GPU not waited
// for inside a batch: batches of 200 launches (as bench/launch_overhead.py
// times Weft's), where the host's own cost shows, and of 20000, where the
// launch queue fills and the GPU's rate of starting kernels may set it.
//   nvcc -O2 -I include -o launch_floor bench/cuda/launch_floor.cu && ./launch_floor
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "weft/abi.h"

__global__ void six(void *a, void *b, void *c, long n, float x, float y) {}
__global__ void six_and_context(void *a, void *b, void *c, long n, float x, float y,
                                weft_kernel_context ctx) {}

template <typename Launch>
static double per_launch_us(int calls, Launch launch) {
  std::vector<double> batches;
  for (int b = 0; b < 7; ++b) {
    cudaDeviceSynchronize();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      launch();
    auto end = std::chrono::steady_clock::now();
    batches.push_back(std::chrono::duration<double, std::micro>(end - start).count() / calls);
  }
  cudaDeviceSynchronize();
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}

int main() {
  weft_kernel_context ctx = {};
  cudaFree(0);
  cudaLaunchAttribute early = {};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1);
  config.blockDim = dim3(128);
  config.attrs = &early;
  config.numAttrs = 1;
  for (int calls : {200, 20000}) {
    printf("batches of %d: six arguments: %.2f us per launch\n", calls,
           per_launch_us(calls, [] { six<<<1, 128>>>(nullptr, nullptr, nullptr, 0, 1.f, 2.f); }));
    printf("batches of %d: six arguments + kernel context (%zu bytes): %.2f us per launch\n",
           calls, sizeof ctx, per_launch_us(calls, [&] {
             six_and_context<<<1, 128>>>(nullptr, nullptr, nullptr, 0, 1.f, 2.f, ctx);
           }));
    printf("batches of %d: the same, early start: %.2f us per launch\n", calls,
           per_launch_us(calls, [&] {
             cudaLaunchKernelEx(&config, six_and_context, (void *)nullptr, (void *)nullptr,
                                (void *)nullptr, 0L, 1.f, 2.f, ctx);
           }));
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
