//===- weft-opt.cpp - mlir-opt with the weft dialect and passes -----------===//

#include "weft/Conversion/Passes.h"
#include "weft/Dialect/Weft/IR/Dialect.h"
#include "weft/Dialect/Weft/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<weft::WeftDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::LLVM::LLVMDialect, mlir::math::MathDialect,
                  mlir::NVVM::NVVMDialect, mlir::ROCDL::ROCDLDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect>();
  weft::registerWeftPasses();
  weft::registerWeftTransformsPasses();
  weft::registerWeftOptimizePipeline();
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "weft optimizer driver\n", registry));
}
