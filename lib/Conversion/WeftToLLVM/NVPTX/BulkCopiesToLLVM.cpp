//===- BulkCopiesToLLVM.cpp - sm_90 bulk copies, mbarriers, clusters ------===//
//
// What only sm_90 has of the ops weft-pipeline-dot-operands and
// weft-early-start create there: bulk tensor copies (TMA) completing on
// mbarriers, the async proxy's fence, thread block clusters and their
// barrier, and the wait for the grids a launch depends on. Every other
// target lowers the few of these that it sees (proxy fences, cluster
// barriers of one program, dependency waits) in SharedBuffersToLLVM.cpp
// and SynchronizationToLLVM.cpp, as nothing or a join.
//
//===----------------------------------------------------------------------===//
#include "NVPTXPatterns.h"
#include "PTX.h"

#include "../LoweringUtils.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace weft {
namespace {

// The asm operands $2.. that a copy's coordinates take.
std::string coordinateRegisters(size_t count) {
  SmallVector<std::string> regs;
  for (size_t i = 0; i < count; ++i)
    regs.push_back("$" + std::to_string(2 + i));
  return llvm::join(regs, ", ");
}
// Bulk tensor copies complete on mbarriers (PTX ISA 8.0, sm_90). Shared
// addresses travel as 32-bit registers: the shared window is 32-bit.
void tensorCopy(OpBuilder &b, Location loc, Value dst, Value tensorMap, ValueRange coords,
                Value barrier, Value ctaMask) {
  size_t barrierReg = 2 + coords.size();
  std::string text = llvm::formatv(
      "cp.async.bulk.tensor.{0}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      "{1} [$0], [$1, {{{2}}], [${3}]{4};",
      coords.size(), ctaMask ? ".multicast::cluster" : "", coordinateRegisters(coords.size()),
      barrierReg, ctaMask ? ", $" + std::to_string(barrierReg + 1) : "");
  SmallVector<Value> operands{sharedAddress(b, loc, dst), tensorMap};
  llvm::append_range(operands, coords);
  operands.push_back(sharedAddress(b, loc, barrier));
  std::string constraints =
      "r,l," + llvm::join(SmallVector<StringRef>(coords.size() + 1, "r"), ",");
  if (ctaMask) {
    operands.push_back(ctaMask);
    constraints += ",h";
  }
  emitAsm(b, loc, Type(), operands, text, constraints + ",~{memory}");
}
// The other way (a bulk store): its group completes per thread
// (cp.async.bulk.commit_group, wait_group).
void tensorStore(OpBuilder &b, Location loc, Value tensorMap, Value src, ValueRange coords) {
  std::string text =
      llvm::formatv("cp.async.bulk.tensor.{0}d.global.shared::cta.tile.bulk_group "
                    "[$0, {{{1}}], [$1];",
                    coords.size(), coordinateRegisters(coords.size()));
  SmallVector<Value> operands{tensorMap, sharedAddress(b, loc, src)};
  llvm::append_range(operands, coords);
  emitAsm(b, loc, Type(), operands, text,
          "l,r," + llvm::join(SmallVector<StringRef>(coords.size(), "r"), ",") + ",~{memory}");
}
void barrierInit(OpBuilder &b, Location loc, ValueRange barriers, unsigned arrivals,
                 bool afterReads) {
  for (Value barrier : barriers)
    emitAsm(b, loc, Type(), {sharedAddress(b, loc, barrier), i32Const(b, loc, arrivals)},
            "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}");
  // The copy engine (the async proxy) must see the initialised state;
  // after reads, a proxy fence (as in barrierArrive) orders them before
  // the copies. Only then: at a kernel's start it cost 0.3 us of a
  // 6 us GEMM (bench/README.md, "mma.sync: the arrival's proxy fence").
  emitAsm(b, loc, Type(), {},
          afterReads ? "fence.mbarrier_init.release.cluster; fence.proxy.async.shared::cta;"
                     : "fence.mbarrier_init.release.cluster;",
          "~{memory}");
}
void barrierArriveExpect(OpBuilder &b, Location loc, Value barrier,
                         int64_t bytes) {
  emitAsm(b, loc, Type(), {sharedAddress(b, loc, barrier), i32Const(b, loc, bytes)},
          "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}");
}
void barrierWait(OpBuilder &b, Location loc, Value barrier, Value phase) {
  // try_wait suspends the thread for a while before it fails; the label
  // is local to the braces, so the loop may be inlined many times.
  emitAsm(b, loc, Type(), {sharedAddress(b, loc, barrier), phase},
          "{ .reg .pred done; WEFT_WAIT: "
          "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1; "
          "@!done bra WEFT_WAIT; }",
          "r,r,~{memory}");
}
void barrierArrive(OpBuilder &b, Location loc, Value barrier, bool asyncReads,
                   int64_t programs) {
  // The warp meets first (bar.warp.sync orders its threads' accesses),
  // then its first lane arrives for all of them, releasing those
  // accesses: one arrival per warp instead of 32 on the barrier's word.
  // What the arrival frees is refilled by bulk copies, which write
  // through the async proxy: each thread's proxy fence orders its reads
  // (ldmatrix, generic proxy) before them. Without it ptxas let the
  // arrival overtake the warp's last ldmatrix loads, and mma.sync GEMMs
  // read operands the next copy had overwritten (docs/tile-ir.md).
  // wgmma's reads are the async proxy's own, retired by its wait. Across
  // a cluster of `programs`, lane r arrives at program r's barrier (mapa
  // maps the address into its shared window), all at once; after such
  // reads relaxed, as clusterArrive's, since a release at the cluster's
  // scope is a fence each warp waits at every step: it made a clustered
  // GEMM 1.7-2.6x slower (bench/README.md, "Producer warps in clusters").
  std::string text = "{ .reg .pred first; .reg .b32 lane, at; ";
  if (!asyncReads)
    text += "fence.proxy.async.shared::cta; ";
  text += "bar.warp.sync -1; mov.u32 lane, %laneid; ";
  if (programs == 1)
    text += "setp.eq.u32 first, lane, 0; "
            "@first mbarrier.arrive.release.cta.shared::cta.b64 _, [$0]; }";
  else
    text += llvm::formatv("setp.lt.u32 first, lane, {0}; mapa.shared::cluster.u32 at, $0, lane; "
                          "@first mbarrier.arrive.{1}.cluster.shared::cluster.b64 _, [at]; }",
                          programs, asyncReads ? "relaxed" : "release")
                .str();
  emitAsm(b, loc, Type(), {sharedAddress(b, loc, barrier)}, text, "r,~{memory}");
}
void barrierInval(OpBuilder &b, Location loc, Value barrier) {
  emitAsm(b, loc, Type(), {sharedAddress(b, loc, barrier)},
          "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}");
}
// Thread block clusters (PTX ISA 7.8, sm_90). A kernel launched without
// a cluster shape is a cluster of one CTA, so these hold everywhere.
Value clusterRank(OpBuilder &b, Location loc) {
  return NVVM::ClusterId::create(b, loc, b.getI32Type());
}
// Every thread of the program executes them together (.aligned). The
// arrival is relaxed unless asked to release: what it announces is
// mostly that reads have completed (wgmma.wait_group has retired the
// products that read a buffer), which no later write can undo, and a
// releasing arrival costs a cluster-scope fence: 1024^3 took 14.5 us a
// GEMM with it, 7.1 without (bench/README.md, "Clusters"). ldmatrix's
// loads have no such wait: relaxed, ptxas may complete them after the
// arrival, and a peer's copy then overwrites what they read; the copy
// writes through the async proxy, so a proxy fence orders them before it
// (as in barrierArrive).
void clusterArrive(OpBuilder &b, Location loc, bool release) {
  emitAsm(b, loc, Type(), {},
          release ? "fence.proxy.async.shared::cta; barrier.cluster.arrive.release.aligned;"
                  : "barrier.cluster.arrive.relaxed.aligned;",
          "~{memory}");
}
/// The barriers, one after another; one thread initialises them, then the
/// program joins.
struct AllocMBarriersLowering : TilePattern<AllocMBarriersOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AllocMBarriersOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value base = sharedAllocation(rewriter, op, tiles.target);
    SmallVector<Value> barriers;
    for (unsigned i = 0; i < op.getNumResults(); ++i)
      barriers.push_back(byteOffset(rewriter, loc, base, i64Const(rewriter, loc, 8 * i)));
    tiles.lowering.oncePerProgram(rewriter, loc, {}, /*releaseBefore=*/false,
                                  /*joinAfter=*/true, [&] {
                                    barrierInit(rewriter, loc, barriers,
                                                             op.getArrivals(), op.getAfterReads());
                                    return SmallVector<Value>{};
                                  });
    rewriter.replaceOp(op, barriers);
    return success();
  }
};

/// The program joins (no thread may still wait or arrive), then one thread
/// invalidates the barriers.
struct InvalMBarriersLowering : TilePattern<InvalMBarriersOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(InvalMBarriersOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    tiles.lowering.oncePerProgram(rewriter, loc, {}, /*releaseBefore=*/true,
                                  /*joinAfter=*/false, [&] {
                                    for (Value barrier : adaptor.getBarriers())
                                      barrierInval(rewriter, loc, barrier);
                                    return SmallVector<Value>{};
                                  });
    rewriter.eraseOp(op);
    return success();
  }
};

/// The tensor map the kernel reported for descriptor `desc`
/// (kTensorMapsAttrName: the runtime encodes that map, so the copies must
/// address its view), if any.
std::optional<TensorCopyPlan> reportedMap(Value desc) {
  auto arg = dyn_cast<BlockArgument>(desc);
  Operation *kernel = arg ? arg.getOwner()->getParentOp() : nullptr;
  auto maps = kernel ? kernel->getAttrOfType<DictionaryAttr>(kTensorMapsAttrName)
                     : DictionaryAttr();
  auto map = maps ? maps.getAs<DenseI64ArrayAttr>(std::to_string(arg.getArgNumber()))
                  : DenseI64ArrayAttr();
  if (!map)
    return std::nullopt;
  return decodeTensorCopyPlan(map);
}

/// The tensor-map coordinates of the box that starts at element `origin`
/// of the block at `offsets`, innermost first: a dimension that walks the
/// tensor starts at the box's element over its step (the plan makes that
/// whole), one of a fixed number at 0 (the box takes all of them).
SmallVector<Value> boxCoordinates(OpBuilder &b, Location loc, const TensorCopyPlan &plan,
                                  ValueRange offsets, std::array<int64_t, 2> origin) {
  SmallVector<Value> coords;
  for (const TensorMapDim &d : plan.dims) {
    Value coord = i32Const(b, loc, 0);
    if (!d.size) {
      coord = LLVM::AddOp::create(b, loc, offsets[d.dim], i32Const(b, loc, origin[d.dim]));
      if (d.step != 1)
        coord = LLVM::SDivOp::create(b, loc, coord, i32Const(b, loc, d.step));
    }
    coords.push_back(coord);
  }
  return coords;
}

/// One thread arrives at the barrier expecting the block's bytes and
/// starts the bulk copies of its boxes, in the tensor map the kernel
/// reported for the descriptor (kTensorMapsAttrName: the runtime encodes
/// that map, so the copies must address its view). A multicast copy's map
/// has a slice of the box along its outermost dimension, one per program
/// of the cluster: each program copies the slice of its rank into every
/// program (slices lie one after another in shared memory).
struct DescAsyncCopyLowering : TilePattern<DescAsyncCopyOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(DescAsyncCopyOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SharedType dst = op.getDst().getType();
    std::optional<TensorCopyPlan> found = reportedMap(op.getDesc());
    if (!found)
      return op.emitOpError("copies from a descriptor its kernel reports no tensor map for");
    TensorCopyPlan plan = *found;
    Operation *kernel = cast<BlockArgument>(op.getDesc()).getOwner()->getParentOp();
    int64_t bytes = dst.getNumElements() * naturalAlignment(dst.getElementType());
    int64_t programs = op.getMulticast() ? clusterSize(kernel) : 1;
    int64_t slice = plan.dims.back().box;
    plan.dims.back().box *= programs; // the whole box, for its origins
    tiles.lowering.oncePerProgram(rewriter, loc, {}, /*releaseBefore=*/false,
                                  /*joinAfter=*/false, [&] {
      emitIf(rewriter, loc, adaptor.getPred(), {}, [&] {
        barrierArriveExpect(rewriter, loc, adaptor.getBarrier(), bytes);
        Value rank, mask;
        if (programs > 1) {
          rank = clusterRank(rewriter, loc);
          mask = LLVM::ConstantOp::create(rewriter, loc, rewriter.getI16Type(),
                                          rewriter.getI16IntegerAttr((1 << programs) - 1));
        }
        for (auto origin : tensorCopyOrigins(plan.dims, dst)) {
          // The rank's slice of the outermost dimension further on.
          SmallVector<Value> coords =
              boxCoordinates(rewriter, loc, plan, adaptor.getOffsets(), origin);
          Value to = byteOffset(rewriter, loc, adaptor.getDst(),
                                sharedElementOffset(rewriter, loc, dst,
                                                    i32Const(rewriter, loc, origin[0]),
                                                    i32Const(rewriter, loc, origin[1])));
          if (rank) {
            coords.back() = LLVM::AddOp::create(rewriter, loc, coords.back(),
                                                mulConst(rewriter, loc, rank, slice));
            to = byteOffset(rewriter, loc, to, mulConst(rewriter, loc, rank, bytes / programs));
          }
          tensorCopy(rewriter, loc, to, adaptor.getDesc(), coords,
                                  adaptor.getBarrier(), mask);
        }
        return SmallVector<Value>{};
      }, {});
      return SmallVector<Value>{};
    });
    rewriter.eraseOp(op);
    return success();
  }
};

// Bulk stores (weft-plan-bulk-stores) group their copies per thread: the
// thread that starts them (oncePerProgram's) waits, with .read until the
// copies have read shared memory, not until their writes have landed;
// `written`: until they have landed, then fences them (async proxy) before
// its later accesses (generic proxy), which a release after the join then
// orders them before. With `join` the program joins after it.
void bulkStoresWait(const TileLowering &tiles, OpBuilder &b, Location loc, bool written,
                    bool join) {
  tiles.lowering.oncePerProgram(b, loc, {}, /*releaseBefore=*/false, join, [&] {
    emitAsm(b, loc, Type(), {},
            written ? "cp.async.bulk.wait_group 0;\n\tfence.proxy.async.global;"
                    : "cp.async.bulk.wait_group.read 0;",
            "~{memory}");
    return SmallVector<Value>{};
  });
}

/// A bulk store: once the program's earlier bulk stores have read the
/// buffer (placeSharedBuffers gave it room nothing else takes until the
/// kernel returns), the threads write the block into it and fence their
/// writes into the async proxy, the program joins, and one thread starts
/// a bulk tensor copy per box and commits them as a group. The copies
/// leave out what lies outside the tensor, as the store's mask would.
struct BulkDescStoreLowering : TilePattern<DescStoreOp> {
  BulkDescStoreLowering(const LLVMTypeConverter &converter, const TileLowering &tiles)
      : TilePattern(converter, tiles, kVendorBenefit) {}
  LogicalResult matchAndRewrite(DescStoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!op.getBulk())
      return failure();
    Location loc = op.getLoc();
    std::optional<TensorCopyPlan> plan = reportedMap(op.getDesc());
    Value base = dynamicSharedAddress(rewriter, op);
    if (!plan || !base)
      return op.emitOpError("is a bulk store without its tensor map or shared buffer");
    SharedType buffer = bulkStoreBuffer(op);
    bulkStoresWait(tiles, rewriter, loc, /*written=*/false, /*join=*/true);
    tiles.storeShared(rewriter, loc, base, buffer, op.getValue().getType(),
                      unpackTile(rewriter, loc, adaptor.getValue()));
    emitAsm(rewriter, loc, Type(), {}, "fence.proxy.async.shared::cta;", "~{memory}");
    tiles.lowering.oncePerProgram(rewriter, loc, {}, /*releaseBefore=*/true,
                                  /*joinAfter=*/false, [&] {
      for (auto origin : tensorCopyOrigins(plan->dims, buffer)) {
        SmallVector<Value> coords =
            boxCoordinates(rewriter, loc, *plan, adaptor.getOffsets(), origin);
        Value from = byteOffset(rewriter, loc, base,
                                sharedElementOffset(rewriter, loc, buffer,
                                                    i32Const(rewriter, loc, origin[0]),
                                                    i32Const(rewriter, loc, origin[1])));
        tensorStore(rewriter, loc, adaptor.getDesc(), from, coords);
      }
      emitAsm(rewriter, loc, Type(), {}, "cp.async.bulk.commit_group;", "~{memory}");
      return SmallVector<Value>{};
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// The thread that starts the program's bulk stores waits until they have
/// read their buffers (or, `written`, written global memory).
struct BulkStoreWaitLowering : TilePattern<BulkStoreWaitOp> {
  BulkStoreWaitLowering(const LLVMTypeConverter &converter, const TileLowering &tiles)
      : TilePattern(converter, tiles, kVendorBenefit) {}
  LogicalResult matchAndRewrite(BulkStoreWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    bulkStoresWait(tiles, rewriter, op.getLoc(), op.getWritten(), /*join=*/false);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Every thread waits for the phase, then the program joins (unless told
/// not to); a copier's wait is the copying thread's alone (the thread of
/// oncePerProgram, which DescAsyncCopyLowering starts the copies in).
struct MBarrierWaitLowering : TilePattern<MBarrierWaitOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(MBarrierWaitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto wait = [&] {
      barrierWait(rewriter, loc, adaptor.getBarrier(), adaptor.getPhase());
      return SmallVector<Value>{};
    };
    if (op.getCopier())
      tiles.lowering.oncePerProgram(rewriter, loc, {}, /*releaseBefore=*/false,
                                    /*joinAfter=*/false, wait);
    else
      wait();
    if (op.getJoin())
      tiles.lowering.joinProgram(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MBarrierArriveLowering : TilePattern<MBarrierArriveOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(MBarrierArriveOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int64_t programs =
        op.getCluster() ? clusterSize(op->getParentOfType<FunctionOpInterface>()) : 1;
    barrierArrive(rewriter, op.getLoc(), adaptor.getBarrier(), op.getAsyncReads(), programs);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The bulk copies read global memory through the async proxy: this orders
/// the thread's generic accesses, and what its acquires made visible
/// (peers' pushes), before them.
struct AsyncProxyFenceLowering : TilePattern<AsyncProxyFenceOp> {
  AsyncProxyFenceLowering(const LLVMTypeConverter &converter, const TileLowering &tiles)
      : TilePattern(converter, tiles, kVendorBenefit) {}
  LogicalResult matchAndRewrite(AsyncProxyFenceOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    emitAsm(rewriter, op.getLoc(), Type(), {}, "fence.proxy.async.global;", "~{memory}");
    rewriter.eraseOp(op);
    return success();
  }
};

/// The cluster's barrier.
struct ClusterArriveLowering : TilePattern<ClusterArriveOp> {
  ClusterArriveLowering(const LLVMTypeConverter &converter, const TileLowering &tiles)
      : TilePattern(converter, tiles, kVendorBenefit) {}
  LogicalResult matchAndRewrite(ClusterArriveOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    clusterArrive(rewriter, op.getLoc(), op.getRelease());
    rewriter.eraseOp(op);
    return success();
  }
};

struct ClusterWaitLowering : TilePattern<ClusterWaitOp> {
  ClusterWaitLowering(const LLVMTypeConverter &converter, const TileLowering &tiles)
      : TilePattern(converter, tiles, kVendorBenefit) {}
  LogicalResult matchAndRewrite(ClusterWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    emitAsm(rewriter, op.getLoc(), Type(), {}, "barrier.cluster.wait.acquire.aligned;",
            "~{memory}");
    rewriter.eraseOp(op);
    return success();
  }
};

// Waits for the grids of the stream's previous kernel, their memory
// flushed; launched plainly, it does nothing. A kernel never releases its
// own dependents early (griddepcontrol.launch_dependents): they launch as
// its programs exit, which hides the launch between kernels. Released at
// its start they took SMs early and slowed a 128 x 4096^2 GEMM from 10 to
// 12 us (bench/README.md, "Early start").
struct DependencyWaitLowering : TilePattern<DependencyWaitOp> {
  DependencyWaitLowering(const LLVMTypeConverter &converter, const TileLowering &tiles)
      : TilePattern(converter, tiles, kVendorBenefit) {}
  LogicalResult matchAndRewrite(DependencyWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    emitAsm(rewriter, op.getLoc(), Type(), {}, "griddepcontrol.wait;", "~{memory}");
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateBulkCopyPatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                              RewritePatternSet &patterns) {
  patterns.add<AllocMBarriersLowering, InvalMBarriersLowering, DescAsyncCopyLowering,
               BulkDescStoreLowering, BulkStoreWaitLowering, MBarrierWaitLowering,
               MBarrierArriveLowering, AsyncProxyFenceLowering, ClusterArriveLowering,
               ClusterWaitLowering, DependencyWaitLowering>(converter, tiles);
}

} // namespace weft
