//===- SharedLayout.cpp - where a tile's elements sit in shared memory ----===//
//
// weft.dot reads its operands from shared memory in one of two layouts:
// padded rows, which ldmatrix reads without bank conflicts (the scratch
// copies of tile operands and plain `!weft.shared` buffers), and
// #weft.swizzled, which warpgroup MMA reads by descriptor (their sizes:
// weft/Dialect/Weft/Distribution/SharedMemory.h). Writers (weft.async_copy,
// the dot's own stores) and readers address elements through
// sharedElementOffset, so the two always agree.
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

} // namespace weft
