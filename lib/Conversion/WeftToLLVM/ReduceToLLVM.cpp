//===- ReduceToLLVM.cpp - weft.reduce on distributed tiles ----------------===//
//
// Three levels, each combining with a copy of the op's combine region:
//  1. a thread's own elements along the axis;
//  2. the lanes of a warp along the axis, by butterfly shuffles (every lane
//     ends with the warp's result; shfl.sync.bfly on NVPTX, ds_bpermute on
//     AMDGPU);
//  3. the warps along the axis, through shared memory: each writes its
//     partial, and after a barrier every thread combines all of them.
// Lanes or warps that only hold replicas of the tile take no part, or the
// replicas would be combined twice. The result's slice layout is what each
// thread then holds; a 1-D tile's result is a scalar every thread has.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace weft {
namespace {

/// Exchanges a scalar of any width up to 64 bits through 32-bit shuffles.
Value shuffleXor(OpBuilder &b, Location loc, const TargetInfo &target,
                 Value value, unsigned laneMask) {
  Type type = value.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value asInt = isa<IntegerType>(type)
                    ? value
                    : LLVM::BitcastOp::create(b, loc, b.getIntegerType(bits),
                                              value);
  Value result;
  if (bits == 64) {
    Value lo = LLVM::TruncOp::create(b, loc, i32, asInt);
    Value hi = LLVM::TruncOp::create(
        b, loc, i32, LLVM::LShrOp::create(b, loc, asInt, i64Const(b, loc, 32)));
    lo = LLVM::ZExtOp::create(b, loc, i64, target.shuffleXor(b, loc, lo, laneMask));
    hi = LLVM::ZExtOp::create(b, loc, i64, target.shuffleXor(b, loc, hi, laneMask));
    result = LLVM::OrOp::create(
        b, loc, lo, LLVM::ShlOp::create(b, loc, hi, i64Const(b, loc, 32)));
  } else if (bits < 32) {
    Value wide = LLVM::ZExtOp::create(b, loc, i32, asInt);
    result = LLVM::TruncOp::create(b, loc, asInt.getType(),
                                   target.shuffleXor(b, loc, wide, laneMask));
  } else {
    result = target.shuffleXor(b, loc, asInt, laneMask);
  }
  return result.getType() == type ? result
                                  : LLVM::BitcastOp::create(b, loc, type, result);
}

/// Product of `counts` over the dimensions before `dim` in `order`: the
/// stride between neighbours along `dim` in the linear lane/warp index.
unsigned strideOf(ArrayRef<unsigned> counts, ArrayRef<unsigned> order,
                  unsigned dim) {
  unsigned stride = 1;
  for (unsigned d : order) {
    if (d == dim)
      break;
    stride *= counts[d];
  }
  return stride;
}

struct ReduceOpLowering : TilePattern<ReduceOp> {
  using TilePattern::TilePattern;

  LogicalResult matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    if (!isDistributed(srcType))
      return failure();
    TileLayout layout(srcType);
    Location loc = op.getLoc();
    const TargetInfo &target = tiles.target;
    unsigned axis = op.getAxis();
    Type elemType = getTypeConverter()->convertType(srcType.getElementType());
    Block &body = op.getCombine().front();
    auto combine = [&](Value lhs, Value rhs) -> Value {
      IRMapping map;
      map.map(body.getArgument(0), lhs);
      map.map(body.getArgument(1), rhs);
      for (Operation &inner : body.without_terminator())
        rewriter.clone(inner, map);
      return map.lookup(cast<ReduceReturnOp>(body.getTerminator()).getResult());
    };

    // 1. Within the thread.
    SmallVector<Value> in = unpackTile(rewriter, loc, adaptor.getSrc());
    SmallVector<Value> acc;
    SmallVector<unsigned> firsts;
    for (unsigned i = 0; i < in.size(); ++i) {
      SmallVector<unsigned> multi = layout.multiIndex(i);
      if (multi[axis] != 0)
        continue;
      Value value = in[i];
      for (unsigned k = 1; k < layout.elementsPerDim()[axis]; ++k) {
        multi[axis] = k;
        value = combine(value, in[layout.linearIndex(multi)]);
      }
      acc.push_back(value);
      firsts.push_back(i);
    }

    if (!target.singleThreadPrograms()) {
      BlockedEncodingAttr blocked = layout.getBlocked();
      // 2. Across the lanes that hold distinct parts of the axis.
      unsigned laneStride =
          strideOf(blocked.getThreadsPerWarp(), blocked.getOrder(), axis);
      for (int64_t step = 1; step < layout.distinctLanes(axis); step *= 2)
        for (Value &value : acc)
          value = combine(value, shuffleXor(rewriter, loc, target, value,
                                            step * laneStride));
      // 3. Across the warps that do.
      int64_t warps = layout.distinctWarps(axis);
      if (warps > 1)
        combineWarps(rewriter, loc, op, layout, srcType, elemType, warps,
                     firsts, acc, combine);
    }

    if (srcType.getRank() == 1)
      rewriter.replaceOp(op, acc.front());
    else
      replaceWithTile(rewriter, op, *getTypeConverter(), acc);
    return success();
  }

  void combineWarps(OpBuilder &b, Location loc, ReduceOp op,
                    const TileLayout &layout, RankedTensorType srcType,
                    Type elemType, int64_t warps, ArrayRef<unsigned> firsts,
                    MutableArrayRef<Value> acc,
                    function_ref<Value(Value, Value)> combine) const {
    const TargetInfo &target = tiles.target;
    unsigned axis = op.getAxis();
    BlockedEncodingAttr blocked = layout.getBlocked();
    SmallVector<int64_t> outShape(srcType.getShape());
    outShape.erase(outShape.begin() + axis);

    Value warp = LLVM::UDivOp::create(b, loc, target.threadId(b, loc),
                                      i32Const(b, loc, target.getSpec().warpSize()));
    unsigned warpStride =
        strideOf(blocked.getWarpsPerProgram(), blocked.getOrder(), axis);
    Value along = LLVM::AndOp::create(b, loc, divConst(b, loc, warp, warpStride),
                                      i32Const(b, loc, warps - 1));

    SmallVector<Value> rows;
    auto slot = [&](Value buffer, Value row, Value w) {
      return elementPtr(b, loc, buffer, elemType,
                        LLVM::AddOp::create(b, loc, row, w));
    };
    auto write = [&](Value buffer) {
      auto coords = emitCoordinates(b, loc, layout, target);
      for (unsigned first : firsts) {
        SmallVector<Value> outCoords(coords[first]);
        outCoords.erase(outCoords.begin() + axis);
        Value position = outShape.empty()
                             ? i32Const(b, loc, 0)
                             : linearize(b, loc, outCoords, outShape);
        rows.push_back(mulConst(b, loc, position, warps));
      }
      for (auto [value, row] : llvm::zip(acc, rows))
        LLVM::StoreOp::create(b, loc, value, slot(buffer, row, along));
    };
    auto read = [&](Value buffer) {
      SmallVector<Value> combined;
      for (Value row : rows) {
        Value value = LLVM::LoadOp::create(
            b, loc, elemType, slot(buffer, row, i32Const(b, loc, 0)));
        for (int64_t w = 1; w < warps; ++w)
          value = combine(value,
                          LLVM::LoadOp::create(
                              b, loc, elemType,
                              slot(buffer, row, i32Const(b, loc, w))));
        combined.push_back(value);
      }
      return combined;
    };
    llvm::copy(tiles.exchange(b, loc, op, write, read), acc.begin());
  }
};

} // namespace

void populateReducePatterns(const LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            RewritePatternSet &patterns) {
  patterns.add<ReduceOpLowering>(converter, tiles);
}

} // namespace weft
