//===- Tools.h - the programs codegen hands work to -------------*- C++ -*-===//
//
// Internal to WeftTarget: the linker (lld, in-process) and the PTX
// assembler (ptxas, a subprocess), both taking and returning bytes.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_LIB_TARGET_TOOLS_H
#define WEFT_LIB_TARGET_TOOLS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>

namespace weft {

/// Links one ELF relocatable object into a shared object with lld
/// (`ld.lld -shared <object> <extraArgs>`): an AMDGPU HSACO or a host .so.
llvm::Expected<std::string>
linkSharedObject(llvm::StringRef object,
                 llvm::ArrayRef<const char *> extraArgs = {});

/// Assembles PTX into a cubin with `ptxas -arch=<arch>`.
llvm::Expected<std::string> assemblePtx(llvm::StringRef ptxas,
                                        llvm::StringRef ptx,
                                        llvm::StringRef arch,
                                        unsigned optLevel);

/// `ptx` with its signed integer negations and absolute values spelled so
/// that ptxas (13.0 for sm_90 here, -O1 and up) computes them as written
/// (docs/design.md, "Targets"):
///  - `neg.sN d, s` as `not.bN d, s; add.sN d, d, 1`: ptxas fuses two
///    signed min/max into a three-input one (VIMNMX3) and drops a negation
///    folded into its operand: min(min(x, -t), y) came out as
///    min(min(x, t), y);
///  - `abs.sN d, s` as `(s ^ m) - m` with m = s >> (N - 1): ptxas takes
///    abs's result to be non-negative, which the most negative value's is
///    not (it is its own absolute value), so `abs(x) < 0` became false and
///    a 16-bit one was widened without its sign.
std::string avoidPtxasSignErrors(llvm::StringRef ptx);

/// A temporary file that is removed when this goes out of scope.
class TempFile {
public:
  static llvm::Expected<TempFile> create(llvm::StringRef suffix);
  TempFile(TempFile &&other);
  TempFile(const TempFile &) = delete;
  ~TempFile();

  llvm::StringRef path() const { return filePath; }
  llvm::Error write(llvm::StringRef bytes) const;
  llvm::Expected<std::string> read() const;

private:
  explicit TempFile(std::string path) : filePath(std::move(path)) {}
  std::string filePath;
};

} // namespace weft

#endif // WEFT_LIB_TARGET_TOOLS_H
