//===- WeftDialect.td - the weft dialect -------------------*- tablegen -*-===//
#ifndef WEFT_DIALECT_TD
#define WEFT_DIALECT_TD

include "mlir/IR/OpBase.td"

def Weft_Dialect : Dialect {
  let name = "weft";
  let cppNamespace = "::weft";
  let summary = "Tile-level compute and communication for multi-GPU kernels";
  let description = [{
    Remote loads, stores and atomics with memory orders and scopes, signals,
    waits and barriers across the ranks of a job, and NVSwitch multimem
    reductions, on scalars or on static-shaped tiles (ranked tensors of
    `!weft.ptr<T>`). A kernel runs as a grid of programs; a program is one
    CTA/workgroup on GPUs and one thread on the host target. Peers are
    addressed through the symmetric heap: `weft.translate` maps a pointer
    into a peer's copy with register arithmetic on the kernel context.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // WEFT_DIALECT_TD
