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

// !weft.shared<64x32xbf16>
Type SharedType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return SharedType::get(parser.getContext(), shape, elementType);
}

void SharedType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t size : getShape())
    printer << size << "x";
  printer << getElementType() << ">";
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
