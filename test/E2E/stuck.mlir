// Waits for a flag nobody sets: with WEFT_WAIT_TIMEOUT the launch must
// fail with a report of the wait instead of hanging.
func.func @stuck(%flag: !weft.ptr<i64>) attributes {weft.kernel} {
  %c7 = arith.constant 7 : i64
  %seen = weft.wait eq acquire sys %flag, %c7 : !weft.ptr<i64>
  return
}
