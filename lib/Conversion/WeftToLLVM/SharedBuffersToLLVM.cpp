//===- SharedBuffersToLLVM.cpp - a program's shared-memory buffers --------===//
//
// `!weft.shared` buffers (pipelined loops' rings) and mbarriers live where
// placeSharedBuffers put them in a kernel's dynamic shared memory, or in
// static shared arrays, or (the host) on the program's stack. The groups of
// weft.async_copy (TileMemoryToLLVM.cpp) are closed and waited for here.
// The bulk copies, mbarriers and clusters of sm_90 are
// NVPTX/BulkCopiesToLLVM.cpp's.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

#include "llvm/Support/MathExtras.h"

#include <type_traits>

using namespace mlir;

namespace weft {

Value dynamicSharedAddress(OpBuilder &b, Operation *op) {
  auto offset = op->getAttrOfType<IntegerAttr>(kSharedOffsetAttrName);
  if (!offset)
    return {};
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  auto global = module.lookupSymbol<LLVM::GlobalOp>(kDynamicSharedName);
  if (!global) {
    // extern .shared .align 16 .b8 __weft_dynamic_shared[]
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                                    /*isConstant=*/false, LLVM::Linkage::External,
                                    kDynamicSharedName, Attribute(), /*alignment=*/16,
                                    kSharedAddressSpace);
  }
  Value base = addressOf(b, loc, global);
  // Offsets count from the first multiple of the kernel's largest
  // alignment, which only a runtime address shows (static shared memory
  // comes first); placeSharedBuffers left room for it.
  if (auto align = op->getAttrOfType<IntegerAttr>(kSharedBaseAlignAttrName)) {
    Type i32 = b.getI32Type();
    Value address = LLVM::PtrToIntOp::create(b, loc, i32, base);
    Value aligned = LLVM::AndOp::create(
        b, loc, LLVM::AddOp::create(b, loc, address, i32Const(b, loc, align.getInt() - 1)),
        i32Const(b, loc, -align.getInt()));
    base = byteOffset(b, loc, base, LLVM::SubOp::create(b, loc, aligned, address));
  }
  return byteOffset(b, loc, base, i64Const(b, loc, offset.getInt()));
}

Value sharedAllocation(ConversionPatternRewriter &rewriter, Operation *op,
                       const TargetInfo &target) {
  if (Value placed = dynamicSharedAddress(rewriter, op))
    return placed;
  Location loc = op->getLoc();
  auto [bytes, alignment] = sharedFootprint(op);
  if (target.singleThreadPrograms())
    return programStackBuffer(rewriter, loc, op, bytes);
  auto module = op->getParentOfType<ModuleOp>();
  std::string name;
  for (unsigned i = 0; name.empty() || module.lookupSymbol(name); ++i)
    name = "__weft_shared_" + std::to_string(i);
  auto global = sharedGlobal(rewriter, loc, op, name,
                             LLVM::LLVMArrayType::get(rewriter.getI8Type(), bytes), alignment);
  return addressOf(rewriter, loc, global);
}

namespace {

struct AllocSharedLowering : TilePattern<AllocSharedOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AllocSharedOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, sharedAllocation(rewriter, op, tiles.target));
    return success();
  }
};

struct AsyncCommitLowering : TilePattern<AsyncCommitOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AsyncCommitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    tiles.target.asyncCommit(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// weft.async_wait, and weft.release_shared (a wait for every group): the
/// wait, then a join, so that every thread's copies (and plain stores of
/// the masked tails) are visible to the program and every thread is done
/// with the buffers it read before (released: their room is free).
template <typename Op>
struct WaitLowering : TilePattern<Op> {
  using TilePattern<Op>::TilePattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    unsigned pending = 0;
    if constexpr (std::is_same_v<Op, AsyncWaitOp>)
      pending = op.getPending();
    this->tiles.target.asyncWait(rewriter, op.getLoc(), pending);
    this->tiles.lowering.joinProgram(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Where the target has neither bulk copies nor clusters (the NVPTX
/// patterns lower these there): a proxy fence is nothing, its loads all go
/// through one proxy; a cluster is one program, so its barrier's arrival
/// is nothing and its wait the program's join.
struct AsyncProxyFenceLowering : TilePattern<AsyncProxyFenceOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AsyncProxyFenceOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

struct ClusterArriveLowering : TilePattern<ClusterArriveOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ClusterArriveOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

struct ClusterWaitLowering : TilePattern<ClusterWaitOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ClusterWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    tiles.lowering.joinProgram(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void addSharedBufferConversion(LLVMTypeConverter &converter, const TargetInfo &target) {
  auto sharedPointer = [&target](MLIRContext *ctx) -> Type {
    return LLVM::LLVMPointerType::get(ctx, target.singleThreadPrograms() ? 0
                                                                         : kSharedAddressSpace);
  };
  converter.addConversion(
      [sharedPointer](SharedType type) { return sharedPointer(type.getContext()); });
  converter.addConversion(
      [sharedPointer](MBarrierType type) { return sharedPointer(type.getContext()); });
}

void populateSharedBufferPatterns(const LLVMTypeConverter &converter,
                                  const TileLowering &tiles, RewritePatternSet &patterns) {
  patterns.add<AllocSharedLowering, AsyncCommitLowering, WaitLowering<AsyncWaitOp>,
               WaitLowering<ReleaseSharedOp>, AsyncProxyFenceLowering, ClusterArriveLowering,
               ClusterWaitLowering>(converter, tiles);
}

} // namespace weft
