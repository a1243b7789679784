//===- PrintAxisInfo.cpp - weft-print-axis-info ---------------------------===//
#include "weft/Analysis/AxisInfo.h"
#include "weft/Analysis/Passes.h"
#include "weft/Dialect/Weft/IR/Dialect.h"

#include "llvm/Support/raw_ostream.h"

namespace weft {
#define GEN_PASS_DEF_WEFTPRINTAXISINFO
#include "weft/Analysis/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace {

/// The values the analysis speaks about: integers (masks included),
/// indices and pointers, alone or in a tile; floats are always unknown.
bool isDescribed(Type type) {
  return isa<weft::PtrType, IndexType, IntegerType>(getElementTypeOrSelf(type));
}

struct PrintAxisInfo
    : public weft::impl::WeftPrintAxisInfoBase<PrintAxisInfo> {
  void runOnOperation() override {
    weft::AxisInfoAnalysis analysis(getOperation());
    getOperation()->walk([&](Operation *op) {
      if (op->getNumResults() != 1 || !isDescribed(op->getResult(0).getType()))
        return;
      weft::AxisInfo info = analysis.get(op->getResult(0));
      std::string text;
      llvm::raw_string_ostream os(text);
      auto list = [&](StringRef name, ArrayRef<int64_t> values) {
        os << name << " = [";
        llvm::interleaveComma(values, os);
        os << "]";
      };
      list("contiguity", info.contiguity);
      os << ", ";
      list("divisibility", info.divisibility);
      os << ", ";
      list("constancy", info.constancy);
      op->emitRemark(text);
    });
  }
};

} // namespace
