//===- ProgramOpsToLLVM.cpp - hints, assertions, printing, inline asm -----===//
//
// Axis hints have done their work (the analysis read them) and leave their
// value; assumptions become llvm.assume; assertions stop the program the
// way a failed debug check does, and only in debug builds, as Triton's
// device_assert; printing goes through TargetInfo::printf, once per
// program for scalars and once per element (by its owner) for tiles; inline
// assembly becomes llvm.inline_asm per `pack` elements.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

#include "weft/abi.h"

using namespace mlir;

namespace weft {
namespace {

struct AxisHintLowering : TilePattern<AxisHintOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AxisHintOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSrc());
    return success();
  }
};

struct AssumeLowering : TilePattern<AssumeOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AssumeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::AssumeOp>(op, adaptor.getCond());
    return success();
  }
};

struct AssertLowering : TilePattern<AssertOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AssertOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (tiles.target.getOptions().debug) {
      Location loc = op.getLoc();
      Value failed = LLVM::XOrOp::create(rewriter, loc, adaptor.getCond(),
                                         LLVM::ConstantOp::create(rewriter, loc,
                                                                  rewriter.getBoolAttr(true)));
      tiles.lowering.stopIf(rewriter, loc, op, failed, i32Const(rewriter, loc, WEFT_DEBUG_ASSERT),
                            i32Const(rewriter, loc, 0), i64Const(rewriter, loc, 0),
                            op.getMessage());
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// A value as printf takes it: integers as i32 or i64, floats as f64; and
/// its conversion.
std::pair<Value, const char *> printable(OpBuilder &b, Location loc, Value v, bool hex) {
  Type type = v.getType();
  if (isa<FloatType>(type)) {
    if (!type.isF64())
      v = LLVM::FPExtOp::create(b, loc, b.getF64Type(), v);
    return {v, "%f"};
  }
  if (type.getIntOrFloatBitWidth() == 64)
    return {v, hex ? "0x%llx" : "%lld"};
  if (type.getIntOrFloatBitWidth() < 32)
    v = LLVM::SExtOp::create(b, loc, b.getI32Type(), v);
  return {v, hex ? "0x%x" : "%d"};
}

struct PrintLowering : TilePattern<PrintOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(PrintOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const TargetInfo &target = tiles.target;
    HiddenArgs hidden = tiles.lowering.hiddenArgs(op);
    SmallVector<Value> pid;
    for (Axis axis : {Axis::x, Axis::y, Axis::z})
      pid.push_back(target.programId(rewriter, loc, axis, hidden));
    RankedTensorType tile;
    for (Value arg : op.getArgs())
      if (auto type = dyn_cast<RankedTensorType>(arg.getType()))
        tile = type;
    // One line: the program, the element's coordinates, the prefix and
    // every operand's value there.
    auto line = [&](ArrayRef<Value> coords, ArrayRef<Value> values) {
      std::string format = "pid (%u, %u, %u) ";
      SmallVector<Value> args(pid);
      if (!coords.empty()) {
        format += "idx (";
        for (auto [i, c] : llvm::enumerate(coords)) {
          format += i ? ", %d" : "%d";
          args.push_back(c);
        }
        format += ") ";
      }
      format += op.getPrefix().str();
      for (auto [i, v] : llvm::enumerate(values)) {
        auto [value, conversion] = printable(rewriter, loc, v, op.getHex());
        format += (i ? ", " : "") + std::string(conversion);
        args.push_back(value);
      }
      format += "\n";
      format.push_back('\0');
      target.printf(rewriter, loc, op, format, args);
    };
    if (!tile) {
      // Scalars are the program's: one thread prints them.
      Value first = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq,
                                         target.threadId(rewriter, loc), i32Const(rewriter, loc, 0));
      emitIf(rewriter, loc, first, {}, [&] {
        line({}, SmallVector<Value>(adaptor.getArgs()));
        return SmallVector<Value>{};
      }, {});
    } else {
      TileLayout layout(tile);
      SmallVector<SmallVector<Value>> elements;
      for (auto [arg, converted] : llvm::zip(op.getArgs(), adaptor.getArgs()))
        elements.push_back(isa<RankedTensorType>(arg.getType())
                               ? unpackTile(rewriter, loc, converted)
                               : SmallVector<Value>(layout.numElements(), converted));
      auto coords = emitCoordinates(rewriter, loc, layout, target);
      auto owned = emitOwnership(rewriter, loc, layout, target);
      for (unsigned i = 0; i < layout.numElements(); ++i)
        emitIf(rewriter, loc, owned[i], {}, [&] {
          SmallVector<Value> values;
          for (auto &operand : elements)
            values.push_back(operand[i]);
          line(coords[i], values);
          return SmallVector<Value>{};
        }, {});
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct InlineAsmLowering : TilePattern<InlineAsmOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(InlineAsmOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const TypeConverter &converter = *getTypeConverter();
    unsigned pack = op.getPack();
    RankedTensorType tile;
    for (Type type : op->getResultTypes())
      tile = dyn_cast<RankedTensorType>(type);
    unsigned count = tile ? TileLayout(tile).numElements() : 1;
    if (count % pack)
      return op.emitOpError() << "pack " << pack << " needs a multiple of " << pack
                              << " elements in each thread, which holds " << count;
    if (!tile && pack != 1)
      return op.emitOpError("packs elements of tiles only");
    SmallVector<SmallVector<Value>> args;
    for (auto [arg, converted] : llvm::zip(op.getArgs(), adaptor.getArgs()))
      args.push_back(isa<RankedTensorType>(arg.getType())
                         ? unpackTile(rewriter, loc, converted)
                         : SmallVector<Value>(count, converted));
    // pack > 1: the pack's elements as one vector operand or result.
    auto packed = [&](Type elem) -> Type {
      return pack == 1 ? elem : VectorType::get({pack}, elem);
    };
    SmallVector<Type> resultElems;
    for (Type type : op->getResultTypes())
      resultElems.push_back(converter.convertType(getElementTypeOrSelf(type)));
    SmallVector<Type> groupTypes;
    for (Type elem : resultElems)
      groupTypes.push_back(packed(elem));
    Type callType = groupTypes.size() == 1
                        ? groupTypes.front()
                        : LLVM::LLVMStructType::getLiteral(rewriter.getContext(), groupTypes);
    SmallVector<SmallVector<Value>> results(resultElems.size());
    for (unsigned first = 0; first < count; first += pack) {
      SmallVector<Value> operands;
      for (auto &elements : args) {
        if (pack == 1) {
          operands.push_back(elements[first]);
          continue;
        }
        operands.push_back(packVector(rewriter, loc, ArrayRef(elements).slice(first, pack)));
      }
      auto asmOp = LLVM::InlineAsmOp::create(
          rewriter, loc, callType, operands, op.getAsmString(), op.getConstraints(),
          /*has_side_effects=*/!op.getPure(), /*is_align_stack=*/false,
          LLVM::TailCallKind::None,
          LLVM::AsmDialectAttr::get(rewriter.getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
      for (unsigned r = 0; r < resultElems.size(); ++r) {
        Value group = groupTypes.size() == 1
                          ? asmOp.getResult(0)
                          : LLVM::ExtractValueOp::create(rewriter, loc, asmOp.getResult(0), r)
                                .getResult();
        if (pack == 1)
          results[r].push_back(group);
        else
          llvm::append_range(results[r], unpackVector(rewriter, loc, group));
      }
    }
    SmallVector<Value> replacements;
    for (auto [type, elements] : llvm::zip(op->getResultTypes(), results))
      replacements.push_back(tile ? packTile(rewriter, loc, converter.convertType(type), elements)
                                  : elements.front());
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

} // namespace

void populateProgramOpPatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                               RewritePatternSet &patterns) {
  patterns.add<AxisHintLowering, AssumeLowering, AssertLowering, PrintLowering,
               InlineAsmLowering>(converter, tiles);
}

} // namespace weft
