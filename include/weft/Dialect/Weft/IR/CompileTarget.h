//===- CompileTarget.h - the target a module is compiled for ----*- C++ -*-===//
//
// The target and options of a compile live on the module as discardable
// attributes, written once by weft-set-target (the first pass of
// weft-lower) and read by every later pass through getCompileTarget:
//
//   module attributes {weft.target = "cuda:90", weft.num_warps = 8 : i32,
//                      weft.num_stages = 3 : i32, weft.warp_mma, weft.debug,
//                      weft.multinode}
//
// An absent attribute takes its default (host, 4 warps, 3 stages, off).
// The dialect verifies them, so MLIR input with a bad target is an error
// where it is parsed.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_DIALECT_WEFT_IR_COMPILETARGET_H
#define WEFT_DIALECT_WEFT_IR_COMPILETARGET_H

#include "weft/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace weft {

constexpr llvm::StringLiteral kTargetAttrName = "weft.target";
constexpr llvm::StringLiteral kNumWarpsAttrName = "weft.num_warps";
constexpr llvm::StringLiteral kNumStagesAttrName = "weft.num_stages";
/// On a loop (wl.range(..., prefetch=True)): the tiles that the pipelined
/// loops in its body copy are ready before it starts (nothing in it writes
/// or publishes them), so a pipelined loop may copy the next iteration's
/// first stages before this iteration's code after it.
constexpr llvm::StringLiteral kPrefetchAttrName = "weft.prefetch";
/// On a loop: producer warps make its pipeline's copies (wl.range's
/// warp_specialize; docs/tile-ir.md, "Warp specialisation").
constexpr llvm::StringLiteral kWarpSpecializeAttrName = "weft.warp_specialize";
constexpr llvm::StringLiteral kWarpMmaAttrName = "weft.warp_mma";
constexpr llvm::StringLiteral kDebugAttrName = "weft.debug";
constexpr llvm::StringLiteral kMultinodeAttrName = "weft.multinode";

/// Stamps `target` on `module`.
void setCompileTarget(mlir::ModuleOp module, const CompileTarget &target);

/// The target of the module that holds `op` (or is `op`); an error on
/// `op` when its attributes do not describe one.
mlir::FailureOr<CompileTarget> getCompileTarget(mlir::Operation *op);

/// Whether `attr` (on `op`) is one of the attributes above and wrong:
/// the dialect's verifier.
mlir::LogicalResult verifyCompileTargetAttr(mlir::Operation *op,
                                            mlir::NamedAttribute attr);

} // namespace weft

#endif // WEFT_DIALECT_WEFT_IR_COMPILETARGET_H
