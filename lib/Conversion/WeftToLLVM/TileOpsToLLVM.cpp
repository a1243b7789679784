//===- TileOpsToLLVM.cpp - shape ops and element-wise math on tiles -------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace weft {

LogicalResult checkTileLowerable(Operation *op, const TargetInfo &target) {
  if (failed(checkFloat8(op)))
    return failure();
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (isDistributed(constant.getType()) && (!dense || !dense.isSplat()))
      return op->emitOpError("only splat constants can be distributed; build "
                             "other tiles with weft.make_range and arithmetic");
  }
  if (auto reduce = dyn_cast<ReduceOp>(op))
    if (isa<SliceEncodingAttr>(reduce.getSrcType().getEncoding()))
      return op->emitOpError("cannot reduce a sliced tile; convert it to a "
                             "blocked layout first");
  if (isa<AllocMBarriersOp, InvalMBarriersOp, DescAsyncCopyOp, MBarrierWaitOp, MBarrierArriveOp>(
          op) &&
      !target.getSpec().hasTensorCopies())
    return op->emitOpError("needs a target with bulk tensor copies (sm_90)");
  return checkScratchLimit(op, target);
}

void replaceWithTile(ConversionPatternRewriter &rewriter, Operation *op,
                     const TypeConverter &converter, ValueRange elements) {
  Type type = converter.convertType(op->getResult(0).getType());
  rewriter.replaceOp(op, packTile(rewriter, op->getLoc(), type, elements));
}

namespace {

/// The elements of `op`'s tile result when every one is `scalar`.
SmallVector<Value> splatElements(Operation *op, Value scalar) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  return SmallVector<Value>(TileLayout(type).numElements(), scalar);
}

struct MakeRangeOpLowering : TileResultPattern<MakeRangeOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(MakeRangeOp op, OpAdaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TileLayout layout(op.getType());
    SmallVector<Value> elements;
    for (auto &coords : emitCoordinates(rewriter, loc, layout, tiles.target))
      elements.push_back(LLVM::AddOp::create(
          rewriter, loc, coords[0], i32Const(rewriter, loc, op.getStart())));
    return elements;
  }
};

struct SplatOpLowering : TileResultPattern<SplatOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(SplatOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &) const override {
    return splatElements(op, adaptor.getSrc());
  }
};

struct ConstantOpLowering : TileResultPattern<arith::ConstantOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(arith::ConstantOp op, OpAdaptor,
                               ConversionPatternRewriter &rewriter) const override {
    auto dense = cast<DenseElementsAttr>(op.getValue());
    Type elem = getTypeConverter()->convertType(getElementTypeOrSelf(op.getType()));
    return splatElements(op, LLVM::ConstantOp::create(
                                 rewriter, op.getLoc(), elem,
                                 float8Bits(rewriter, dense.getSplatValue<TypedAttr>())));
  }
};

/// Same layout, so a thread's element of the result at index (i, j) comes
/// from its own element (0, j) along a broadcast dimension.
struct BroadcastOpLowering : TileResultPattern<BroadcastOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(BroadcastOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    TileLayout src(srcType), dst(op.getType());
    SmallVector<Value> in = unpackTile(rewriter, op.getLoc(), adaptor.getSrc());
    SmallVector<Value> out;
    for (unsigned i = 0; i < dst.numElements(); ++i) {
      SmallVector<unsigned> multi = dst.multiIndex(i);
      for (unsigned d = 0; d < srcType.getRank(); ++d)
        if (srcType.getDimSize(d) == 1)
          multi[dst.parentDim(d)] = 0;
      out.push_back(in[src.linearIndex(multi)]);
    }
    return out;
  }
};

/// A slice holds exactly its parent's elements over the expanded shape, in
/// the same order: nothing moves.
struct ExpandDimsOpLowering : TileResultPattern<ExpandDimsOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(ExpandDimsOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    return unpackTile(rewriter, op.getLoc(), adaptor.getSrc());
  }
};

/// Moves elements from `srcType`'s layout to `dstType`'s, matching them by
/// row-major position (so a reshape is the same move). Thread-local layouts
/// (the host) permute at compile time; otherwise every thread writes its
/// elements to shared memory and reads the ones it needs.
SmallVector<Value> redistribute(OpBuilder &b, Location loc, Operation *op,
                                const TileLowering &tiles,
                                RankedTensorType srcType,
                                RankedTensorType dstType, Type elemType,
                                ArrayRef<Value> in) {
  TileLayout src(srcType), dst(dstType);
  auto rowMajor = [](ArrayRef<int64_t> coords, ArrayRef<int64_t> shape) {
    int64_t index = 0;
    for (auto [c, size] : llvm::zip(coords, shape))
      index = index * size + c;
    return index;
  };
  if (src.isThreadLocal() && dst.isThreadLocal()) {
    SmallVector<Value> out;
    DenseMap<int64_t, Value> byPosition;
    for (unsigned i = 0; i < src.numElements(); ++i)
      byPosition.try_emplace(
          rowMajor(src.constantCoordinates(i), srcType.getShape()), in[i]);
    for (unsigned i = 0; i < dst.numElements(); ++i)
      out.push_back(byPosition.lookup(
          rowMajor(dst.constantCoordinates(i), dstType.getShape())));
    return out;
  }
  int64_t pitch = isa<ConvertLayoutOp>(op) ? conversionRowPitch(srcType) : 0;
  auto write = [&](Value buffer) {
    tiles.storeRowMajor(b, loc, buffer, elemType, srcType, in, pitch);
  };
  auto read = [&](Value buffer) {
    return tiles.loadRowMajor(b, loc, buffer, elemType, dstType, pitch);
  };
  return tiles.exchange(b, loc, op, write, read);
}

template <typename Op>
struct RedistributeLowering : TileResultPattern<Op> {
  using TileResultPattern<Op>::TileResultPattern;
  SmallVector<Value>
  lowerTile(Op op, typename Op::Adaptor adaptor,
            ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    Type elemType =
        this->getTypeConverter()->convertType(srcType.getElementType());
    SmallVector<Value> in = unpackTile(rewriter, op.getLoc(), adaptor.getSrc());
    return redistribute(rewriter, op.getLoc(), op, this->tiles, srcType,
                        cast<RankedTensorType>(op.getType()), elemType, in);
  }
};

/// f32 tiles rounded to f16 or bf16 two elements at a time: one
/// `fptrunc <2 x float>` a pair, which NVPTX selects as a packed
/// cvt.rn.{b}f16x2.f32 (half the conversions: 64 instead of 128 a thread
/// in a 128x256 GEMM epilogue). The backend pairs scalar roundings itself
/// only where both sit in the block of the store that packs them, which a
/// bulk store's wait between the two breaks. Elsewhere LLVM splits the pair
/// again (AMDGPU has no rounding pair instruction; the host's is scalar).
struct PackedTruncFLowering : TilePattern<arith::TruncFOp> {
  using TilePattern::TilePattern;

  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !isDistributed(type) ||
        !getElementTypeOrSelf(op.getIn().getType()).isF32() ||
        !isa<Float16Type, BFloat16Type>(type.getElementType()) ||
        op.getRoundingmodeAttr())
      return failure();
    Location loc = op.getLoc();
    Type half = getTypeConverter()->convertType(type.getElementType());
    auto narrow = VectorType::get(2, half);
    SmallVector<Value> in = unpackTile(rewriter, loc, adaptor.getIn());
    SmallVector<Value> out;
    for (size_t i = 0; i + 1 < in.size(); i += 2) {
      Value pair = packVector(rewriter, loc, ArrayRef(in).slice(i, 2));
      llvm::append_range(out, unpackVector(rewriter, loc,
                                           LLVM::FPTruncOp::create(rewriter, loc, narrow, pair)));
    }
    if (in.size() % 2)
      out.push_back(LLVM::FPTruncOp::create(rewriter, loc, half, in.back()));
    replaceWithTile(rewriter, op, *getTypeConverter(), out);
    return success();
  }
};

/// Any element-wise arith/math op on tiles: the scalar op once per element
/// the thread holds (left for the arith/math lowering that follows).
struct ElementwiseTileLowering : ConversionPattern {
  ElementwiseTileLowering(const LLVMTypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        !op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1 ||
        !isDistributed(op->getResult(0).getType()))
      return failure();
    Location loc = op->getLoc();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Type elemType = getTypeConverter()->convertType(type.getElementType());
    unsigned n = TileLayout(type).numElements();
    SmallVector<SmallVector<Value>> unpacked;
    for (Value operand : operands)
      unpacked.push_back(isa<LLVM::LLVMStructType>(operand.getType())
                             ? unpackTile(rewriter, loc, operand)
                             : SmallVector<Value>(n, operand));
    SmallVector<Value> results;
    for (unsigned i = 0; i < n; ++i) {
      if (isFloat8Conversion(op)) { // LLVM has no float8: integer code
        results.push_back(lowerFloat8Element(rewriter, loc, op, unpacked[0][i]));
        continue;
      }
      OperationState state(loc, op->getName());
      for (auto &elements : unpacked)
        state.addOperands(elements[i]);
      state.addTypes(elemType);
      state.addAttributes(op->getAttrs());
      results.push_back(rewriter.create(state)->getResult(0));
    }
    replaceWithTile(rewriter, op, *getTypeConverter(), results);
    return success();
  }
};

} // namespace

void populateTileOpPatterns(const LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            RewritePatternSet &patterns) {
  patterns.add<MakeRangeOpLowering, SplatOpLowering, ConstantOpLowering,
               BroadcastOpLowering, ExpandDimsOpLowering,
               RedistributeLowering<ConvertLayoutOp>,
               RedistributeLowering<ReshapeOp>, PackedTruncFLowering>(converter,
                                                                            tiles);
  patterns.add<ElementwiseTileLowering>(converter, patterns.getContext());
}

} // namespace weft
