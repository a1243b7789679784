//===- TargetInfoNVPTX.cpp - sm_90 ----------------------------------------===//
//
// LLVM 22's NVPTX backend drops the ordering and scope of `atomicrmw` (it
// emits a relaxed, gpu-scoped `atom.global.add`), so read-modify-write
// atomics are inline PTX `atom.<sem>.<scope>.global.<op>.<type>`. Loads,
// stores, fences and cmpxchg keep their order and scope through LLVM.
// Multimem has no LLVM intrinsic: inline PTX as well.
//
//===----------------------------------------------------------------------===//
#include "PTX.h"

#include "../KernelContext.h"
#include "../LoweringUtils.h"
#include "../TargetInfos.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>
#include <tuple>

using namespace mlir;

namespace weft {
namespace {

StringRef ptxScope(MemScope scope) {
  switch (scope) {
  case MemScope::cta:
    return "cta";
  case MemScope::gpu:
    return "gpu";
  case MemScope::sys:
    return "sys";
  }
  return "sys";
}

StringRef ptxSem(MemOrder order) {
  switch (order) {
  case MemOrder::relaxed:
    return "relaxed";
  case MemOrder::acquire:
    return "acquire";
  case MemOrder::release:
    return "release";
  default:
    return "acq_rel";
  }
}

/// The register class of an inline-asm operand of type `type`.
char regClass(Type type) {
  if (type.isF32())
    return 'f';
  if (type.isF64())
    return 'd';
  unsigned width = type.getIntOrFloatBitWidth();
  return width == 16 ? 'h' : width == 64 ? 'l' : 'r';
}

/// "u32", "s64", "f32", "b64", "f16", "bf16" for an atom instruction.
std::string atomType(RMWKind kind, Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (kind == RMWKind::fadd)
    return type.isBF16() ? "bf16" : ("f" + std::to_string(width));
  switch (kind) {
  case RMWKind::max:
  case RMWKind::min:
    return "s" + std::to_string(width);
  case RMWKind::add:
  case RMWKind::umax:
  case RMWKind::umin:
    return "u" + std::to_string(width);
  default:
    return "b" + std::to_string(width);
  }
}

StringRef atomOp(RMWKind kind) {
  switch (kind) {
  case RMWKind::add:
  case RMWKind::fadd:
    return "add";
  case RMWKind::max:
  case RMWKind::umax:
    return "max";
  case RMWKind::min:
  case RMWKind::umin:
    return "min";
  case RMWKind::and_:
    return "and";
  case RMWKind::or_:
    return "or";
  case RMWKind::xor_:
    return "xor";
  case RMWKind::xchg:
    return "exch";
  }
  return "exch";
}

class NVPTXTargetInfo : public TargetInfo {
public:
  using TargetInfo::TargetInfo;

  void finalizeKernel(LLVM::LLVMFuncOp kernel, OpBuilder &b) const override {
    kernel->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
    // .reqnctapercluster: a plain launch then runs the grid in clusters.
    if (auto cluster = kernel->getAttrOfType<DenseI32ArrayAttr>(kClusterAttrName))
      kernel->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(), cluster);
    auto threads = kernel->getAttrOfType<IntegerAttr>(kThreadsAttrName);
    kernel->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                    b.getDenseI32ArrayAttr({static_cast<int32_t>(
                                                threads ? threads.getInt()
                                                        : target.threadsPerProgram()),
                                            1, 1}));
    // The context and the tensor descriptors arrive by value in the
    // parameter space; grid_constant lets the kernel address them there
    // instead of copying them to the stack (and bulk tensor copies read
    // their tensor maps there).
    for (const ByValueParam &param : takeByValueParams(kernel, kernel.getNumArguments() - 1)) {
      kernel.setArgAttr(param.index, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(param.type));
      kernel.setArgAttr(param.index, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      kernel.setArgAttr(param.index, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(param.alignment));
    }
  }

  Value programId(OpBuilder &b, Location loc, Axis axis,
                  const HiddenArgs &) const override {
    return specialRegister<NVVM::BlockIdXOp, NVVM::BlockIdYOp,
                           NVVM::BlockIdZOp>(b, loc, axis);
  }

  Value numPrograms(OpBuilder &b, Location loc, Axis axis,
                    const HiddenArgs &) const override {
    return specialRegister<NVVM::GridDimXOp, NVVM::GridDimYOp,
                           NVVM::GridDimZOp>(b, loc, axis);
  }

  Value threadId(OpBuilder &b, Location loc) const override {
    return NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  }

  void programBarrier(OpBuilder &b, Location loc, int64_t threads, unsigned id) const override {
    if (!threads)
      NVVM::Barrier0Op::create(b, loc);
    else
      emitAsm(b, loc, Type(), {},
              llvm::formatv("bar.sync {0}, {1};", id, threads).str(), "~{memory}");
  }

  StringRef syncScope(MemScope scope) const override {
    switch (scope) {
    case MemScope::cta:
      return "block";
    case MemScope::gpu:
      return "device";
    case MemScope::sys:
      return "";
    }
    return "";
  }

  Value atomicRMW(OpBuilder &b, Location loc, RMWKind kind, Value ptr,
                  Value value, MemOrder order, MemScope scope) const override {
    Type type = value.getType();
    std::string asmText = llvm::formatv(
        "atom.{0}.{1}.global.{2}{3}.{4} $0, [$1], $2;", ptxSem(order),
        ptxScope(scope), atomOp(kind),
        // f16/bf16 additions exist only in the no-flush-to-zero form.
        kind == RMWKind::fadd && type.getIntOrFloatBitWidth() == 16 ? ".noftz"
                                                                     : "",
        atomType(kind, type));
    char rc = regClass(type);
    std::string constraints = std::string("=") + rc + ",l," + rc + ",~{memory}";
    return emitAsm(b, loc, type, {ptr, value}, asmText, constraints);
  }

  // red.global.add.v2/v4.f32 (sm_90, PTX ISA 8.1): one L2 reduction for
  // up to 16 bytes (split-K's partial products).
  unsigned reductionWidth(RMWKind kind, Type elemType) const override {
    return kind == RMWKind::fadd && elemType.isF32() ? 4 : 1;
  }
  void reduceVector(OpBuilder &b, Location loc, RMWKind kind, Value ptr, ValueRange values,
                    MemScope scope) const override;

  Value timerNs(OpBuilder &b, Location loc) const override {
    return NVVM::GlobalTimerOp::create(b, loc, b.getI64Type());
  }

  void pollPause(OpBuilder &, Location) const override {
    // Spin without sleeping: nanosleep would add its latency to every
    // signal-to-wakeup path, and a GPU wait has no one to yield to.
  }

  Value multimem(OpBuilder &b, Location loc, Operation *op, Value mptr,
                 Value value) const override;

  Value offNodePut(OpBuilder &b, Location loc, Operation *op, const HiddenArgs &hidden,
                   Value dst, Value src, Value nbytes, Value peer, Value flag, Value value,
                   SignalKind kind) const override;
  Value offNodeGet(OpBuilder &b, Location loc, Operation *op, const HiddenArgs &hidden,
                   Value dst, Value src, Value nbytes, Value peer) const override;
  Value offNodeSignal(OpBuilder &b, Location loc, Operation *op, const HiddenArgs &hidden,
                      Value flag, Value value, Value peer, SignalKind kind,
                      bool release) const override;
  Value offNodeQuiet(OpBuilder &b, Location loc, Operation *op,
                     const HiddenArgs &hidden) const override;

  Value loadHinted(OpBuilder &b, Location loc, Type type, Value ptr, unsigned alignment,
                   const AccessHints &hints) const override;
  void storeHinted(OpBuilder &b, Location loc, Value value, Value ptr, unsigned alignment,
                   const AccessHints &hints) const override;
  void printf(OpBuilder &b, Location loc, Operation *op, StringRef format,
              ValueRange args) const override;

  Value loadRelaxed(OpBuilder &b, Location loc, Type type, Value ptr,
                    unsigned alignment, MemScope scope) const override;
  void storeRelaxed(OpBuilder &b, Location loc, Value value, Value ptr,
                    unsigned alignment, MemScope scope) const override;

  SmallVector<Value> mma(OpBuilder &b, Location loc, Type elemType, ValueRange a,
                         ValueRange bRegs, ValueRange c) const override {
    SmallVector<Value> operands(a);
    llvm::append_range(operands, bRegs);
    llvm::append_range(operands, c);
    std::string text = llvm::formatv(
        "mma.sync.aligned.m16n8k16.row.col.f32.{0}.{0}.f32 {{$0,$1,$2,$3}, "
        "{{$4,$5,$6,$7}, {{$8,$9}, {{$10,$11,$12,$13};",
        elemType.isBF16() ? "bf16" : "f16");
    // Pure arithmetic: no side effects, so LLVM may schedule it freely.
    return emitAsmResults(b, loc, SmallVector<Type>(4, b.getF32Type()), operands, text,
                          "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", /*hasSideEffects=*/false);
  }

  SmallVector<Value> loadMatrices(OpBuilder &b, Location loc, Value rowAddress, unsigned count,
                                  bool transpose) const override {
    std::string outs, constraints;
    for (unsigned i = 0; i < count; ++i) {
      outs += llvm::formatv("{0}${1}", i ? "," : "", i).str();
      constraints += "=r,";
    }
    constraints += "r";
    std::string text = llvm::formatv("ldmatrix.sync.aligned.m8n8.x{0}{1}.shared.b16 {{{2}}, [${3}];",
                                     count, transpose ? ".trans" : "", outs, count);
    // Reads memory the program wrote before its join: keep it after that.
    return emitAsmResults(b, loc, SmallVector<Type>(count, b.getI32Type()),
                          sharedAddress(b, loc, rowAddress), text, constraints,
                          /*hasSideEffects=*/true);
  }

  void asyncCopy(OpBuilder &b, Location loc, Value dst, Value src, unsigned bytes,
                 Value srcBytes) const override {
    // .cg (L2 only) takes 16 bytes: streamed tiles need no L1 copy.
    NVVM::CpAsyncOp::create(b, loc, dst, src, bytes,
                            bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                        : NVVM::LoadCacheModifierKind::CA,
                            srcBytes);
  }
  void asyncCommit(OpBuilder &b, Location loc) const override {
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  void asyncWait(OpBuilder &b, Location loc, unsigned pending) const override {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
    // cp.async writes through the generic proxy and wgmma reads through the
    // async one: each thread fences its own copies before the join.
    emitAsm(b, loc, Type(), {}, "fence.proxy.async.shared::cta;", "");
  }

  Value shuffleXor(OpBuilder &b, Location loc, Value value,
                   unsigned laneMask) const override {
    Type i32 = b.getI32Type();
    return NVVM::ShflOp::create(
        b, loc, i32, LLVM::ConstantOp::create(b, loc, i32, -1), value,
        LLVM::ConstantOp::create(b, loc, i32, laneMask),
        LLVM::ConstantOp::create(b, loc, i32, 0x1f), NVVM::ShflKind::bfly,
        UnitAttr());
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Multimem (NVLS) as inline PTX
//===----------------------------------------------------------------------===//

namespace {

/// How a value travels through inline-asm operands: `count` registers of
/// `regType`.
struct Regs {
  Type regType;
  unsigned count;
};

/// A multimem value: each register holds one f32/i32/i64 or a pair of
/// f16/bf16.
struct MultimemRegs : Regs {
  std::string ptxType; // "f32", "bf16x2", "u32", "s64", ...
};

MultimemRegs multimemRegs(OpBuilder &b, Type valueType, MultimemReduce kind) {
  Type elem = valueType;
  unsigned lanes = 1;
  if (auto vec = dyn_cast<VectorType>(valueType)) {
    elem = vec.getElementType();
    lanes = vec.getNumElements();
  }
  if (elem.isF32())
    return {{b.getF32Type(), lanes}, "f32"};
  if (elem.isF16() || elem.isBF16())
    return {{b.getI32Type(), lanes / 2}, elem.isF16() ? "f16x2" : "bf16x2"};
  unsigned width = elem.getIntOrFloatBitWidth();
  bool isSigned = kind == MultimemReduce::min || kind == MultimemReduce::max;
  return {{b.getIntegerType(width), 1},
          (isSigned ? "s" : "u") + std::to_string(width)};
}

StringRef multimemOp(MultimemReduce kind) {
  switch (kind) {
  case MultimemReduce::add:
    return "add";
  case MultimemReduce::min:
  case MultimemReduce::umin:
    return "min";
  case MultimemReduce::max:
  case MultimemReduce::umax:
    return "max";
  }
  return "add";
}

/// ".relaxed.sys", ".release.sys", or "" for a weak access.
std::string multimemSem(MemOrder order, MemScope scope) {
  if (order == MemOrder::weak)
    return "";
  return ("." + ptxSem(order) + "." + ptxScope(scope)).str();
}

/// ".acc::f32" on f16/bf16 additions: peers accumulate in f32 for precision.
StringRef accumulator(const MultimemRegs &regs, MultimemReduce kind) {
  bool half = regs.ptxType == "f16x2" || regs.ptxType == "bf16x2";
  return half && kind == MultimemReduce::add ? ".acc::f32" : "";
}

std::string vectorSuffix(const Regs &regs) {
  return regs.count > 1 ? ".v" + std::to_string(regs.count) : "";
}

/// "{$0, $1, $2, $3}" for `count` operands starting at `first`.
std::string regList(unsigned first, unsigned count) {
  SmallVector<std::string> names;
  for (unsigned i = 0; i < count; ++i)
    names.push_back("$" + std::to_string(first + i));
  return count == 1 ? names.front() : "{" + llvm::join(names, ", ") + "}";
}

/// Constraints of an asm that loads `regs` from the address operand after
/// them, and of one that stores them to the address operand before them.
std::string loadConstraints(const Regs &regs) {
  std::string constraints;
  for (unsigned i = 0; i < regs.count; ++i)
    constraints += std::string("=") + regClass(regs.regType) + ",";
  return constraints + "l,~{memory}";
}
std::string storeConstraints(const Regs &regs) {
  std::string constraints = "l";
  for (unsigned i = 0; i < regs.count; ++i)
    constraints += std::string(",") + regClass(regs.regType);
  return constraints + ",~{memory}";
}

/// The result type of an asm that returns `regs`.
Type asmResultType(MLIRContext *ctx, const Regs &regs) {
  if (regs.count == 1)
    return regs.regType;
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(regs.count, regs.regType));
}

/// Splits `value` into the registers PTX expects.
SmallVector<Value> toRegs(OpBuilder &b, Location loc, Value value,
                          const Regs &regs) {
  if (regs.count == 1 && !isa<VectorType>(value.getType()))
    return {value};
  auto vecType = VectorType::get({regs.count}, regs.regType);
  return unpackVector(b, loc, LLVM::BitcastOp::create(b, loc, vecType, value));
}

/// Reassembles registers returned by inline asm into `type`.
Value fromRegs(OpBuilder &b, Location loc, Value asmResult, Type type,
               const Regs &regs) {
  if (regs.count == 1 && !isa<VectorType>(type))
    return asmResult;
  auto vecType = VectorType::get({regs.count}, regs.regType);
  Value vec = LLVM::PoisonOp::create(b, loc, vecType);
  for (unsigned i = 0; i < regs.count; ++i) {
    Value reg = regs.count == 1
                    ? asmResult
                    : LLVM::ExtractValueOp::create(b, loc, asmResult, i);
    vec = LLVM::InsertElementOp::create(
        b, loc, vec, reg, i32Const(b, loc, i));
  }
  return LLVM::BitcastOp::create(b, loc, type, vec);
}

} // namespace

Value NVPTXTargetInfo::multimem(OpBuilder &b, Location loc, Operation *op,
                                Value mptr, Value value) const {
  Value addr = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), mptr);
  if (auto ld = dyn_cast<MultimemLdReduceOp>(op)) {
    Type type = ld.getResult().getType();
    MultimemRegs regs = multimemRegs(b, type, ld.getKind());
    std::string text = llvm::formatv(
        "multimem.ld_reduce{0}.global.{1}{2}{3}.{4} {5}, [${6}];",
        multimemSem(ld.getOrder(), ld.getScope()), multimemOp(ld.getKind()),
        accumulator(regs, ld.getKind()), vectorSuffix(regs), regs.ptxType,
        regList(0, regs.count), regs.count);
    Value result = emitAsm(b, loc, asmResultType(b.getContext(), regs),
                           {addr}, text, loadConstraints(regs));
    return fromRegs(b, loc, result, type, regs);
  }

  bool isStore = isa<MultimemStoreOp>(op);
  auto kind = isStore ? MultimemReduce::add
                      : cast<MultimemRedOp>(op).getKind();
  MemOrder order = isStore ? cast<MultimemStoreOp>(op).getOrder()
                           : cast<MultimemRedOp>(op).getOrder();
  MemScope scope = isStore ? cast<MultimemStoreOp>(op).getScope()
                           : cast<MultimemRedOp>(op).getScope();
  MultimemRegs regs = multimemRegs(b, value.getType(), kind);
  // multimem.st has no signedness: integer stores are plain bit moves.
  std::string ptxType = regs.ptxType;
  if (isStore && ptxType[0] == 's')
    ptxType[0] = 'u';
  std::string text =
      isStore ? llvm::formatv("multimem.st{0}.global{1}.{2} [$0], {3};",
                              multimemSem(order, scope), vectorSuffix(regs),
                              ptxType, regList(1, regs.count))
                    .str()
              : llvm::formatv("multimem.red{0}.global.{1}{2}{3}.{4} [$0], {5};",
                              multimemSem(order, scope), multimemOp(kind),
                              accumulator(regs, kind), vectorSuffix(regs),
                              ptxType, regList(1, regs.count))
                    .str();
  SmallVector<Value> operands{addr};
  llvm::append_range(operands, toRegs(b, loc, value, regs));
  emitAsm(b, loc, Type(), operands, text, storeConstraints(regs));
  return {};
}

//===----------------------------------------------------------------------===//
// Relaxed vector accesses of tiles as inline PTX: LLVM cannot express an
// atomic vector (llc rejects `load atomic <4 x i32>`), and a volatile access
// would always be .sys. Elements narrower than 32 bits travel packed in b32
// registers; each element stays one single-copy-atomic access.
//===----------------------------------------------------------------------===//

namespace {

/// The b32 (or b64) registers of a vector access.
Regs vectorRegs(OpBuilder &b, VectorType type) {
  unsigned bits = type.getElementTypeBitWidth();
  unsigned regBits = std::max(32u, bits);
  return {b.getIntegerType(regBits),
          unsigned(bits * type.getNumElements() / regBits)};
}

std::string vectorAccess(StringRef op, MemScope scope, const Regs &regs) {
  return llvm::formatv("{0}.relaxed.{1}.global{2}.b{3}", op, ptxScope(scope),
                       vectorSuffix(regs), regs.regType.getIntOrFloatBitWidth());
}

} // namespace

Value NVPTXTargetInfo::loadRelaxed(OpBuilder &b, Location loc, Type type,
                                   Value ptr, unsigned alignment,
                                   MemScope scope) const {
  auto vec = dyn_cast<VectorType>(type);
  if (!vec)
    return TargetInfo::loadRelaxed(b, loc, type, ptr, alignment, scope);
  Regs regs = vectorRegs(b, vec);
  std::string text = vectorAccess("ld", scope, regs) + " " +
                     regList(0, regs.count) + ", [$" +
                     std::to_string(regs.count) + "];";
  Value result = emitAsm(b, loc, asmResultType(b.getContext(), regs), {ptr},
                         text, loadConstraints(regs));
  return fromRegs(b, loc, result, type, regs);
}

void NVPTXTargetInfo::storeRelaxed(OpBuilder &b, Location loc, Value value,
                                   Value ptr, unsigned alignment,
                                   MemScope scope) const {
  auto vec = dyn_cast<VectorType>(value.getType());
  if (!vec)
    return TargetInfo::storeRelaxed(b, loc, value, ptr, alignment, scope);
  Regs regs = vectorRegs(b, vec);
  std::string text = vectorAccess("st", scope, regs) + " [$0], " +
                     regList(1, regs.count) + ";";
  SmallVector<Value> operands{ptr};
  llvm::append_range(operands, toRegs(b, loc, value, regs));
  emitAsm(b, loc, Type(), operands, text, storeConstraints(regs));
}

void NVPTXTargetInfo::reduceVector(OpBuilder &b, Location loc, RMWKind, Value ptr,
                                   ValueRange values, MemScope scope) const {
  std::string text = llvm::formatv("red.relaxed.{0}.global.add.v{1}.f32 [$0], {2};",
                                   ptxScope(scope), values.size(), regList(1, values.size()));
  std::string constraints = "l";
  for (size_t i = 0; i < values.size(); ++i)
    constraints += ",f";
  SmallVector<Value> operands{ptr};
  llvm::append_range(operands, values);
  emitAsm(b, loc, Type(), operands, text, constraints + ",~{memory}");
}

/// The PTX qualifiers of a hinted access: the cache operator, else the
/// L1 eviction priority (PTX has no access with both).
static std::string hintQualifiers(const AccessHints &hints) {
  if (hints.cache)
    return "." + stringifyCacheModifier(*hints.cache).str();
  if (hints.evict)
    return hints.evict == EvictionPolicy::evict_first ? ".L1::evict_first"
                                                      : ".L1::evict_last";
  return "";
}

/// How a hinted access of `type` moves through PTX registers: `count` of
/// `bits` each (b8 in a 16-bit register, 16 bytes as v4.b32).
struct HintedShape {
  unsigned count, bits;
  static HintedShape of(Type type) {
    unsigned total = isa<VectorType>(type)
                         ? cast<VectorType>(type).getNumElements() *
                               cast<VectorType>(type).getElementTypeBitWidth()
                         : type.getIntOrFloatBitWidth();
    return total == 128 ? HintedShape{4, 32} : HintedShape{1, total};
  }
  StringRef constraint() const { return bits <= 16 ? "h" : bits == 32 ? "r" : "l"; }
  Type registerType(MLIRContext *ctx) const {
    return IntegerType::get(ctx, std::max(16u, bits));
  }
  std::string suffix() const {
    return (count == 4 ? ".v4" : "") + std::string(".b") + std::to_string(bits);
  }
};

Value NVPTXTargetInfo::loadHinted(OpBuilder &b, Location loc, Type type, Value ptr,
                                  unsigned alignment, const AccessHints &hints) const {
  if (hints.isVolatile || !(hints.cache || hints.evict))
    return TargetInfo::loadHinted(b, loc, type, ptr, alignment, hints);
  HintedShape shape = HintedShape::of(type);
  Type reg = shape.registerType(b.getContext());
  std::string text = "ld.global" + hintQualifiers(hints) + shape.suffix() + " ";
  std::string constraints;
  for (unsigned k = 0; k < shape.count; ++k) {
    text += (k ? ", $" : (shape.count > 1 ? "{$" : "$")) + std::to_string(k);
    constraints += "=" + shape.constraint().str() + ",";
  }
  text += (shape.count > 1 ? "}" : "") + std::string(", [$") + std::to_string(shape.count) + "];";
  constraints += "l";
  SmallVector<Value> regs = emitAsmResults(b, loc, SmallVector<Type>(shape.count, reg), {ptr},
                                           text, constraints, /*hasSideEffects=*/true);
  Value bits;
  if (shape.count == 1) {
    bits = regs.front();
    if (shape.bits < 16)
      bits = LLVM::TruncOp::create(b, loc, b.getIntegerType(shape.bits), bits);
  } else {
    bits = LLVM::PoisonOp::create(b, loc, VectorType::get({4}, reg));
    for (auto [k, r] : llvm::enumerate(regs))
      bits = LLVM::InsertElementOp::create(b, loc, bits, r, i32Const(b, loc, k));
  }
  return bits.getType() == type ? bits : LLVM::BitcastOp::create(b, loc, type, bits);
}

void NVPTXTargetInfo::storeHinted(OpBuilder &b, Location loc, Value value, Value ptr,
                                  unsigned alignment, const AccessHints &hints) const {
  if (hints.isVolatile || !(hints.cache || hints.evict))
    return TargetInfo::storeHinted(b, loc, value, ptr, alignment, hints);
  HintedShape shape = HintedShape::of(value.getType());
  Type reg = shape.registerType(b.getContext());
  SmallVector<Value> operands{ptr};
  if (shape.count == 1) {
    Value bits = LLVM::BitcastOp::create(b, loc, b.getIntegerType(shape.bits), value);
    if (shape.bits < 16)
      bits = LLVM::ZExtOp::create(b, loc, reg, bits);
    operands.push_back(bits);
  } else {
    Value words = LLVM::BitcastOp::create(b, loc, VectorType::get({4}, reg), value);
    for (unsigned k = 0; k < 4; ++k)
      operands.push_back(LLVM::ExtractElementOp::create(b, loc, words, i32Const(b, loc, k)));
  }
  std::string text = "st.global" + hintQualifiers(hints) + shape.suffix() + " [$0], ";
  std::string constraints = "l";
  for (unsigned k = 0; k < shape.count; ++k) {
    text += (k ? ", $" : (shape.count > 1 ? "{$" : "$")) + std::to_string(k + 1);
    constraints += "," + shape.constraint().str();
  }
  text += shape.count > 1 ? "};" : ";";
  emitAsm(b, loc, Type(), operands, text, constraints);
}

/// CUDA's device printf: the arguments packed in a buffer on the stack,
/// printed by the driver at the next synchronisation.
void NVPTXTargetInfo::printf(OpBuilder &b, Location loc, Operation *op, StringRef format,
                             ValueRange args) const {
  MLIRContext *ctx = b.getContext();
  auto generic = LLVM::LLVMPointerType::get(ctx);
  auto fn = declareFunction(b, op, "vprintf",
                            LLVM::LLVMFunctionType::get(b.getI32Type(), {generic, generic}));
  Value text = LLVM::AddrSpaceCastOp::create(
      b, loc, generic,
      stringConstant(b, loc, op, "__weft_printf_format", format,
                     globalPtrType(ctx).getAddressSpace()));
  Value buffer = LLVM::ZeroOp::create(b, loc, generic);
  if (!args.empty()) {
    SmallVector<Type> types;
    for (Value v : args)
      types.push_back(v.getType());
    auto record = LLVM::LLVMStructType::getLiteral(ctx, types);
    buffer = entryAlloca(b, loc, op, record, /*addressSpace=*/0);
    for (auto [k, v] : llvm::enumerate(args)) {
      Value field = LLVM::GEPOp::create(b, loc, generic, record, buffer,
                                        ArrayRef<LLVM::GEPArg>{0, int32_t(k)});
      LLVM::StoreOp::create(b, loc, v, field);
    }
  }
  LLVM::CallOp::create(b, loc, fn, ValueRange{text, buffer});
}

//===----------------------------------------------------------------------===//
// Off-node operations: NVSHMEM's device functions, called by name and linked
// from its device bitcode (lib/Target/Codegen/DeviceLibraries.cpp). They
// take generic pointers; signal operations are NVSHMEM_SIGNAL_SET (9) and
// NVSHMEM_SIGNAL_ADD (10).
//===----------------------------------------------------------------------===//

namespace {

constexpr int kNvshmemSignalSet = 9;
constexpr int kNvshmemSignalAdd = 10;

int nvshmemSignalOp(SignalKind kind) {
  return kind == SignalKind::set ? kNvshmemSignalSet : kNvshmemSignalAdd;
}

Value generic(OpBuilder &b, Location loc, Value ptr) {
  return LLVM::AddrSpaceCastOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                                       ptr);
}

/// Calls the NVSHMEM device function `name` (declared on first use) with
/// `args`, for its effect.
void callNvshmem(OpBuilder &b, Location loc, Operation *op, StringRef name,
                 ValueRange args) {
  SmallVector<Type> types(args.getTypes());
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()), types);
  LLVM::CallOp::create(b, loc, declareFunction(b, op, name, type), args);
}

} // namespace

Value NVPTXTargetInfo::offNodePut(OpBuilder &b, Location loc, Operation *op,
                                  const HiddenArgs &, Value dst, Value src, Value nbytes,
                                  Value peer, Value flag, Value value,
                                  SignalKind kind) const {
  if (!flag) {
    callNvshmem(b, loc, op, "nvshmemx_putmem_nbi_block",
                {generic(b, loc, dst), generic(b, loc, src), nbytes, peer});
    return {};
  }
  callNvshmem(b, loc, op, "nvshmemx_putmem_signal_nbi_block",
              {generic(b, loc, dst), generic(b, loc, src), nbytes, generic(b, loc, flag),
               value, i32Const(b, loc, nvshmemSignalOp(kind)), peer});
  return {};
}

Value NVPTXTargetInfo::offNodeGet(OpBuilder &b, Location loc, Operation *op,
                                  const HiddenArgs &, Value dst, Value src, Value nbytes,
                                  Value peer) const {
  callNvshmem(b, loc, op, "nvshmemx_getmem_block",
              {generic(b, loc, dst), generic(b, loc, src), nbytes, peer});
  return {};
}

/// 64-bit flags take NVSHMEM's signal operation, 32-bit ones its atomics.
Value NVPTXTargetInfo::offNodeSignal(OpBuilder &b, Location loc, Operation *op,
                                     const HiddenArgs &hidden, Value flag, Value value,
                                     Value peer, SignalKind kind, bool release) const {
  if (release)
    offNodeQuiet(b, loc, op, hidden);
  if (value.getType().isInteger(64)) {
    callNvshmem(b, loc, op, "nvshmemx_signal_op",
                {generic(b, loc, flag), value, i32Const(b, loc, nvshmemSignalOp(kind)), peer});
    return {};
  }
  callNvshmem(b, loc, op,
              kind == SignalKind::set ? "nvshmem_uint32_atomic_set"
                                      : "nvshmem_uint32_atomic_add",
              {generic(b, loc, flag), value, peer});
  return {};
}

Value NVPTXTargetInfo::offNodeQuiet(OpBuilder &b, Location loc, Operation *op,
                                    const HiddenArgs &) const {
  callNvshmem(b, loc, op, "nvshmem_quiet", {});
  return {};
}

std::unique_ptr<TargetInfo> createNVPTXTargetInfo(const CompileTarget &target) {
  return std::make_unique<NVPTXTargetInfo>(target);
}

} // namespace weft
