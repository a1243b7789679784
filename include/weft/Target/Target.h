//===- Target.h - Which machine a weft module is compiled for ---*- C++ -*-===//
//
// A TargetSpec names the machine ("cuda:90", "hip:gfx942", "host");
// KernelOptions are the rest of what a compile chooses (warps, stages, ...);
// a CompileTarget is both, as weft-set-target stamps them on a module and
// every later pass reads them back (weft/Dialect/Weft/IR/CompileTarget.h).
// How the lowering emits code for each machine is weft::TargetInfo's
// (weft/Conversion/TargetInfo.h); this header is only the description.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_TARGET_TARGET_H
#define WEFT_TARGET_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>

namespace weft {

enum class TargetKind { NVPTX, AMDGPU, Host };

struct TargetSpec {
  TargetKind kind = TargetKind::Host;
  /// "sm_90a", "gfx942", or the host CPU name ("x86-64").
  std::string arch = "x86-64";

  /// Parses "cuda:90" / "cuda:sm_90", "hip:gfx942", "host".
  static llvm::Expected<TargetSpec> parse(llvm::StringRef text);
  /// The canonical spelling parse() accepts ("cuda:90", "hip:gfx942", "host").
  std::string str() const;

  std::string triple() const;
  unsigned warpSize() const;
  /// LLVM address space of global (heap) memory.
  unsigned globalAddressSpace() const;

  // What the machine has, which distribution plans for and the lowering
  // emits (the instructions themselves are the NVPTX patterns').

  /// The static shared memory (LDS) a program may use, in bytes; none on
  /// the host, where the tile scratch buffer is ordinary memory.
  std::optional<int64_t> staticSharedMemoryBytes() const;
  /// Bytes a kernel's program may take as dynamic shared memory (an
  /// opt-in at launch), where its `!weft.shared` buffers, mbarriers and
  /// exchanges then live (placeSharedBuffers); none: they are static.
  std::optional<int64_t> dynamicSharedMemoryBytes() const;
  /// Kernels may be launched to start before the kernel ahead of them on
  /// their stream has completed (sm_90 programmatic dependent launch).
  bool hasEarlyStart() const { return kind == TargetKind::NVPTX; }
  /// Asynchronous global-to-shared copies (sm_90 cp.async).
  bool hasAsyncCopy() const { return kind == TargetKind::NVPTX; }
  /// Bulk tensor copies on mbarriers (sm_90 TMA).
  bool hasTensorCopies() const { return kind == TargetKind::NVPTX; }
  /// Clusters of programs launched together (sm_90 thread block clusters).
  bool hasClusters() const { return kind == TargetKind::NVPTX; }
  /// NVLS multimem instructions; elsewhere multimem ops are the unicast
  /// loop over peers.
  bool hasMultimem() const { return kind == TargetKind::NVPTX; }
};

/// What a compile chooses besides the target.
struct KernelOptions {
  /// Warps per program on GPU targets; the host runs a program in one thread.
  unsigned numWarps = 4;
  /// Stages of weft-pipeline-dot-operands (1: no pipelining).
  unsigned numStages = 3;
  /// wl.dot takes warp-level MMA (sm_90: mma.sync) even where warpgroup MMA
  /// (wgmma) applies: the Ampere-style kernel, kept for comparison.
  bool warpMma = false;
  /// WEFT_DEBUG: bounds checks on peer ids and heap ranges.
  bool debug = false;
  /// The kernel runs in a job across nodes: puts, gets and signals to a
  /// peer on another node go through the job's engine (NVSHMEM on NVPTX,
  /// the runtime's MPI engine on the host), and releasing fences complete
  /// the engine's puts. Without it every peer is in the node.
  bool multinode = false;

  /// Why these options cannot compile for `target` (a program is at most
  /// 1024 threads, warps a power of two, 1..8 stages, no engine for other
  /// nodes on AMDGPU), or success.
  llvm::Error check(const TargetSpec &target) const;
};

/// A compile's target and options: what weft-set-target stamps on a module.
struct CompileTarget {
  TargetSpec spec;
  KernelOptions options;

  /// Threads of one program (1 on the host).
  unsigned threadsPerProgram() const {
    return spec.kind == TargetKind::Host ? 1 : options.numWarps * spec.warpSize();
  }
};

} // namespace weft

#endif // WEFT_TARGET_TARGET_H
