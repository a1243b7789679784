//===- PlanBulkStores.cpp - descriptor stores as bulk tensor copies -------===//
//
// A GEMM's epilogue stores its block from registers: every thread issues
// its share of the global stores, and the next block's products wait
// behind them (Nsight Compute on a persistent 128x256 bf16 GEMM: the
// epilogue's shared-memory exchange and stores are 3 % of its samples,
// bench/README.md, "GEMM"). Written into shared memory and handed to the
// copy engine instead, the block leaves the threads at once.
//
//===----------------------------------------------------------------------===//
#include "PipelinePlan.h"

#include "weft/Analysis/AxisInfo.h"
#include "weft/Dialect/Weft/Distribution/Passes.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace weft {
#define GEN_PASS_DEF_WEFTPLANBULKSTORES
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

/// The tensor map a bulk store of `store` needs (the argument's number and
/// the boxes that read its buffer), or none where it cannot be one.
std::optional<std::pair<unsigned, TensorCopyPlan>>
bulkStoreMap(DescStoreOp store, func::FuncOp kernel, const AxisInfoAnalysis &axis,
             const CompileTarget &target) {
  auto arg = dyn_cast<BlockArgument>(store.getDesc());
  if (!arg || arg.getOwner()->getParentOp() != kernel.getOperation() ||
      store.getValue().getType().getRank() != 2)
    return std::nullopt;
  // Only stores use the descriptor: its map is theirs alone.
  if (!llvm::all_of(arg.getUsers(), [](Operation *user) { return isa<DescStoreOp>(user); }))
    return std::nullopt;
  SharedType buffer = bulkStoreBuffer(store);
  if (!buffer || sharedTileBytes(buffer) > *target.spec.dynamicSharedMemoryBytes() / 3)
    return std::nullopt;
  // The copy engine leaves out what lies past the tensor's last row, but
  // past its last column only in 16-byte steps (an H200 wrote the 3 int32
  // after a 45-column view's end): the rows must be whole 16-byte chunks.
  auto shape = kernel.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                          kShapeDivisibilityAttrName);
  int64_t elementBytes = naturalAlignment(buffer.getElementType());
  if (!shape || shape.size() != 2 || (shape[1] * elementBytes) % 16)
    return std::nullopt;
  std::optional<TensorCopyPlan> plan =
      tensorCopyPlan(buffer, blockDivisibility(arg, store.getOffsets(), axis));
  if (!plan)
    return std::nullopt;
  return std::pair{arg.getArgNumber(), std::move(*plan)};
}

/// Whether `op` publishes the program's earlier writes: a fence or signal
/// that releases.
bool releases(Operation *op) {
  if (auto fence = dyn_cast<FenceOp>(op))
    return hasRelease(fence.getOrder());
  auto signal = dyn_cast<SignalOp>(op);
  return signal && hasRelease(signal.getOrder());
}

struct WeftPlanBulkStores : impl::WeftPlanBulkStoresBase<WeftPlanBulkStores> {
  using WeftPlanBulkStoresBase::WeftPlanBulkStoresBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileTarget> target = getCompileTarget(module);
    if (failed(target))
      return signalPassFailure();
    if (!target->spec.hasTensorCopies())
      return;
    AxisInfoAnalysis axis(module);
    OpBuilder builder(&getContext());
    for (auto kernel : module.getOps<func::FuncOp>()) {
      // Weak accesses need nothing of the copies, nor do waits (acquires).
      // A fence or signal that releases waits first until the copies have
      // written (weft.bulk_store_wait written); any other ordered access
      // leaves the stores as they are. A read through a pointer might read
      // back a block stored before it, which the copy may not have written
      // yet.
      auto readsPointer = [](Operation *op) {
        return isa<LoadOp, AtomicRMWOp, AtomicCASOp>(op) ? WalkResult::interrupt()
                                                          : WalkResult::advance();
      };
      auto synchronises = [](Operation *op) { return isa<FenceOp, SignalOp, WaitOp>(op); };
      if (kernel.isExternal() || !placedInDynamic(kernel, target->spec) ||
          !llvm::all_of(kernel.getBody().getOps(),
                        [&](Operation &op) { return accessesWeakly(&op, synchronises); }) ||
          kernel.walk(readsPointer).wasInterrupted())
        continue;
      NamedAttrList maps;
      if (auto known = kernel->getAttrOfType<DictionaryAttr>(kTensorMapsAttrName))
        maps.append(known.getValue());
      // A descriptor some of whose stores cannot be bulk keeps them all as
      // tile stores (one map per argument, and one proxy).
      SmallVector<DescStoreOp> bulk;
      llvm::DenseSet<Value> mixed;
      kernel.walk([&](DescStoreOp store) {
        if (auto map = bulkStoreMap(store, kernel, axis, *target)) {
          // Every store of the descriptor must do with one map.
          Attribute value = encodeTensorCopyPlan(&getContext(), map->second);
          std::string key = std::to_string(map->first);
          if (Attribute existing = maps.get(key); !existing || existing == value) {
            maps.set(key, value);
            bulk.push_back(store);
            return;
          }
        }
        mixed.insert(store.getDesc());
      });
      bool any = false;
      for (DescStoreOp store : bulk)
        if (!mixed.contains(store.getDesc())) {
          store.setBulk(true);
          any = true;
        }
      if (!any)
        continue;
      for (Value desc : mixed)
        if (auto arg = dyn_cast<BlockArgument>(desc))
          maps.erase(std::to_string(arg.getArgNumber()));
      kernel->setAttr(kTensorMapsAttrName, maps.getDictionary(&getContext()));
      kernel.walk([&](Operation *op) {
        builder.setInsertionPoint(op);
        if (isa<func::ReturnOp>(op))
          BulkStoreWaitOp::create(builder, op->getLoc());
        else if (releases(op))
          BulkStoreWaitOp::create(builder, op->getLoc(), /*written=*/true);
      });
    }
  }
};

} // namespace
} // namespace weft
