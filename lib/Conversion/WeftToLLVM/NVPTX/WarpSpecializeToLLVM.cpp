//===- WarpSpecializeToLLVM.cpp - producer warps beside the program's -----===//
#include "NVPTXPatterns.h"
#include "PTX.h"

#include "../LoweringUtils.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace weft {

namespace {

/// The registers sm_90 gives a thread at most, and the fewest it may keep.
constexpr int64_t kRegistersPerProgram = 65536, kMaxRegisters = 256, kProducerRegisters = 40;

/// Moves the thread's warpgroup to `count` registers a thread (setmaxnreg;
/// every warp of the warpgroup executes it).
void setRegisters(OpBuilder &b, Location loc, int64_t count, bool increase) {
  emitAsm(b, loc, Type(), {},
          llvm::formatv("setmaxnreg.{0}.sync.aligned.u32 {1};", increase ? "inc" : "dec", count)
              .str(),
          "~{memory}");
}

/// Replaces `split` with a branch to its regions' blocks, which then go on
/// to the code after it.
void lower(WarpSpecializeOp split, const TargetInfo &target) {
  Location loc = split.getLoc();
  auto kernel = split->getParentOfType<FunctionOpInterface>();
  int64_t own = target.getCompileTarget().threadsPerProgram();
  int64_t producers = target.producerThreads(split);
  kernel->setAttr(kThreadsAttrName,
                  IntegerAttr::get(IntegerType::get(split.getContext(), 32), own + producers));
  // The producers keep few registers (they hold addresses and phases); the
  // program's warps take the rest, so that they hold as many as a kernel
  // of their threads alone could.
  int64_t ownRegisters =
      std::min(kMaxRegisters, (kRegistersPerProgram - producers * kProducerRegisters) / own / 8 * 8);
  Block *before = split->getBlock();
  Block *after = before->splitBlock(split->getNextNode());
  OpBuilder b(split);
  // A launch of the program's warps alone would leave them waiting for
  // copies no one makes: it traps instead (the launch fails).
  emitAsm(b, loc, Type(), {},
          "{ .reg .pred other; .reg .b32 n; mov.u32 n, %ntid.x; setp.ne.u32 other, n, " +
              std::to_string(own + producers) + "; @other trap; }",
          "~{memory}");
  Value tid = target.threadId(b, loc);
  Value isProducer =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge, tid, i32Const(b, loc, own));
  SmallVector<Block *> entries;
  for (auto [region, registers, increase] :
       {std::tuple{&split.getProducerRegion(), kProducerRegisters, false},
        std::tuple{&split.getDefaultRegion(), ownRegisters, true}}) {
    Block *entry = &region->front();
    entries.push_back(entry);
    for (Block &block : *region)
      if (auto yield = dyn_cast<WarpYieldOp>(block.getTerminator())) {
        OpBuilder yb(yield);
        LLVM::BrOp::create(yb, loc, ValueRange{}, after);
        yield.erase();
      }
    OpBuilder eb = OpBuilder::atBlockBegin(entry);
    setRegisters(eb, loc, registers, increase);
    after->getParent()->getBlocks().splice(after->getIterator(), region->getBlocks());
  }
  LLVM::CondBrOp::create(b, loc, isProducer, entries[0], entries[1]);
  split.erase();
}

} // namespace

void lowerWarpSpecialize(ModuleOp module, const TargetInfo &target) {
  SmallVector<WarpSpecializeOp> splits;
  module.walk([&](WarpSpecializeOp split) { splits.push_back(split); });
  for (WarpSpecializeOp split : splits)
    lower(split, target);
}

} // namespace weft
