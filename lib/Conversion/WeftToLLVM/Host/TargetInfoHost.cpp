//===- TargetInfoHost.cpp - x86-64, one CPU thread per program ------------===//
//
// A program is one CPU thread, so there is nothing to elect, broadcast or
// join inside a program. Every scope is the system scope: the programs of a
// launch and the peers are all CPU threads of the same machine. Peers on
// other nodes are reached through the runtime's engine (abi.h,
// weft_host_engine), whose entries the kernel context points to.
//
//===----------------------------------------------------------------------===//
#include "../KernelContext.h"
#include "../LoweringUtils.h"
#include "../TargetInfos.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace weft {
namespace {

class HostTargetInfo : public TargetInfo {
public:
  using TargetInfo::TargetInfo;

  SmallVector<Type> hiddenArgTypes(MLIRContext *ctx) const override {
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    return {ptr, ptr};
  }

  /// The runtime calls every kernel through one signature
  /// (weft_host_kernel_fn): `name(void **args, ctx, program)`. The kernel
  /// body becomes an internal function the wrapper calls (and LLVM inlines).
  void finalizeKernel(LLVM::LLVMFuncOp kernel, OpBuilder &b) const override {
    MLIRContext *ctx = kernel.getContext();
    Location loc = kernel.getLoc();
    std::string name = kernel.getName().str();
    kernel.setSymName("__weft_impl_" + name);
    kernel.setLinkage(LLVM::Linkage::Internal);
    kernel.setAlwaysInline(true);

    auto ptr = LLVM::LLVMPointerType::get(ctx);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(kernel);
    auto wrapper = LLVM::LLVMFuncOp::create(
        b, loc, name,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    {ptr, ptr, ptr}));
    Block *entry = wrapper.addEntryBlock(b);
    b.setInsertionPointToStart(entry);

    // A tensor descriptor is used where args[i] points (the kernel takes
    // by-value parameters as pointers), every other argument is loaded.
    unsigned numUserArgs = kernel.getNumArguments() - 2;
    llvm::SmallDenseSet<unsigned> byPointer;
    for (const ByValueParam &param : takeByValueParams(kernel, numUserArgs))
      byPointer.insert(param.index);
    SmallVector<Value> operands;
    for (unsigned i = 0; i < numUserArgs; ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, entry->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      Value valuePtr = LLVM::LoadOp::create(b, loc, ptr, slot);
      operands.push_back(byPointer.contains(i)
                             ? valuePtr
                             : LLVM::LoadOp::create(b, loc, kernel.getArgumentTypes()[i],
                                                    valuePtr)
                                   .getResult());
    }
    operands.push_back(entry->getArgument(1));
    operands.push_back(entry->getArgument(2));
    LLVM::CallOp::create(b, loc, kernel, operands);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  }

  /// weft_host_program: u32 id[3] at 0, u32 num[3] at 12.
  Value programId(OpBuilder &b, Location loc, Axis axis,
                  const HiddenArgs &hidden) const override {
    return loadProgramField(b, loc, hidden, 4 * static_cast<unsigned>(axis));
  }

  Value numPrograms(OpBuilder &b, Location loc, Axis axis,
                    const HiddenArgs &hidden) const override {
    return loadProgramField(b, loc, hidden,
                            12 + 4 * static_cast<unsigned>(axis));
  }

  Value threadId(OpBuilder &b, Location loc) const override {
    return i32Const(b, loc, 0);
  }

  void programBarrier(OpBuilder &, Location, int64_t, unsigned) const override {}

  bool masksAccessesAsVectors() const override { return true; }

  /// The C library's printf, resolved when the kernel's .so is loaded.
  void printf(OpBuilder &b, Location loc, Operation *op, StringRef format,
              ValueRange args) const override {
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto fn = declareFunction(b, op, "printf",
                              LLVM::LLVMFunctionType::get(b.getI32Type(), {ptr}, /*isVarArg=*/true));
    SmallVector<Value> operands{stringConstant(b, loc, op, "__weft_printf_format", format, 0)};
    llvm::append_range(operands, args);
    LLVM::CallOp::create(b, loc, fn, operands);
  }

  StringRef syncScope(MemScope) const override { return ""; }

  Value timerNs(OpBuilder &b, Location loc) const override {
    Operation *anchor = b.getInsertionBlock()->getParentOp();
    MLIRContext *ctx = b.getContext();
    auto i32 = b.getI32Type();
    auto i64 = b.getI64Type();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto clockGettime = declareFunction(
        b, anchor, "clock_gettime", LLVM::LLVMFunctionType::get(i32, {i32, ptr}));
    auto timespec = LLVM::LLVMStructType::getLiteral(ctx, {i64, i64});
    // In the entry block: an alloca inside the polling loop would grow the
    // stack on every iteration.
    Block &entry = b.getInsertionBlock()->getParent()->front();
    OpBuilder entryBuilder(&entry, entry.begin());
    Value ts = LLVM::AllocaOp::create(entryBuilder, loc, ptr, timespec,
                                      i32Const(entryBuilder, loc, 1));
    constexpr int kClockMonotonic = 1;
    LLVM::CallOp::create(b, loc, clockGettime,
                         ValueRange{i32Const(b, loc, kClockMonotonic), ts});
    Value sec = LLVM::LoadOp::create(b, loc, i64, ts);
    Value nsec = LLVM::LoadOp::create(
        b, loc, i64, byteOffset(b, loc, ts, i64Const(b, loc, 8)));
    return LLVM::AddOp::create(
        b, loc, LLVM::MulOp::create(b, loc, sec, i64Const(b, loc, 1000000000)),
        nsec);
  }

  /// Programs are threads that may outnumber the cores: give the core away
  /// so the program being waited for can run.
  void pollPause(OpBuilder &b, Location loc) const override {
    Operation *anchor = b.getInsertionBlock()->getParentOp();
    auto schedYield = declareFunction(
        b, anchor, "sched_yield",
        LLVM::LLVMFunctionType::get(b.getI32Type(), {}));
    LLVM::CallOp::create(b, loc, schedYield, ValueRange{});
  }

  Value offNodePut(OpBuilder &b, Location loc, Operation *, const HiddenArgs &hidden,
                   Value dst, Value src, Value nbytes, Value peer, Value flag, Value value,
                   SignalKind kind) const override {
    Value op = i32Const(b, loc, flag ? signalOp(kind) : 0);
    return callEngine(b, loc, hidden, offsetof(weft_host_engine, put),
                      {address(b, loc, dst), address(b, loc, src), nbytes, peer,
                       flag ? address(b, loc, flag) : i64Const(b, loc, 0),
                       flag ? value : i64Const(b, loc, 0), op});
  }

  Value offNodeGet(OpBuilder &b, Location loc, Operation *, const HiddenArgs &hidden,
                   Value dst, Value src, Value nbytes, Value peer) const override {
    return callEngine(b, loc, hidden, offsetof(weft_host_engine, get),
                      {address(b, loc, dst), address(b, loc, src), nbytes, peer});
  }

  /// The engine's signal completes the rank's earlier puts whatever the
  /// order: stronger than a relaxed signal needs, never weaker.
  Value offNodeSignal(OpBuilder &b, Location loc, Operation *, const HiddenArgs &hidden,
                      Value flag, Value value, Value peer, SignalKind kind,
                      bool) const override {
    unsigned bits = value.getType().getIntOrFloatBitWidth();
    Value wide = bits == 64 ? value : LLVM::ZExtOp::create(b, loc, b.getI64Type(), value);
    return callEngine(b, loc, hidden, offsetof(weft_host_engine, signal),
                      {address(b, loc, flag), wide, peer, i32Const(b, loc, signalOp(kind)),
                       i32Const(b, loc, bits / 8)});
  }

  /// Fences and barriers quiet unconditionally: a job of one node has no
  /// engine, and nothing to complete.
  Value offNodeQuiet(OpBuilder &b, Location loc, Operation *,
                     const HiddenArgs &hidden) const override {
    Value engine = loadParamField(b, loc, hidden.context,
                                  offsetof(weft_kernel_context, engine), b.getI64Type());
    Value present = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, engine,
                                         i64Const(b, loc, 0));
    return emitIf(b, loc, present, {b.getI32Type()}, [&] {
      return SmallVector<Value>{
          callEngine(b, loc, hidden, offsetof(weft_host_engine, quiet), {})};
    }, {i32Const(b, loc, 0)})[0];
  }

private:
  static int signalOp(SignalKind kind) {
    return kind == SignalKind::set ? WEFT_ENGINE_SIGNAL_SET : WEFT_ENGINE_SIGNAL_ADD;
  }

  static Value address(OpBuilder &b, Location loc, Value ptr) {
    return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), ptr);
  }

  /// `entry(state, args...)` of the context's weft_host_engine: its i32
  /// status.
  static Value callEngine(OpBuilder &b, Location loc, const HiddenArgs &hidden,
                          size_t entry, ArrayRef<Value> args) {
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    Value table = LLVM::IntToPtrOp::create(
        b, loc, ptr,
        loadParamField(b, loc, hidden.context, offsetof(weft_kernel_context, engine),
                       b.getI64Type()));
    auto field = [&](size_t offset) {
      return LLVM::LoadOp::create(b, loc, ptr, byteOffset(b, loc, table, i64Const(b, loc, offset)),
                                  /*alignment=*/8, /*isVolatile=*/false,
                                  /*isNonTemporal=*/false, /*isInvariant=*/true)
          .getResult();
    };
    SmallVector<Value> operands{field(entry), field(offsetof(weft_host_engine, state))};
    llvm::append_range(operands, args);
    SmallVector<Type> types{ptr};
    for (Value arg : args)
      types.push_back(arg.getType());
    auto type = LLVM::LLVMFunctionType::get(b.getI32Type(), types);
    return LLVM::CallOp::create(b, loc, type, operands).getResult();
  }

  static Value loadProgramField(OpBuilder &b, Location loc,
                                const HiddenArgs &hidden, unsigned offset) {
    return LLVM::LoadOp::create(
        b, loc, b.getI32Type(),
        byteOffset(b, loc, hidden.program, i64Const(b, loc, offset)), 4, false,
        false, /*isInvariant=*/true);
  }
};

} // namespace

std::unique_ptr<TargetInfo> createHostTargetInfo(const CompileTarget &target) {
  return std::make_unique<HostTargetInfo>(target);
}

} // namespace weft
