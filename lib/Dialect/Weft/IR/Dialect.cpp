//===- Dialect.cpp - the weft dialect -------------------------------------===//
#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace weft;

#include "weft/Dialect/Weft/IR/WeftDialect.cpp.inc"
#include "weft/Dialect/Weft/IR/WeftEnums.cpp.inc"

void WeftDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "weft/Dialect/Weft/IR/WeftOps.cpp.inc"
      >();
}
