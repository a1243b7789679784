// counts[i] += rank + 1 on rank `peer` for i < n, one atomic per element,
// and old[i] (local) = the value each atomic replaced.
func.func @tile_atomic_peer(%counts: !weft.ptr<i32>, %old: !weft.ptr<i32>,
                            %n: i32, %peer: i32) attributes {weft.kernel} {
  %rank = weft.rank : i32
  %c1 = arith.constant 1 : i32
  %inc = arith.addi %rank, %c1 : i32
  %r = weft.make_range 0, 64 : tensor<64xi32>
  %ns = weft.splat %n : i32 -> tensor<64xi32>
  %mask = arith.cmpi slt, %r, %ns : tensor<64xi32>
  %cs = weft.splat %counts : !weft.ptr<i32> -> tensor<64x!weft.ptr<i32>>
  %cp = weft.addptr %cs, %r : tensor<64x!weft.ptr<i32>>, tensor<64xi32>
  %remote = weft.translate %cp, %peer : tensor<64x!weft.ptr<i32>>
  %incs = weft.splat %inc : i32 -> tensor<64xi32>
  %prev = weft.atomic_rmw add relaxed sys %remote, %incs, mask %mask : tensor<64x!weft.ptr<i32>>
  %os = weft.splat %old : !weft.ptr<i32> -> tensor<64x!weft.ptr<i32>>
  %op = weft.addptr %os, %r : tensor<64x!weft.ptr<i32>>, tensor<64xi32>
  weft.store %op, %prev, mask %mask : tensor<64x!weft.ptr<i32>>
  return
}
