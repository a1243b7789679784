//===- Layouts.cpp - #weft.blocked and #weft.slice ------------------------===//
#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace weft;

#define GET_ATTRDEF_CLASSES
#include "weft/Dialect/Weft/IR/WeftAttrDefs.cpp.inc"

void WeftDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "weft/Dialect/Weft/IR/WeftAttrDefs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Assembly: `<{key = value, ...}>`, parsed as a dictionary so the keys may
// come in any order and a missing one is reported by name.
//===----------------------------------------------------------------------===//

static FailureOr<DictionaryAttr> parseDict(AsmParser &parser) {
  DictionaryAttr dict;
  if (parser.parseLess() || parser.parseAttribute(dict) ||
      parser.parseGreater())
    return failure();
  return dict;
}

static FailureOr<SmallVector<unsigned>>
getUnsignedArray(AsmParser &parser, DictionaryAttr dict, StringRef key) {
  auto array = dyn_cast_or_null<ArrayAttr>(dict.get(key));
  if (!array) {
    parser.emitError(parser.getNameLoc())
        << "expected '" << key << "' as an array of integers";
    return failure();
  }
  SmallVector<unsigned> values;
  for (Attribute element : array) {
    auto value = dyn_cast<IntegerAttr>(element);
    if (!value || value.getInt() < 0) {
      parser.emitError(parser.getNameLoc())
          << "'" << key << "' holds non-negative integers";
      return failure();
    }
    values.push_back(value.getInt());
  }
  return values;
}

Attribute BlockedEncodingAttr::parse(AsmParser &parser, Type) {
  auto dict = parseDict(parser);
  if (failed(dict))
    return {};
  SmallVector<SmallVector<unsigned>> fields;
  for (StringRef key :
       {"sizePerThread", "threadsPerWarp", "warpsPerProgram", "order"}) {
    auto values = getUnsignedArray(parser, *dict, key);
    if (failed(values))
      return {};
    fields.push_back(std::move(*values));
  }
  return parser.getChecked<BlockedEncodingAttr>(
      parser.getContext(), fields[0], fields[1], fields[2], fields[3]);
}

void BlockedEncodingAttr::print(AsmPrinter &printer) const {
  auto list = [&](ArrayRef<unsigned> values) {
    printer << "[";
    llvm::interleaveComma(values, printer);
    printer << "]";
  };
  printer << "<{sizePerThread = ";
  list(getSizePerThread());
  printer << ", threadsPerWarp = ";
  list(getThreadsPerWarp());
  printer << ", warpsPerProgram = ";
  list(getWarpsPerProgram());
  printer << ", order = ";
  list(getOrder());
  printer << "}>";
}

Attribute SliceEncodingAttr::parse(AsmParser &parser, Type) {
  auto dict = parseDict(parser);
  if (failed(dict))
    return {};
  auto dim = dyn_cast_or_null<IntegerAttr>(dict->get("dim"));
  Attribute parent = dict->get("parent");
  if (!dim || dim.getInt() < 0 || !parent) {
    parser.emitError(parser.getNameLoc())
        << "expected a non-negative integer 'dim' and a 'parent' layout";
    return {};
  }
  return parser.getChecked<SliceEncodingAttr>(parser.getContext(),
                                              dim.getInt(), parent);
}

void SliceEncodingAttr::print(AsmPrinter &printer) const {
  printer << "<{dim = " << getDim() << ", parent = " << getParent() << "}>";
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

LogicalResult
BlockedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            ArrayRef<unsigned> sizePerThread,
                            ArrayRef<unsigned> threadsPerWarp,
                            ArrayRef<unsigned> warpsPerProgram,
                            ArrayRef<unsigned> order) {
  size_t rank = order.size();
  if (rank == 0 || sizePerThread.size() != rank ||
      threadsPerWarp.size() != rank || warpsPerProgram.size() != rank)
    return emitError() << "blocked layout needs sizePerThread, "
                          "threadsPerWarp, warpsPerProgram and order of one "
                          "non-zero length";
  for (ArrayRef<unsigned> field : {sizePerThread, threadsPerWarp,
                                   warpsPerProgram})
    if (llvm::any_of(field, [](unsigned v) { return !llvm::isPowerOf2_32(v); }))
      return emitError() << "blocked layout sizes must be powers of two";
  SmallVector<bool> seen(rank, false);
  for (unsigned dim : order) {
    if (dim >= rank || seen[dim])
      return emitError() << "blocked layout order must be a permutation of "
                            "0.."
                         << rank - 1;
    seen[dim] = true;
  }
  return success();
}

LogicalResult SwizzledSharedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                         unsigned bytes, unsigned warps) {
  if (bytes != 32 && bytes != 64 && bytes != 128)
    return emitError() << "swizzled blocks are 32, 64 or 128 bytes wide, not " << bytes;
  return success();
}

LogicalResult BlockedEncodingAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getRank())
    return emitError() << "blocked layout of rank " << getRank()
                       << " on a tensor of rank " << shape.size();
  for (int64_t size : shape)
    if (size <= 0 || !llvm::isPowerOf2_64(size))
      return emitError() << "distributed tiles need power-of-two static "
                            "dimensions, got "
                         << size;
  return success();
}

LogicalResult
SliceEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          unsigned dim, Attribute parent) {
  auto blocked = dyn_cast<BlockedEncodingAttr>(parent);
  if (!blocked)
    return emitError() << "slice layout needs a #weft.blocked parent";
  if (blocked.getRank() < 2 || dim >= blocked.getRank())
    return emitError() << "slice dim " << dim << " is not a dimension of a "
                          "parent of rank "
                       << blocked.getRank() << " (at least 2)";
  return success();
}

LogicalResult SliceEncodingAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  auto parent = cast<BlockedEncodingAttr>(getParent());
  if (shape.size() + 1 != parent.getRank())
    return emitError() << "slice of a rank-" << parent.getRank()
                       << " layout on a tensor of rank " << shape.size();
  SmallVector<int64_t> padded(shape);
  padded.insert(padded.begin() + getDim(), 1);
  return parent.verifyEncoding(padded, elementType, emitError);
}

//===----------------------------------------------------------------------===//
// Layouts of the rearranging ops.
//===----------------------------------------------------------------------===//

BlockedEncodingAttr weft::transposedLayout(BlockedEncodingAttr src, ArrayRef<int32_t> order) {
  unsigned rank = order.size();
  SmallVector<unsigned> spt(rank), tpw(rank), wpp(rank), inverse(rank), fastest;
  for (unsigned d = 0; d < rank; ++d) {
    spt[d] = src.getSizePerThread()[order[d]];
    tpw[d] = src.getThreadsPerWarp()[order[d]];
    wpp[d] = src.getWarpsPerProgram()[order[d]];
    inverse[order[d]] = d;
  }
  for (unsigned d : src.getOrder())
    fastest.push_back(inverse[d]);
  return BlockedEncodingAttr::get(src.getContext(), spt, tpw, wpp, fastest);
}

BlockedEncodingAttr weft::joinedLayout(BlockedEncodingAttr src) {
  unsigned rank = src.getRank();
  SmallVector<unsigned> spt(src.getSizePerThread()), tpw(src.getThreadsPerWarp()),
      wpp(src.getWarpsPerProgram()), order{rank};
  spt.push_back(2);
  tpw.push_back(1);
  wpp.push_back(1);
  llvm::append_range(order, src.getOrder());
  return BlockedEncodingAttr::get(src.getContext(), spt, tpw, wpp, order);
}

BlockedEncodingAttr weft::splitLayout(BlockedEncodingAttr src) {
  unsigned last = src.getRank() - 1;
  if (src.getRank() < 2 || src.getSizePerThread()[last] != 2 ||
      src.getThreadsPerWarp()[last] != 1 || src.getWarpsPerProgram()[last] != 1)
    return {};
  SmallVector<unsigned> order;
  for (unsigned d : src.getOrder())
    if (d != last)
      order.push_back(d);
  return BlockedEncodingAttr::get(src.getContext(), src.getSizePerThread().drop_back(),
                                  src.getThreadsPerWarp().drop_back(),
                                  src.getWarpsPerProgram().drop_back(), order);
}
