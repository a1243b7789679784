// With debug=true, translate checks its peer and pointer; on a peer that is
// no rank or a pointer outside this rank's heap the first failure of the
// launch claims weft_debug_error (at 1216 in the reserved region: kind,
// rank, program, peer, pointer, and the address and size of a constant
// "<kernel> at <file:line:col>" the runtime reads to report it), and the
// program returns instead of trapping, which would kill the process or the
// GPU context. Without debug, translate is bare arithmetic.
//
// RUN: weft-opt %s --weft-lower="target=host debug=true" | FileCheck %s --check-prefixes=DEBUG,HOST
// RUN: weft-opt %s --weft-lower="target=cuda:90 debug=true" | FileCheck %s --check-prefixes=DEBUG,NV
// RUN: weft-opt %s --weft-lower="target=host" | FileCheck %s --check-prefix=PLAIN
// RUN: weft-compile %s --target=cuda:90 --debug --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=hip:gfx942 --debug --emit=amdgcn -o %t.s

// HOST-DAG:    llvm.mlir.global internal constant @[[LOC:__weft_debug_location_[0-9]+]]("checked at {{.*}}debug-checks.mlir:50:8") {addr_space = 0 : i32
// NV-DAG:      llvm.mlir.global internal constant @[[LOC:__weft_debug_location_[0-9]+]]("checked at {{.*}}debug-checks.mlir:50:8") {addr_space = 1 : i32
// DEBUG-DAG:   llvm.mlir.global internal constant @{{.*}}("tile_checked at {{.*}}debug-checks.mlir:59:9")
// DEBUG-LABEL: {{@(__weft_impl_)?checked}}(
// DEBUG:         %[[ADDR:.*]] = llvm.mlir.addressof @[[LOC]]
// DEBUG:         %[[BADPEER:.*]] = llvm.icmp "uge" %{{.*}}, %{{.*}} : i32
// DEBUG:         %[[OFF:.*]] = llvm.sub %{{.*}}, %{{.*}} : i64
// DEBUG:         %[[BADPTR:.*]] = llvm.icmp "uge" %[[OFF]], %{{.*}} : i64
// DEBUG:         %[[KIND:.*]] = llvm.select %[[BADPEER]], %{{.*}}, %{{.*}} : i1, i32
// DEBUG:         %[[BAD:.*]] = llvm.or %[[BADPEER]], %[[BADPTR]] : i1
// DEBUG:         llvm.cond_br %[[BAD]], ^[[STOP:bb[0-9]+]], ^[[GO:bb[0-9]+]]
// DEBUG:       ^[[STOP]]:
// DEBUG:         %[[REC:.*]] = llvm.getelementptr %{{.*}}[1216]
// DEBUG:         %[[CLAIM:.*]] = llvm.cmpxchg %[[REC]], %{{.*}}, %[[KIND]]
// DEBUG:         %[[WON:.*]] = llvm.extractvalue %[[CLAIM]][1]
// DEBUG:         llvm.cond_br %[[WON]], ^[[FILL:bb[0-9]+]], ^[[RET:bb[0-9]+]]
// DEBUG:       ^[[FILL]]:
// DEBUG:         llvm.getelementptr %{{.*}}[1236]
// DEBUG:         llvm.store %{{.*}} : i32
// DEBUG:         llvm.getelementptr %{{.*}}[1240]
// DEBUG:         llvm.store %{{.*}} : i64
// DEBUG:         llvm.ptrtoint %[[ADDR]]
// DEBUG:         llvm.getelementptr %{{.*}}[1248]
// DEBUG:         llvm.getelementptr %{{.*}}[1256]
// DEBUG:       ^[[RET]]:
// DEBUG-NEXT:    llvm.return
// DEBUG:       ^[[GO]]:
// DEBUG:         llvm.store
// DEBUG-NOT:   llvm.intr.trap
// PLAIN-NOT:   __weft_debug_location
// PLAIN-LABEL: {{@(__weft_impl_)?checked}}(
// PLAIN-NOT:     llvm.cmpxchg
// PLAIN-NOT:     llvm.intr.trap
func.func @checked(%p: !weft.ptr<i32>, %peer: i32, %v: i32) attributes {weft.kernel} {
  %q = weft.translate %p, %peer : !weft.ptr<i32>
  weft.store %q, %v : !weft.ptr<i32>
  return
}

// A tile of pointers checks its one peer.
func.func @tile_checked(%p: !weft.ptr<i32>, %peer: i32) attributes {weft.kernel} {
  %r = weft.make_range 0, 128 : tensor<128xi32>
  %ps = weft.splat %p : !weft.ptr<i32> -> tensor<128x!weft.ptr<i32>>
  %qs = weft.translate %ps, %peer : tensor<128x!weft.ptr<i32>>
  %a = weft.addptr %qs, %r : tensor<128x!weft.ptr<i32>>, tensor<128xi32>
  weft.store %a, %r : tensor<128x!weft.ptr<i32>>
  return
}
