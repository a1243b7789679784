//===- MultimemToLLVM.cpp - NVLS multimem ops and their unicast fallback --===//
//
// On NVPTX, with multicast live in the context, the multimem instruction
// itself; otherwise (multicast off, which is the default, AMDGPU, host) one
// unicast access per peer through the symmetric heap: the ranks of this
// node, which is what a multicast object spans (every rank when the job is
// one node). f16/bf16 reductions accumulate in f32 in both paths.
//
//===----------------------------------------------------------------------===//
#include "KernelContext.h"
#include "Lowering.h"
#include "LoweringUtils.h"
#include "TargetInfos.h"

using namespace mlir;

namespace weft {
namespace {

Value multicastLive(OpBuilder &b, Location loc, Operation *op,
                    const Lowering &lowering) {
  Value flags = lowering.contextField(b, loc, op,
                                      offsetof(weft_kernel_context, flags),
                                      b.getI32Type());
  return LLVM::ICmpOp::create(
      b, loc, LLVM::ICmpPredicate::ne,
      LLVM::AndOp::create(b, loc, flags, i32Const(b, loc, WEFT_CTX_MULTICAST)),
      i32Const(b, loc, 0));
}

/// Chooses between the NVLS instruction and the fallback at run time where
/// the target has NVLS; the fallback alone elsewhere.
SmallVector<Value> multimemOrFallback(OpBuilder &b, Location loc, Operation *op,
                                      const Lowering &lowering, Value mptr,
                                      Value value, TypeRange resultTypes,
                                      function_ref<SmallVector<Value>()> fallback) {
  if (!lowering.target.getSpec().hasMultimem())
    return fallback();
  return emitIfElse(
      b, loc, multicastLive(b, loc, op, lowering), resultTypes,
      [&]() -> SmallVector<Value> {
        if (Value loaded = lowering.target.multimem(b, loc, op, mptr, value))
          return {loaded};
        return {};
      },
      fallback);
}

/// `body(j, peer, carried)` for the j-th rank `peer` of this node, carrying
/// values from `inits` (Lowering::forEach).
SmallVector<Value>
forEachNodeRank(OpBuilder &b, Location loc, Operation *op, const Lowering &lowering,
                ValueRange inits,
                function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
  Type i32 = b.getI32Type();
  Value size = lowering.contextField(b, loc, op, offsetof(weft_kernel_context, local_size), i32);
  Value first = LLVM::MulOp::create(
      b, loc, lowering.contextField(b, loc, op, offsetof(weft_kernel_context, node), i32), size);
  return lowering.forEach(b, loc, size, inits, [&](Value j, ValueRange carried) {
    return body(j, LLVM::AddOp::create(b, loc, first, j), carried);
  });
}

bool isHalf(Type type) {
  Type elem = getElementTypeOrSelf(type);
  return elem.isF16() || elem.isBF16();
}

/// The type a reduction accumulates in: f32 lanes for f16/bf16.
Type accumulatorType(OpBuilder &b, Type type) {
  if (!isHalf(type))
    return type;
  return VectorType::get(cast<VectorType>(type).getShape(), b.getF32Type());
}

Value combine(OpBuilder &b, Location loc, MultimemReduce kind, Value acc,
              Value v) {
  bool isFloat = isa<FloatType>(getElementTypeOrSelf(acc.getType()));
  switch (kind) {
  case MultimemReduce::add:
    return isFloat ? LLVM::FAddOp::create(b, loc, acc, v).getResult()
                   : LLVM::AddOp::create(b, loc, acc, v).getResult();
  case MultimemReduce::min:
    return isFloat ? LLVM::MinNumOp::create(b, loc, acc, v).getResult()
                   : LLVM::SMinOp::create(b, loc, acc, v).getResult();
  case MultimemReduce::max:
    return isFloat ? LLVM::MaxNumOp::create(b, loc, acc, v).getResult()
                   : LLVM::SMaxOp::create(b, loc, acc, v).getResult();
  case MultimemReduce::umin:
    return LLVM::UMinOp::create(b, loc, acc, v);
  case MultimemReduce::umax:
    return LLVM::UMaxOp::create(b, loc, acc, v);
  }
  return acc;
}

/// A peer's value as the fallback reads it: a relaxed or acquire access is
/// a volatile load (relaxed at system scope on NVPTX); vectors cannot be
/// atomic, so the acquire is a fence after the loop.
Value loadPeer(OpBuilder &b, Location loc, Type type, Value ptr,
               MemOrder order) {
  return LLVM::LoadOp::create(b, loc, type, ptr, naturalAlignment(type),
                              /*isVolatile=*/order != MemOrder::weak);
}

struct LdReduceLowering : WeftPattern<MultimemLdReduceOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(MultimemLdReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    Type accType = accumulatorType(rewriter, type);
    auto fallback = [&]() -> SmallVector<Value> {
      // The accumulator is carried through the peer loop in registers; the
      // first peer's value replaces the initial zero.
      Value zero = LLVM::ZeroOp::create(rewriter, loc, accType);
      Value acc = forEachNodeRank(
          rewriter, loc, op, lowering, zero,
          [&](Value j, Value peer, ValueRange carried) -> SmallVector<Value> {
            Value ptr =
                lowering.translate(rewriter, loc, op, adaptor.getPtr(), peer);
            Value v = loadPeer(rewriter, loc, type, ptr, op.getOrder());
            if (accType != type)
              v = LLVM::FPExtOp::create(rewriter, loc, accType, v);
            Value first =
                LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq,
                                     j, i32Const(rewriter, loc, 0));
            return {LLVM::SelectOp::create(
                rewriter, loc, first, v,
                combine(rewriter, loc, op.getKind(), carried.front(), v))};
          }).front();
      if (op.getOrder() == MemOrder::acquire)
        lowering.target.fence(rewriter, loc, MemOrder::acquire, MemScope::sys);
      if (accType != type)
        acc = LLVM::FPTruncOp::create(rewriter, loc, type, acc);
      return {acc};
    };
    rewriter.replaceOp(op, multimemOrFallback(rewriter, loc, op, lowering,
                                              adaptor.getPtr(), Value(), {type},
                                              fallback));
    return success();
  }
};

struct StoreLowering : WeftPattern<MultimemStoreOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(MultimemStoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // As a scalar store: after the program joins, so that no thread
    // overwrites a copy another has yet to read (an in-place all-reduce
    // reads every copy with ld_reduce, then stores to every copy).
    lowering.joinProgram(rewriter, loc);
    auto fallback = [&]() -> SmallVector<Value> {
      if (op.getOrder() == MemOrder::release)
        lowering.target.fence(rewriter, loc, MemOrder::release, MemScope::sys);
      Value value = adaptor.getValue();
      forEachNodeRank(rewriter, loc, op, lowering, {}, [&](Value, Value peer, ValueRange) {
        Value ptr = lowering.translate(rewriter, loc, op, adaptor.getPtr(), peer);
        LLVM::StoreOp::create(rewriter, loc, value, ptr, /*alignment=*/0,
                              /*isVolatile=*/op.getOrder() != MemOrder::weak);
        return SmallVector<Value>{};
      });
      return {};
    };
    multimemOrFallback(rewriter, loc, op, lowering, adaptor.getPtr(),
                       adaptor.getValue(), {}, fallback);
    rewriter.eraseOp(op);
    return success();
  }
};

RMWKind rmwKind(MultimemReduce kind, Type elem) {
  switch (kind) {
  case MultimemReduce::add:
    return isa<FloatType>(elem) ? RMWKind::fadd : RMWKind::add;
  case MultimemReduce::min:
    return RMWKind::min;
  case MultimemReduce::max:
    return RMWKind::max;
  case MultimemReduce::umin:
    return RMWKind::umin;
  case MultimemReduce::umax:
    return RMWKind::umax;
  }
  return RMWKind::add;
}

/// A reduction into every copy: once per program, like every scalar atomic.
struct RedLowering : WeftPattern<MultimemRedOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(MultimemRedOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool release = op.getOrder() == MemOrder::release;
    Value value = adaptor.getValue();
    Type elem = getElementTypeOrSelf(value.getType());
    auto fallback = [&]() -> SmallVector<Value> {
      auto vec = dyn_cast<VectorType>(value.getType());
      int64_t lanes = vec ? vec.getNumElements() : 1;
      forEachNodeRank(rewriter, loc, op, lowering, {}, [&](Value, Value peer, ValueRange) {
        Value ptr = lowering.translate(rewriter, loc, op, adaptor.getPtr(), peer);
        for (int64_t lane = 0; lane < lanes; ++lane) {
          Value laneValue =
              vec ? LLVM::ExtractElementOp::create(rewriter, loc, value,
                                                   i32Const(rewriter, loc, lane))
                        .getResult()
                  : value;
          Value lanePtr = LLVM::GEPOp::create(
              rewriter, loc, ptr.getType(), elem, ptr,
              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(lane)});
          MemOrder order = release ? MemOrder::release : MemOrder::relaxed;
          lowering.target.atomicRMW(rewriter, loc, rmwKind(op.getKind(), elem),
                                    lanePtr, laneValue, order, MemScope::sys);
        }
        return SmallVector<Value>{};
      });
      return {};
    };
    lowering.oncePerProgram(rewriter, loc, {}, release, /*joinAfter=*/false,
                            [&] {
                              return multimemOrFallback(rewriter, loc, op,
                                                        lowering,
                                                        adaptor.getPtr(), value,
                                                        {}, fallback);
                            });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateMultimemPatterns(const LLVMTypeConverter &converter,
                              const Lowering &lowering,
                              RewritePatternSet &patterns) {
  patterns.add<LdReduceLowering, StoreLowering, RedLowering>(converter,
                                                             lowering);
}

} // namespace weft
