//===- CompileTarget.cpp - the target a module is compiled for ------------===//
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace weft;

namespace {

ModuleOp moduleOf(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  return module ? module : op->getParentOfType<ModuleOp>();
}

/// The target `attrs` describe, or why not (attributes absent: defaults).
FailureOr<CompileTarget> readTarget(DictionaryAttr attrs, std::string &why) {
  CompileTarget target;
  if (Attribute text = attrs.get(kTargetAttrName)) {
    auto str = dyn_cast<StringAttr>(text);
    if (!str) {
      why = (kTargetAttrName + " must be a string such as \"cuda:90\"").str();
      return failure();
    }
    auto spec = TargetSpec::parse(str.getValue());
    if (!spec) {
      why = llvm::toString(spec.takeError());
      return failure();
    }
    target.spec = *spec;
  }
  for (auto [name, field] : {std::pair{kNumWarpsAttrName, &target.options.numWarps},
                             std::pair{kNumStagesAttrName, &target.options.numStages}}) {
    Attribute value = attrs.get(name);
    if (!value)
      continue;
    auto count = dyn_cast<IntegerAttr>(value);
    if (!count || count.getInt() < 1) {
      why = (name + " must be a positive integer").str();
      return failure();
    }
    *field = count.getInt();
  }
  for (auto [name, flag] : {std::pair{kWarpMmaAttrName, &target.options.warpMma},
                            std::pair{kDebugAttrName, &target.options.debug},
                            std::pair{kMultinodeAttrName, &target.options.multinode}}) {
    Attribute value = attrs.get(name);
    if (value && !isa<UnitAttr>(value)) {
      why = (name + " is a unit attribute (present: on)").str();
      return failure();
    }
    *flag = static_cast<bool>(value);
  }
  if (llvm::Error err = target.options.check(target.spec)) {
    why = llvm::toString(std::move(err));
    return failure();
  }
  return target;
}

} // namespace

void weft::setCompileTarget(ModuleOp module, const CompileTarget &target) {
  Builder b(module.getContext());
  module->setAttr(kTargetAttrName, b.getStringAttr(target.spec.str()));
  module->setAttr(kNumWarpsAttrName, b.getI32IntegerAttr(target.options.numWarps));
  module->setAttr(kNumStagesAttrName, b.getI32IntegerAttr(target.options.numStages));
  for (auto [name, on] : {std::pair{kWarpMmaAttrName, target.options.warpMma},
                          std::pair{kDebugAttrName, target.options.debug},
                          std::pair{kMultinodeAttrName, target.options.multinode}}) {
    if (on)
      module->setAttr(name, b.getUnitAttr());
    else
      module->removeAttr(name);
  }
}

FailureOr<CompileTarget> weft::getCompileTarget(Operation *op) {
  ModuleOp module = moduleOf(op);
  std::string why;
  auto target = readTarget(module ? module->getAttrDictionary()
                                  : DictionaryAttr::get(op->getContext()),
                           why);
  if (failed(target))
    return op->emitError() << why;
  return target;
}

LogicalResult weft::verifyCompileTargetAttr(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == kPrefetchAttrName || name == kWarpSpecializeAttrName) {
    if (!isa<LoopLikeOpInterface>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError() << name << " is a unit attribute of a loop";
    return success();
  }
  if (name != kTargetAttrName && name != kNumWarpsAttrName && name != kNumStagesAttrName &&
      name != kWarpMmaAttrName && name != kDebugAttrName && name != kMultinodeAttrName)
    return success();
  // A loop may carry its own pipeline depth (weft-pipeline-dot-operands).
  if (name == kNumStagesAttrName && isa<LoopLikeOpInterface>(op)) {
    auto stages = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stages || stages.getInt() < 1)
      return op->emitError() << name << " of a loop is a positive integer";
    return success();
  }
  if (!isa<ModuleOp>(op))
    return op->emitError() << name << " belongs on the module or a loop";
  std::string why;
  if (failed(readTarget(op->getAttrDictionary(), why)))
    return op->emitError() << why;
  return success();
}
