//===- Codegen.h - LLVM IR to target artifacts ------------------*- C++ -*-===//
//
// The back half of the compiler: optimise an LLVM module for a TargetSpec
// and turn it into what the runtime loads (PTX + cubin, HSACO, host .so),
// all in-process except for ptxas, which NVIDIA only ships as a program.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_TARGET_CODEGEN_H
#define WEFT_TARGET_CODEGEN_H

#include "weft/Target/Target.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace weft {

/// Named outputs of a compilation ("llir", "ptx", "cubin", ...), in the
/// order they were produced. Values are raw bytes (text or ELF).
using Artifacts = llvm::MapVector<std::string, std::string,
                                  std::map<std::string, unsigned>>;

struct CodegenOptions {
  /// LLVM optimisation level, 0..3.
  unsigned optLevel = 3;
  /// NVPTX: fail when ptxas cannot be found instead of omitting "cubin".
  bool requireCubin = false;
  /// NVPTX: CUDA toolkit roots searched for ptxas and libdevice after
  /// $CUDA_HOME, the toolkit of the ptxas on PATH and /usr/local/cuda.
  std::vector<std::string> cudaRoots;
  /// NVPTX: NVSHMEM installations searched for its device library
  /// (lib/libnvshmem_device.bc) after $NVSHMEM_HOME, for kernels that call
  /// it (weft.multinode). Without it such a kernel gets PTX but no cubin.
  std::vector<std::string> nvshmemRoots;
};

/// Sets the module's triple and data layout for `target`, runs the LLVM
/// O<n> pipeline and emits the target's artifacts:
///   NVPTX:  "llir", "ptx", "cubin" (when ptxas is found)
///   AMDGPU: "llir", "amdgcn", "hsaco"
///   Host:   "llir", "asm", "so"
/// `module` is optimised in place.
llvm::Expected<Artifacts> emitArtifacts(llvm::Module &module,
                                        const TargetSpec &target,
                                        const CodegenOptions &options = {});

/// The data layout of `target`'s LLVM backend, as a string. Translation to
/// LLVM IR needs it (llvm.data_layout): a load or store without an explicit
/// alignment gets its type's ABI alignment there, and LLVM's default layout
/// aligns i64 to 4 bytes, which splits a 64-bit shared-memory access in two.
llvm::Expected<std::string> dataLayout(const TargetSpec &target);

/// A file codegen needs from the machine, by name: "ptxas", "libdevice",
/// "nvshmem-device", "ocml", "ockl" or "host-builtins"
/// (lib/Target/Codegen/Toolchain.h says where each is looked for; the CUDA
/// ones also in options.cudaRoots, NVSHMEM's in options.nvshmemRoots). The
/// error names every place looked at and the variable that overrides them.
llvm::Expected<std::string> locate(llvm::StringRef name, const CodegenOptions &options);

} // namespace weft

#endif // WEFT_TARGET_CODEGEN_H
