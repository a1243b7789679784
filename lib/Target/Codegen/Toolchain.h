//===- Toolchain.h - files the compiler finds on the machine ----*- C++ -*-===//
//
// Internal to WeftCodegen. What codegen needs beyond its own code: ptxas
// and libdevice from a CUDA toolkit, AMD's OCML, compiler-rt's builtins for
// host code. Each is found by one FileSearch, and a missing one is an error
// that names every place looked at and the variable that overrides them.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_LIB_TARGET_TOOLCHAIN_H
#define WEFT_LIB_TARGET_TOOLCHAIN_H

#include "weft/Target/Codegen.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace weft {

/// A file to find: `$<overrideVariable>` when set (then the only candidate:
/// a wrong explicit choice is an error, not a fallback), else the first of
/// `candidates` that exists (and, with `executable`, can be run).
struct FileSearch {
  llvm::StringRef what;
  /// Why the compiler looks for it, the start of the error when it is missing.
  llvm::StringRef purpose;
  llvm::StringRef overrideVariable;
  std::vector<std::string> candidates;
  bool executable = false;

  /// The file, or an error "<why>, but no <what> was found (looked for
  /// ...; $<overrideVariable> names the file)".
  llvm::Expected<std::string> find(const llvm::Twine &why) const;
  llvm::Expected<std::string> find() const { return find(purpose); }
};

/// The searches, by the name weft::locate (Codegen.h) takes: "ptxas" (in the
/// CUDA roots with options.cudaRoots; $PTXAS), "libdevice" (likewise;
/// $WEFT_LIBDEVICE), "nvshmem-device" (lib/libnvshmem_device.bc under
/// $NVSHMEM_HOME, then options.nvshmemRoots; $WEFT_NVSHMEM_DEVICE_BC), "ocml"
/// and "ockl" ($ROCM_PATH, /opt/rocm, then the copy beside the compiler;
/// $WEFT_OCML, $WEFT_OCKL) and "host-builtins" (compiler-rt's, beside the
/// compiler; $WEFT_HOST_BUILTINS). None for another name.
std::optional<FileSearch> toolchainSearch(llvm::StringRef name,
                                          const CodegenOptions &options);

} // namespace weft

#endif // WEFT_LIB_TARGET_TOOLCHAIN_H
