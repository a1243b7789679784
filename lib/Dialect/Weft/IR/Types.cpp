//===- Types.cpp - weft types ---------------------------------------------===//
#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace weft;

#define GET_TYPEDEF_CLASSES
#include "weft/Dialect/Weft/IR/WeftTypes.cpp.inc"

void WeftDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "weft/Dialect/Weft/IR/WeftTypes.cpp.inc"
      >();
}

// !weft.ptr<f32> | !weft.ptr<f32, multicast>
Type PtrType::parse(AsmParser &parser) {
  Type pointee;
  if (parser.parseLess() || parser.parseType(pointee))
    return {};
  bool multicast = false;
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("multicast"))
      return {};
    multicast = true;
  }
  if (parser.parseGreater())
    return {};
  return PtrType::get(pointee, multicast);
}

void PtrType::print(AsmPrinter &printer) const {
  printer << "<" << getPointee();
  if (getMulticast())
    printer << ", multicast";
  printer << ">";
}

// !weft.shared<64x32xbf16> or !weft.shared<64x32xbf16, #weft.swizzled<...>>
Type SharedType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  SwizzledSharedAttr layout;
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma()) && parser.parseAttribute(layout))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<SharedType>(parser.getContext(), shape, elementType, layout);
}

void SharedType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t size : getShape())
    printer << size << "x";
  printer << getElementType();
  if (getLayout())
    printer << ", " << getLayout();
  printer << ">";
}

LogicalResult SharedType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType,
                                 SwizzledSharedAttr layout) {
  if (shape.size() != 2 || llvm::any_of(shape, [](int64_t size) { return size <= 0; }))
    return emitError() << "a shared buffer holds one 2-D tile";
  if (!layout)
    return success();
  unsigned elementBits = elementType.isIntOrFloat() ? elementType.getIntOrFloatBitWidth() : 0;
  if (!elementBits || elementBits % 8 ||
      (shape[1] * elementBits / 8) % layout.getBytes() || shape[0] % 8)
    return emitError() << "a swizzled buffer's rows must be whole " << layout.getBytes()
                       << "-byte blocks and its row count a multiple of 8";
  if (unsigned warps = layout.getWarps(); warps && (warps % 4 || shape[0] % (16 * warps)))
    return emitError() << "rows interleaved for " << warps
                       << " warps need whole warpgroups and a multiple of " << 16 * warps
                       << " rows";
  return success();
}

// !weft.tensordesc<128x64xbf16>
Type TensorDescType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return parser.getChecked<TensorDescType>(parser.getContext(), shape, elementType);
}

void TensorDescType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t size : getBlockShape())
    printer << size << "x";
  printer << getElementType() << ">";
}

LogicalResult TensorDescType::verify(function_ref<InFlightDiagnostic()> emitError,
                                     ArrayRef<int64_t> blockShape, Type elementType) {
  // The runtime's descriptor holds up to WEFT_TENSOR_DESC_MAX_RANK (5)
  // dimensions of 1-, 2-, 4- or 8-byte elements.
  if (blockShape.empty() || blockShape.size() > 5 ||
      llvm::any_of(blockShape, [](int64_t size) { return size <= 0; }))
    return emitError() << "a tensor descriptor's block has 1 to 5 dimensions of positive size";
  unsigned bits = elementType.isIntOrFloat() ? elementType.getIntOrFloatBitWidth() : 0;
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    return emitError() << "a tensor descriptor's elements are integers or floats of 1, 2, 4 "
                          "or 8 bytes, not "
                       << elementType;
  return success();
}

Type weft::getPointeeType(Type ptrLike) {
  auto ptr = dyn_cast<PtrType>(getElementTypeOrSelf(ptrLike));
  if (!ptr)
    return {};
  if (auto tensor = dyn_cast<RankedTensorType>(ptrLike))
    return tensor.clone(ptr.getPointee());
  return ptr.getPointee();
}

Type weft::getMaskType(Type ptrLike) {
  Type i1 = IntegerType::get(ptrLike.getContext(), 1);
  if (auto tensor = dyn_cast<RankedTensorType>(ptrLike))
    return tensor.clone(i1);
  return i1;
}
