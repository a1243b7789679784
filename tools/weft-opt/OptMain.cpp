//===- OptMain.cpp - mlir-opt with the weft dialect and passes ------------===//
//
// weft_opt_main (weft/compiler.h): libWeftCAPI.so carries it, and the
// weft-opt program is a main that calls it. It knows the dialects the
// compiler accepts, the weft passes and MLIR's generic transforms
// (canonicalize, cse, ...); the stock mlir-opt-22 with WeftPlugin.so has
// the rest of MLIR.
//
//===----------------------------------------------------------------------===//

#include "weft/Compiler/Compiler.h"
#include "weft/compiler.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int weft_opt_main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  weft::registerCompilerDialects(registry);
  weft::registerCompilerPasses();
  mlir::registerTransformsPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "weft optimizer driver\n", registry));
}
