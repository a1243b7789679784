//===- WeftTileOps.td - tile (tensor) operations -----------*- tablegen -*-===//
//
// The shape operations a Triton-like frontend needs besides upstream
// arith/math on tensors. Results are spelled out rather than inferred: after
// weft-assign-layouts they carry layouts the op constrains but does not
// determine (a make_range may take any layout), and the verifiers check the
// constraints.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_TILE_OPS_TD
#define WEFT_TILE_OPS_TD

include "mlir/Interfaces/ControlFlowInterfaces.td"

def Weft_Scalar : AnyTypeOf<[AnySignlessInteger, AnyFloat, Weft_PtrType],
                            "integer, float or weft pointer">;
def Weft_Tile : RankedTensorOf<[AnySignlessInteger, AnyFloat, Weft_PtrType]>;
def Weft_NumericTile : RankedTensorOf<[AnySignlessInteger, AnyFloat]>;

def Weft_MakeRangeOp : Weft_Op<"make_range", [Pure]> {
  let summary = "the 1-D tile of i32 values start, start+1, ..., end-1";
  let description = [{
    ```mlir
    %offs = weft.make_range 0, 128 : tensor<128xi32>
    ```
  }];
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$start `,` $end attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Weft_SplatOp : Weft_Op<"splat", [Pure]> {
  let summary = "a tile whose every element is one scalar";
  let description = [{
    ```mlir
    %ps = weft.splat %p : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
    ```
  }];
  let arguments = (ins Weft_Scalar:$src);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_BroadcastOp : Weft_Op<"broadcast", [Pure]> {
  let summary = "repeat a tile along its dimensions of size 1";
  let description = [{
    Every dimension of the result equals the source's, or the source's is 1.

    ```mlir
    %b = weft.broadcast %row : tensor<1x128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_ExpandDimsOp : Weft_Op<"expand_dims", [Pure]> {
  let summary = "insert a dimension of size 1 (x[:, None])";
  let description = [{
    ```mlir
    %col = weft.expand_dims %r axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src, I32Attr:$axis);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = [{
    $src `axis` `=` $axis attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Weft_ReshapeOp : Weft_Op<"reshape", [Pure]> {
  let summary = "the same elements, in row-major order, in another shape";
  let description = [{
    ```mlir
    %m = weft.reshape %v : tensor<128xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_ConvertLayoutOp : Weft_Op<"convert_layout", [Pure]> {
  let summary = "redistribute a tile over the program's threads";
  let description = [{
    Same shape and elements, another layout; lowered through shared memory
    when threads must exchange elements.

    ```mlir
    %b = weft.convert_layout %a : tensor<128xf32, #A> -> tensor<128xf32, #B>
    ```
  }];
  let arguments = (ins Weft_Tile:$src);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_ReduceOp : Weft_Op<"reduce", [RecursiveMemoryEffects,
                                       SingleBlock]> {
  let summary = "combine a tile's elements along one axis";
  let description = [{
    The combine region takes two elements and yields their combination with
    `weft.reduce.return`; it must be associative and commutative, since the
    order in which threads combine is the lowering's choice. Reducing a 1-D
    tile yields a scalar, shared by every thread of the program.

    ```mlir
    %sums = weft.reduce %t axis = 1 : tensor<64x128xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      weft.reduce.return %s : f32
    }
    ```
  }];
  let arguments = (ins Weft_NumericTile:$src, I32Attr:$axis);
  let results = (outs AnyTypeOf<[AnySignlessInteger, AnyFloat,
                                 Weft_NumericTile]>:$result);
  let regions = (region SizedRegion<1>:$combine);
  let assemblyFormat = [{
    $src `axis` `=` $axis attr-dict `:` type($src) `->` type($result) $combine
  }];
  let hasRegionVerifier = 1;
}

def Weft_DotOperand : AnyTypeOf<[Weft_NumericTile, Weft_SharedType],
                                "tile or shared-memory buffer">;

def Weft_DotOp : Weft_Op<"dot", [Pure]> {
  let summary = "tile matrix multiply-accumulate: result = c + a @ b";
  let description = [{
    `a` is MxK, `b` KxN, `c` and the result MxN. `a` and `b` share one
    element type, f16, bf16 or f32; `c` and the result are f32, and the
    products are summed in f32. `a` and `b` may have any layouts; the
    result has `c`'s. `a` and `b` may instead be shared-memory buffers
    (`!weft.shared`, filled by `weft.async_copy` and made visible by
    `weft.async_wait`): the product reads its fragments from there.

    ```mlir
    %d = weft.dot %a, %b, %c : tensor<64x32xbf16>, tensor<32x16xbf16>,
                               tensor<64x16xf32> -> tensor<64x16xf32>
    ```
  }];
  let arguments = (ins Weft_DotOperand:$a, Weft_DotOperand:$b,
                       Weft_NumericTile:$c);
  let results = (outs Weft_NumericTile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `,` type($c)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Asynchronous copies into shared memory: what weft-pipeline-dot-operands
// makes of a K loop's operand loads. Program-level like every weft op: the
// copies of all the program's threads form one group.
//===----------------------------------------------------------------------===//

def Weft_AllocSharedOp : Weft_Op<"alloc_shared", [MemoryEffects<[MemAlloc]>]> {
  let summary = "a buffer for one tile in the program's shared memory";
  let results = (outs Weft_SharedType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Weft_AsyncCopyOp : Weft_Op<"async_copy", [
    MemoryEffects<[MemRead, MemWrite]>, MaskOf<"ptr">]> {
  let summary = "start copying a tile from global memory into a shared buffer";
  let description = [{
    Element (i, j) of `dst` receives `*ptr[i, j]`, or zero where `mask` is
    false (nothing is read there). The copy is asynchronous: it belongs to
    the group the next `weft.async_commit` closes, and `dst` may be read
    only after a `weft.async_wait` that leaves that group complete. Where
    the target has no asynchronous copies it completes at once.

    ```mlir
    weft.async_copy %ptrs, %buf, mask %m : tensor<64x32x!weft.ptr<bf16>>, !weft.shared<64x32xbf16>
    ```
  }];
  let arguments = (ins RankedTensorOf<[Weft_PtrType]>:$ptr, Weft_SharedType:$dst,
                       Optional<RankedTensorOf<[I1]>>:$mask);
  let assemblyFormat = [{
    $ptr `,` $dst (`,` `mask` $mask^)? attr-dict `:` type($ptr) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def Weft_AsyncCommitOp : Weft_Op<"async_commit", [MemoryEffects<[MemWrite]>]> {
  let summary = "close the group of the copies started since the last one";
  let assemblyFormat = "attr-dict";
}

def Weft_AsyncWaitOp : Weft_Op<"async_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until at most `pending` copy groups are incomplete";
  let description = [{
    Then the program joins, so that every thread's completed copies are
    visible to all and every thread is done with what it read before (the
    buffers of older groups may be refilled). Groups complete in order.

    ```mlir
    weft.async_wait 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$pending);
  let assemblyFormat = "$pending attr-dict";
}

def Weft_DotWaitOp : Weft_Op<"dot_wait", [MemoryEffects<[MemRead]>,
    AllTypesMatch<["src", "result"]>]> {
  let summary = "wait for the products of asynchronous weft.dot ops";
  let description = [{
    Where tile products run asynchronously (sm_90's warpgroup MMA), a
    `weft.dot` whose only user is a `weft.dot_wait` leaves the waiting to
    it: `result` is `src` once at most `pending` of the program's dots are
    still in flight, so the dot's sums may be used. With pending = 1 a K
    loop overlaps each step's products with the next step's (its operand
    buffers must outlive them: weft-pipeline-dot-operands inserts these,
    with a spare buffer per ring); after the loop a `weft.dot_wait` with
    pending = 0 completes them. Elsewhere it is `src`.

    ```mlir
    %s = weft.dot_wait %d, 1 : tensor<128x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$src, ConfinedAttr<I32Attr, [IntNonNegative]>:$pending);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$src `,` $pending attr-dict `:` type($src)";
}

def Weft_ReduceReturnOp : Weft_Op<"reduce.return", [Pure, Terminator,
    ReturnLike, HasParent<"ReduceOp">]> {
  let summary = "the combined element of a weft.reduce region";
  let arguments = (ins AnyType:$result);
  let assemblyFormat = "$result attr-dict `:` type($result)";
}

#endif // WEFT_TILE_OPS_TD
