// A ring put written in weft IR: every program of every rank writes one
// value into the next rank's inbox, then signals the next rank's flag;
// every rank waits until its left neighbour's programs have all signalled.
func.func @ring(%inbox: !weft.ptr<i32>, %flag: !weft.ptr<i64>, %epoch: i64)
    attributes {weft.kernel} {
  %rank = weft.rank : i32
  %ranks = weft.num_ranks : i32
  %c1 = arith.constant 1 : i32
  %c1000 = arith.constant 1000 : i32
  %succ = arith.addi %rank, %c1 : i32
  %next = arith.remui %succ, %ranks : i32

  // inbox[program] on the next rank <- rank * 1000 + program
  %pid = weft.program_id x : i32
  %slot = weft.addptr %inbox, %pid : !weft.ptr<i32>, i32
  %remote = weft.translate %slot, %next : !weft.ptr<i32>
  %base = arith.muli %rank, %c1000 : i32
  %value = arith.addi %base, %pid : i32
  weft.store %remote, %value : !weft.ptr<i32>

  // The release signal publishes the store above to whoever acquires it.
  %one = arith.constant 1 : i64
  %remote_flag = weft.translate %flag, %next : !weft.ptr<i64>
  weft.signal add release sys %remote_flag, %one : !weft.ptr<i64>

  // Launch number `epoch` is complete once every program of the left
  // neighbour signalled: the flag only grows, so it is never re-zeroed.
  %programs = weft.num_programs x : i32
  %programs64 = arith.extui %programs : i32 to i64
  %expected = arith.muli %programs64, %epoch : i64
  %seen = weft.wait ge acquire sys %flag, %expected : !weft.ptr<i64>
  return
}
