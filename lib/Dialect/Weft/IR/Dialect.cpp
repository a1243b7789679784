//===- Dialect.cpp - the weft dialect -------------------------------------===//
#include "weft/Dialect/Weft/IR/Dialect.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

bool weft::hasAcquire(MemOrder order) {
  return order == MemOrder::acquire || order == MemOrder::acq_rel ||
         order == MemOrder::seq_cst;
}

bool weft::hasRelease(MemOrder order) {
  return order == MemOrder::release || order == MemOrder::acq_rel ||
         order == MemOrder::seq_cst;
}

bool weft::acquires(Operation *op) {
  if (isa<BarrierOp>(op))
    return true;
  auto order = op->getAttrOfType<MemOrderAttr>("order");
  return order && hasAcquire(order.getValue());
}

bool weft::holdsTiles(Operation *op) {
  auto isTile = [](Type type) { return isa<RankedTensorType>(type); };
  return llvm::any_of(op->getOperandTypes(), isTile) ||
         llvm::any_of(op->getResultTypes(), isTile);
}

std::array<int64_t, 3> weft::clusterShape(Operation *kernel) {
  std::array<int64_t, 3> shape = {1, 1, 1};
  if (auto dims = kernel->getAttrOfType<DenseI32ArrayAttr>(kClusterAttrName))
    for (auto [i, d] : llvm::enumerate(dims.asArrayRef()))
      shape[i] = d;
  return shape;
}

int64_t weft::clusterSize(Operation *kernel) {
  auto shape = clusterShape(kernel);
  return shape[0] * shape[1] * shape[2];
}

LogicalResult WeftDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() != kClusterAttrName)
    return verifyCompileTargetAttr(op, attr);
  auto dims = dyn_cast<DenseI32ArrayAttr>(attr.getValue());
  if (!isa<FunctionOpInterface>(op))
    return op->emitError() << kClusterAttrName << " belongs on a kernel function";
  int64_t size = 1;
  if (dims && dims.size() == 3)
    for (int32_t d : dims.asArrayRef())
      size = d > 0 ? size * d : 0;
  if (!dims || dims.size() != 3 || size < 1 || size > kMaxClusterSize)
    return op->emitError() << kClusterAttrName << " must be array<i32: x, y, z> of positive "
                           << "extents with at most " << kMaxClusterSize << " programs, got "
                           << attr.getValue();
  return success();
}
