// weft-assign-layouts through scf.while: a tile carried around the loop
// (a poll that loads until every element is ready, collectives/_ll.py)
// keeps the layout of its initial value in both regions and in the
// loop's result; the reload in the body is converted to it where it
// differs, and the whole kernel lowers.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=4" --weft-assign-layouts | FileCheck %s
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// RUN: weft-compile %s --target=host --emit=llir -o - | FileCheck %s --check-prefix=HOST

// CHECK-LABEL: func.func @poll
// CHECK:   %[[INIT:.*]] = weft.load relaxed sys %{{.*}} : tensor<256x!weft.ptr<i64>, #[[L:weft.blocked<{sizePerThread = \[2\].*}>]]>
// CHECK:   %[[R:.*]] = scf.while (%[[A:.*]] = %[[INIT]]) : (tensor<256xi64, #[[L]]>) -> tensor<256xi64, #[[L]]>
// CHECK:     scf.condition(%{{.*}}) %[[A]] : tensor<256xi64, #[[L]]>
// CHECK:   } do {
// CHECK:   ^bb0(%{{.*}}: tensor<256xi64, #[[L]]>):
// CHECK:     scf.yield %{{.*}} : tensor<256xi64, #[[L]]>
// CHECK:   weft.store %{{.*}}, %[[R]] : tensor<256x!weft.ptr<i64>, #[[L]]>
// PTX-LABEL: .entry poll
// PTX: ld.relaxed.sys.global
// HOST-LABEL: define void @poll
func.func @poll(%buf: !weft.ptr<i64>, %out: !weft.ptr<i64>, %flag: i64) attributes {weft.kernel} {
  %r = weft.make_range 0, 256 : tensor<256xi32>
  %bs = weft.splat %buf : !weft.ptr<i64> -> tensor<256x!weft.ptr<i64>>
  %bp = weft.addptr %bs, %r : tensor<256x!weft.ptr<i64>>, tensor<256xi32>
  %f = weft.splat %flag : i64 -> tensor<256xi64>
  %v0 = weft.load relaxed sys %bp : tensor<256x!weft.ptr<i64>>
  %res = scf.while (%v = %v0) : (tensor<256xi64>) -> tensor<256xi64> {
    %stale = arith.cmpi ne, %v, %f : tensor<256xi64>
    %s = arith.extui %stale : tensor<256xi1> to tensor<256xi32>
    %any = "weft.reduce"(%s) <{axis = 0 : i32}> ({
    ^bb0(%a: i32, %b: i32):
      %m = arith.maxui %a, %b : i32
      weft.reduce.return %m : i32
    }) : (tensor<256xi32>) -> i32
    %c0 = arith.constant 0 : i32
    %go = arith.cmpi ne, %any, %c0 : i32
    scf.condition(%go) %v : tensor<256xi64>
  } do {
  ^bb0(%w: tensor<256xi64>):
    %again = weft.load relaxed sys %bp : tensor<256x!weft.ptr<i64>>
    scf.yield %again : tensor<256xi64>
  }
  %os = weft.splat %out : !weft.ptr<i64> -> tensor<256x!weft.ptr<i64>>
  %op = weft.addptr %os, %r : tensor<256x!weft.ptr<i64>>, tensor<256xi32>
  weft.store %op, %res : tensor<256x!weft.ptr<i64>>
  return
}
