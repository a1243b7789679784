//===- TargetInfoHost.cpp - x86-64, one CPU thread per program ------------===//
//
// A program is one CPU thread, so there is nothing to elect, broadcast or
// join inside a program. Every scope is the system scope: the programs of a
// launch and the peers are all CPU threads of the same machine.
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

  void programBarrier(OpBuilder &, Location) const override {}

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

private:
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
