//===- DotPlan.h - how a weft.dot runs on a target --------------*- C++ -*-===//
//
// Which instructions a dot takes and so which layouts its operands and
// accumulator should have: decided here, once, for the passes that give
// the layouts (weft-assign-layouts, weft-pipeline-dot-operands) and for
// the lowering that relies on them (DotToLLVM.cpp). By what the target has:
//  - warpgroup MMA (sm_90 wgmma) reads #weft.swizzled buffers by
//    descriptor, the accumulator in warpgroupAccumulatorLayout;
//  - a warp-level instruction (sm_90 mma.sync m16n8k16, gfx942 MFMA
//    16x16x16, f16/bf16) where the shape is a multiple of it: its sums stay
//    in registers when c is in mmaAccumulatorLayout;
//  - elsewhere the portable loop over k, in f32.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_DIALECT_WEFT_DISTRIBUTION_DOTPLAN_H
#define WEFT_DIALECT_WEFT_DISTRIBUTION_DOTPLAN_H

#include "weft/Dialect/Weft/IR/Dialect.h"
#include "weft/Target/Target.h"

#include <array>
#include <optional>

namespace weft {

/// The warp-level MMA instruction for inputs of `elemType`: its {M, N, K},
/// or none.
std::optional<std::array<int64_t, 3>> mmaShape(const TargetSpec &target, mlir::Type elemType);

/// Which lanes hold which elements of a warp-level MMA's operands and
/// result (TargetInfo::mma).
enum class MmaFragments {
  /// PTX's m16n8k16 fragments, read from shared memory by ldmatrix
  /// (TargetInfo::loadMatrices); products also without the accumulator
  /// layout.
  Ldmatrix,
  /// MFMA's 16x16x16 (CDNA3 ISA, "Matrix fused multiply-add"): lane l
  /// holds a's row l % 16 at k = 4 (l / 16) .. + 3, b's column l % 16 at
  /// the same k, and the result's rows 4 (l / 16) .. + 3 of column l % 16;
  /// a and b are one vector of 4 elements each. Only with c in the
  /// accumulator layout (elsewhere the portable loop).
  LaneBlocks,
};
MmaFragments mmaFragments(const TargetSpec &target);

/// The blocked layout of an MxN accumulator (inputs of `elemType`, shape
/// {M, N, K}) whose elements in every thread are exactly the warp-level
/// MMA's fragments of the tiles its warp owns, so that the result of one
/// dot feeds the next (a K loop) without leaving registers; null when
/// there is none.
BlockedEncodingAttr mmaAccumulatorLayout(const CompileTarget &target, mlir::MLIRContext *ctx,
                                         mlir::Type elemType, std::array<int64_t, 3> mnk);
/// The #weft.swizzled layout (rows in order) of shared-memory buffers of
/// operand `index` (0: a, 1: b) for the warp-level MMA where its fragments
/// are Ldmatrix's: the 8 rows of a matrix that ldmatrix reads, and the
/// 16-byte chunks of a row that copies write, then fall in distinct banks
/// (padded rows cannot give both). Null where the dot has no such MMA or
/// its rows are narrower than 32 bytes.
SwizzledSharedAttr mmaOperandLayout(const CompileTarget &target, mlir::MLIRContext *ctx,
                                    mlir::Type elemType, std::array<int64_t, 3> mnk,
                                    unsigned index);
/// The #weft.swizzled layout operand `index` must have for warpgroup MMA,
/// or null where the target has none, the options ask for warp-level MMA
/// (warp_mma) or the shape does not fit.
SwizzledSharedAttr warpgroupOperandLayout(const CompileTarget &target, mlir::MLIRContext *ctx,
                                          mlir::Type elemType, std::array<int64_t, 3> mnk,
                                          unsigned index);
/// mmaOperandLayout or warpgroupOperandLayout.
using OperandLayoutFn = SwizzledSharedAttr (*)(const CompileTarget &, mlir::MLIRContext *,
                                               mlir::Type, std::array<int64_t, 3>, unsigned);
/// The accumulator layout that warpgroup MMA fills when the rows of a are
/// interleaved for `warps` warps (#weft.swizzled).
BlockedEncodingAttr warpgroupAccumulatorLayout(mlir::MLIRContext *ctx, unsigned warps);

/// The dot's {M, N, K}.
std::array<int64_t, 3> dotShape(DotOp dot);
/// The dot's a and b are buffers in warpgroup MMA's layouts.
bool warpgroupOperands(DotOp dot, const CompileTarget &target);
/// The dot's a is a tile, which warpgroup MMA takes from registers in the
/// accumulator's layout (dotAccumulatorLayout), and b a buffer in its
/// layout: a P V whose P is computed in the loop (attention).
bool warpgroupRegisterA(DotOp dot, const CompileTarget &target);
/// c's layout keeps the accumulator in registers.
bool accumulatesInRegisters(DotOp dot, const CompileTarget &target);
/// The warp-level instruction shape the dot lowers to, if any.
std::optional<std::array<int64_t, 3>> mmaFor(DotOp dot, const CompileTarget &target);
/// The layout `dot`'s accumulator should have so that its sums stay in
/// registers (warpgroup or warp-level MMA), or null.
BlockedEncodingAttr dotAccumulatorLayout(DotOp dot, const CompileTarget &target);
/// Scratch bytes the dot needs: its tile operands (dotOperandBytes: none
/// when they are shared-memory buffers already; dotScratchBytes: none for
/// a that warpgroup MMA takes from registers), then the products of the
/// warp-level path where c is not in the accumulator layout.
int64_t dotOperandBytes(DotOp dot);
int64_t dotScratchBytes(DotOp dot, const CompileTarget &target);

/// The widest #weft.swizzled span (128, 64 or 32 bytes) that divides rows
/// of `rowBytes`; 0 for none.
unsigned swizzleSpan(int64_t rowBytes);

} // namespace weft

#endif // WEFT_DIALECT_WEFT_DISTRIBUTION_DOTPLAN_H
