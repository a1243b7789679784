// The host cost of one kernel launch by the CUDA runtime, for the floor
// under weft_launch (bench/README.md, "Latency"): an empty kernel with six
// 8-byte arguments, and the same with Weft's kernel context
// (weft_kernel_context, include/weft/abi.h) appended by value as
// weft_launch appends it. Prints microseconds per launch, median of 7
// batches of 20000 launches, the GPU not waited for inside a batch.
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
static double per_launch_us(Launch launch) {
  const int calls = 20000;
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
  printf("six arguments: %.2f us per launch\n",
         per_launch_us([] { six<<<1, 128>>>(nullptr, nullptr, nullptr, 0, 1.f, 2.f); }));
  printf("six arguments + kernel context (%zu bytes): %.2f us per launch\n", sizeof ctx,
         per_launch_us([&] {
           six_and_context<<<1, 128>>>(nullptr, nullptr, nullptr, 0, 1.f, 2.f, ctx);
         }));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
