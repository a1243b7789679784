//===- Ops.cpp - weft operations and their verifiers ----------------------===//
#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace weft;

#define GET_OP_CLASSES
#include "weft/Dialect/Weft/IR/WeftOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

/// "expected weak, relaxed or acquire"
static std::string listOrders(ArrayRef<MemOrder> orders) {
  std::string text;
  for (auto [i, order] : llvm::enumerate(orders)) {
    if (i)
      text += i + 1 == orders.size() ? " or " : ", ";
    text += stringifyMemOrder(order);
  }
  return text;
}

static LogicalResult checkOrder(Operation *op, MemOrder order,
                                ArrayRef<MemOrder> allowed, StringRef what) {
  if (llvm::is_contained(allowed, order))
    return success();
  return op->emitOpError() << "order '" << stringifyMemOrder(order)
                           << "' is invalid for " << what << " (expected "
                           << listOrders(allowed) << ")";
}

static LogicalResult checkUnicast(Operation *op, Type ptrLike) {
  if (cast<PtrType>(getElementTypeOrSelf(ptrLike)).getMulticast())
    return op->emitOpError(
        "cannot access a multicast pointer; only the multimem ops can");
  return success();
}

/// An ordered access to memory that `weft.translate` placed on another rank
/// synchronises across GPUs: any scope narrower than sys is a bug. The peer
/// `weft.rank` is this rank, so such an access is local and any scope goes.
static LogicalResult checkPeerScope(Operation *op, Value ptr, MemOrder order,
                                    MemScope scope) {
  auto translate = ptr.getDefiningOp<TranslateOp>();
  if (!translate || order == MemOrder::weak || scope == MemScope::sys ||
      translate.getPeer().getDefiningOp<RankOp>())
    return success();
  return op->emitOpError() << "scope '" << stringifyMemScope(scope)
                           << "' cannot order an access to a peer's memory; "
                              "use 'sys'";
}

static LogicalResult checkOtherNeedsMask(Operation *op, Value mask,
                                         Value other) {
  if (other && !mask)
    return op->emitOpError("'other' is only meaningful with a 'mask'");
  return success();
}

static bool isAtomicWidth(Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  return width == 32 || width == 64;
}

//===----------------------------------------------------------------------===//
// Address arithmetic
//===----------------------------------------------------------------------===//

static bool sameShape(Type a, Type b) {
  auto ta = dyn_cast<RankedTensorType>(a);
  auto tb = dyn_cast<RankedTensorType>(b);
  if (!ta || !tb)
    return !ta && !tb;
  return ta.getShape() == tb.getShape();
}

LogicalResult AddPtrOp::verify() {
  if (!sameShape(getPtr().getType(), getOffset().getType()))
    return emitOpError("offset must have the shape of the pointer");
  return success();
}

LogicalResult TranslateOp::verify() {
  return checkUnicast(*this, getPtr().getType());
}

//===----------------------------------------------------------------------===//
// Memory accesses
//===----------------------------------------------------------------------===//

/// Cache hints and volatility are for weak accesses (an ordered access is
/// an atomic, which goes where its scope says); the modifiers are a load's
/// (`loads`) or a store's.
template <typename Op>
static LogicalResult checkHints(Op op, ArrayRef<CacheModifier> allowed) {
  bool hinted = op.getCache() || op.getEvict() || op.getIsVolatile();
  if (hinted && op.getOrder() != MemOrder::weak)
    return op.emitOpError("cache hints and volatile are for weak accesses");
  if (op.getCache() && !llvm::is_contained(allowed, *op.getCache()))
    return op.emitOpError() << "cache modifier " << stringifyCacheModifier(*op.getCache())
                            << " is not one of this access";
  return success();
}

LogicalResult LoadOp::verify() {
  if (failed(checkUnicast(*this, getPtr().getType())) ||
      failed(checkOrder(*this, getOrder(),
                        {MemOrder::weak, MemOrder::relaxed, MemOrder::acquire},
                        "a load")) ||
      failed(checkOtherNeedsMask(*this, getMask(), getOther())) ||
      failed(checkHints(*this, {CacheModifier::ca, CacheModifier::cg, CacheModifier::cv,
                                CacheModifier::cs})))
    return failure();
  return checkPeerScope(*this, getPtr(), getOrder(), getScope());
}

LogicalResult StoreOp::verify() {
  if (failed(checkUnicast(*this, getPtr().getType())) ||
      failed(checkOrder(*this, getOrder(),
                        {MemOrder::weak, MemOrder::relaxed, MemOrder::release},
                        "a store")) ||
      failed(checkHints(*this, {CacheModifier::wb, CacheModifier::cg, CacheModifier::cs,
                                CacheModifier::wt})))
    return failure();
  return checkPeerScope(*this, getPtr(), getOrder(), getScope());
}

static constexpr MemOrder kRMWOrders[] = {MemOrder::relaxed, MemOrder::acquire,
                                          MemOrder::release, MemOrder::acq_rel};

LogicalResult AtomicRMWOp::verify() {
  if (failed(checkUnicast(*this, getPtr().getType())) ||
      failed(checkOrder(*this, getOrder(), kRMWOrders, "an atomic")))
    return failure();
  Type elem = getElementTypeOrSelf(getValue().getType());
  StringRef kind = stringifyRMWKind(getKind());
  switch (getKind()) {
  case RMWKind::fadd:
    if (!isa<FloatType>(elem))
      return emitOpError() << "'" << kind << "' needs a float element type, got "
                           << elem;
    if (elem.getIntOrFloatBitWidth() < 16 || elem.getIntOrFloatBitWidth() > 64)
      return emitOpError() << "'fadd' is not available for " << elem;
    break;
  case RMWKind::xchg:
    // Pointer values are not exchanged: the inline-PTX RMW has no form for them.
    if (!elem.isIntOrFloat() || !isAtomicWidth(elem))
      return emitOpError()
             << "'xchg' needs a 32- or 64-bit integer or float element, got "
             << elem;
    break;
  default:
    if (!isa<IntegerType>(elem))
      return emitOpError() << "'" << kind
                           << "' needs an integer element type, got " << elem;
    if (!isAtomicWidth(elem))
      return emitOpError() << "'" << kind
                           << "' needs a 32- or 64-bit integer, got " << elem;
  }
  return checkPeerScope(*this, getPtr(), getOrder(), getScope());
}

LogicalResult AtomicCASOp::verify() {
  if (failed(checkUnicast(*this, getPtr().getType())) ||
      failed(checkOrder(*this, getOrder(), kRMWOrders, "an atomic")))
    return failure();
  Type elem = getElementTypeOrSelf(getValue().getType());
  if (!isa<IntegerType>(elem) || !isAtomicWidth(elem))
    return emitOpError() << "compare-and-swap needs a 32- or 64-bit integer, "
                            "got "
                         << elem;
  return checkPeerScope(*this, getPtr(), getOrder(), getScope());
}

LogicalResult FenceOp::verify() {
  return checkOrder(*this, getOrder(),
                    {MemOrder::acquire, MemOrder::release, MemOrder::acq_rel,
                     MemOrder::seq_cst},
                    "a fence");
}

//===----------------------------------------------------------------------===//
// Signals and waits
//===----------------------------------------------------------------------===//

static LogicalResult checkFlagType(Operation *op, Type ptrType) {
  Type elem = cast<PtrType>(ptrType).getPointee();
  if (!isa<IntegerType>(elem) || !isAtomicWidth(elem))
    return op->emitOpError() << "flags are 32- or 64-bit integers, got "
                             << elem;
  return success();
}

LogicalResult SignalOp::verify() {
  if (failed(checkFlagType(*this, getPtr().getType())) ||
      failed(checkOrder(*this, getOrder(),
                        {MemOrder::relaxed, MemOrder::release}, "a signal")))
    return failure();
  if (Value peer = getPeer(); peer && getScope() != MemScope::sys &&
                              !peer.getDefiningOp<RankOp>())
    return emitOpError() << "scope '" << stringifyMemScope(getScope())
                         << "' cannot order a signal to a peer; use 'sys'";
  return checkPeerScope(*this, getPtr(), getOrder(), getScope());
}

//===----------------------------------------------------------------------===//
// Bulk transfers
//===----------------------------------------------------------------------===//

LogicalResult PutOp::verify() {
  bool kind = getSignalKind().has_value(), flag = static_cast<bool>(getSignal()),
       value = static_cast<bool>(getSignalValue());
  if (kind != flag || flag != value)
    return emitOpError("a signal needs its kind, its flag and its value");
  if (!flag)
    return success();
  Type elem = cast<PtrType>(getSignal().getType()).getPointee();
  if (!elem.isInteger(64))
    return emitOpError() << "a put's signal is a 64-bit flag (NVSHMEM's signals "
                            "are), got a pointer to "
                         << elem;
  return success();
}

LogicalResult WaitOp::verify() {
  if (failed(checkFlagType(*this, getPtr().getType())) ||
      failed(checkOrder(*this, getOrder(),
                        {MemOrder::relaxed, MemOrder::acquire}, "a wait")))
    return failure();
  return checkPeerScope(*this, getPtr(), getOrder(), getScope());
}

//===----------------------------------------------------------------------===//
// Multimem
//===----------------------------------------------------------------------===//

/// The value shapes NVLS has (ptxas 13, sm_90): f32 and f32 x2/x4;
/// f16/bf16 in pairs, x1/x2/x4 pairs; i32 and i64 scalars. Vectors are
/// 1-D vectors of the pointee type.
static LogicalResult checkMultimemValue(Operation *op, Type ptrType,
                                        Type value) {
  Type elem = cast<PtrType>(ptrType).getPointee();
  int64_t lanes = 1;
  if (auto vec = dyn_cast<VectorType>(value)) {
    if (vec.getRank() != 1 || vec.isScalable())
      return op->emitOpError("multimem values are scalars or 1-D vectors");
    lanes = vec.getNumElements();
    value = vec.getElementType();
  }
  if (value != elem)
    return op->emitOpError() << "value element type " << value
                             << " differs from the pointee type " << elem;
  bool ok = false;
  if (elem.isF32())
    ok = lanes == 1 || lanes == 2 || lanes == 4;
  else if (elem.isF16() || elem.isBF16())
    ok = lanes == 2 || lanes == 4 || lanes == 8;
  else if (elem.isInteger(32) || elem.isInteger(64))
    ok = lanes == 1;
  if (!ok)
    return op->emitOpError()
           << "multimem has no " << lanes << " x " << elem
           << " access (f32 x1/2/4, f16/bf16 x2/4/8, i32 or i64 x1)";
  return success();
}

/// Float reductions are add, plus min/max on f16/bf16 loads; integers have
/// all five.
static LogicalResult checkMultimemReduce(Operation *op, Type ptrType,
                                         MultimemReduce kind, bool isLoad) {
  Type elem = cast<PtrType>(ptrType).getPointee();
  bool isFloat = isa<FloatType>(elem);
  bool ok = !isFloat || kind == MultimemReduce::add ||
            (isLoad && !elem.isF32() &&
             (kind == MultimemReduce::min || kind == MultimemReduce::max));
  if (!ok)
    return op->emitOpError() << "multimem has no '"
                             << stringifyMultimemReduce(kind) << "' for "
                             << elem;
  return success();
}

static LogicalResult checkMultimemScope(Operation *op, MemOrder order,
                                        MemScope scope) {
  if (order != MemOrder::weak && scope != MemScope::sys)
    return op->emitOpError("multimem reaches other GPUs: an ordered access "
                           "needs scope 'sys'");
  return success();
}

LogicalResult MultimemLdReduceOp::verify() {
  Type ptr = getPtr().getType();
  if (failed(checkOrder(*this, getOrder(),
                        {MemOrder::weak, MemOrder::relaxed, MemOrder::acquire},
                        "a multimem load")) ||
      failed(checkMultimemValue(*this, ptr, getResult().getType())) ||
      failed(checkMultimemReduce(*this, ptr, getKind(), /*isLoad=*/true)))
    return failure();
  return checkMultimemScope(*this, getOrder(), getScope());
}

LogicalResult MultimemStoreOp::verify() {
  if (failed(checkOrder(*this, getOrder(),
                        {MemOrder::weak, MemOrder::relaxed, MemOrder::release},
                        "a multimem store")) ||
      failed(checkMultimemValue(*this, getPtr().getType(),
                                getValue().getType())))
    return failure();
  return checkMultimemScope(*this, getOrder(), getScope());
}

LogicalResult MultimemRedOp::verify() {
  Type ptr = getPtr().getType();
  if (failed(checkOrder(*this, getOrder(),
                        {MemOrder::relaxed, MemOrder::release},
                        "a multimem reduction")) ||
      failed(checkMultimemValue(*this, ptr, getValue().getType())) ||
      failed(checkMultimemReduce(*this, ptr, getKind(), /*isLoad=*/false)))
    return failure();
  return checkMultimemScope(*this, getOrder(), getScope());
}
