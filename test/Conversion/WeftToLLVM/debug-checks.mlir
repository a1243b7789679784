// With debug=true, translate checks its peer and pointer and traps on a
// peer that is no rank or a pointer outside this rank's heap; without it,
// translate is bare arithmetic.
//
// RUN: weft-opt %s --weft-lower="target=host debug=true" | FileCheck %s --check-prefix=DEBUG
// RUN: weft-opt %s --weft-lower="target=cuda:90 debug=true" | FileCheck %s --check-prefix=DEBUG
// RUN: weft-opt %s --weft-lower="target=host" | FileCheck %s --check-prefix=PLAIN

// DEBUG-LABEL: {{@(__weft_impl_)?checked}}(
// DEBUG:         %[[BADPEER:.*]] = llvm.icmp "uge" %{{.*}}, %{{.*}} : i32
// DEBUG:         %[[OFF:.*]] = llvm.sub %{{.*}}, %{{.*}} : i64
// DEBUG:         %[[BADPTR:.*]] = llvm.icmp "uge" %[[OFF]], %{{.*}} : i64
// DEBUG:         %[[BAD:.*]] = llvm.or %[[BADPEER]], %[[BADPTR]] : i1
// DEBUG:         llvm.cond_br %[[BAD]]
// DEBUG:         llvm.intr.trap
// PLAIN-LABEL: {{@(__weft_impl_)?checked}}(
// PLAIN-NOT:     llvm.intr.trap
func.func @checked(%p: !weft.ptr<i32>, %peer: i32, %v: i32) attributes {weft.kernel} {
  %q = weft.translate %p, %peer : !weft.ptr<i32>
  weft.store %q, %v : !weft.ptr<i32>
  return
}
