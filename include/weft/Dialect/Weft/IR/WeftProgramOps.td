//===- WeftProgramOps.td - hints, checks, printing, assembly -*- tablegen -*-===//
//
// Ops about the program rather than its data: what the author promises the
// compiler (axis hints, assumptions), what the program reports while it
// runs (printing, assertions), and instructions written by hand.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_PROGRAM_OPS_TD
#define WEFT_PROGRAM_OPS_TD

def Weft_AxisHintOp : Weft_Op<"axis_hint", [Pure, AllTypesMatch<["src", "result"]>]> {
  let summary = "the author's word on a value's contiguity, divisibility, constancy";
  let description = [{
    The value itself, with facts the axis analysis (weft/Analysis/AxisInfo.h)
    takes instead of what it would prove: per dimension, `divisibility` (a
    power of two dividing every run's first value; Triton's multiple_of),
    `contiguity` (runs of consecutive values; max_contiguous) and
    `constancy` (runs of equal values; max_constancy). A wrong hint makes
    vector accesses of values that are not contiguous or aligned: the
    author answers for it, as in Triton.

    ```mlir
    %o = weft.axis_hint %offs {divisibility = array<i64: 16>, contiguity = array<i64: 128>} : tensor<128xi32>
    ```
  }];
  let arguments = (ins Weft_IntLike:$src, OptionalAttr<DenseI64ArrayAttr>:$divisibility,
                   OptionalAttr<DenseI64ArrayAttr>:$contiguity,
                   OptionalAttr<DenseI64ArrayAttr>:$constancy);
  let results = (outs Weft_IntLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src)";
  let hasVerifier = 1;
}

def Weft_AssumeOp : Weft_Op<"assume"> {
  let summary = "the author's word that a condition holds";
  let description = [{
    LLVM's `llvm.assume`: the optimiser may rely on `%cond`, and a false
    one is undefined behaviour.
  }];
  let arguments = (ins I1:$cond);
  let assemblyFormat = "$cond attr-dict";
}

def Weft_PrintOp : Weft_Op<"print"> {
  let summary = "print a prefix and values from every program";
  let description = [{
    Each program prints `prefix` and each scalar operand once, and each
    element of a tile operand on its own line with its coordinates, as
    Triton's device_print does:
    `pid (0, 0, 0) idx (3) x: 1.5`. `hex` prints integers in hexadecimal.
    Host: the C library's printf; NVPTX: vprintf (the driver's buffer,
    flushed at synchronisation); AMDGPU: OCKL's printf over hostcalls.
  }];
  let arguments = (ins StrAttr:$prefix, Variadic<Weft_ValueLike>:$args, UnitAttr:$hex);
  let assemblyFormat = "$prefix (`,` $args^ `:` type($args))? attr-dict";
}

def Weft_AssertOp : Weft_Op<"assert"> {
  let summary = "stop the program with a message where a condition fails";
  let description = [{
    Where the scalar `%cond` is false (a tile of conditions is reduced
    first, so every thread of the program takes the same way out), the
    program records `message` with its kernel and source location as the
    launch's debug error and returns, as a failed debug check does
    (docs/design.md, "The kernel context"): the runtime reports it at the
    next synchronisation instead of the process dying in a trap. Checked
    only when the module is compiled with `weft.debug`.
  }];
  let arguments = (ins I1:$cond, StrAttr:$message);
  let assemblyFormat = "$cond `,` $message attr-dict";
}

def Weft_InlineAsmOp : Weft_Op<"inline_asm", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "hand-written instructions applied element by element";
  let description = [{
    Triton's inline_asm_elementwise: `asm` (LLVM inline-assembly syntax,
    `$0` the first result) with its `constraints`, applied to `pack`
    consecutive elements of the operands at a time (operands and results
    are tiles of one shape, or scalars). Unless `pure`, the op may read and
    write memory and is neither moved nor removed.

    ```mlir
    %y = weft.inline_asm "shl.b32 $0, $1, 3;" "=r,r" pure pack 1 %x : (tensor<128xi32>) -> tensor<128xi32>
    ```
  }];
  let arguments = (ins StrAttr:$asm_string, StrAttr:$constraints, UnitAttr:$pure,
                   ConfinedAttr<I32Attr, [IntPositive]>:$pack,
                   Variadic<Weft_ValueLike>:$args);
  let results = (outs Variadic<Weft_ValueLike>:$results);
  let assemblyFormat = [{
    $asm_string $constraints (`pure` $pure^)? `pack` $pack $args attr-dict `:`
    functional-type($args, $results)
  }];
  let hasVerifier = 1;
}

#endif // WEFT_PROGRAM_OPS_TD
