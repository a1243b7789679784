//===- Target.cpp - parsing and describing weft targets -------------------===//

#include "weft/Target/Target.h"

#include "llvm/Support/FormatVariadic.h"

using namespace weft;

namespace {

llvm::Error badTarget(llvm::StringRef text, llvm::StringRef why) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("invalid target '{0}': {1} (expected cuda:90, "
                    "cuda:sm_90, hip:gfx942 or host)",
                    text, why));
}

} // namespace

llvm::Expected<TargetSpec> TargetSpec::parse(llvm::StringRef text) {
  TargetSpec spec;
  llvm::StringRef trimmed = text.trim();
  auto [backend, arch] = trimmed.split(':');
  if (backend == "host") {
    if (!arch.empty() && arch != "x86-64")
      return badTarget(text, "the host target only supports x86-64");
    spec.kind = TargetKind::Host;
    spec.arch = "x86-64";
    return spec;
  }
  if (backend == "cuda") {
    arch.consume_front("sm_");
    unsigned sm = 0;
    if (arch.getAsInteger(10, sm))
      return badTarget(text, "the CUDA architecture must be a number such "
                             "as 90 or sm_90");
    // Weft's memory-model lowering relies on sm_90 (Hopper) instructions.
    if (sm != 90)
      return badTarget(text, llvm::formatv("sm_{0} is not supported; weft "
                                           "targets sm_90",
                                           sm)
                                 .str());
    spec.kind = TargetKind::NVPTX;
    // sm_90a: Hopper with its arch-specific instructions (wgmma); the
    // cubins run on every compute-capability-9.0 GPU.
    spec.arch = "sm_90a";
    return spec;
  }
  if (backend == "hip") {
    if (arch.empty())
      return badTarget(text, "missing the AMDGPU architecture, e.g. gfx942");
    if (arch != "gfx942")
      return badTarget(text, llvm::formatv("{0} is not supported; weft "
                                           "targets gfx942",
                                           arch)
                                 .str());
    spec.kind = TargetKind::AMDGPU;
    spec.arch = arch.str();
    return spec;
  }
  return badTarget(text, backend.empty() ? "empty target"
                                         : "unknown backend '" + backend.str() +
                                               "'");
}

std::string TargetSpec::str() const {
  switch (kind) {
  case TargetKind::NVPTX: {
    llvm::StringRef sm(arch);
    sm.consume_front("sm_");
    sm.consume_back("a");
    return ("cuda:" + sm).str();
  }
  case TargetKind::AMDGPU:
    return "hip:" + arch;
  case TargetKind::Host:
    return "host";
  }
  llvm_unreachable("unknown target kind");
}

std::string TargetSpec::triple() const {
  switch (kind) {
  case TargetKind::NVPTX:
    return "nvptx64-nvidia-cuda";
  case TargetKind::AMDGPU:
    return "amdgcn-amd-amdhsa";
  case TargetKind::Host:
    return "x86_64-unknown-linux-gnu";
  }
  llvm_unreachable("unknown target kind");
}

unsigned TargetSpec::warpSize() const {
  switch (kind) {
  case TargetKind::NVPTX:
    return 32;
  case TargetKind::AMDGPU:
    return 64;
  case TargetKind::Host:
    return 1;
  }
  llvm_unreachable("unknown target kind");
}

unsigned TargetSpec::globalAddressSpace() const {
  return kind == TargetKind::Host ? 0 : 1;
}

std::optional<int64_t> TargetSpec::staticSharedMemoryBytes() const {
  switch (kind) {
  case TargetKind::NVPTX:
    // sm_90 allows more only as dynamic shared memory, after an opt-in.
    return 48 * 1024;
  case TargetKind::AMDGPU:
    return 64 * 1024; // a workgroup's LDS on gfx9 (gfx942 included)
  case TargetKind::Host:
    return std::nullopt;
  }
  llvm_unreachable("unknown target kind");
}

std::optional<int64_t> TargetSpec::dynamicSharedMemoryBytes() const {
  // 227 KiB a block on sm_90, less 1 KiB for the static part (a kernel's
  // buffers and exchanges are all dynamic: only the broadcast slot is not).
  if (kind == TargetKind::NVPTX)
    return 227 * 1024 - 1024;
  return std::nullopt;
}

llvm::Error KernelOptions::check(const TargetSpec &target) const {
  // A program is at most 1024 threads on every GPU weft targets.
  if (numWarps == 0 || (numWarps & (numWarps - 1)) != 0 ||
      numWarps * target.warpSize() > 1024)
    return llvm::createStringError(
        llvm::formatv("invalid num_warps {0}: expected a power of two with at "
                      "most 1024 threads per program",
                      numWarps));
  if (numStages < 1 || numStages > 8)
    return llvm::createStringError(llvm::formatv(
        "invalid num_stages {0}: expected 1..8 (1: no pipelining)", numStages));
  if (multinode && target.kind == TargetKind::AMDGPU)
    return llvm::createStringError(
        "multinode: " + target.str() + " has no engine for peers on other nodes "
        "(cuda kernels use NVSHMEM, host kernels the runtime's MPI engine)");
  return llvm::Error::success();
}
