//===- ProgramOps.cpp - verifiers of hints, checks and inline assembly ----===//
#include "weft/Dialect/Weft/IR/Dialect.h"

using namespace mlir;
using namespace weft;

LogicalResult AxisHintOp::verify() {
  auto tile = dyn_cast<RankedTensorType>(getSrc().getType());
  int64_t rank = tile ? tile.getRank() : 1;
  for (auto [name, values] : {std::pair{"divisibility", getDivisibility()},
                              std::pair{"contiguity", getContiguity()},
                              std::pair{"constancy", getConstancy()}}) {
    if (!values)
      continue;
    if (int64_t(values->size()) != rank)
      return emitOpError() << name << " needs one entry per dimension (" << rank << ")";
    for (auto [d, value] : llvm::enumerate(*values)) {
      if (value < 1 || (StringRef(name) == "divisibility" && !llvm::isPowerOf2_64(value)))
        return emitOpError() << name << " entries are positive"
                             << (StringRef(name) == "divisibility" ? " powers of two" : "");
      if (StringRef(name) != "divisibility" && tile && value > tile.getDimSize(d))
        return emitOpError() << name << " " << value << " exceeds dimension " << d
                             << " of the tile";
    }
  }
  return success();
}

LogicalResult InlineAsmOp::verify() {
  // Operands and results are tiles of one shape (and layout), or scalars.
  RankedTensorType shape;
  for (Type type : llvm::concat<Type>(getArgs().getTypes(), getResults().getTypes())) {
    auto tile = dyn_cast<RankedTensorType>(type);
    if (!tile)
      continue;
    if (shape && (tile.getShape() != shape.getShape() ||
                  tile.getEncoding() != shape.getEncoding()))
      return emitOpError("tile operands and results must share one shape and layout");
    shape = tile;
  }
  for (Type type : getResults().getTypes())
    if (shape && !isa<RankedTensorType>(type))
      return emitOpError("results are tiles where operands are");
  if (getResults().empty())
    return emitOpError("has at least one result");
  if (shape && shape.getNumElements() % getPack())
    return emitOpError() << "pack " << getPack() << " does not divide the tile's "
                         << shape.getNumElements() << " elements";
  return success();
}

void InlineAsmOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  if (getPure())
    return;
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}
