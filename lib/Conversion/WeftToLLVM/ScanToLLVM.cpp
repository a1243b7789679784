//===- ScanToLLVM.cpp - weft.scan on distributed tiles --------------------===//
//
// Inclusive scans along an axis of a blocked layout. Along the axis a
// thread holds chunks of consecutive elements (one per repetition of the
// layout), consecutive lanes hold consecutive chunks, and consecutive warps
// consecutive runs of lanes. Every operand's elements combine as tuples,
// with a copy of the combine region per step, always the earlier part on
// the left (the region need only be associative):
//  1. each thread scans its chunks in order;
//  2. the lanes along the axis exchange their chunks' totals by butterfly
//     shuffles, each lane keeping what the lanes before it combine to (its
//     prefix) and what the whole warp does;
//  3. the warps along the axis, through shared memory: each writes its
//     total, and after a barrier each thread combines those of the warps
//     before it;
//  4. each repetition follows the whole of the ones before it.
// Each element then takes its chunk's prefix on its left. The region has
// no identity, so a prefix that may not exist (the first lane's, the first
// warp's) comes with a flag, and a select keeps the element as it is where
// it is false. A reverse scan is the same on mirrored positions. Lanes and
// warps holding replicas scan their copies alike; on the host a program is
// one thread holding whole lines, and only step 1 remains.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

using namespace mlir;

namespace weft {
namespace {

/// A tuple of the operands' elements that may not exist: `valid` is an i1,
/// or null where it always does; no `value` where it never does.
struct Maybe {
  SmallVector<Value> value;
  Value valid;
  bool absent() const { return value.empty(); }
};

/// The combinations a scan's steps need.
struct Scan {
  OpBuilder &b;
  Location loc;
  Combiner combine;

  SmallVector<Value> select(Value cond, ValueRange a, ValueRange b2) {
    SmallVector<Value> out;
    for (auto [x, y] : llvm::zip(a, b2))
      out.push_back(LLVM::SelectOp::create(b, loc, cond, x, y));
    return out;
  }

  /// `first` followed by `second`, either of which may not exist.
  Maybe then(const Maybe &first, const Maybe &second) {
    if (first.absent())
      return second;
    if (second.absent())
      return first;
    SmallVector<Value> both = combine(first.value, second.value);
    if (!first.valid && !second.valid)
      return {both, Value()};
    if (!first.valid)
      return {select(second.valid, both, first.value), Value()};
    if (!second.valid)
      return {select(first.valid, both, second.value), Value()};
    SmallVector<Value> one = select(first.valid, first.value, second.value);
    return {select(LLVM::AndOp::create(b, loc, first.valid, second.valid), both, one),
            LLVM::OrOp::create(b, loc, first.valid, second.valid)};
  }

  /// The butterfly: at step d a lane meets the one whose place differs in
  /// bit d, which holds the total of the block of d lanes beside its own;
  /// the lower block's comes first. Returns this lane's prefix; `total`
  /// becomes the warp's.
  Maybe acrossLanes(const TargetInfo &target, Value laneAlong, unsigned laneStride,
                    int64_t lanes, SmallVector<Value> &total) {
    Maybe prefix;
    for (int64_t d = 1; d < lanes; d *= 2) {
      SmallVector<Value> other;
      for (Value v : total)
        other.push_back(shuffleXor(b, loc, target, v, d * laneStride));
      Value upper = LLVM::ICmpOp::create(
          b, loc, LLVM::ICmpPredicate::ne,
          LLVM::AndOp::create(b, loc, laneAlong, i32Const(b, loc, d)), i32Const(b, loc, 0));
      total = select(upper, combine(other, total), combine(total, other));
      Maybe before = then(Maybe{other, Value()}, prefix);
      prefix = prefix.absent()
                   ? Maybe{other, upper}
                   : Maybe{select(upper, before.value, prefix.value),
                           LLVM::OrOp::create(b, loc, upper, prefix.valid)};
    }
    return prefix;
  }
};

/// A line of the tile along the axis, as a thread holds it: the struct
/// indices of its elements by repetition and place in the chunk (in scan
/// order); per repetition the chunk's total (then the warp's, then the
/// program's) and what comes before the chunk.
struct Line {
  unsigned first;
  SmallVector<SmallVector<unsigned>> chunks;
  SmallVector<SmallVector<Value>> totals;
  SmallVector<Maybe> prefixes;
};

struct ScanOpLowering : TilePattern<ScanOp> {
  using TilePattern::TilePattern;

  LogicalResult matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getSrcType();
    if (!isDistributed(type))
      return failure();
    TileLayout layout(type);
    if (layout.getSliceDim() >= 0)
      return op.emitOpError("scans tiles of a blocked layout (weft-assign-layouts gives "
                            "its operands one)");
    Location loc = op.getLoc();
    const TargetInfo &target = tiles.target;
    unsigned axis = op.getAxis();
    bool reverse = op.getReverse();
    BlockedEncodingAttr blocked = layout.getBlocked();
    unsigned chunk = layout.chunkSize(axis), reps = layout.repetitions(axis);
    bool threaded = !target.singleThreadPrograms();
    int64_t lanes = threaded ? layout.distinctLanes(axis) : 1;
    int64_t warps = threaded ? layout.distinctWarps(axis) : 1;

    Scan scan{rewriter, loc, Combiner(rewriter, op.getCombine().front())};
    SmallVector<SmallVector<Value>> elements;
    for (Value src : adaptor.getSrcs())
      elements.push_back(unpackTile(rewriter, loc, src));
    auto tupleAt = [&](unsigned i) {
      SmallVector<Value> tuple;
      for (auto &operand : elements)
        tuple.push_back(operand[i]);
      return tuple;
    };
    // The thread's place along the axis, mirrored for a reverse scan.
    Value laneAlong, warpAlong;
    unsigned laneStride = 1;
    if (threaded) {
      laneStride = strideOf(blocked.getThreadsPerWarp(), blocked.getOrder(), axis);
      PlaceAlong place = placeAlong(rewriter, loc, layout, axis, target);
      laneAlong = place.lane;
      warpAlong = place.warp;
      if (reverse) {
        laneAlong = LLVM::SubOp::create(rewriter, loc, i32Const(rewriter, loc, lanes - 1),
                                        laneAlong);
        warpAlong = LLVM::SubOp::create(rewriter, loc, i32Const(rewriter, loc, warps - 1),
                                        warpAlong);
      }
    }

    // 1. Each chunk of each line, in scan order.
    SmallVector<Line> lines;
    for (unsigned i = 0; i < layout.numElements(); ++i) {
      SmallVector<unsigned> multi = layout.multiIndex(i);
      if (multi[axis] != 0)
        continue;
      Line line{i, {}, {}, {}};
      for (unsigned r = 0; r < reps; ++r) {
        SmallVector<unsigned> positions;
        for (unsigned s = 0; s < chunk; ++s) {
          multi[axis] = (reverse ? reps - 1 - r : r) * chunk + (reverse ? chunk - 1 - s : s);
          positions.push_back(layout.linearIndex(multi));
        }
        SmallVector<Value> acc = tupleAt(positions.front());
        for (unsigned at : ArrayRef(positions).drop_front()) {
          acc = scan.combine(acc, tupleAt(at));
          for (auto [k, value] : llvm::enumerate(acc))
            elements[k][at] = value;
        }
        line.chunks.push_back(std::move(positions));
        line.totals.push_back(acc);
      }
      lines.push_back(std::move(line));
    }

    // 2. The lanes: per chunk, the lanes' prefix; the chunk totals become
    // the warp's.
    for (Line &line : lines)
      for (SmallVector<Value> &total : line.totals)
        line.prefixes.push_back(lanes > 1 ? scan.acrossLanes(target, laneAlong, laneStride,
                                                             lanes, total)
                                          : Maybe());

    // 3. The warps: the warps' prefix before the lanes'; the totals become
    // the program's.
    if (warps > 1) {
      SmallVector<unsigned> firsts;
      SmallVector<SmallVector<Value>> totals;
      for (Line &line : lines) {
        firsts.push_back(line.first);
        llvm::append_range(totals, line.totals);
      }
      // Per slot, what comes before this warp, then the program's total.
      auto gather = [&](ArrayRef<SmallVector<Value>> perWarp) {
        SmallVector<SmallVector<Value>> running;
        for (int64_t w = 0; w < warps; ++w) {
          const SmallVector<Value> &total = perWarp[reverse ? warps - 1 - w : w];
          running.push_back(running.empty() ? total : scan.combine(running.back(), total));
        }
        SmallVector<Value> kept = running.front();
        for (int64_t w = 2; w < warps; ++w)
          kept = scan.select(LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq,
                                                  warpAlong, i32Const(rewriter, loc, w)),
                             running[w - 1], kept);
        llvm::append_range(kept, running.back());
        return kept;
      };
      SmallVector<SmallVector<Value>> kept =
          tiles.acrossWarps(rewriter, loc, op, layout, firsts, totals, gather);
      Value later = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::ne, warpAlong,
                                         i32Const(rewriter, loc, 0));
      unsigned n = elements.size();
      auto slot = kept.begin();
      for (Line &line : lines)
        for (unsigned r = 0; r < reps; ++r, ++slot) {
          Maybe before{SmallVector<Value>(slot->begin(), slot->begin() + n), later};
          line.totals[r].assign(slot->begin() + n, slot->end());
          line.prefixes[r] = scan.then(before, line.prefixes[r]);
        }
    }

    // 4. The repetitions, and each element after its prefix.
    for (Line &line : lines) {
      Maybe carry;
      for (unsigned r = 0; r < reps; ++r) {
        Maybe prefix = scan.then(carry, line.prefixes[r]);
        carry = scan.then(carry, Maybe{line.totals[r], Value()});
        if (prefix.absent())
          continue;
        for (unsigned at : line.chunks[r]) {
          SmallVector<Value> value = scan.then(prefix, Maybe{tupleAt(at), Value()}).value;
          for (auto [k, v] : llvm::enumerate(value))
            elements[k][at] = v;
        }
      }
    }

    SmallVector<Value> results;
    for (auto [k, operand] : llvm::enumerate(elements))
      results.push_back(packTile(rewriter, loc,
                                 getTypeConverter()->convertType(op.getResult(k).getType()),
                                 operand));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateScanPatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                          RewritePatternSet &patterns) {
  patterns.add<ScanOpLowering>(converter, tiles);
}

} // namespace weft
