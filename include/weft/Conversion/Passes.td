//===- Passes.td - the conversion of weft to LLVM ----------*- tablegen -*-===//
//
// After distribution: every function gets the hidden arguments, weft ops
// and distributed tiles become the LLVM dialect, kernels become entry
// points. The target is the module's (weft-set-target).
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_CONVERSION_PASSES_TD
#define WEFT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def WeftAddHiddenArgs : Pass<"weft-add-hidden-args", "mlir::ModuleOp"> {
  let summary = "Append the kernel context (and host program) arguments";
  let description = [{
    Every function gets the hidden trailing arguments of the target (the
    kernel-context pointer; on the host also the program pointer), and every
    call passes its caller's along. Kernels (`weft.kernel`) receive the
    context by value from the runtime; the kernel finalisation after the
    LLVM conversion sets the attributes that make it so.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ConvertWeftToLLVM : Pass<"convert-weft-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower weft ops to the LLVM dialect (+ NVVM / ROCDL)";
  let description = [{
    Scalar weft ops become LLVM dialect operations, with target differences
    taken from weft::TargetInfo. Needs weft-add-hidden-args first. Tiles
    must carry layouts (weft-assign-layouts); each becomes the struct of the
    elements one thread holds, and tile ops and element-wise arith/math on
    tiles become per-element code, shuffles and shared memory. Structured
    control flow (scf) becomes branches here, after the axis analysis has
    seen the loops.
  }];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::ROCDL::ROCDLDialect"];
}

def WeftFinalizeKernels : Pass<"weft-finalize-kernels", "mlir::ModuleOp"> {
  let summary = "Make `weft.kernel` functions target entry points";
  let description = [{
    After the conversion to the LLVM dialect: marks kernels (nvvm.kernel and
    a by-value grid_constant context; rocdl.kernel and a byref context;
    on the host, the exported weft_host_kernel_fn wrapper) and records the
    program size.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::ROCDL::ROCDLDialect"];
}

#endif // WEFT_CONVERSION_PASSES_TD
