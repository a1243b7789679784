//===- TileSharedMemory.cpp - the scratch buffer of tile exchanges --------===//
//
// Layout conversions, reductions and scans across warps, replicated atomics
// and tile products move elements between threads through a scratch area of
// shared memory: in a kernel with dynamic shared memory the place
// placeSharedBuffers gave the op, elsewhere one static buffer (on the host,
// where a program is one thread, its stack). Its size is known when
// compiling, so an op that would overflow the target's static shared
// memory is reported here instead of by ptxas or the backend.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

namespace weft {

namespace {

/// The scratch of `op`'s exchanges: where placeSharedBuffers put it in
/// the kernel's dynamic shared memory, or else the module's static
/// scratch buffer, grown to `bytes` if smaller. A host program is a thread
/// of its own, so its scratch is on its stack (a module-wide buffer would
/// be shared by programs running at once).
Value scratch(OpBuilder &b, Location loc, Operation *op, int64_t bytes,
              const TargetInfo &target) {
  if (Value placed = dynamicSharedAddress(b, op))
    return placed;
  if (target.singleThreadPrograms())
    return programStackBuffer(b, loc, op, bytes);
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes);
  LLVM::GlobalOp global = sharedGlobal(b, loc, op, "__weft_tile_scratch", type,
                                       /*alignment=*/16);
  if (cast<LLVM::LLVMArrayType>(global.getGlobalType()).getNumElements() <
      uint64_t(bytes))
    global.setGlobalType(type);
  return addressOf(b, loc, global);
}

} // namespace

LogicalResult checkScratchLimit(Operation *op, const TargetInfo &target) {
  std::optional<int64_t> limit = target.getSpec().staticSharedMemoryBytes();
  ScratchUse need = scratchUse(op, target.getCompileTarget());
  // Placed in dynamic shared memory, the op fit (placeSharedBuffers).
  if (!limit || need.bytes == 0 || op->hasAttr(kSharedOffsetAttrName))
    return success();
  int64_t allowed = *scratchAllowed(op, target.getSpec());
  if (need.bytes <= allowed)
    return success();
  int64_t buffers = *limit - kBroadcastSlotBytes - allowed;
  InFlightDiagnostic error = emitSharedOverflow(op, need.tile, need.bytes, allowed)
                             << " (" << *limit << " less " << kBroadcastSlotBytes
                             << " for the broadcast slot";
  if (buffers)
    error << " and " << buffers << " for the pipeline's buffers";
  return error << ")";
}

Value programStackBuffer(OpBuilder &b, Location loc, Operation *op, int64_t bytes) {
  return entryAlloca(b, loc, op, LLVM::LLVMArrayType::get(b.getI8Type(), bytes),
                     /*addressSpace=*/0);
}

SmallVector<Value>
TileLowering::exchange(OpBuilder &b, Location loc, Operation *op,
                       function_ref<void(Value)> write,
                       function_ref<SmallVector<Value>(Value)> read) const {
  Value buffer = scratch(b, loc, op, scratchUse(op, target.getCompileTarget()).bytes, target);
  write(buffer);
  lowering.joinProgram(b, loc);
  SmallVector<Value> out = read(buffer);
  lowering.joinProgram(b, loc);
  return out;
}

/// `type`'s shape with rows `pitch` elements apart (0: packed).
static SmallVector<int64_t> paddedShape(RankedTensorType type, int64_t pitch) {
  SmallVector<int64_t> shape(type.getShape());
  if (pitch)
    shape.back() = pitch;
  return shape;
}

/// How many of a thread's consecutive elements one access of a row-major
/// exchange may cover (from a 16-byte aligned base): a run along the
/// layout's fastest dimension when that is the last one, at most 16 bytes,
/// dividing the row length so that every run stays aligned.
static unsigned rowVectorWidth(RankedTensorType type, Type elemType,
                               ArrayRef<int64_t> shape) {
  TileLayout layout(type);
  unsigned last = type.getRank() - 1;
  if (layout.getSliceDim() >= 0 || layout.getBlocked().getOrder()[0] != last ||
      !elemType.isIntOrFloat() || elemType.getIntOrFloatBitWidth() % 8)
    return 1;
  int64_t bytes = elemType.getIntOrFloatBitWidth() / 8;
  int64_t width = std::min<int64_t>(
      {layout.getBlocked().getSizePerThread()[last], type.getShape()[last], 16 / bytes});
  while (width > 1 && (shape.back() % width || type.getShape()[last] % width))
    width /= 2;
  return std::max<int64_t>(width, 1);
}

void TileLowering::storeRuns(OpBuilder &b, Location loc, Type elemType, RankedTensorType type,
                             ValueRange elements, ArrayRef<int64_t> shape,
                             function_ref<Value(ArrayRef<Value>)> addressOf) const {
  unsigned width = rowVectorWidth(type, elemType, shape);
  TileLayout layout(type);
  auto coords = emitCoordinates(b, loc, layout, target);
  // Copies of an element (a layout wider than its tile) would all write
  // the same address: the same value, but a write-write race to
  // compute-sanitizer. Its owner's copy is stored; a vector run is owned
  // as a whole (it never straddles a wrap: rowVectorWidth divides the row).
  SmallVector<Value> owned;
  if (layout.isReplicated())
    owned = emitOwnership(b, loc, layout, target);
  for (unsigned i = 0; i < elements.size(); i += width) {
    Value ptr = addressOf(coords[i]);
    auto store = [&] {
      if (width == 1)
        LLVM::StoreOp::create(b, loc, elements[i], ptr);
      else
        LLVM::StoreOp::create(b, loc, packVector(b, loc, elements.slice(i, width)), ptr,
                              width * naturalAlignment(elemType));
      return SmallVector<Value>{};
    };
    if (owned.empty())
      store();
    else
      emitIf(b, loc, owned[i], {}, store, {});
  }
}

void TileLowering::storeRowMajor(OpBuilder &b, Location loc, Value base, Type elemType,
                                 RankedTensorType type, ValueRange elements,
                                 int64_t pitch) const {
  SmallVector<int64_t> shape = paddedShape(type, pitch);
  storeRuns(b, loc, elemType, type, elements, shape, [&](ArrayRef<Value> coord) {
    return elementPtr(b, loc, base, elemType, linearize(b, loc, coord, shape));
  });
}

void TileLowering::storeShared(OpBuilder &b, Location loc, Value base, SharedType buffer,
                               RankedTensorType type, ValueRange elements) const {
  // A run is at most 16 aligned bytes: one chunk of a swizzled row.
  storeRuns(b, loc, buffer.getElementType(), type, elements, buffer.getShape(),
            [&](ArrayRef<Value> coord) {
              return byteOffset(b, loc, base,
                                sharedElementOffset(b, loc, buffer, coord[0], coord[1]));
            });
}

SmallVector<Value> TileLowering::loadRowMajor(OpBuilder &b, Location loc, Value base,
                                              Type elemType, RankedTensorType type,
                                              int64_t pitch) const {
  SmallVector<int64_t> shape = paddedShape(type, pitch);
  unsigned width = rowVectorWidth(type, elemType, shape);
  auto coords = emitCoordinates(b, loc, TileLayout(type), target);
  SmallVector<Value> out;
  for (unsigned i = 0; i < coords.size(); i += width) {
    Value ptr = elementPtr(b, loc, base, elemType, linearize(b, loc, coords[i], shape));
    if (width == 1) {
      out.push_back(LLVM::LoadOp::create(b, loc, elemType, ptr));
      continue;
    }
    Value vector = LLVM::LoadOp::create(b, loc, VectorType::get({width}, elemType), ptr,
                                        width * naturalAlignment(elemType));
    llvm::append_range(out, unpackVector(b, loc, vector));
  }
  return out;
}

} // namespace weft
