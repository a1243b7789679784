//===- PipelinePlan.h - which K loops to pipeline, and how ------*- C++ -*-===//
//
// Internal to weft-pipeline-dot-operands (PipelineDotOperands.cpp): the
// plan of one loop (which dots' operands become rings of shared buffers,
// in which layouts, filled by which copies, how many stages deep) is
// decided here before the loop is rewritten.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_LIB_DISTRIBUTION_PIPELINEPLAN_H
#define WEFT_LIB_DISTRIBUTION_PIPELINEPLAN_H

#include "weft/Dialect/Weft/IR/Dialect.h"
#include "weft/Target/Target.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>

namespace weft {

class AxisInfoAnalysis;

/// Shared memory left to the program's other uses (exchanges, reductions).
constexpr int64_t kReservedSharedBytes = 8 * 1024;

/// A dot operand to pipeline: its load (a weft.load or a weft.desc_load)
/// and the load's address slice; `multicast`: the programs of the cluster
/// share its copies.
struct Operand {
  mlir::Operation *load;
  llvm::SmallVector<mlir::Operation *> slice;
  SharedType buffer;
  bool multicast = false;
  /// The dot it feeds, and as which operand (0: a, 1: b).
  DotOp dot = nullptr;
  unsigned index = 0;
};

/// How a loop is pipelined.
struct PipelinePlan {
  /// The dots' operands that become rings, with their buffers' layouts: a
  /// and b of a dot, or one of them where the other is computed in the
  /// loop (then stored by the dot itself, weft.dot's lowering).
  llvm::SmallVector<Operand> operands;
  /// Dot operands loaded before the loop (a query tile every step
  /// multiplies): each is copied once, where it is loaded, into a buffer
  /// of the ring's layout that the dot (and those of the tile's other
  /// loops) reads in place of its registers (StagedTiles).
  llvm::SmallVector<Operand> staged;
  /// Yield positions of warpgroup dots whose products overlap the next
  /// step's (weft.dot_wait 1 after each, 0 after the loop).
  llvm::SmallVector<std::pair<DotOp, unsigned>> overlapped;
  /// Threads read the rings themselves (ldmatrix, element loads), not only
  /// wgmma: a cluster's arrivals must then release those reads.
  bool threadReads = false;
  /// The kernel's tensor maps where every operand is a bulk copy.
  std::optional<mlir::DictionaryAttr> tensorMaps;
  /// Some copies are shared across the cluster (ordered by the cluster's
  /// barrier, or by producer warps' empty barriers that every program's
  /// warps arrive at); the copier waits at "empty" barriers instead of the
  /// program joining each step.
  bool clustered = false, empties = false;
  /// Producer warps make the copies (SpecializedPipeline.cpp): the loop
  /// whose runs they copy for, the K loop or the loop around it (marked
  /// kWarpSpecializeAttrName), and with the latter the ops of its body
  /// that compute the K loop's bounds and addresses.
  mlir::scf::ForOp specializedHome;
  llvm::SmallVector<mlir::Operation *> homeSlice;
  /// The ops before the home loop that move after the split, to the
  /// program's warps (those holding tiles and their users), in order.
  llvm::SmallVector<mlir::Operation *> programOnly;
  /// Stages, spare buffers per ring, and bytes of barriers per buffer.
  int64_t stages = 0, spare = 0, barrierBytes = 0;

  bool bulk() const { return tensorMaps.has_value(); }
  int64_t ringSize() const { return stages + spare; }
};

/// The buffers of staged tiles (PipelinePlan::staged) by their loads,
/// one for each layout their loops read them in: a tile that feeds
/// several loops is copied once, for the first.
using StagedTiles = llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value, 1>>;

/// The buffer an earlier loop staged `operand`'s tile in, in the layout it
/// has here; none if there is none yet.
mlir::Value stagedBuffer(const StagedTiles &copied, const Operand &operand);

/// The shared memory a loop's rings may take (none: no limit), by the
/// kind of copies that fill them: in dynamic shared memory bulk copies'
/// buffers never share room with those the threads use
/// (placeSharedBuffers), so the rings of each kind leave out the other
/// kind's buffers wherever they live.
struct RingBudget {
  std::optional<int64_t> bulk, generic;
  std::optional<int64_t> of(bool isBulk) const { return isBulk ? bulk : generic; }
};

/// The plan for `loop` within `budget` bytes of shared memory and
/// `numStages` at most, or none: the loop is left alone. Blocks
/// of descriptors that cannot all be bulk copies are expanded into tile
/// loads on the way.
/// withScratch: the rings share `budget` with the scratch area, which a
/// dot left with one tile operand still needs in the loop. stage: tiles
/// loaded before the loop may be staged (PipelinePlan::staged); the room
/// of those in `copied` already counts as in use (in `budget`).
std::optional<PipelinePlan> planPipeline(mlir::scf::ForOp loop, unsigned numStages,
                                         RingBudget budget,
                                         const CompileTarget &target, bool withScratch,
                                         const StagedTiles &copied, bool stage = true);

/// What the offsets of a block of kernel argument `desc` (a descriptor)
/// and the tensor's extents are multiples of, rows and columns: the
/// divisibility tensorCopyPlan aligns its view to.
std::array<int64_t, 2> blockDivisibility(mlir::BlockArgument desc, mlir::ValueRange offsets,
                                         const AxisInfoAnalysis &axis);

/// Whether `op` and the ops within it access memory only weakly: weak
/// loads, weak or relaxed stores and atomic read-modify-writes; nothing
/// that orders other accesses (fences, signals, waits, acquiring or
/// releasing atomics) but the ops `alsoAllowed` accepts.
bool accessesWeakly(mlir::Operation *op,
                    llvm::function_ref<bool(mlir::Operation *)> alsoAllowed = nullptr);

/// The ops of `loop`'s body that compute `values`, in program order, if
/// they depend only on the induction variable and values from outside the
/// loop and have no memory effects (an address slice: what copying a
/// load's tile ahead of its iteration recomputes).
std::optional<llvm::SmallVector<mlir::Operation *>> pureSlice(mlir::scf::ForOp loop,
                                                              mlir::ValueRange values);

/// The ops of `outer`'s body that compute the bounds of `loop` (in that
/// body) and what its operands' copies read from outside it: what copying
/// for another run of `loop` recomputes (pureSlice's rule).
std::optional<llvm::SmallVector<mlir::Operation *>>
runSlice(mlir::scf::ForOp outer, mlir::scf::ForOp loop, llvm::ArrayRef<Operand> operands);

/// Whether `iv` is below `upper`.
mlir::Value below(mlir::OpBuilder &b, mlir::Location loc, mlir::Value iv, mlir::Value upper,
                  bool unsignedCmp);

/// Starts copying `operand`'s tile of iteration `iv` into `buffer`: its
/// address slice cloned with `iv` for `inductionVar` (and `map`'s values
/// for the others it maps), masked off unless `iv` is below `upper` and
/// `guard` (if any) holds. A descriptor's block is one bulk copy that
/// arrives at `barrier`; a tile of pointers joins the open copy group.
void copyAt(mlir::OpBuilder &b, const Operand &operand, mlir::IRMapping map,
            mlir::Value inductionVar, mlir::Value iv, mlir::Value upper, bool unsignedCmp,
            mlir::Value guard, mlir::Value buffer, mlir::Value barrier);

/// A loop's carried rings (`args`: groups of ringSize values, each group
/// one ring), each rotated by one for the next iteration; the last
/// `parityRings` groups hold phase parities, and the one that moves to the
/// back flips (a barrier's phase parity changes each time it comes round).
llvm::SmallVector<mlir::Value> rotateRings(mlir::OpBuilder &b, mlir::Location loc,
                                           llvm::ArrayRef<mlir::BlockArgument> args,
                                           int64_t ringSize, int64_t parityRings);

/// `operands`' rings, ringSize buffers each, one operand after another,
/// filled by bulk copies where `bulk`.
llvm::SmallVector<mlir::Value> allocRings(mlir::OpBuilder &b, mlir::Location loc,
                                          llvm::ArrayRef<Operand> operands, int64_t ringSize,
                                          bool bulk);
/// A ring of ringSize barriers, each expecting `arrivals` per phase.
AllocMBarriersOp allocBarrierRing(mlir::OpBuilder &b, mlir::Location loc, int64_t ringSize,
                                  int64_t arrivals);

/// Each of `loop`'s overlapped products (PipelinePlan::overlapped) waits,
/// right after it, until only its own step's are in flight, and its sums
/// go on from that wait; after the loop the last products retire (a wait
/// for none, which the loop's result's users then read). Returns the last
/// of those waits after the loop (or the loop) and the last in it.
std::pair<mlir::Operation *, mlir::Operation *>
retireOverlapped(mlir::RewriterBase &rewriter, mlir::scf::ForOp loop,
                 llvm::ArrayRef<std::pair<DotOp, unsigned>> overlapped);

/// Erases the operands' loads (their rings replace them) and the address
/// arithmetic only they used: layout assignment would otherwise
/// distribute (and maybe exchange) dead tiles.
void eraseLoads(mlir::RewriterBase &rewriter, llvm::ArrayRef<Operand> operands);
/// Replaces `loop` (null on failure) with one that also carries `carried`,
/// which then holds its iteration arguments; it yields them unchanged
/// until yieldLast says otherwise.
mlir::scf::ForOp carryThrough(mlir::RewriterBase &rewriter, mlir::scf::ForOp loop,
                              llvm::SmallVector<mlir::Value> &carried);
/// Makes `loop` yield `values` as its last results (an enclosing loop
/// passing rings from one run of a pipeline to the next).
void yieldLast(mlir::scf::ForOp loop, mlir::ValueRange values);

/// Unrolls `loop`, which carries rings of `ringSize`, by that size: the
/// rotations of the unrolled steps compose to the identity, so that every
/// step addresses fixed buffers and barriers.
void unrollByRing(mlir::scf::ForOp loop, int64_t ringSize);

/// Where producer warps may make `loop`'s copies: its plan's home loop
/// (set here with its slice, or left null: the loop is pipelined as
/// usual). `plan` has bulk copies only.
void planSpecialized(mlir::scf::ForOp loop, PipelinePlan &plan);

/// Rewrites `loop` as `plan` says, with producer warps (plan.specializedHome).
/// Returns the loop that replaces the home loop where that encloses `loop`.
mlir::scf::ForOp emitSpecializedPipeline(mlir::scf::ForOp loop, const PipelinePlan &plan,
                                         bool unrollRings, const CompileTarget &target);

/// The most scratch a dot of `func` outside `loop` needs.
int64_t dotScratchOutside(mlir::FunctionOpInterface func, mlir::scf::ForOp loop,
                          const CompileTarget &target);

} // namespace weft

#endif // WEFT_LIB_DISTRIBUTION_PIPELINEPLAN_H
