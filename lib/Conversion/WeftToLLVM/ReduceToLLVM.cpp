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

PlaceAlong placeAlong(OpBuilder &b, Location loc, const TileLayout &layout, unsigned dim,
                      const TargetInfo &target) {
  BlockedEncodingAttr blocked = layout.getBlocked();
  Value tid = target.threadId(b, loc);
  Value warpSize = i32Const(b, loc, target.getSpec().warpSize());
  auto along = [&](Value index, ArrayRef<unsigned> counts, int64_t distinct) {
    return remConst(b, loc, divConst(b, loc, index, strideOf(counts, blocked.getOrder(), dim)),
                    distinct);
  };
  return {along(LLVM::URemOp::create(b, loc, tid, warpSize), blocked.getThreadsPerWarp(),
                layout.distinctLanes(dim)),
          along(LLVM::UDivOp::create(b, loc, tid, warpSize), blocked.getWarpsPerProgram(),
                layout.distinctWarps(dim))};
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

SmallVector<SmallVector<Value>> TileLowering::acrossWarps(
    OpBuilder &b, Location loc, Operation *op, const TileLayout &layout,
    ArrayRef<unsigned> firsts, ArrayRef<SmallVector<Value>> partials,
    function_ref<SmallVector<Value>(ArrayRef<SmallVector<Value>>)> gather) const {
  WarpPartials shared = warpPartials(op);
  unsigned axis = shared.axis;
  int64_t warps = shared.warps, slots = shared.slots;
  assert(partials.size() == firsts.size() * slots && "a tuple per line and slot");
  SmallVector<int64_t> otherShape(cast<RankedTensorType>(op->getOperand(0).getType()).getShape());
  otherShape.erase(otherShape.begin() + axis);
  SmallVector<Type> types;
  for (Value v : partials.front())
    types.push_back(v.getType());
  // Slot (line, slot, warp) of each operand's region.
  auto address = [&](Value buffer, unsigned k, Value line, int64_t s, Value warp) {
    Value base =
        elementPtr(b, loc, buffer, b.getI8Type(), i32Const(b, loc, shared.offsets[k]));
    Value at = LLVM::AddOp::create(b, loc, mulConst(b, loc, line, slots * warps),
                                   i32Const(b, loc, s * warps));
    return elementPtr(b, loc, base, types[k], LLVM::AddOp::create(b, loc, at, warp));
  };
  PlaceAlong place = placeAlong(b, loc, layout, axis, target);

  SmallVector<Value> lines;
  auto write = [&](Value buffer) {
    auto coords = emitCoordinates(b, loc, layout, target);
    // Every lane of the warp along the axis holds the partials, and a
    // replicated layout more threads still: one writes each slot (the
    // others would race to write the same value).
    Value firstLane = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, place.lane,
                                           i32Const(b, loc, 0));
    SmallVector<Value> owned;
    if (layout.isReplicated())
      owned = emitOwnership(b, loc, layout, target);
    for (auto [l, first] : llvm::enumerate(firsts)) {
      SmallVector<Value> other(coords[first]);
      other.erase(other.begin() + axis);
      lines.push_back(otherShape.empty() ? i32Const(b, loc, 0)
                                         : linearize(b, loc, other, otherShape));
      Value once =
          owned.empty() ? firstLane : LLVM::AndOp::create(b, loc, firstLane, owned[first]);
      emitIf(b, loc, once, {}, [&, l = l] {
        for (int64_t s = 0; s < slots; ++s)
          for (auto [k, v] : llvm::enumerate(partials[l * slots + s]))
            LLVM::StoreOp::create(b, loc, v, address(buffer, k, lines.back(), s, place.warp));
        return SmallVector<Value>{};
      }, {});
    }
  };
  SmallVector<unsigned> kept;
  auto read = [&](Value buffer) {
    SmallVector<Value> flat;
    for (Value line : lines)
      for (int64_t s = 0; s < slots; ++s) {
        SmallVector<SmallVector<Value>> perWarp;
        for (int64_t w = 0; w < warps; ++w) {
          SmallVector<Value> &tuple = perWarp.emplace_back();
          for (auto [k, type] : llvm::enumerate(types))
            tuple.push_back(LLVM::LoadOp::create(b, loc, type,
                                                 address(buffer, k, line, s, i32Const(b, loc, w))));
        }
        SmallVector<Value> keep = gather(perWarp);
        kept.push_back(keep.size());
        llvm::append_range(flat, keep);
      }
    return flat;
  };
  SmallVector<Value> flat = exchange(b, loc, op, write, read);
  SmallVector<SmallVector<Value>> out;
  auto it = flat.begin();
  for (unsigned n : kept) {
    out.emplace_back(it, it + n);
    it += n;
  }
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
      if (layout.distinctWarps(axis) > 1)
        acc = tiles.acrossWarps(rewriter, loc, op, layout, firsts, acc,
                                [&](ArrayRef<SmallVector<Value>> perWarp) {
                                  SmallVector<Value> value = perWarp.front();
                                  for (const SmallVector<Value> &other : perWarp.drop_front())
                                    value = combine(value, other);
                                  return value;
                                });
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
};

} // namespace

void populateReducePatterns(const LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            RewritePatternSet &patterns) {
  patterns.add<ReduceOpLowering>(converter, tiles);
}

} // namespace weft
