//===- Float8ToLLVM.cpp - the float8 formats as bytes ---------------------===//
//
// LLVM has no float8 types: f8E4M3FN and f8E5M2 values are their bytes (i8,
// the type converter's choice), and their conversions are integer code,
// the same on every target. float32 to float8 rounds to nearest even and
// saturates to the largest finite value (infinities too), keeping NaN, as
// PTX's cvt.rn.satfinite does; float8 to float32 is exact. Other float
// types convert through float32 (float64 rounds twice, as it does on the
// GPUs). Arithmetic on float8 is refused (checkFloat8): kernels extend to
// a wider type, as in Triton.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace weft {
namespace {

/// A float8 format: exponent and mantissa bits, and its largest finite
/// value's bits as float32.
struct Float8Format {
  unsigned exponentBits, mantissaBits;
  uint32_t largestF32;
  bool hasInfinity; ///< e5m2: IEEE-like; e4m3fn: only S.1111.111 is NaN

  static std::optional<Float8Format> of(Type type) {
    if (isa<Float8E4M3FNType>(type))
      return Float8Format{4, 3, 0x43E00000 /* 448 */, false};
    if (isa<Float8E5M2Type>(type))
      return Float8Format{5, 2, 0x47600000 /* 57344 */, true};
    return std::nullopt;
  }
  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  /// float32's bits of the smallest normal value.
  uint32_t smallestNormalF32() const { return uint32_t(127 - bias() + 1) << 23; }
};

Value i32c(OpBuilder &b, Location loc, int64_t v) { return i32Const(b, loc, v); }

/// float32 `x` to the format's byte.
Value truncate(OpBuilder &b, Location loc, Value x, const Float8Format &f) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value bits = LLVM::BitcastOp::create(b, loc, i32, x);
  Value sign = LLVM::AndOp::create(b, loc, LLVM::LShrOp::create(b, loc, bits, i32c(b, loc, 24)),
                                   i32c(b, loc, 0x80));
  Value magnitude = LLVM::AndOp::create(b, loc, bits, i32c(b, loc, 0x7FFFFFFF));
  auto ugt = [&](Value a, uint32_t c) {
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt, a, i32c(b, loc, c));
  };
  auto uge = [&](Value a, uint32_t c) {
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge, a, i32c(b, loc, c));
  };
  // Normal results: the exponent and top mantissa bits, rounded to nearest
  // even as one integer (a carry moves into the exponent), rebiased.
  unsigned shift = 23 - f.mantissaBits;
  Value lsb = LLVM::AndOp::create(b, loc, LLVM::LShrOp::create(b, loc, magnitude, i32c(b, loc, shift)),
                                  i32c(b, loc, 1));
  Value rounded = LLVM::AddOp::create(
      b, loc, magnitude, LLVM::AddOp::create(b, loc, lsb, i32c(b, loc, (1 << (shift - 1)) - 1)));
  Value normal = LLVM::SubOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, rounded, i32c(b, loc, shift)),
      i32c(b, loc, (127 - f.bias()) << f.mantissaBits));
  // Subnormal results: the value in units of the smallest subnormal,
  // rounded to nearest even (exact in float32).
  float unit = std::ldexp(1.0f, f.bias() - 1 + int(f.mantissaBits));
  Value scaled = LLVM::FMulOp::create(
      b, loc, LLVM::BitcastOp::create(b, loc, f32, magnitude),
      LLVM::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(unit)));
  Value subnormal = LLVM::FPToUIOp::create(
      b, loc, i32, LLVM::RoundEvenOp::create(b, loc, f32, scaled));
  int64_t largest = ((int64_t(1) << (f.exponentBits + f.mantissaBits)) - 1) -
                    (f.hasInfinity ? (int64_t(1) << f.mantissaBits) : 1);
  Value code = LLVM::SelectOp::create(b, loc, uge(magnitude, f.smallestNormalF32()), normal,
                                      subnormal);
  code = LLVM::SelectOp::create(b, loc, uge(magnitude, f.largestF32), i32c(b, loc, largest), code);
  code = LLVM::SelectOp::create(b, loc, ugt(magnitude, 0x7F800000), i32c(b, loc, 0x7F), code);
  return LLVM::TruncOp::create(b, loc, b.getI8Type(), LLVM::OrOp::create(b, loc, code, sign));
}

/// The format's byte `byte` as float32.
Value extend(OpBuilder &b, Location loc, Value byte, const Float8Format &f) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value v = LLVM::ZExtOp::create(b, loc, i32, byte);
  Value sign = LLVM::ShlOp::create(b, loc, LLVM::AndOp::create(b, loc, v, i32c(b, loc, 0x80)),
                                   i32c(b, loc, 24));
  Value exponent = LLVM::AndOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, v, i32c(b, loc, f.mantissaBits)),
      i32c(b, loc, (1 << f.exponentBits) - 1));
  Value mantissa = LLVM::AndOp::create(b, loc, v, i32c(b, loc, (1 << f.mantissaBits) - 1));
  auto eq = [&](Value a, int64_t c) {
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, a, i32c(b, loc, c));
  };
  Value normal = LLVM::OrOp::create(
      b, loc,
      LLVM::ShlOp::create(b, loc,
                          LLVM::AddOp::create(b, loc, exponent, i32c(b, loc, 127 - f.bias())),
                          i32c(b, loc, 23)),
      LLVM::ShlOp::create(b, loc, mantissa, i32c(b, loc, 23 - f.mantissaBits)));
  float unit = std::ldexp(1.0f, 1 - f.bias() - int(f.mantissaBits));
  Value subnormal = LLVM::BitcastOp::create(
      b, loc, i32,
      LLVM::FMulOp::create(b, loc, LLVM::UIToFPOp::create(b, loc, f32, mantissa),
                           LLVM::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(unit))));
  Value bits = LLVM::SelectOp::create(b, loc, eq(exponent, 0), subnormal, normal);
  Value nan = i32c(b, loc, 0x7FC00000);
  if (f.hasInfinity) {
    Value special = eq(exponent, (1 << f.exponentBits) - 1);
    Value top = LLVM::SelectOp::create(b, loc, eq(mantissa, 0), i32c(b, loc, 0x7F800000), nan);
    bits = LLVM::SelectOp::create(b, loc, special, top, bits);
  } else {
    bits = LLVM::SelectOp::create(
        b, loc, eq(LLVM::AndOp::create(b, loc, v, i32c(b, loc, 0x7F)), 0x7F), nan, bits);
  }
  return LLVM::BitcastOp::create(b, loc, f32, LLVM::OrOp::create(b, loc, bits, sign));
}

/// `x` (a float of another width) as float32, and float32 back to `type`.
Value toF32(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType(), f32 = b.getF32Type();
  if (type.isF32())
    return x;
  if (type.getIntOrFloatBitWidth() > 32)
    return LLVM::FPTruncOp::create(b, loc, f32, x);
  return LLVM::FPExtOp::create(b, loc, f32, x);
}

Value fromF32(OpBuilder &b, Location loc, Value x, Type type) {
  if (type.isF32())
    return x;
  if (type.getIntOrFloatBitWidth() > 32)
    return LLVM::FPExtOp::create(b, loc, type, x);
  return LLVM::FPTruncOp::create(b, loc, type, x);
}

Type elementOf(Value v) { return getElementTypeOrSelf(v.getType()); }

/// A scalar conversion with a float8 side (tiles go through the
/// element-wise lowering, which calls lowerFloat8Element per element).
struct Float8Conversion : ConversionPattern {
  Float8Conversion(const LLVMTypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), kTileBenefit, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1 || isa<ShapedType>(op->getResult(0).getType()) ||
        !isFloat8Conversion(op))
      return failure();
    rewriter.replaceOp(op, lowerFloat8Element(rewriter, op->getLoc(), op, operands.front()));
    return success();
  }
};

/// A scalar float8 constant is its byte.
struct Float8Constant : ConvertOpToLLVMPattern<arith::ConstantOp> {
  Float8Constant(const LLVMTypeConverter &converter)
      : ConvertOpToLLVMPattern(converter, kTileBenefit) {}
  LogicalResult matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<FloatAttr>(op.getValue());
    if (!value || !Float8Format::of(value.getType()))
      return failure();
    rewriter.replaceOpWithNewOp<LLVM::ConstantOp>(op, rewriter.getI8Type(),
                                                  float8Bits(rewriter, value));
    return success();
  }
};

} // namespace

/// Scalar conversions with a float8 side: extf, truncf, bitcast, and the
/// integer ones (arith folds truncf(sitofp x) into one sitofp), which go
/// through float32 like the other widths.
bool isFloat8Conversion(Operation *op) {
  if (!isa<arith::ExtFOp, arith::TruncFOp, arith::BitcastOp, arith::SIToFPOp, arith::UIToFPOp,
           arith::FPToSIOp, arith::FPToUIOp>(op))
    return false;
  return Float8Format::of(elementOf(op->getOperand(0))) ||
         Float8Format::of(elementOf(op->getResult(0)));
}

Value lowerFloat8Element(OpBuilder &b, Location loc, Operation *op, Value in) {
  if (isa<arith::BitcastOp>(op))
    return in; // float8 <-> i8: the byte itself
  Type f32 = b.getF32Type(), result = elementOf(op->getResult(0));
  if (auto from = Float8Format::of(elementOf(op->getOperand(0)))) {
    Value wide = extend(b, loc, in, *from);
    if (isa<arith::FPToSIOp>(op))
      return LLVM::FPToSIOp::create(b, loc, result, wide);
    if (isa<arith::FPToUIOp>(op))
      return LLVM::FPToUIOp::create(b, loc, result, wide);
    return fromF32(b, loc, wide, result);
  }
  Value wide = isa<arith::SIToFPOp>(op)   ? LLVM::SIToFPOp::create(b, loc, f32, in).getResult()
               : isa<arith::UIToFPOp>(op) ? LLVM::UIToFPOp::create(b, loc, f32, in).getResult()
                                          : toF32(b, loc, in);
  return truncate(b, loc, wide, *Float8Format::of(result));
}

TypedAttr float8Bits(Builder &b, Attribute value) {
  auto number = dyn_cast<FloatAttr>(value);
  if (!number || !Float8Format::of(number.getType()))
    return cast<TypedAttr>(value);
  return b.getIntegerAttr(b.getI8Type(), number.getValue().bitcastToAPInt());
}

LogicalResult checkFloat8(Operation *op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      isa<arith::ConstantOp, arith::SelectOp>(op) || isFloat8Conversion(op))
    return success();
  for (Type type : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
    if (Float8Format::of(getElementTypeOrSelf(type)))
      return op->emitOpError() << "computes on " << getElementTypeOrSelf(type)
                               << ", a storage format: extend it to a wider float first";
  return success();
}

void populateFloat8Patterns(const LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<Float8Constant>(converter);
  patterns.add<Float8Conversion>(converter, patterns.getContext());
}

} // namespace weft
