//===- NVPTXPatterns.h - what only sm_90 lowers -----------------*- C++ -*-===//
//
// The NVPTX patterns of the LLVM conversion: sm_90's own instructions,
// which no other target has behind TargetInfo's primitives. They take
// precedence (kVendorBenefit) over the patterns every target shares, where
// those have a fallback for the same op.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_CONVERSION_WEFTTOLLVM_NVPTX_NVPTXPATTERNS_H
#define WEFT_CONVERSION_WEFTTOLLVM_NVPTX_NVPTXPATTERNS_H

#include "../TileLowering.h"

namespace weft {

/// Bulk tensor copies on mbarriers, the async proxy's fence, thread block
/// clusters, the wait for the grids a launch depends on.
void populateBulkCopyPatterns(const mlir::LLVMTypeConverter &converter,
                              const TileLowering &tiles, mlir::RewritePatternSet &patterns);
/// weft.dot by warpgroup MMA (wgmma), and weft.dot_wait.
void populateWarpgroupDotPatterns(const mlir::LLVMTypeConverter &converter,
                                  const TileLowering &tiles, mlir::RewritePatternSet &patterns);

/// Each weft.warp_specialize (left in place by the patterns, which lowered
/// what its regions hold) becomes a branch on the thread's warps: the
/// producer warps give registers up and run their region, the program's
/// warps take them and run theirs. Its kernel is marked with the threads
/// a launch starts (kThreadsAttrName).
void lowerWarpSpecialize(mlir::ModuleOp module, const TargetInfo &target);

} // namespace weft

#endif // WEFT_CONVERSION_WEFTTOLLVM_NVPTX_NVPTXPATTERNS_H
