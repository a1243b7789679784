// Stores to the copy of `p` on rank `peer`; the E2E test passes a peer that
// is no rank and compiles with debug checks, which must stop the kernel and
// name this translate in the launch's error. weft_compile() reads a buffer
// (MLIR calls it <input>), so the translate carries its location the way a
// frontend attaches its source's.
func.func @bad_peer(%p: !weft.ptr<i32>, %peer: i32) attributes {weft.kernel} {
  %c1 = arith.constant 1 : i32
  %q = weft.translate %p, %peer : !weft.ptr<i32> loc("bad_peer.mlir":9:8)
  weft.store %q, %c1 : !weft.ptr<i32>
  return
}
