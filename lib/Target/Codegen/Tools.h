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

/// `ptx` with every integer negation (`neg.s16/s32/s64 d, s`) written as
/// `not.bN d, s; add.sN d, d, 1`. ptxas (13.0 for sm_90 here, -O1 and up)
/// fuses two signed min/max into a three-input one (VIMNMX3) and drops a
/// negation folded into its operand: min(min(x, -t), y) comes out as
/// min(min(x, t), y) (docs/design.md, "Targets"). The complement and
/// increment reach it as a computed value instead.
std::string avoidNegationFusion(llvm::StringRef ptx);

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
