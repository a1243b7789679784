// Scans run in the layout their operand has: each thread scans its chunks,
// the lanes along the axis exchange their totals by butterfly shuffles, and
// the warps along it through shared memory. @long: 1024 f32 over four warps
// in the load's layout (chunks of four, 32 lanes, 4 warps: 512 elements, so
// two repetitions): no layout conversion, five shuffle steps a repetition,
// one exchange; ptxas takes it at once (every thread holding the whole line
// and the erf after it, as scans were laid out before, took ptxas minutes).
// @rows: a 2-D scan down the columns of a tile whose lanes are two to a row
// (shuffles 2 to 16 lanes apart) and whose two warps along the columns
// exchange. @reversed: the same steps from the end.
//
// RUN: weft-opt %s --pass-pipeline='builtin.module(weft-set-target{target=cuda:90},weft-assign-layouts)' | FileCheck %s --check-prefix=LAYOUT
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx

// LAYOUT-LABEL: func.func @long(
// LAYOUT-NOT:   weft.convert_layout
// LAYOUT:       weft.scan {{.*}} : tensor<1024xf32, #weft.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>
// PTX-LABEL: .entry long(
// PTX-COUNT-10: shfl.sync.bfly.b32
// PTX-NOT:     shfl.sync
// PTX:         st.shared.b32
// PTX:         bar.sync
// PTX:         ld.shared
// PTX-LABEL: .entry rows(
// PTX:         shfl.sync.bfly.b32 {{.*}}, 2, 31,
// PTX:         shfl.sync.bfly.b32 {{.*}}, 4, 31,
// PTX:         shfl.sync.bfly.b32 {{.*}}, 8, 31,
// PTX:         shfl.sync.bfly.b32 {{.*}}, 16, 31,
// PTX-NOT:     shfl.sync.bfly.b32 {{.*}}, 1, 31,
// PTX:         bar.sync
// PTX-LABEL: .entry reversed(
// PTX-COUNT-10: shfl.sync.bfly.b32
// PTX:         bar.sync
func.func @long(%x: !weft.ptr<f32> {weft.divisibility = 16 : i32}, %y: !weft.ptr<f32> {weft.divisibility = 16 : i32})
    attributes {weft.kernel} {
  %r = weft.make_range 0, 1024 : tensor<1024xi32>
  %px = weft.splat %x : !weft.ptr<f32> -> tensor<1024x!weft.ptr<f32>>
  %ax = weft.addptr %px, %r : tensor<1024x!weft.ptr<f32>>, tensor<1024xi32>
  %v = weft.load %ax : tensor<1024x!weft.ptr<f32>>
  %s = weft.scan %v axis = 0 : tensor<1024xf32> -> tensor<1024xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    weft.scan.return %t : f32
  }
  %e = math.erf %s : tensor<1024xf32>
  %py = weft.splat %y : !weft.ptr<f32> -> tensor<1024x!weft.ptr<f32>>
  %ay = weft.addptr %py, %r : tensor<1024x!weft.ptr<f32>>, tensor<1024xi32>
  weft.store %ay, %e : tensor<1024x!weft.ptr<f32>>
  return
}

func.func @rows(%x: !weft.ptr<i32> {weft.divisibility = 16 : i32}, %y: !weft.ptr<i32> {weft.divisibility = 16 : i32})
    attributes {weft.kernel} {
  %r = weft.make_range 0, 32 : tensor<32xi32>
  %c = weft.make_range 0, 8 : tensor<8xi32>
  %rows = weft.expand_dims %r axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %cols = weft.expand_dims %c axis = 0 : tensor<8xi32> -> tensor<1x8xi32>
  %c8 = arith.constant dense<8> : tensor<32x1xi32>
  %base = arith.muli %rows, %c8 : tensor<32x1xi32>
  %b2 = weft.broadcast %base : tensor<32x1xi32> -> tensor<32x8xi32>
  %c2 = weft.broadcast %cols : tensor<1x8xi32> -> tensor<32x8xi32>
  %offs = arith.addi %b2, %c2 : tensor<32x8xi32>
  %px = weft.splat %x : !weft.ptr<i32> -> tensor<32x8x!weft.ptr<i32>>
  %ax = weft.addptr %px, %offs : tensor<32x8x!weft.ptr<i32>>, tensor<32x8xi32>
  %v = weft.load %ax : tensor<32x8x!weft.ptr<i32>>
  %s = weft.scan %v axis = 0 : tensor<32x8xi32> -> tensor<32x8xi32> {
  ^bb0(%a: i32, %b: i32):
    %t = arith.maxsi %a, %b : i32
    weft.scan.return %t : i32
  }
  %py = weft.splat %y : !weft.ptr<i32> -> tensor<32x8x!weft.ptr<i32>>
  %ay = weft.addptr %py, %offs : tensor<32x8x!weft.ptr<i32>>, tensor<32x8xi32>
  weft.store %ay, %s : tensor<32x8x!weft.ptr<i32>>
  return
}

func.func @reversed(%x: !weft.ptr<f32> {weft.divisibility = 16 : i32}, %y: !weft.ptr<f32> {weft.divisibility = 16 : i32})
    attributes {weft.kernel} {
  %r = weft.make_range 0, 1024 : tensor<1024xi32>
  %px = weft.splat %x : !weft.ptr<f32> -> tensor<1024x!weft.ptr<f32>>
  %ax = weft.addptr %px, %r : tensor<1024x!weft.ptr<f32>>, tensor<1024xi32>
  %v = weft.load %ax : tensor<1024x!weft.ptr<f32>>
  %s = weft.scan %v axis = 0 reverse : tensor<1024xf32> -> tensor<1024xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.mulf %a, %b : f32
    weft.scan.return %t : f32
  }
  %py = weft.splat %y : !weft.ptr<f32> -> tensor<1024x!weft.ptr<f32>>
  %ay = weft.addptr %py, %r : tensor<1024x!weft.ptr<f32>>, tensor<1024xi32>
  weft.store %ay, %s : tensor<1024x!weft.ptr<f32>>
  return
}
