//===- Target.h - Which machine a weft module is compiled for ---*- C++ -*-===//
//
// A TargetSpec names the machine ("cuda:90", "hip:gfx942", "host") and the
// per-compile options the lowering needs. Everything that differs between
// targets inside the lowering lives behind weft::TargetInfo
// (Target/TargetInfo.h); this header is only the description.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_TARGET_TARGET_H
#define WEFT_TARGET_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace weft {

enum class TargetKind { NVPTX, AMDGPU, Host };

struct TargetSpec {
  TargetKind kind = TargetKind::Host;
  /// "sm_90a", "gfx942", or the host CPU name ("x86-64").
  std::string arch = "x86-64";
  /// Warps per program on GPU targets; the host runs a program in one thread.
  unsigned numWarps = 4;
  /// WEFT_DEBUG: bounds checks on peer ids and heap ranges.
  bool debug = false;
  /// Stages of weft-pipeline-dot-operands (1: no pipelining).
  unsigned numStages = 3;
  /// wl.dot takes warp-level MMA (sm_90: mma.sync) even where warpgroup MMA
  /// (wgmma) applies: the Ampere-style kernel, kept for comparison.
  bool warpMma = false;

  /// Parses "cuda:90" / "cuda:sm_90", "hip:gfx942", "host".
  static llvm::Expected<TargetSpec> parse(llvm::StringRef text);
  /// The canonical spelling parse() accepts ("cuda:90", "hip:gfx942", "host").
  std::string str() const;

  std::string triple() const;
  unsigned warpSize() const;
  /// Threads of one program (1 on the host).
  unsigned threadsPerProgram() const {
    return kind == TargetKind::Host ? 1 : numWarps * warpSize();
  }
  /// LLVM address space of global (heap) memory.
  unsigned globalAddressSpace() const;
};

} // namespace weft

#endif // WEFT_TARGET_TARGET_H
