//===- Lowering.cpp - helpers that give weft ops their program semantics --===//
#include "Lowering.h"

#include "KernelContext.h"
#include "LoweringUtils.h"
#include "TargetInfos.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace weft {

HiddenArgs Lowering::hiddenArgs(Operation *op) const {
  auto func = op->getParentOfType<FunctionOpInterface>();
  Block &entry = func.getFunctionBody().front();
  unsigned numHidden = target.hiddenArgTypes(op->getContext()).size();
  unsigned first = entry.getNumArguments() - numHidden;
  HiddenArgs hidden;
  hidden.context = entry.getArgument(first);
  if (numHidden > 1)
    hidden.program = entry.getArgument(first + 1);
  return hidden;
}

Value Lowering::contextField(OpBuilder &b, Location loc, Operation *op,
                             size_t offset, Type type) const {
  return loadParamField(b, loc, hiddenArgs(op).context, offset, type);
}

namespace {

/// The warps that run the code `b` inserts: the program's (within a
/// weft.warp_specialize's default region or not), or the producer warps.
/// Joins among the program's warps in the default region leave out the
/// producer warps, which run their own region; before the op, all join.
struct Warps {
  int64_t firstThread = 0, threads = 0; // threads: 0 = every thread
  unsigned barrier = 0;                 // the hardware barrier they join at
};

Warps warpsAt(OpBuilder &b, const TargetInfo &target) {
  Region *region = b.getInsertionBlock()->getParent();
  auto split = region->getParentOfType<WarpSpecializeOp>();
  if (!split)
    return {};
  int64_t own = target.getCompileTarget().threadsPerProgram();
  if (split.getDefaultRegion().isAncestor(region))
    return {0, own, 1};
  return {own, target.producerThreads(split), 2};
}

} // namespace

void Lowering::joinProgram(OpBuilder &b, Location loc) const {
  if (target.singleThreadPrograms())
    return;
  Warps warps = warpsAt(b, target);
  target.programBarrier(b, loc, warps.threads, warps.barrier);
}

void Lowering::fenceProgram(OpBuilder &b, Location loc, MemOrder order,
                            MemScope scope) const {
  if (order != MemOrder::acquire)
    joinProgram(b, loc);
  target.fence(b, loc, order, scope);
  if (order != MemOrder::release)
    joinProgram(b, loc);
}

/// One broadcast slot in shared memory (LDS) per module; uses are separated
/// by program barriers, so one slot serves every op.
static Value broadcastSlot(OpBuilder &b, Location loc, Operation *op) {
  static_assert(kBroadcastSlotBytes == sizeof(int64_t));
  auto slotType = LLVM::LLVMArrayType::get(b.getI64Type(), 1);
  return addressOf(b, loc,
                   sharedGlobal(b, loc, op, "__weft_broadcast", slotType,
                                /*alignment=*/8));
}

SmallVector<Value>
Lowering::oncePerProgram(OpBuilder &b, Location loc, TypeRange resultTypes,
                         bool releaseBefore, bool joinAfter,
                         function_ref<SmallVector<Value>()> body) const {
  if (target.singleThreadPrograms())
    return body();
  assert(resultTypes.size() <= 1 && "one broadcast slot");
  Operation *anchor = b.getInsertionBlock()->getParentOp();
  if (releaseBefore)
    joinProgram(b, loc);
  Value isLeader = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                        target.threadId(b, loc),
                                        i32Const(b, loc, warpsAt(b, target).firstThread));
  Value slot = resultTypes.empty() ? Value() : broadcastSlot(b, loc, anchor);
  emitIf(b, loc, isLeader, {}, [&] {
    SmallVector<Value> results = body();
    if (slot)
      LLVM::StoreOp::create(b, loc, results.front(), slot);
    return SmallVector<Value>{};
  }, {});
  if (!slot) {
    if (joinAfter)
      joinProgram(b, loc);
    return {};
  }
  joinProgram(b, loc);
  Value result = LLVM::LoadOp::create(b, loc, resultTypes.front(), slot);
  // The next broadcast may only overwrite the slot once everyone read it.
  joinProgram(b, loc);
  return {result};
}

void Lowering::forEach(OpBuilder &b, Location loc, Value upper,
                       function_ref<void(Value)> body) const {
  forEach(b, loc, upper, ValueRange{}, [&](Value iv, ValueRange) {
    body(iv);
    return SmallVector<Value>{};
  });
}

SmallVector<Value> Lowering::forEach(
    OpBuilder &b, Location loc, Value upper, ValueRange inits,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) const {
  Type index = upper.getType();
  auto constant = [&](int64_t v) -> Value { return LLVM::ConstantOp::create(b, loc, index, v); };
  SmallVector<Type> carriedTypes(inits.getTypes());
  SmallVector<Location> carriedLocs(inits.size(), loc);
  Block *before = b.getInsertionBlock();
  Block *exit = before->splitBlock(b.getInsertionPoint());
  exit->addArguments(carriedTypes, carriedLocs);
  SmallVector<Type> headerTypes{index};
  llvm::append_range(headerTypes, carriedTypes);
  SmallVector<Location> headerLocs(headerTypes.size(), loc);
  Block *header = b.createBlock(exit, headerTypes, headerLocs);
  Block *bodyBlock = b.createBlock(exit);

  b.setInsertionPointToEnd(before);
  SmallVector<Value> entryArgs{constant(0)};
  llvm::append_range(entryArgs, inits);
  LLVM::BrOp::create(b, loc, entryArgs, header);

  b.setInsertionPointToEnd(header);
  Value iv = header->getArgument(0);
  ValueRange carried = header->getArguments().drop_front();
  Value more = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, iv, upper);
  LLVM::CondBrOp::create(b, loc, more, bodyBlock, ValueRange{}, exit, carried);

  b.setInsertionPointToEnd(bodyBlock);
  SmallVector<Value> next{LLVM::AddOp::create(b, loc, iv, constant(1))};
  llvm::append_range(next, body(iv, carried));
  LLVM::BrOp::create(b, loc, next, header);

  b.setInsertionPointToStart(exit);
  return SmallVector<Value>(exit->getArguments());
}

Value Lowering::translate(OpBuilder &b, Location loc, Operation *op, Value ptr,
                          Value peer) const {
  Value ctx = hiddenArgs(op).context;
  Type i64 = b.getI64Type();
  Value rank = loadParamField(b, loc, ctx, offsetof(weft_kernel_context, rank),
                              b.getI32Type());
  Value self = loadHeapBase(b, loc, ctx, rank);
  Value addr = LLVM::PtrToIntOp::create(b, loc, i64, ptr);
  if (target.getOptions().debug) {
    // A peer that is no rank, a pointer outside this rank's heap or a peer
    // whose heap is not mapped here (another node's) would silently reach
    // some other memory: stop the program there instead.
    checkRange(b, loc, op, ptr, /*nbytes=*/{}, peer);
    stopIf(b, loc, op, LLVM::XOrOp::create(b, loc, inNode(b, loc, op, peer),
                                           LLVM::ConstantOp::create(b, loc, b.getBoolAttr(true))),
           i32Const(b, loc, WEFT_DEBUG_OFF_NODE), peer, addr, "");
  }
  Value other = loadHeapBase(b, loc, ctx, peer);
  Value moved = LLVM::AddOp::create(
      b, loc, LLVM::SubOp::create(b, loc, addr, self), other);
  return LLVM::IntToPtrOp::create(b, loc, ptr.getType(), moved);
}

Value Lowering::inNode(OpBuilder &b, Location loc, Operation *op, Value peer) const {
  Value base = loadHeapBase(b, loc, hiddenArgs(op).context, peer);
  return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, base, i64Const(b, loc, 0));
}

void Lowering::copyBytes(OpBuilder &b, Location loc, Value dst, Value src,
                         Value nbytes) const {
  if (target.singleThreadPrograms()) {
    LLVM::MemcpyOp::create(b, loc, dst, src, nbytes, /*isVolatile=*/false);
    return;
  }
  // Thread t copies units t, t + T, ... of 16 bytes when the addresses and
  // the size allow, else of one byte.
  Type i64 = b.getI64Type();
  Value ored = LLVM::OrOp::create(
      b, loc, LLVM::OrOp::create(b, loc, LLVM::PtrToIntOp::create(b, loc, i64, dst),
                                 LLVM::PtrToIntOp::create(b, loc, i64, src)),
      nbytes);
  Value aligned = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                       LLVM::AndOp::create(b, loc, ored, i64Const(b, loc, 15)),
                                       i64Const(b, loc, 0));
  int64_t threads = target.getCompileTarget().threadsPerProgram();
  Value tid = LLVM::ZExtOp::create(b, loc, i64, target.threadId(b, loc));
  auto copyUnits = [&](Type unit, int64_t size) {
    Value units = LLVM::UDivOp::create(b, loc, nbytes, i64Const(b, loc, size));
    Value rounds = LLVM::UDivOp::create(
        b, loc, LLVM::AddOp::create(b, loc, units, i64Const(b, loc, threads - 1)),
        i64Const(b, loc, threads));
    forEach(b, loc, rounds, [&](Value round) {
      Value i = LLVM::AddOp::create(b, loc, LLVM::MulOp::create(b, loc, round, i64Const(b, loc, threads)),
                                    tid);
      Value mine = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ult, i, units);
      emitIf(b, loc, mine, {}, [&] {
        Value v = LLVM::LoadOp::create(b, loc, unit, elementPtr(b, loc, src, unit, i), size);
        LLVM::StoreOp::create(b, loc, v, elementPtr(b, loc, dst, unit, i), size);
        return SmallVector<Value>{};
      }, {});
    });
    return SmallVector<Value>{};
  };
  emitIfElse(b, loc, aligned, {},
             [&] { return copyUnits(VectorType::get({4}, b.getI32Type()), 16); },
             [&] { return copyUnits(b.getI8Type(), 1); });
}

void Lowering::checkRange(OpBuilder &b, Location loc, Operation *op, Value ptr,
                          Value nbytes, Value peer) const {
  if (!target.getOptions().debug)
    return;
  Value ctx = hiddenArgs(op).context;
  Type i64 = b.getI64Type();
  Value rank = loadParamField(b, loc, ctx, offsetof(weft_kernel_context, rank), b.getI32Type());
  Value numRanks = loadParamField(b, loc, ctx, offsetof(weft_kernel_context, num_ranks),
                                  b.getI32Type());
  Value heapSize = loadParamField(b, loc, ctx, offsetof(weft_kernel_context, heap_size), i64);
  Value badPeer = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge, peer, numRanks);
  Value addr = LLVM::PtrToIntOp::create(b, loc, i64, ptr);
  Value offset = LLVM::SubOp::create(b, loc, addr, loadHeapBase(b, loc, ctx, rank));
  // offset >= size, or nbytes > size - offset: no sum that could wrap.
  Value outside = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge, offset, heapSize);
  if (nbytes)
    outside = LLVM::OrOp::create(
        b, loc, outside,
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt, nbytes,
                             LLVM::SubOp::create(b, loc, heapSize, offset)));
  stopUnlessValid(b, loc, op, badPeer, outside, peer, addr);
}

void Lowering::stopOnStatus(OpBuilder &b, Location loc, Operation *op, Value status,
                            Value peer, Value ptr) const {
  if (!status)
    return;
  Value failed = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, status,
                                      i32Const(b, loc, WEFT_DEBUG_OK));
  stopIf(b, loc, op, failed, status, peer,
         LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), ptr), "");
}

void Lowering::quietEngine(OpBuilder &b, Location loc, Operation *op) const {
  HiddenArgs hidden = hiddenArgs(op);
  Value status = target.offNodeQuiet(b, loc, op, hidden);
  Value rank = loadParamField(b, loc, hidden.context, offsetof(weft_kernel_context, rank),
                              b.getI32Type());
  stopOnStatus(b, loc, op, status, rank, LLVM::ZeroOp::create(b, loc, target.globalPtrType(b.getContext())));
}

void Lowering::signalFlag(OpBuilder &b, Location loc, SignalKind kind, Value ptr,
                          Value value, MemOrder order, MemScope scope) const {
  if (kind == SignalKind::set)
    store(b, loc, value, ptr, order, scope);
  else
    target.atomicRMW(b, loc, RMWKind::add, ptr, value, order, scope);
}

void Lowering::byPlacement(OpBuilder &b, Location loc, Operation *op, Value peer,
                           function_ref<void()> inNodeBody,
                           function_ref<void()> offNodeBody) const {
  if (!target.getOptions().multinode) {
    inNodeBody();
    return;
  }
  auto run = [](function_ref<void()> f) {
    return [f] {
      f();
      return SmallVector<Value>{};
    };
  };
  emitIfElse(b, loc, inNode(b, loc, op, peer), {}, run(inNodeBody), run(offNodeBody));
}

void Lowering::signalPeer(OpBuilder &b, Location loc, Operation *op, Value ptr,
                          Value value, Value peer, SignalKind kind, MemOrder order,
                          MemScope scope, bool quietFirst) const {
  byPlacement(b, loc, op, peer, [&] {
    signalFlag(b, loc, kind, translate(b, loc, op, ptr, peer), value, order, scope);
  }, [&] {
    Value status = target.offNodeSignal(b, loc, op, hiddenArgs(op), ptr, value, peer, kind,
                                        quietFirst);
    stopOnStatus(b, loc, op, status, peer, ptr);
  });
}

/// "<kernel> at <file>:<line>:<col>" (and ": <message>") as a constant of
/// the module, where the runtime reads it (on GPUs from device memory, like
/// any global) to name the failed check: its address and size.
static std::pair<Value, Value> debugLocation(OpBuilder &b, Location loc, Operation *op,
                                             unsigned addressSpace, StringRef message) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto kernel = op->getParentOfType<FunctionOpInterface>())
    os << kernel.getName() << " at ";
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    os << "an unknown location";
  if (!message.empty())
    os << ": " << message;
  Value address = stringConstant(b, loc, op, "__weft_debug_location", text, addressSpace);
  return {LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), address),
          i32Const(b, loc, text.size())};
}

void Lowering::stopUnlessValid(OpBuilder &b, Location loc, Operation *op, Value badPeer,
                               Value badPtr, Value peer, Value pointer) const {
  Value kind = LLVM::SelectOp::create(b, loc, badPeer, i32Const(b, loc, WEFT_DEBUG_BAD_PEER),
                                      i32Const(b, loc, WEFT_DEBUG_OUTSIDE_HEAP));
  stopIf(b, loc, op, LLVM::OrOp::create(b, loc, badPeer, badPtr), kind, peer, pointer, "");
}

void Lowering::stopIf(OpBuilder &b, Location loc, Operation *op, Value failed, Value kind,
                      Value peer, Value pointer, StringRef message) const {
  Type i32 = b.getI32Type();
  Block *before = b.getInsertionBlock();
  Block *valid = before->splitBlock(b.getInsertionPoint());
  Block *stop = b.createBlock(valid);
  b.setInsertionPointToEnd(before);
  LLVM::CondBrOp::create(b, loc, failed, stop, valid);

  // The first failure of the launch on this rank claims the record.
  b.setInsertionPointToEnd(stop);
  Value reserved = reservedRegion(b, loc, op);
  auto fieldPtr = [&](size_t offset) {
    return byteOffset(
        b, loc, reserved,
        i64Const(b, loc, offsetof(weft_reserved, debug_error) + offset));
  };
  auto claim = LLVM::AtomicCmpXchgOp::create(
      b, loc, fieldPtr(offsetof(weft_debug_error, kind)),
      i32Const(b, loc, WEFT_DEBUG_OK), kind, LLVM::AtomicOrdering::monotonic,
      LLVM::AtomicOrdering::monotonic, target.syncScope(MemScope::gpu));
  emitIf(b, loc, LLVM::ExtractValueOp::create(b, loc, claim, 1), {}, [&] {
    auto field = [&](size_t offset, Value value) {
      LLVM::StoreOp::create(b, loc, value, fieldPtr(offset),
                            value.getType().getIntOrFloatBitWidth() / 8);
    };
    HiddenArgs hidden = hiddenArgs(op);
    field(offsetof(weft_debug_error, rank),
          contextField(b, loc, op, offsetof(weft_kernel_context, rank), i32));
    for (Axis axis : {Axis::x, Axis::y, Axis::z})
      field(offsetof(weft_debug_error, program) +
                4 * static_cast<unsigned>(axis),
            target.programId(b, loc, axis, hidden));
    field(offsetof(weft_debug_error, peer), peer);
    field(offsetof(weft_debug_error, pointer), pointer);
    auto [address, size] = debugLocation(
        b, loc, op, target.globalPtrType(b.getContext()).getAddressSpace(), message);
    field(offsetof(weft_debug_error, location), address);
    field(offsetof(weft_debug_error, location_size), size);
    return SmallVector<Value>{};
  }, {});

  // Return rather than trap: a trap kills the host process and poisons a
  // GPU context, and the runtime could not report the record. A function
  // with results has nothing to return, so it still traps.
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!func.getResultTypes().empty()) {
    LLVM::Trap::create(b, loc);
    LLVM::UnreachableOp::create(b, loc);
  } else if (isa<func::FuncOp>(func)) {
    func::ReturnOp::create(b, loc);
  } else {
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  }
  b.setInsertionPointToStart(valid);
}

Value Lowering::reservedRegion(OpBuilder &b, Location loc,
                               Operation *op) const {
  Value ctx = hiddenArgs(op).context;
  Value rank = loadParamField(b, loc, ctx, offsetof(weft_kernel_context, rank),
                              b.getI32Type());
  return LLVM::IntToPtrOp::create(b, loc,
                                  target.globalPtrType(b.getContext()),
                                  loadHeapBase(b, loc, ctx, rank));
}

Value Lowering::load(OpBuilder &b, Location loc, Type type, Value ptr,
                     MemOrder order, MemScope scope) const {
  unsigned align = naturalAlignment(type);
  if (order == MemOrder::weak)
    return LLVM::LoadOp::create(b, loc, type, ptr, align);
  return LLVM::LoadOp::create(b, loc, type, ptr, align, false, false, false,
                              false, toLLVMOrdering(order),
                              target.syncScope(scope));
}

void Lowering::store(OpBuilder &b, Location loc, Value value, Value ptr,
                     MemOrder order, MemScope scope) const {
  unsigned align = naturalAlignment(value.getType());
  if (order == MemOrder::weak) {
    LLVM::StoreOp::create(b, loc, value, ptr, align);
    return;
  }
  LLVM::StoreOp::create(b, loc, value, ptr, align, false, false, false,
                        toLLVMOrdering(order), target.syncScope(scope));
}

static Value compare(OpBuilder &b, Location loc, WaitPredicate pred, Value lhs,
                     Value rhs) {
  LLVM::ICmpPredicate p = LLVM::ICmpPredicate::eq;
  switch (pred) {
  case WaitPredicate::eq:
    p = LLVM::ICmpPredicate::eq;
    break;
  case WaitPredicate::ne:
    p = LLVM::ICmpPredicate::ne;
    break;
  case WaitPredicate::ge:
    p = LLVM::ICmpPredicate::uge;
    break;
  case WaitPredicate::gt:
    p = LLVM::ICmpPredicate::ugt;
    break;
  case WaitPredicate::le:
    p = LLVM::ICmpPredicate::ule;
    break;
  case WaitPredicate::lt:
    p = LLVM::ICmpPredicate::ult;
    break;
  }
  return LLVM::ICmpOp::create(b, loc, p, lhs, rhs);
}

Value Lowering::poll(OpBuilder &b, Location loc, Operation *op, Value flag,
                     Value expected, WaitPredicate pred,
                     MemScope scope) const {
  Type type = expected.getType();
  Type i64 = b.getI64Type();
  Type i32 = b.getI32Type();
  Value timeout = contextField(
      b, loc, op, offsetof(weft_kernel_context, wait_timeout_ns), i64);
  Value start = target.timerNs(b, loc);

  Block *before = b.getInsertionBlock();
  Block *exit = before->splitBlock(b.getInsertionPoint());
  exit->addArgument(type, loc);
  Block *loop = b.createBlock(exit);
  Block *check = b.createBlock(exit);
  Block *timed = b.createBlock(exit);
  Block *record = b.createBlock(exit);
  Block *pause = b.createBlock(exit);

  b.setInsertionPointToEnd(before);
  LLVM::BrOp::create(b, loc, loop);

  b.setInsertionPointToEnd(loop);
  Value seen = load(b, loc, type, flag, MemOrder::relaxed, scope);
  LLVM::CondBrOp::create(b, loc, compare(b, loc, pred, seen, expected), exit,
                         ValueRange{seen}, check, ValueRange{});

  b.setInsertionPointToEnd(check);
  Value hasTimeout = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne,
                                          timeout, i64Const(b, loc, 0));
  LLVM::CondBrOp::create(b, loc, hasTimeout, timed, pause);

  // Give up when the timeout expired or another wait of this rank already
  // did: the launch is failing and every program should drain.
  b.setInsertionPointToEnd(timed);
  Value reserved = reservedRegion(b, loc, op);
  Value statusPtr = byteOffset(
      b, loc, reserved,
      i64Const(b, loc, offsetof(weft_reserved, wait_error) +
                           offsetof(weft_wait_error, status)));
  Value status = load(b, loc, i32, statusPtr, MemOrder::relaxed, MemScope::gpu);
  Value aborted = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, status,
                                       i32Const(b, loc, 0));
  Value elapsed = LLVM::SubOp::create(b, loc, target.timerNs(b, loc), start);
  Value expired = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt,
                                       elapsed, timeout);
  Value giveUp = LLVM::OrOp::create(b, loc, aborted, expired);
  LLVM::CondBrOp::create(b, loc, giveUp, record, pause);

  // The first wait to give up claims the record and fills it in.
  b.setInsertionPointToEnd(record);
  auto claim = LLVM::AtomicCmpXchgOp::create(
      b, loc, statusPtr, i32Const(b, loc, WEFT_WAIT_OK),
      i32Const(b, loc, WEFT_WAIT_TIMED_OUT), LLVM::AtomicOrdering::monotonic,
      LLVM::AtomicOrdering::monotonic, target.syncScope(MemScope::gpu));
  Value won = LLVM::ExtractValueOp::create(b, loc, claim, 1);
  emitIf(b, loc, won, {}, [&] {
    auto field = [&](size_t offset, Value value) {
      Value addr = byteOffset(
          b, loc, reserved,
          i64Const(b, loc, offsetof(weft_reserved, wait_error) + offset));
      LLVM::StoreOp::create(b, loc, value, addr,
                            value.getType().getIntOrFloatBitWidth() / 8);
    };
    HiddenArgs hidden = hiddenArgs(op);
    field(offsetof(weft_wait_error, rank),
          contextField(b, loc, op, offsetof(weft_kernel_context, rank), i32));
    for (Axis axis : {Axis::x, Axis::y, Axis::z})
      field(offsetof(weft_wait_error, program) +
                4 * static_cast<unsigned>(axis),
            target.programId(b, loc, axis, hidden));
    field(offsetof(weft_wait_error, cmp),
          i32Const(b, loc, static_cast<int64_t>(pred)));
    field(offsetof(weft_wait_error, flag_address),
          LLVM::PtrToIntOp::create(b, loc, i64, flag));
    auto widen = [&](Value v) -> Value {
      return type == i64 ? v : LLVM::ZExtOp::create(b, loc, i64, v);
    };
    field(offsetof(weft_wait_error, expected), widen(expected));
    field(offsetof(weft_wait_error, last_seen), widen(seen));
    return SmallVector<Value>{};
  }, {});
  LLVM::BrOp::create(b, loc, ValueRange{seen}, exit);

  b.setInsertionPointToEnd(pause);
  target.pollPause(b, loc);
  LLVM::BrOp::create(b, loc, loop);

  b.setInsertionPointToStart(exit);
  return exit->getArgument(0);
}

void addPointerConversion(LLVMTypeConverter &converter,
                          const TargetInfo &target) {
  converter.addConversion([&target](PtrType type) -> Type {
    return target.globalPtrType(type.getContext());
  });
  converter.addConversion([&target](TensorDescType type) -> Type {
    return target.byValueParamType(type.getContext());
  });
}

} // namespace weft
