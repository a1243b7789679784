//===- Compiler.h - weft IR text to target artifacts ------------*- C++ -*-===//
//
// The end-to-end compiler behind libWeftCAPI and weft-compile: parse and
// verify weft IR, co-optimise it (the weft-optimize pipeline), lower it to
// the LLVM dialect, translate to LLVM IR and hand it to the target code
// generator. Failures come back as
// llvm::Error carrying the MLIR diagnostics ("file:line:col: error: ...").
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_COMPILER_COMPILER_H
#define WEFT_COMPILER_COMPILER_H

#include "weft/Target/Codegen.h"
#include "weft/Target/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace weft {

struct CompileOptions {
  CompileTarget target;
  CodegenOptions codegen;
  /// Run the weft-optimize pipeline on the tile IR before lowering.
  bool optimize = true;
};

/// Dialects that may appear in weft IR handed to the compiler, and the
/// LLVM IR translations of those that reach the LLVM dialect.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Registers the weft passes and pipelines with MLIR's global registry;
/// safe to call more than once.
void registerCompilerPasses();

/// Owns one MLIRContext; use one Compiler per thread.
class Compiler {
public:
  Compiler();
  ~Compiler();
  Compiler(const Compiler &) = delete;
  Compiler &operator=(const Compiler &) = delete;

  /// Compiles weft IR text: artifact "weft" (the verified tile IR after the
  /// weft-optimize pipeline, unless options.optimize is false), then the
  /// code generator's ("llir", "ptx", ...). `bufferName` is the file
  /// name that diagnostics inside `source` refer to.
  llvm::Expected<Artifacts> compile(llvm::StringRef source,
                                    const CompileOptions &options,
                                    llvm::StringRef bufferName = "<input>");

  /// Parses and verifies `source`, runs the textual pass `pipeline`
  /// ("builtin.module(...)") and returns the printed result.
  llvm::Expected<std::string> runPipeline(llvm::StringRef source,
                                          llvm::StringRef pipeline,
                                          llvm::StringRef bufferName = "<input>");

  mlir::MLIRContext &getContext() { return *context; }

private:
  std::unique_ptr<mlir::MLIRContext> context;
};

} // namespace weft

#endif // WEFT_COMPILER_COMPILER_H
