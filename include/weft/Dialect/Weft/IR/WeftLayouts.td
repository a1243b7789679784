//===- WeftLayouts.td - how a tile is spread over threads --*- tablegen -*-===//
//
// Layouts are tensor encodings: `tensor<64x128xf32, #weft.blocked<...>>`
// says which thread of the program holds which elements. Tile IR written by
// users has no encodings; weft-assign-layouts adds them before the LLVM
// lowering, which turns each distributed tensor into the struct of the
// elements one thread holds.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_LAYOUTS_TD
#define WEFT_LAYOUTS_TD

include "weft/Dialect/Weft/IR/WeftDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/TensorEncoding.td"

class Weft_Attr<string name, string attrMnemonic>
    : AttrDef<Weft_Dialect, name,
              [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = attrMnemonic;
}

def Weft_BlockedEncodingAttr : Weft_Attr<"BlockedEncoding", "blocked"> {
  let summary = "a tile cut into blocks of elements per thread";
  let description = [{
    Along every dimension d a thread holds `sizePerThread[d]` consecutive
    elements, `threadsPerWarp[d]` threads of a warp and `warpsPerProgram[d]`
    warps of the program sit side by side, and the pattern repeats until it
    covers the tile; a tile smaller than the pattern is replicated (threads
    past its end hold copies). `order` lists the dimensions from the
    fastest-varying: threads are numbered along order[0] first, and a
    thread's own elements are laid out the same way, so its consecutive
    elements along order[0] form one vector access. Every entry is a power
    of two.

    ```mlir
    #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8],
                   warpsPerProgram = [4, 1], order = [1, 0]}>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"unsigned">:$sizePerThread,
                        ArrayRefParameter<"unsigned">:$threadsPerWarp,
                        ArrayRefParameter<"unsigned">:$warpsPerProgram,
                        ArrayRefParameter<"unsigned">:$order);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getOrder().size(); }
  }];
}

def Weft_SliceEncodingAttr : Weft_Attr<"SliceEncoding", "slice"> {
  let summary = "a parent layout with one dimension removed";
  let description = [{
    The layout of a reduction's result (dimension `dim` of the parent
    reduced away) and of the operand of `weft.expand_dims` (`dim` is the
    inserted axis). A thread holds the elements its parent layout gives it,
    with coordinate `dim` dropped; threads that differ only along `dim` hold
    the same elements.

    ```mlir
    #weft.slice<{dim = 1, parent = #weft.blocked<...>}>
    ```
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Weft_SwizzledSharedAttr : AttrDef<Weft_Dialect, "SwizzledShared"> {
  let mnemonic = "swizzled";
  let summary = "a shared-memory tile laid out for warpgroup matrix multiplies";
  let description = [{
    The layout of a `!weft.shared` buffer that sm_90's `wgmma` reads in
    place (the "canonical" swizzled layouts of the PTX ISA). The tile's
    columns are cut into blocks of `bytes` bytes (32, 64 or 128); each block
    is stored whole, one row of `bytes` bytes after another, and within a
    row the 16-byte chunk c of row r sits at chunk
    `c xor ((r * bytes / 128) mod (bytes / 16))`, so that eight consecutive
    rows read one chunk each from distinct banks.

    With `warps` = W > 0 the rows are also stored in the order that
    warpgroup MMA hands them to the warps of an accumulator whose layout is
    `#weft.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4],
    warpsPerProgram = [W, 1], order = [1, 0]}>`: there warp i holds rows
    8i..8i+7 of every 8W, while wgmma gives warp w of each warpgroup 16
    consecutive rows. Row `8W t + 8 i + g` (g < 8, i < W) is stored at
    row `64 (R (i / 4) + t / 2) + 16 (i mod 4) + 8 (t mod 2) + g`, with
    R = rows / (16 W) instructions per warpgroup.

    ```mlir
    !weft.shared<128x64xbf16, #weft.swizzled<bytes = 128, warps = 8>>
    ```
  }];
  let parameters = (ins "unsigned":$bytes, "unsigned":$warps);
  let assemblyFormat = "`<` `bytes` `=` $bytes `,` `warps` `=` $warps `>`";
  let genVerifyDecl = 1;
}

#endif // WEFT_LAYOUTS_TD
