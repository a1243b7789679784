//===- Passes.td - weft co-optimisation passes -------------*- tablegen -*-===//
//
// The passes of the `weft-optimize` pipeline. They run on verified tile IR,
// before distribution and lowering, and rely on the program-level meaning of
// the weft ops (docs/design.md): a fence, signal or wait orders the accesses
// of every thread of the program. docs/optimizations.md argues why each
// rewrite is sound.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_TRANSFORMS_PASSES_TD
#define WEFT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WeftHoistTranslate : Pass<"weft-hoist-translate"> {
  let summary = "Hoist loop-invariant peer address computations out of loops";
  let description = [{
    Rewrites `translate(addptr(p, off), peer)` to
    `addptr(translate(p, peer), off)` (translation adds
    `heap_base[peer] - heap_base[rank]` to every address, so it commutes
    with offsets) and `translate(f(x), peer)` to `f(translate(x, peer))`
    for pure ops f that only move pointers (one pointer or pointer-tile
    operand, a pointer-tile result of the same type: splat, broadcast,
    expand_dims, reshape, convert_layout), so that a translation depends
    only on the base pointer and the peer. Not in a loop over peers (the
    peer is computed in a loop that the offset does not depend on): there
    the addptr is what can leave the loop. Then every `weft.translate`,
    `weft.addptr` or pointer-moving op of a loop (LoopLikeOpInterface:
    scf.for, scf.while, ...) whose operands are loop-invariant moves in
    front of the loop, together with the pure, speculatable operations that
    compute those operands (MLIR's moveLoopInvariantCode); innermost loops
    first, so an address can leave a whole nest. Finally common
    subexpressions are eliminated, so each (base, peer) pair is translated
    once. Translations whose peer varies in the loop stay where they are.
  }];
}

def WeftLocalShortCircuit : Pass<"weft-local-short-circuit"> {
  let summary = "Drop translations to the local rank";
  let description = [{
    `weft.translate %p, %peer` is `%p` when `%peer` provably equals
    `weft.rank`; the translation (two heap-base reads and two additions) is
    removed. Proven, after folding (the pass runs the greedy driver, so
    `addi(x, 0)`, `select(c, x, x)`, `trunci(extui(x))` and the like fold
    first): the result of `weft.rank`; `arith.select` whose two arms are
    proven; `arith.remui` / `arith.remsi` by `weft.num_ranks` of a proven
    value or of a proven value plus `weft.num_ranks` (exact because
    `0 <= rank < num_ranks <= WEFT_MAX_RANKS`, so nothing wraps). Nothing
    else (function arguments, loop-carried values, loads) is assumed to be
    the rank. Works on scalar pointers and on tiles of pointers.
  }];
}

def WeftCoalesceFences : Pass<"weft-coalesce-fences"> {
  let summary = "Merge fences and signals that nothing separates";
  let description = [{
    Within a block, "adjacent" means that only operations without memory
    effects lie between. Rewrites: (1) two adjacent fences become one with
    the join of their orders (acquire + release = acq_rel, anything +
    seq_cst = seq_cst) and the wider scope (cta < gpu < sys); (2) an
    acquire or acq_rel fence sinks below an adjacent relaxed `weft.wait`
    whose result is unused (only the wait's termination is observable, and
    the fence still follows every read it followed), past an adjacent
    `scf.for` whose body only holds such waits and memory-free ops, and out
    of the end of such a body, so that the fences of several waits meet and
    merge; (3) a `release` fence followed by an
    adjacent relaxed `weft.signal` becomes a release signal when no write
    that the fence would also have ordered follows: up to a later release
    fence of at least the same scope, every write must itself be a release
    of at least that scope, and the walk may leave only `scf.if`-like
    regions and must end at the return of a kernel (acq_rel and seq_cst
    fences stay); (4) adjacent `signal add`s to the same pointer become one
    add of the sum, adjacent `signal set`s keep the last value; the merged
    signal takes the join of the orders and the wider scope.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def WeftRelaxWaits : Pass<"weft-relax-waits"> {
  let summary = "Split acquire waits into relaxed waits and a shared fence";
  let description = [{
    `weft.wait <cmp> acquire <scope>` becomes `weft.wait <cmp> relaxed
    <scope>` followed by `weft.fence acquire <scope>`: the lowering of an
    acquire wait is exactly a relaxed poll, an acquire fence and a join of
    the program's threads, and a program-level acquire fence is a fence in
    every thread followed by that join. The split pays when the fence can
    be shared, so by default only those waits are split: a run of acquire
    waits with nothing that touches memory between them (every wait after
    the first with an unused result), a wait followed by an acquiring fence
    or by an `scf.for` of such waits, and a wait with an unused result in an
    `scf.for` body that only polls (a wait per peer).
    weft-coalesce-fences then sinks and merges the fences: N polling loops
    and one fence. With `all=true` every acquire wait is split.
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "Split every acquire wait, also one whose fence cannot be shared">,
  ];
}

#endif // WEFT_TRANSFORMS_PASSES_TD
