//===- WeftPlugin.cpp - weft as a plugin of the stock mlir-opt ------------===//
//
//   mlir-opt --load-dialect-plugin=build/lib/WeftPlugin.so \
//            --load-pass-plugin=build/lib/WeftPlugin.so ...
//
//===----------------------------------------------------------------------===//

#include "weft/Conversion/Passes.h"
#include "weft/Dialect/Weft/IR/Dialect.h"
#include "weft/Dialect/Weft/Transforms/Passes.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Weft", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<weft::WeftDialect>();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "WeftPasses", LLVM_VERSION_STRING,
          [] {
            weft::registerWeftPasses();
            weft::registerWeftTransformsPasses();
            weft::registerWeftOptimizePipeline();
          }};
}
