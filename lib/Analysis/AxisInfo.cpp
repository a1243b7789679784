//===- AxisInfo.cpp - contiguity, divisibility, constancy -----------------===//
#include "weft/Analysis/AxisInfo.h"

#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include <numeric>

using namespace mlir;

namespace weft {
namespace {

/// Divisibility is capped here: larger powers of two say nothing more about
/// alignment, and products stay clear of overflow.
constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

int64_t powerOfTwoDividing(int64_t value) {
  if (value == 0)
    return kMaxDivisibility;
  uint64_t magnitude = value < 0 ? -static_cast<uint64_t>(value) : value;
  return std::min<int64_t>(kMaxDivisibility, magnitude & -magnitude);
}

unsigned rankOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? tensor.getRank() : 1;
}

/// Bytes of the element a pointer (tile) points at; 1 for non-pointers, so
/// that integer offsets scale to byte offsets only for weft.addptr.
int64_t pointeeBytes(Type type) {
  auto ptr = dyn_cast<PtrType>(getElementTypeOrSelf(type));
  if (!ptr)
    return 1;
  Type pointee = ptr.getPointee();
  return isa<PtrType>(pointee)
             ? 8
             : std::max<int64_t>(1, pointee.getIntOrFloatBitWidth() / 8);
}

/// `lhs + rhs * scale` (or `lhs - rhs`): contiguous runs survive adding a
/// value constant over them.
AxisInfo add(const AxisInfo &lhs, const AxisInfo &rhs, int64_t scale,
             bool subtract) {
  AxisInfo out;
  for (unsigned d = 0; d < lhs.getRank(); ++d) {
    int64_t fromLhs = std::gcd(lhs.contiguity[d], rhs.constancy[d]);
    int64_t fromRhs =
        subtract ? 1 : std::gcd(lhs.constancy[d], rhs.contiguity[d]);
    int64_t rhsDiv = std::min(kMaxDivisibility,
                              rhs.elementDivisibility(d) * scale);
    int64_t div = std::gcd(lhs.elementDivisibility(d), rhsDiv);
    if (fromLhs > 1 && fromLhs >= fromRhs)
      div = std::gcd(lhs.divisibility[d], rhsDiv);
    else if (fromRhs > 1)
      div = std::gcd(lhs.elementDivisibility(d),
                     std::min(kMaxDivisibility, rhs.divisibility[d] * scale));
    out.contiguity.push_back(std::max(fromLhs, fromRhs));
    out.divisibility.push_back(div);
    out.constancy.push_back(std::gcd(lhs.constancy[d], rhs.constancy[d]));
  }
  return out;
}

AxisInfo multiply(const AxisInfo &lhs, const AxisInfo &rhs) {
  AxisInfo out;
  for (unsigned d = 0; d < lhs.getRank(); ++d) {
    out.contiguity.push_back(1);
    out.divisibility.push_back(std::min(
        kMaxDivisibility,
        lhs.elementDivisibility(d) * rhs.elementDivisibility(d)));
    out.constancy.push_back(std::gcd(lhs.constancy[d], rhs.constancy[d]));
  }
  return out;
}

/// Values that are equal wherever all operands are (compares, logic).
AxisInfo constancyOnly(ArrayRef<AxisInfo> operands, unsigned rank) {
  AxisInfo out = AxisInfo::unknown(rank);
  for (unsigned d = 0; d < rank; ++d) {
    int64_t constancy = 0;
    for (const AxisInfo &info : operands)
      constancy = std::gcd(constancy, info.constancy[d]);
    out.constancy[d] = std::max<int64_t>(1, constancy);
  }
  return out;
}

/// One of two values per element (a select, an scf.if's results), the
/// choice constant over runs of `choice` (0: it never changes): what holds
/// of both holds of the result. Contiguous runs survive only where both
/// have the same and the choice spans them.
AxisInfo either(const AxisInfo &lhs, const AxisInfo &rhs, ArrayRef<int64_t> choice) {
  AxisInfo out;
  for (unsigned d = 0; d < lhs.getRank(); ++d) {
    int64_t runs = lhs.contiguity[d];
    bool keepRuns = runs > 1 && runs == rhs.contiguity[d] && choice[d] % runs == 0;
    out.contiguity.push_back(keepRuns ? runs : 1);
    out.divisibility.push_back(
        keepRuns ? std::gcd(lhs.divisibility[d], rhs.divisibility[d])
                 : std::gcd(lhs.elementDivisibility(d), rhs.elementDivisibility(d)));
    out.constancy.push_back(
        std::gcd(std::gcd(lhs.constancy[d], rhs.constancy[d]), choice[d]));
  }
  return out;
}

/// The constant power of two's exponent that v is (a scalar or splat
/// constant), if it is one: `//` and `>>` by it are exact on its multiples.
std::optional<unsigned> constantLog2(Value v, bool isShift) {
  APInt value;
  if (!matchPattern(v, m_ConstantInt(&value)) || value.isNegative())
    return std::nullopt;
  if (isShift)
    return value.ult(63) ? std::optional<unsigned>(value.getZExtValue()) : std::nullopt;
  return value.isPowerOf2() ? std::optional<unsigned>(value.logBase2()) : std::nullopt;
}

/// x / 2^s or x >> s, elementwise: a multiple of 2^(k+s) gives a multiple
/// of 2^k (exact division), anything else an unknown; constant where x is.
/// The cap shifts down too: it stands for any multiple of 2^30 (0
/// included), whose quotient is only sure to be one of 2^(30-s).
AxisInfo shiftDown(const AxisInfo &lhs, const AxisInfo &rhs, std::optional<unsigned> s,
                   unsigned rank) {
  AxisInfo out = constancyOnly({lhs, rhs}, rank);
  for (unsigned d = 0; d < rank; ++d) {
    int64_t div = lhs.elementDivisibility(d);
    if (s && *s < 63 && div > (int64_t(1) << *s))
      out.divisibility[d] = div >> *s;
  }
  return out;
}

AxisInfo constantInfo(Attribute value, Type type) {
  if (auto integer = dyn_cast<IntegerAttr>(value))
    return {{1}, {powerOfTwoDividing(integer.getInt())}, {1}};
  auto dense = dyn_cast<DenseIntElementsAttr>(value);
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!dense || !tensor || !dense.isSplat())
    return AxisInfo::unknown(rankOf(type));
  int64_t div = powerOfTwoDividing(dense.getSplatValue<APInt>().getSExtValue());
  AxisInfo out;
  for (int64_t size : tensor.getShape()) {
    out.contiguity.push_back(1);
    out.divisibility.push_back(div);
    out.constancy.push_back(size);
  }
  return out;
}

} // namespace

AxisInfo AxisInfo::unknown(unsigned rank) {
  return {SmallVector<int64_t>(rank, 1), SmallVector<int64_t>(rank, 1),
          SmallVector<int64_t>(rank, 1)};
}

int64_t AxisInfo::elementDivisibility(unsigned dim) const {
  return contiguity[dim] > 1 ? 1 : divisibility[dim];
}

AxisInfoAnalysis::AxisInfoAnalysis(Operation *root) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<FunctionOpInterface>(op))
      visitArguments(op);
    visit(op);
  });
}

AxisInfo AxisInfoAnalysis::get(Value value) const {
  auto it = infos.find(value);
  return it != infos.end() ? it->second : AxisInfo::unknown(rankOf(value.getType()));
}

void AxisInfoAnalysis::visitArguments(Operation *function) {
  auto func = cast<FunctionOpInterface>(function);
  if (func.isExternal())
    return;
  bool isKernel = function->hasAttr(kKernelAttrName);
  for (BlockArgument arg : func.getArguments()) {
    int64_t div = 1;
    if (auto attr = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                       kDivisibilityAttrName))
      div = powerOfTwoDividing(attr.getInt());
    else if (isKernel && isa<PtrType>(arg.getType()))
      div = kDefaultPointerDivisibility;
    infos[arg] = {{1}, {div}, {1}};
  }
}

void AxisInfoAnalysis::visit(Operation *op) {
  // An induction variable takes lb, lb + step, ...: every value is a
  // multiple of what divides both (the K offsets of a tiled loop).
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    int64_t div = std::gcd(get(loop.getLowerBound()).divisibility[0],
                           get(loop.getStep()).divisibility[0]);
    infos[loop.getInductionVar()] = {{1}, {div}, {1}};
  }
  // An scf.if's results, once the else branch's yield is reached (both
  // branches have been visited by then in this pre-order walk).
  if (auto yield = dyn_cast<scf::YieldOp>(op)) {
    auto branch = dyn_cast<scf::IfOp>(op->getParentOp());
    if (branch && yield->getParentRegion() == &branch.getElseRegion()) {
      Operation *then = branch.thenYield();
      for (auto [i, result] : llvm::enumerate(branch.getResults())) {
        unsigned rank = rankOf(result.getType());
        infos[result] = either(get(then->getOperand(i)), get(yield.getOperand(i)),
                               SmallVector<int64_t>(rank, 0));
      }
    }
    return;
  }
  if (op->getNumResults() != 1)
    return;
  Value result = op->getResult(0);
  unsigned rank = rankOf(result.getType());
  auto info = llvm::TypeSwitch<Operation *, AxisInfo>(op)
      .Case([&](arith::ConstantOp c) {
        return constantInfo(c.getValue(), c.getType());
      })
      .Case([&](MakeRangeOp r) {
        return AxisInfo{{r.getEnd() - r.getStart()},
                        {powerOfTwoDividing(r.getStart())}, {1}};
      })
      .Case([&](SplatOp s) {
        AxisInfo out;
        int64_t div = get(s.getSrc()).divisibility[0];
        for (int64_t size : s.getType().getShape()) {
          out.contiguity.push_back(1);
          out.divisibility.push_back(div);
          out.constancy.push_back(size);
        }
        return out;
      })
      .Case([&](arith::AddIOp a) {
        return add(get(a.getLhs()), get(a.getRhs()), 1, false);
      })
      .Case([&](arith::SubIOp s) {
        return add(get(s.getLhs()), get(s.getRhs()), 1, true);
      })
      .Case([&](AddPtrOp a) {
        return add(get(a.getPtr()), get(a.getOffset()),
                   pointeeBytes(a.getPtr().getType()), false);
      })
      .Case([&](arith::MulIOp m) {
        return multiply(get(m.getLhs()), get(m.getRhs()));
      })
      .Case<arith::DivSIOp, arith::DivUIOp>([&](Operation *o) {
        return shiftDown(get(o->getOperand(0)), get(o->getOperand(1)),
                         constantLog2(o->getOperand(1), false), rank);
      })
      .Case<arith::ShRSIOp, arith::ShRUIOp>([&](Operation *o) {
        return shiftDown(get(o->getOperand(0)), get(o->getOperand(1)),
                         constantLog2(o->getOperand(1), true), rank);
      })
      .Case([&](arith::ShLIOp o) {
        AxisInfo lhs = get(o.getLhs()), out = constancyOnly({lhs, get(o.getRhs())}, rank);
        std::optional<unsigned> s = constantLog2(o.getRhs(), true);
        for (unsigned d = 0; d < rank; ++d)
          out.divisibility[d] = std::min(kMaxDivisibility,
                                         lhs.elementDivisibility(d) << (s ? std::min(*s, 31u) : 0));
        return out;
      })
      .Case<arith::RemSIOp, arith::RemUIOp>([&](Operation *o) {
        // x - (x / y) * y: what divides both divides it.
        AxisInfo lhs = get(o->getOperand(0)), rhs = get(o->getOperand(1));
        AxisInfo out = constancyOnly({lhs, rhs}, rank);
        for (unsigned d = 0; d < rank; ++d)
          out.divisibility[d] = std::gcd(lhs.elementDivisibility(d), rhs.elementDivisibility(d));
        return out;
      })
      .Case<arith::MinSIOp, arith::MaxSIOp, arith::MinUIOp, arith::MaxUIOp>(
          [&](Operation *o) {
            // One of the operands, element by element: what divides both
            // divides it.
            AxisInfo out = constancyOnly({get(o->getOperand(0)), get(o->getOperand(1))}, rank);
            for (unsigned d = 0; d < rank; ++d)
              out.divisibility[d] =
                  std::gcd(get(o->getOperand(0)).elementDivisibility(d),
                           get(o->getOperand(1)).elementDivisibility(d));
            return out;
          })
      .Case<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp,
            arith::IndexCastOp, ConvertLayoutOp>(
          [&](Operation *cast) { return get(cast->getOperand(0)); })
      .Case([&](AxisHintOp h) {
        // The author's word replaces what the analysis would prove.
        AxisInfo out = get(h.getSrc());
        auto take = [](SmallVector<int64_t> &field, std::optional<ArrayRef<int64_t>> hint) {
          if (hint)
            field.assign(hint->begin(), hint->end());
        };
        take(out.divisibility, h.getDivisibility());
        take(out.contiguity, h.getContiguity());
        take(out.constancy, h.getConstancy());
        return out;
      })
      .Case([&](TransOp t) {
        AxisInfo in = get(t.getSrc()), out;
        for (int32_t from : t.getOrder()) {
          out.contiguity.push_back(in.contiguity[from]);
          out.divisibility.push_back(in.divisibility[from]);
          out.constancy.push_back(in.constancy[from]);
        }
        return out;
      })
      .Case([&](TranslateOp t) {
        // Heap bases are page-aligned: a peer's copy keeps the alignment.
        return get(t.getPtr());
      })
      // What the runtime's descriptor encoder checks (abi.h,
      // weft_tensor_desc): a 16-byte aligned base and, but for the last
      // (1), strides spanning multiples of 16 bytes.
      .Case([&](DescBaseOp d) { return AxisInfo{{1}, {16}, {1}}; })
      .Case([&](DescDimOp d) {
        auto arg = dyn_cast<BlockArgument>(d.getDesc());
        auto func = arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
                        : FunctionOpInterface();
        auto divs = func ? func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                                     kShapeDivisibilityAttrName)
                         : DenseI64ArrayAttr();
        int64_t div = divs && d.getDim() < divs.size() ? powerOfTwoDividing(divs[d.getDim()]) : 1;
        return AxisInfo{{1}, {div}, {1}};
      })
      .Case([&](DescStrideOp d) {
        TensorDescType desc = d.getDesc().getType();
        if (d.getDim() + 1 == desc.getRank())
          return AxisInfo{{1}, {1}, {1}};
        int64_t elementBytes = desc.getElementType().getIntOrFloatBitWidth() / 8;
        return AxisInfo{{1}, {std::max<int64_t>(1, 16 / elementBytes)}, {1}};
      })
      .Case([&](BroadcastOp b) {
        AxisInfo out = get(b.getSrc());
        auto from = cast<RankedTensorType>(b.getSrc().getType());
        auto to = cast<RankedTensorType>(b.getType());
        for (unsigned d = 0; d < out.getRank(); ++d)
          if (from.getDimSize(d) == 1 && to.getDimSize(d) != 1) {
            out.divisibility[d] = out.elementDivisibility(d);
            out.contiguity[d] = 1;
            out.constancy[d] = to.getDimSize(d);
          }
        return out;
      })
      .Case([&](ExpandDimsOp e) {
        AxisInfo out = get(e.getSrc());
        int64_t div = kMaxDivisibility;
        for (unsigned d = 0; d < out.getRank(); ++d)
          div = std::min(div, out.elementDivisibility(d));
        unsigned axis = e.getAxis();
        out.contiguity.insert(out.contiguity.begin() + axis, 1);
        out.divisibility.insert(out.divisibility.begin() + axis, div);
        out.constancy.insert(out.constancy.begin() + axis, 1);
        return out;
      })
      .Case([&](arith::CmpIOp c) {
        AxisInfo lhs = get(c.getLhs()), rhs = get(c.getRhs());
        AxisInfo out = constancyOnly({lhs, rhs}, rank);
        // x < y over a run of g consecutive x from a multiple of g, y
        // constant there and a multiple of g: all of the run or none of it
        // (likewise x >= y, and y > x, y <= x). Masks such as
        // `k0 + arange(BK) < K` are whole per vector.
        using P = arith::CmpIPredicate;
        P pred = c.getPredicate();
        bool lhsRuns = llvm::is_contained({P::slt, P::ult, P::sge, P::uge}, pred);
        bool rhsRuns = llvm::is_contained({P::sgt, P::ugt, P::sle, P::ule}, pred);
        if (lhsRuns || rhsRuns) {
          const AxisInfo &runs = lhsRuns ? lhs : rhs, &bound = lhsRuns ? rhs : lhs;
          for (unsigned d = 0; d < rank; ++d) {
            int64_t g = std::gcd(std::gcd(runs.contiguity[d], runs.divisibility[d]),
                                 bound.elementDivisibility(d));
            if (bound.constancy[d] % g == 0)
              out.constancy[d] = std::max(out.constancy[d], g);
          }
        }
        return out;
      })
      .Case([&](arith::SelectOp s) {
        SmallVector<int64_t> choice(rank, 0);     // a scalar condition: one choice
        if (isa<RankedTensorType>(s.getCondition().getType()))
          choice = get(s.getCondition()).constancy;
        return either(get(s.getTrueValue()), get(s.getFalseValue()), choice);
      })
      .Case<arith::AndIOp, arith::OrIOp>([&](Operation *o) {
        SmallVector<AxisInfo> operands;
        for (Value v : o->getOperands())
          if (isa<RankedTensorType>(v.getType()))
            operands.push_back(get(v));
        return constancyOnly(operands, rank);
      })
      .Default([&](Operation *) { return AxisInfo::unknown(rank); });
  if (info.getRank() == rank)
    infos[result] = std::move(info);
}

} // namespace weft
