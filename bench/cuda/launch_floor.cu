// The host cost of one kernel launch by the CUDA runtime, for the floor
// under weft_launch (bench/README.md, "Latency"): an empty kernel with six
// 8-byte arguments; the same with Weft's kernel context
// (weft_kernel_context, include/weft/abi.h) appended by value as
// weft_launch appends it; and that launch with the attribute Weft's early
// start sets (programmatic stream serialization, cudaLaunchKernelEx); and
// CUDA graphs of 1, 3 and 6 of those launches, each launched whole (what
// a kept call of that many launches would cost as one graph).
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
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  config.stream = stream;
  for (int nodes : {1, 3, 6}) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    for (int i = 0; i < nodes; ++i)
      cudaLaunchKernelEx(&config, six_and_context, (void *)nullptr, (void *)nullptr,
                         (void *)nullptr, 0L, 1.f, 2.f, ctx);
    cudaStreamEndCapture(stream, &graph);
    cudaGraphInstantiate(&exec, graph, 0);
    printf("batches of 200: a graph of %d early-start launches: %.2f us per graph, "
           "%d eager launches: %.2f us\n", nodes,
           per_launch_us(200, [&] { cudaGraphLaunch(exec, stream); }), nodes,
           nodes * per_launch_us(200, [&] {
             cudaLaunchKernelEx(&config, six_and_context, (void *)nullptr, (void *)nullptr,
                                (void *)nullptr, 0L, 1.f, 2.f, ctx);
           }));
    if (nodes == 1) {
      // A bare launch as a graph: the node's arguments set, then the graph
      // launched (what a graph per kernel would cost a launch).
      cudaGraphNode_t node;
      size_t count = 1;
      cudaGraphGetNodes(graph, &node, &count);
      cudaKernelNodeParams params;
      cudaGraphKernelNodeGetParams(node, &params);
      printf("batches of 200: its arguments set, then launched: %.2f us per launch\n",
             per_launch_us(200, [&] {
               cudaGraphExecKernelNodeSetParams(exec, node, &params);
               cudaGraphLaunch(exec, stream);
             }));
      // What choosing between that and an eager launch may ask: whether
      // the stream is captured (Weft asks at every launch), whether it is
      // idle (a choice by that gained nothing: bench/README.md).
      cudaStreamCaptureStatus captured;
      printf("batches of 200: is the stream captured: %.2f us per call\n",
             per_launch_us(200, [&] { cudaStreamIsCapturing(stream, &captured); }));
      printf("batches of 200: is the stream idle: %.2f us per call\n",
             per_launch_us(200, [&] { (void)cudaStreamQuery(stream); }));
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  config.stream = 0;
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
