//===- Passes.td - weft lowering passes --------------------*- tablegen -*-===//
#ifndef WEFT_CONVERSION_PASSES_TD
#define WEFT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

defvar TargetOptions = [
  Option<"target", "target", "std::string", /*default=*/"\"host\"",
         "Target: cuda:90, hip:gfx942 or host">,
  Option<"numWarps", "num-warps", "unsigned", /*default=*/"4",
         "Warps per program (GPU targets)">,
  Option<"debug", "debug", "bool", /*default=*/"false",
         "Bounds checks on peer ids and heap ranges">,
];

def WeftAddHiddenArgs : Pass<"weft-add-hidden-args", "mlir::ModuleOp"> {
  let summary = "Append the kernel context (and host program) arguments";
  let description = [{
    Every function gets the hidden trailing arguments of the target (the
    kernel-context pointer; on the host also the program pointer), and every
    call passes its caller's along. Kernels (`weft.kernel`) receive the
    context by value from the runtime; the kernel finalisation after the
    LLVM conversion sets the attributes that make it so.
  }];
  let options = TargetOptions;
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ConvertWeftToLLVM : Pass<"convert-weft-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower weft ops to the LLVM dialect (+ NVVM / ROCDL)";
  let description = [{
    Scalar weft ops become LLVM dialect operations, with target differences
    taken from weft::TargetInfo. Needs weft-add-hidden-args first. Tile
    (tensor) operands must have been distributed to threads before.
  }];
  let options = TargetOptions;
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
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
  let options = TargetOptions;
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::ROCDL::ROCDLDialect"];
}

#endif // WEFT_CONVERSION_PASSES_TD
