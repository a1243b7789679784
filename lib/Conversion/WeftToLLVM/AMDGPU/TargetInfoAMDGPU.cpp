//===- TargetInfoAMDGPU.cpp - gfx942 --------------------------------------===//
//
// Everything goes through LLVM atomics with AMDGPU syncscopes; the backend
// adds the cache maintenance (buffer_wbl2 / buffer_inv) each scope needs.
// There is no multicast hardware: multimem ops use the unicast fallback.
//
//===----------------------------------------------------------------------===//
#include "../KernelContext.h"
#include "../LoweringUtils.h"
#include "../TargetInfos.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

using namespace mlir;

namespace weft {
namespace {

/// Kernel arguments and the dispatch packet live in the constant address
/// space: loads from it are scalar (s_load) and cached.
constexpr unsigned kConstantAddressSpace = 4;

class AMDGPUTargetInfo : public TargetInfo {
public:
  using TargetInfo::TargetInfo;

  // By-value kernel arguments live in the kernarg segment (byref).
  LLVM::LLVMPointerType byValueParamType(MLIRContext *ctx) const override {
    return LLVM::LLVMPointerType::get(ctx, kConstantAddressSpace);
  }

  void finalizeKernel(LLVM::LLVMFuncOp kernel, OpBuilder &b) const override {
    kernel->setAttr(ROCDL::ROCDLDialect::getKernelFuncAttrName(),
                    b.getUnitAttr());
    std::string size = std::to_string(target.threadsPerProgram());
    kernel->setAttr(ROCDL::ROCDLDialect::getFlatWorkGroupSizeAttrName(),
                    b.getStringAttr(size + "," + size));
    for (const ByValueParam &param : takeByValueParams(kernel, kernel.getNumArguments() - 1)) {
      kernel.setArgAttr(param.index, LLVM::LLVMDialect::getByRefAttrName(),
                        TypeAttr::get(param.type));
      kernel.setArgAttr(param.index, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(param.alignment));
    }
  }

  Value programId(OpBuilder &b, Location loc, Axis axis,
                  const HiddenArgs &) const override {
    return specialRegister<ROCDL::BlockIdXOp, ROCDL::BlockIdYOp,
                           ROCDL::BlockIdZOp>(b, loc, axis);
  }

  /// ceil(grid_size / workgroup_size) from the HSA dispatch packet; the
  /// ROCDL grid-dim ops call into the device libraries, which we don't link.
  Value numPrograms(OpBuilder &b, Location loc, Axis axis,
                    const HiddenArgs &) const override {
    auto constPtr = LLVM::LLVMPointerType::get(b.getContext(),
                                               kConstantAddressSpace);
    Value packet = LLVM::CallIntrinsicOp::create(
                       b, loc, constPtr,
                       b.getStringAttr("llvm.amdgcn.dispatch.ptr"),
                       ValueRange{})
                       .getResult(0);
    unsigned a = static_cast<unsigned>(axis);
    // hsa_kernel_dispatch_packet_t: u16 workgroup_size_{x,y,z} at 4,
    // u32 grid_size_{x,y,z} at 12.
    Value wg = LLVM::LoadOp::create(
        b, loc, b.getI16Type(),
        byteOffset(b, loc, packet, i64Const(b, loc, 4 + 2 * a)), 2,
        false, false, /*isInvariant=*/true);
    Value grid = LLVM::LoadOp::create(
        b, loc, b.getI32Type(),
        byteOffset(b, loc, packet, i64Const(b, loc, 12 + 4 * a)), 4,
        false, false, /*isInvariant=*/true);
    Value wg32 = LLVM::ZExtOp::create(b, loc, b.getI32Type(), wg);
    Value sum = LLVM::AddOp::create(
        b, loc, grid, LLVM::SubOp::create(b, loc, wg32, i32Const(b, loc, 1)));
    return LLVM::UDivOp::create(b, loc, sum, wg32);
  }

  Value threadId(OpBuilder &b, Location loc) const override {
    return ROCDL::ThreadIdXOp::create(b, loc, b.getI32Type());
  }

  void programBarrier(OpBuilder &b, Location loc, int64_t, unsigned) const override {
    ROCDL::BarrierOp::create(b, loc);
  }

  StringRef syncScope(MemScope scope) const override {
    switch (scope) {
    case MemScope::cta:
      return "workgroup";
    case MemScope::gpu:
      return "agent";
    case MemScope::sys:
      return "";
    }
    return "";
  }

  /// s_memrealtime counts at a constant 100 MHz.
  Value timerNs(OpBuilder &b, Location loc) const override {
    Value ticks = LLVM::CallIntrinsicOp::create(
                      b, loc, b.getI64Type(),
                      b.getStringAttr("llvm.amdgcn.s.memrealtime"),
                      ValueRange{})
                      .getResult(0);
    return LLVM::MulOp::create(b, loc, ticks, i64Const(b, loc, 10));
  }

  void pollPause(OpBuilder &b, Location loc) const override {
    ROCDL::SSleepOp::create(b, loc, b.getI32IntegerAttr(1));
  }

  /// Streaming hints (cs, evict_first) as nontemporal accesses, which
  /// the backend marks to bypass the caches' normal retention; the rest
  /// have no gfx942 equivalent.
  static bool streaming(const AccessHints &hints) {
    return hints.cache == CacheModifier::cs || hints.evict == EvictionPolicy::evict_first;
  }
  Value loadHinted(OpBuilder &b, Location loc, Type type, Value ptr, unsigned alignment,
                   const AccessHints &hints) const override {
    return LLVM::LoadOp::create(b, loc, type, ptr, alignment, hints.isVolatile,
                                streaming(hints));
  }
  void storeHinted(OpBuilder &b, Location loc, Value value, Value ptr, unsigned alignment,
                   const AccessHints &hints) const override {
    LLVM::StoreOp::create(b, loc, value, ptr, alignment, hints.isVolatile, streaming(hints));
  }

  /// HIP's device printf: OCKL's hostcall protocol (the format, then the
  /// arguments as 64-bit words, seven to a call), which codegen links
  /// from ockl.bc; the HIP runtime's hostcall service prints.
  void printf(OpBuilder &b, Location loc, Operation *op, StringRef format,
              ValueRange args) const override {
    MLIRContext *ctx = b.getContext();
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto flat = LLVM::LLVMPointerType::get(ctx);
    auto call = [&](StringRef name, ArrayRef<Value> operands) {
      SmallVector<Type> types;
      for (Value v : operands)
        types.push_back(v.getType());
      auto fn = declareFunction(b, op, name, LLVM::LLVMFunctionType::get(i64, types));
      return LLVM::CallOp::create(b, loc, fn, operands).getResult();
    };
    Value text = LLVM::AddrSpaceCastOp::create(
        b, loc, flat, stringConstant(b, loc, op, "__weft_printf_format", format,
                                     kConstantAddressSpace));
    Value desc = call("__ockl_printf_begin", {i64Const(b, loc, 0)});
    desc = call("__ockl_printf_append_string_n",
                {desc, text, i64Const(b, loc, format.size()), i32Const(b, loc, args.empty())});
    for (size_t first = 0; first < args.size(); first += 7) {
      size_t n = std::min<size_t>(7, args.size() - first);
      SmallVector<Value> operands{desc, i32Const(b, loc, n)};
      for (size_t k = 0; k < 7; ++k) {
        if (first + k >= args.size()) {
          operands.push_back(i64Const(b, loc, 0));
          continue;
        }
        Value v = args[first + k];
        if (isa<FloatType>(v.getType()))
          v = LLVM::BitcastOp::create(b, loc, i64, v);
        else if (v.getType() != i64)
          v = LLVM::ZExtOp::create(b, loc, i64, v);
        operands.push_back(v);
      }
      operands.push_back(i32Const(b, loc, first + n == args.size()));
      desc = call("__ockl_printf_append_args", operands);
    }
    (void)i32;
  }
  /// Where constants live on AMDGPU.
  static constexpr unsigned kConstantAddressSpace = 4;

  /// ds_bpermute reads the value of the lane at byte address 4 * lane.
  Value shuffleXor(OpBuilder &b, Location loc, Value value,
                   unsigned laneMask) const override {
    Value lane = LLVM::URemOp::create(b, loc, threadId(b, loc),
                                      i32Const(b, loc, target.spec.warpSize()));
    Value source = LLVM::XOrOp::create(b, loc, lane, i32Const(b, loc, laneMask));
    Value address = LLVM::ShlOp::create(b, loc, source, i32Const(b, loc, 2));
    return ROCDL::DsBpermuteOp::create(b, loc, b.getI32Type(), address, value);
  }

  /// v_mfma_f32_16x16x16_{bf16,f16}: a and b one vector<4 x elem> each
  /// (bf16 goes as the i16 bits, as the intrinsic takes it), c 4 f32.
  SmallVector<Value> mma(OpBuilder &b, Location loc, Type elemType, ValueRange a,
                         ValueRange bRegs, ValueRange c) const override {
    Type f32 = b.getF32Type(), acc = VectorType::get({4}, f32);
    auto operand = [&](Value v) -> Value {
      return elemType.isBF16()
                 ? LLVM::BitcastOp::create(b, loc, VectorType::get({4}, b.getI16Type()), v)
                 : v;
    };
    Value sums = packVector(b, loc, c);
    SmallVector<Value> args{operand(a.front()), operand(bRegs.front()), sums,
                            i32Const(b, loc, 0), i32Const(b, loc, 0), i32Const(b, loc, 0)};
    Value d = elemType.isBF16()
                  ? ROCDL::mfma_f32_16x16x16bf16_1k::create(b, loc, acc, args).getResult()
                  : ROCDL::mfma_f32_16x16x16f16::create(b, loc, acc, args).getResult();
    return unpackVector(b, loc, d);
  }
};

} // namespace

std::unique_ptr<TargetInfo> createAMDGPUTargetInfo(const CompileTarget &target) {
  return std::make_unique<AMDGPUTargetInfo>(target);
}

} // namespace weft
