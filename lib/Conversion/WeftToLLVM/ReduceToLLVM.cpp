//===- ReduceToLLVM.cpp - weft.reduce on distributed tiles ----------------===//
//
// Every operand's elements combine as tuples (an argmax's values with their
// indices). Three levels, each combining with a copy of the combine region:
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

unsigned strideOf(ArrayRef<unsigned> counts, ArrayRef<unsigned> order, unsigned dim) {
  unsigned stride = 1;
  for (unsigned d : order) {
    if (d == dim)
      break;
    stride *= counts[d];
  }
  return stride;
}

Combiner::Combiner(OpBuilder &b, Block &body) : b(b), body(body) {}

SmallVector<Value> Combiner::operator()(ValueRange lhs, ValueRange rhs) {
  IRMapping map;
  unsigned n = lhs.size();
  for (unsigned k = 0; k < n; ++k) {
    map.map(body.getArgument(k), lhs[k]);
    map.map(body.getArgument(n + k), rhs[k]);
  }
  for (Operation &inner : body.without_terminator())
    b.clone(inner, map);
  SmallVector<Value> out;
  for (Value v : body.getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
  return out;
}

namespace {

struct ReduceOpLowering : TilePattern<ReduceOp> {
  using TilePattern::TilePattern;

  LogicalResult matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType srcType = op.getSrcType();
    if (!isDistributed(srcType))
      return failure();
    TileLayout layout(srcType);
    Location loc = op.getLoc();
    const TargetInfo &target = tiles.target;
    unsigned axis = op.getAxis();
    Combiner combine(rewriter, op.getCombine().front());

    // 1. Within the thread: per line along the axis, one tuple of the
    // operands' elements.
    SmallVector<SmallVector<Value>> in;
    for (Value src : adaptor.getSrcs())
      in.push_back(unpackTile(rewriter, loc, src));
    auto tupleAt = [&](unsigned i) {
      SmallVector<Value> tuple;
      for (auto &elements : in)
        tuple.push_back(elements[i]);
      return tuple;
    };
    SmallVector<SmallVector<Value>> acc;
    SmallVector<unsigned> firsts;
    for (unsigned i = 0; i < layout.numElements(); ++i) {
      SmallVector<unsigned> multi = layout.multiIndex(i);
      if (multi[axis] != 0)
        continue;
      SmallVector<Value> value = tupleAt(i);
      for (unsigned k = 1; k < layout.elementsPerDim()[axis]; ++k) {
        multi[axis] = k;
        value = combine(value, tupleAt(layout.linearIndex(multi)));
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
        for (SmallVector<Value> &value : acc) {
          SmallVector<Value> other;
          for (Value v : value)
            other.push_back(shuffleXor(rewriter, loc, target, v, step * laneStride));
          value = combine(value, other);
        }
      // 3. Across the warps that do.
      int64_t warps = layout.distinctWarps(axis);
      if (warps > 1)
        combineWarps(rewriter, loc, op, layout, warps, firsts, acc, combine);
    }

    SmallVector<Value> results;
    for (unsigned k = 0; k < op.getSrcs().size(); ++k) {
      SmallVector<Value> elements;
      for (auto &value : acc)
        elements.push_back(value[k]);
      results.push_back(srcType.getRank() == 1
                            ? elements.front()
                            : packTile(rewriter, loc,
                                       getTypeConverter()->convertType(op.getResult(k).getType()),
                                       elements));
    }
    rewriter.replaceOp(op, results);
    return success();
  }

  void combineWarps(OpBuilder &b, Location loc, ReduceOp op, const TileLayout &layout,
                    int64_t warps, ArrayRef<unsigned> firsts,
                    MutableArrayRef<SmallVector<Value>> acc, Combiner &combine) const {
    const TargetInfo &target = tiles.target;
    unsigned axis = op.getAxis();
    RankedTensorType srcType = op.getSrcType();
    BlockedEncodingAttr blocked = layout.getBlocked();
    SmallVector<int64_t> outShape(srcType.getShape());
    outShape.erase(outShape.begin() + axis);

    Value warp = LLVM::UDivOp::create(b, loc, target.threadId(b, loc),
                                      i32Const(b, loc, target.getSpec().warpSize()));
    unsigned warpStride =
        strideOf(blocked.getWarpsPerProgram(), blocked.getOrder(), axis);
    unsigned laneStride = strideOf(blocked.getThreadsPerWarp(), blocked.getOrder(), axis);
    Value along = LLVM::AndOp::create(b, loc, divConst(b, loc, warp, warpStride),
                                      i32Const(b, loc, warps - 1));
    // Each operand's partials in a region of its own.
    SmallVector<Type> elemTypes;
    for (Value src : op.getSrcs())
      elemTypes.push_back(getTypeConverter()->convertType(
          cast<RankedTensorType>(src.getType()).getElementType()));
    SmallVector<int64_t> offsets = partialOffsets(op.getSrcs(), axis, warps);

    SmallVector<Value> rows;
    auto slot = [&](Value buffer, unsigned k, Value row, Value w) {
      Value base = elementPtr(b, loc, buffer, b.getI8Type(), i32Const(b, loc, offsets[k]));
      return elementPtr(b, loc, base, elemTypes[k], LLVM::AddOp::create(b, loc, row, w));
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
      // Every lane of a butterfly holds its result, and a replicated layout
      // holds it in more threads still: one of them writes the slot (the
      // others would race to write the same value).
      Value laneAlong = remConst(
          b, loc,
          divConst(b, loc,
                   LLVM::URemOp::create(b, loc, target.threadId(b, loc),
                                        i32Const(b, loc, target.getSpec().warpSize())),
                   laneStride),
          layout.distinctLanes(axis));
      Value firstLane = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, laneAlong,
                                             i32Const(b, loc, 0));
      SmallVector<Value> owned;
      if (layout.isReplicated())
        owned = emitOwnership(b, loc, layout, target);
      for (auto [value, row, first] : llvm::zip(acc, rows, firsts)) {
        Value writes = owned.empty()
                           ? firstLane
                           : LLVM::AndOp::create(b, loc, firstLane, owned[first]).getResult();
        emitIf(b, loc, writes, {}, [&, &value = value, row = row] {
          for (auto [k, v] : llvm::enumerate(value))
            LLVM::StoreOp::create(b, loc, v, slot(buffer, k, row, along));
          return SmallVector<Value>{};
        }, {});
      }
    };
    auto read = [&](Value buffer) {
      SmallVector<Value> flat;
      for (Value row : rows) {
        auto at = [&](int64_t w) {
          SmallVector<Value> tuple;
          for (auto [k, type] : llvm::enumerate(elemTypes))
            tuple.push_back(LLVM::LoadOp::create(b, loc, type,
                                                 slot(buffer, k, row, i32Const(b, loc, w))));
          return tuple;
        };
        SmallVector<Value> value = at(0);
        for (int64_t w = 1; w < warps; ++w)
          value = combine(value, at(w));
        llvm::append_range(flat, value);
      }
      return flat;
    };
    SmallVector<Value> flat = tiles.exchange(b, loc, op, write, read);
    unsigned n = elemTypes.size();
    for (auto [i, value] : llvm::enumerate(acc))
      value.assign(flat.begin() + i * n, flat.begin() + (i + 1) * n);
  }
};

} // namespace

void populateReducePatterns(const LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            RewritePatternSet &patterns) {
  patterns.add<ReduceOpLowering>(converter, tiles);
}

} // namespace weft
