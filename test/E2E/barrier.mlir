// Every program of every rank writes its mark into its slot of every peer's
// board, meets the others at weft.barrier, then counts the marks on its own
// board: after the barrier all num_ranks * num_programs marks must be there.
func.func @barrier(%board: !weft.ptr<i32>, %counts: !weft.ptr<i32>, %epoch: i32)
    attributes {weft.kernel} {
  %rank = weft.rank : i32
  %ranks = weft.num_ranks : i32
  %pid = weft.program_id x : i32
  %programs = weft.num_programs x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %row = arith.muli %rank, %programs : i32
  %mine = arith.addi %row, %pid : i32
  %slot = weft.addptr %board, %mine : !weft.ptr<i32>, i32
  scf.for %peer = %c0 to %ranks step %c1 : i32 {
    %remote = weft.translate %slot, %peer : !weft.ptr<i32>
    weft.store %remote, %epoch : !weft.ptr<i32>
  }
  weft.barrier
  %total = arith.muli %ranks, %programs : i32
  %seen = scf.for %i = %c0 to %total step %c1 iter_args(%n = %c0) -> (i32) : i32 {
    %p = weft.addptr %board, %i : !weft.ptr<i32>, i32
    %v = weft.load %p : !weft.ptr<i32>
    %ok = arith.cmpi eq, %v, %epoch : i32
    %inc = arith.extui %ok : i1 to i32
    %next = arith.addi %n, %inc : i32
    scf.yield %next : i32
  }
  %out = weft.addptr %counts, %pid : !weft.ptr<i32>, i32
  weft.store %out, %seen : !weft.ptr<i32>
  // A second barrier: nobody may start the next launch's writes while a
  // slow program of this launch is still counting.
  weft.barrier
  return
}
