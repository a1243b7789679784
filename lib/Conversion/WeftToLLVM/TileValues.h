//===- TileValues.h - the per-thread values of distributed tiles -*- C++ -*-===//
//
// What a thread holds of a distributed tensor (TileLayout,
// weft/Dialect/Weft/Distribution/TileLayout.h) as LLVM values: the struct
// of its elements, and their coordinates.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_CONVERSION_WEFTTOLLVM_TILEVALUES_H
#define WEFT_CONVERSION_WEFTTOLLVM_TILEVALUES_H

#include "weft/Conversion/TargetInfo.h"
#include "weft/Dialect/Weft/Distribution/TileLayout.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"

namespace weft {

/// Coordinates (tensor dimensions, i32) of every element of this thread.
llvm::SmallVector<llvm::SmallVector<mlir::Value>>
emitCoordinates(mlir::OpBuilder &b, mlir::Location loc, const TileLayout &layout,
                const TargetInfo &target);
/// Per element, whether this thread is the one owner of it (the thread
/// whose coordinate did not wrap), for side effects that must happen once.
llvm::SmallVector<mlir::Value> emitOwnership(mlir::OpBuilder &b, mlir::Location loc,
                                             const TileLayout &layout,
                                             const TargetInfo &target);

/// The per-thread struct of a distributed tensor.
mlir::Type convertTileType(const mlir::LLVMTypeConverter &converter,
                           mlir::RankedTensorType type);
void addTileConversion(mlir::LLVMTypeConverter &converter);

llvm::SmallVector<mlir::Value> unpackTile(mlir::OpBuilder &b,
                                          mlir::Location loc,
                                          mlir::Value tile);
mlir::Value packTile(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Type structType, mlir::ValueRange elements);

/// Row-major linear index of a coordinate in `shape`.
mlir::Value linearize(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::ValueRange coords, llvm::ArrayRef<int64_t> shape);

} // namespace weft

#endif // WEFT_CONVERSION_WEFTTOLLVM_TILEVALUES_H
