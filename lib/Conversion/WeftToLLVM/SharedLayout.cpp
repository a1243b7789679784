//===- SharedLayout.cpp - where a tile's elements sit in shared memory ----===//
//
// weft.dot reads its operands from shared memory in one of two layouts:
// padded rows, which ldmatrix reads without bank conflicts (the scratch
// copies of tile operands and plain `!weft.shared` buffers), and
// #weft.swizzled, which warpgroup MMA reads by descriptor. Writers
// (weft.async_copy, the dot's own stores) and readers address elements
// through sharedElementOffset, so the two always agree.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

using namespace mlir;

namespace weft {

namespace {

SwizzledSharedAttr swizzleOf(ShapedType tile) {
  auto shared = dyn_cast<SharedType>(tile);
  return shared ? shared.getLayout() : SwizzledSharedAttr();
}

Value sum(OpBuilder &b, Location loc, ArrayRef<Value> terms) {
  Value total = terms.front();
  for (Value term : terms.drop_front())
    total = LLVM::AddOp::create(b, loc, total, term);
  return total;
}

} // namespace

int64_t sharedRowPitch(ShapedType tile) {
  return tile.getDimSize(1) + 16 / naturalAlignment(tile.getElementType());
}

int64_t sharedTileBytes(ShapedType tile) {
  int64_t elementBytes = naturalAlignment(tile.getElementType());
  if (swizzleOf(tile)) // whole 8-row blocks: a multiple of the alignment
    return tile.getNumElements() * elementBytes;
  return llvm::alignTo(tile.getDimSize(0) * sharedRowPitch(tile) * elementBytes, 16);
}

int64_t sharedTileAlignment(ShapedType tile) {
  // The hardware swizzles by address bits: a block of 8 rows must start
  // where the pattern does.
  if (SwizzledSharedAttr layout = swizzleOf(tile))
    return 8 * layout.getBytes();
  return 16;
}

Value sharedElementOffset(OpBuilder &b, Location loc, ShapedType tile, Value row, Value col) {
  int64_t elementBytes = naturalAlignment(tile.getElementType());
  SwizzledSharedAttr layout = swizzleOf(tile);
  if (!layout)
    return mulConst(b, loc, sum(b, loc, {mulConst(b, loc, row, sharedRowPitch(tile)), col}),
                    elementBytes);
  int64_t rows = tile.getDimSize(0), bytes = layout.getBytes();
  if (int64_t warps = layout.getWarps()) {
    // Row 8W t + 8i + g goes where wgmma hands it to warp i (see the
    // attribute): 64 (R (i / 4) + t / 2) + 16 (i % 4) + 8 (t % 2) + g.
    int64_t perWarpgroup = rows / (16 * warps);
    Value g = remConst(b, loc, row, 8);
    Value i = remConst(b, loc, divConst(b, loc, row, 8), warps);
    Value t = divConst(b, loc, row, 8 * warps);
    row = sum(b, loc,
              {mulConst(b, loc, sum(b, loc, {mulConst(b, loc, divConst(b, loc, i, 4), perWarpgroup),
                                            divConst(b, loc, t, 2)}),
                        64),
               mulConst(b, loc, remConst(b, loc, i, 4), 16),
               mulConst(b, loc, remConst(b, loc, t, 2), 8), g});
  }
  // Column blocks of `bytes` one after another, each all rows deep; the
  // 16-byte chunk of a row is xor-ed with the row's place in the pattern.
  Value colBytes = mulConst(b, loc, col, elementBytes);
  Value block = divConst(b, loc, colBytes, bytes);
  Value inRow = remConst(b, loc, colBytes, bytes);
  Value phase = remConst(b, loc, divConst(b, loc, mulConst(b, loc, row, bytes), 128), bytes / 16);
  Value chunk = LLVM::XOrOp::create(b, loc, divConst(b, loc, inRow, 16), phase);
  return sum(b, loc, {mulConst(b, loc, block, rows * bytes), mulConst(b, loc, row, bytes),
                      mulConst(b, loc, chunk, 16), remConst(b, loc, inRow, 16)});
}

namespace {

/// A factor of a block dimension in a tensor-map view: coordinates step
/// `step` elements, `size` of them.
struct Factor {
  int64_t step, size;
};

/// The rows of a buffer interleaved for `warps` warps (#weft.swizzled) as
/// factors in shared-memory order, outermost first: row 8W t + 8 i + g
/// (i < W, t < 2R) sits at 64 (R (i / 4) + t / 2) + 16 (i mod 4) +
/// 8 (t mod 2) + g, so with i = 4 ih + il and t = 2 th + tl the order is
/// ih, th, il, tl, g. Factors of one coordinate are dropped, and an outer
/// factor that continues the next inner one merges with it.
SmallVector<Factor> interleavedRows(int64_t rows, int64_t warps) {
  int64_t perWarpgroup = rows / (16 * warps);
  SmallVector<Factor> order = {{32, warps / 4}, {16 * warps, perWarpgroup}, {8, 4}, {8 * warps, 2},
                               {1, 8}};
  SmallVector<Factor> merged;
  for (Factor f : order) {
    if (f.size == 1)
      continue;
    if (!merged.empty() && merged.back().step == f.step * f.size) {
      merged.back() = {f.step, f.size * merged.back().size};
      continue;
    }
    merged.push_back(f);
  }
  return merged;
}

} // namespace

std::optional<TensorCopyPlan> tensorCopyPlan(SharedType buffer,
                                             std::array<int64_t, 2> divisibility) {
  SwizzledSharedAttr layout = buffer.getLayout();
  if (!layout)
    return std::nullopt;
  int64_t rows = buffer.getDimSize(0), cols = buffer.getDimSize(1);
  // A box row is at most one column block: the swizzle's span, which the
  // hardware swizzles as the layout does. Column blocks lie one after
  // another in shared memory, each all rows deep.
  int64_t span = layout.getBytes() / naturalAlignment(buffer.getElementType());
  int64_t colBlocks = cols / span;

  // One box for the whole block: the columns within a block, the rows in
  // shared-memory order, then the blocks. The row factor that spans the
  // block walks the rest of the tensor (the block's row offset a multiple
  // of its step), and so do the column blocks (a multiple of the span).
  SmallVector<Factor> rowFactors =
      layout.getWarps() ? interleavedRows(rows, layout.getWarps()) : SmallVector<Factor>{{1, rows}};
  auto spanning = llvm::find_if(rowFactors, [&](Factor f) { return f.step * f.size == rows; });
  if (spanning != rowFactors.end()) {
    TensorCopyPlan plan{{}, layout.getBytes(), {spanning->step, colBlocks > 1 ? span : 1}};
    plan.dims.push_back({1, 1, colBlocks > 1 ? span : 0, span});
    for (auto f = rowFactors.rbegin(); f != rowFactors.rend(); ++f)
      plan.dims.push_back({0, f->step, &*f == &*spanning ? 0 : f->size, f->size});
    if (colBlocks > 1)
      plan.dims.push_back({1, span, 0, colBlocks});
    bool boxesFit = llvm::all_of(plan.dims, [](const TensorMapDim &d) { return d.box <= 256; });
    if (plan.dims.size() <= 5 && boxesFit && divisibility[0] % plan.alignment[0] == 0 &&
        divisibility[1] % plan.alignment[1] == 0)
      return plan;
  }
  // Otherwise a box per column block and run of consecutive rows (8 where
  // they are interleaved), anywhere in the tensor.
  int64_t boxRows = layout.getWarps() ? 8 : rows;
  if (boxRows > 256)
    return std::nullopt;
  return TensorCopyPlan{{{1, 1, 0, span}, {0, 1, 0, boxRows}}, layout.getBytes(), {1, 1}};
}

SmallVector<std::array<int64_t, 2>> tensorCopyOrigins(ArrayRef<TensorMapDim> dims,
                                                      ShapedType block) {
  // What one box covers along each block dimension, then boxes side by side.
  std::array<int64_t, 2> extent = {1, 1};
  for (const TensorMapDim &d : dims)
    extent[d.dim] += (d.box - 1) * d.step;
  SmallVector<std::array<int64_t, 2>> origins;
  for (int64_t col = 0; col < block.getDimSize(1); col += extent[1])
    for (int64_t row = 0; row < block.getDimSize(0); row += extent[0])
      origins.push_back({row, col});
  return origins;
}

DenseI64ArrayAttr encodeTensorCopyPlan(MLIRContext *ctx, const TensorCopyPlan &plan) {
  SmallVector<int64_t> values = {plan.swizzle};
  for (const TensorMapDim &d : plan.dims)
    values.append({d.dim, d.step, d.size, d.box});
  return DenseI64ArrayAttr::get(ctx, values);
}

TensorCopyPlan decodeTensorCopyPlan(DenseI64ArrayAttr attr) {
  ArrayRef<int64_t> values = attr.asArrayRef();
  TensorCopyPlan plan{{}, static_cast<unsigned>(values.front()), {1, 1}};
  for (size_t i = 1; i + 3 < values.size(); i += 4)
    plan.dims.push_back({values[i], values[i + 1], values[i + 2], values[i + 3]});
  return plan;
}

BlockedEncodingAttr warpgroupAccumulatorLayout(MLIRContext *ctx, unsigned warps) {
  return BlockedEncodingAttr::get(ctx, {1, 2}, {8, 4}, {warps, 1}, {1, 0});
}

} // namespace weft
