//===- TileOpsToLLVM.cpp - shape ops and element-wise math on tiles -------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace weft {

bool isDistributed(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         isa_and_nonnull<BlockedEncodingAttr, SliceEncodingAttr>(tensor.getEncoding());
}

LogicalResult checkTileLowerable(Operation *op) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (isDistributed(constant.getType()) && (!dense || !dense.isSplat()))
      return op->emitOpError("only splat constants can be distributed; build "
                             "other tiles with weft.make_range and arithmetic");
  }
  if (auto reduce = dyn_cast<ReduceOp>(op))
    if (isa<SliceEncodingAttr>(reduce.getSrc().getType().getEncoding()))
      return op->emitOpError("cannot reduce a sliced tile; convert it to a "
                             "blocked layout first");
  return success();
}

Value TileLowering::scratch(OpBuilder &b, Location loc, Operation *op,
                            int64_t bytes) const {
  constexpr StringLiteral kName = "__weft_tile_scratch";
  constexpr unsigned kSharedAddressSpace = 3;
  auto module = op->getParentOfType<ModuleOp>();
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes);
  auto global = module.lookupSymbol<LLVM::GlobalOp>(kName);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                           LLVM::Linkage::Internal, kName, Attribute(),
                           /*alignment=*/16, kSharedAddressSpace);
  } else if (cast<LLVM::LLVMArrayType>(global.getGlobalType()).getNumElements() <
             uint64_t(bytes)) {
    global.setGlobalType(type);
  }
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), kSharedAddressSpace),
      kName);
}

namespace {

struct MakeRangeOpLowering : TilePattern<MakeRangeOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(MakeRangeOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op.getType()))
      return failure();
    Location loc = op.getLoc();
    TileLayout layout(op.getType());
    SmallVector<Value> elements;
    for (auto &coords : layout.emitCoordinates(rewriter, loc, tiles.target))
      elements.push_back(LLVM::AddOp::create(
          rewriter, loc, coords[0], i32Const(rewriter, loc, op.getStart())));
    rewriter.replaceOp(op, packTile(rewriter, loc,
                                    getTypeConverter()->convertType(op.getType()),
                                    elements));
    return success();
  }
};

struct SplatOpLowering : TilePattern<SplatOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op.getType()))
      return failure();
    unsigned n = TileLayout(op.getType()).numElements();
    SmallVector<Value> elements(n, adaptor.getSrc());
    rewriter.replaceOp(op, packTile(rewriter, op.getLoc(),
                                    getTypeConverter()->convertType(op.getType()),
                                    elements));
    return success();
  }
};

struct ConstantOpLowering : TilePattern<arith::ConstantOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !isDistributed(type))
      return failure();
    auto dense = cast<DenseElementsAttr>(op.getValue());
    Type elem = getTypeConverter()->convertType(type.getElementType());
    Value scalar = LLVM::ConstantOp::create(rewriter, op.getLoc(), elem,
                                            dense.getSplatValue<TypedAttr>());
    SmallVector<Value> elements(TileLayout(type).numElements(), scalar);
    rewriter.replaceOp(op, packTile(rewriter, op.getLoc(),
                                    getTypeConverter()->convertType(type),
                                    elements));
    return success();
  }
};

/// Same layout, so a thread's element of the result at index (i, j) comes
/// from its own element (0, j) along a broadcast dimension.
struct BroadcastOpLowering : TilePattern<BroadcastOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op.getType()))
      return failure();
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
    rewriter.replaceOp(op, packTile(rewriter, op.getLoc(),
                                    getTypeConverter()->convertType(op.getType()),
                                    out));
    return success();
  }
};

/// A slice holds exactly its parent's elements over the expanded shape, in
/// the same order: nothing moves.
struct ExpandDimsOpLowering : TilePattern<ExpandDimsOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ExpandDimsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op.getType()))
      return failure();
    SmallVector<Value> in = unpackTile(rewriter, op.getLoc(), adaptor.getSrc());
    rewriter.replaceOp(op, packTile(rewriter, op.getLoc(),
                                    getTypeConverter()->convertType(op.getType()),
                                    in));
    return success();
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
  SmallVector<Value> out;
  if (src.isThreadLocal() && dst.isThreadLocal()) {
    DenseMap<int64_t, Value> byPosition;
    for (unsigned i = 0; i < src.numElements(); ++i)
      byPosition.try_emplace(
          rowMajor(src.constantCoordinates(i), srcType.getShape()), in[i]);
    for (unsigned i = 0; i < dst.numElements(); ++i)
      out.push_back(byPosition.lookup(
          rowMajor(dst.constantCoordinates(i), dstType.getShape())));
    return out;
  }
  int64_t bytes = srcType.getNumElements() *
                  std::max<int64_t>(naturalAlignment(elemType), 1);
  Value buffer = tiles.scratch(b, loc, op, bytes);
  auto slot = [&](ValueRange coords, ArrayRef<int64_t> shape) -> Value {
    return LLVM::GEPOp::create(b, loc, buffer.getType(), elemType, buffer,
                               ValueRange{linearize(b, loc, coords, shape)});
  };
  for (auto [element, coords] :
       llvm::zip(in, src.emitCoordinates(b, loc, tiles.target)))
    LLVM::StoreOp::create(b, loc, element, slot(coords, srcType.getShape()));
  tiles.barrier(b, loc);
  for (auto &coords : dst.emitCoordinates(b, loc, tiles.target))
    out.push_back(
        LLVM::LoadOp::create(b, loc, elemType, slot(coords, dstType.getShape())));
  tiles.barrier(b, loc);
  return out;
}

template <typename Op>
struct RedistributeLowering : TilePattern<Op> {
  using TilePattern<Op>::TilePattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto dstType = cast<RankedTensorType>(op.getType());
    if (!isDistributed(dstType))
      return failure();
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    const auto &converter = *this->getTypeConverter();
    Type elemType = converter.convertType(srcType.getElementType());
    SmallVector<Value> in = unpackTile(rewriter, op.getLoc(), adaptor.getSrc());
    SmallVector<Value> out = redistribute(rewriter, op.getLoc(), op,
                                          this->tiles, srcType, dstType,
                                          elemType, in);
    rewriter.replaceOp(op, packTile(rewriter, op.getLoc(),
                                    converter.convertType(dstType), out));
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
      OperationState state(loc, op->getName());
      for (auto &elements : unpacked)
        state.addOperands(elements[i]);
      state.addTypes(elemType);
      state.addAttributes(op->getAttrs());
      results.push_back(rewriter.create(state)->getResult(0));
    }
    rewriter.replaceOp(op, packTile(rewriter, loc,
                                    getTypeConverter()->convertType(type),
                                    results));
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
               RedistributeLowering<ReshapeOp>>(converter, tiles);
  patterns.add<ElementwiseTileLowering>(converter, patterns.getContext());
}

} // namespace weft
