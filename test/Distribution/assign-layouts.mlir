// weft-assign-layouts: accesses through tiles of pointers get as many
// consecutive elements per thread as make one 16-byte aligned vector; the
// layouts flow to the values that feed them; the host holds a whole tile in
// its one thread.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=4" --weft-assign-layouts | FileCheck %s --check-prefix=NV
// RUN: weft-opt %s --weft-set-target="target=hip:gfx942 num-warps=4" --weft-assign-layouts | FileCheck %s --check-prefix=AMD
// RUN: weft-opt %s --weft-set-target=target=host --weft-assign-layouts | FileCheck %s --check-prefix=HOST
// Distributed IR is left alone: a second run changes nothing.
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-assign-layouts | weft-opt --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s --check-prefix=NV

// f32, contiguous from a 16-byte aligned argument: 4 per thread (v4.b32),
// and the element-wise op and the store take the same layout.
// NV-LABEL: func.func @vadd
// NV:   weft.make_range 0, 1024 : tensor<1024xi32, #weft.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>
// NV:   weft.load %{{.*}} : tensor<1024x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>
// NV:   math.exp %{{.*}} : tensor<1024xf32, #weft.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>
// NV-NOT: weft.convert_layout
// NV:   weft.store
// AMD-LABEL: func.func @vadd
// AMD:  weft.load %{{.*}} : tensor<1024x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [4], threadsPerWarp = [64], warpsPerProgram = [4], order = [0]}>>
// HOST-LABEL: func.func @vadd
// HOST: weft.load %{{.*}} : tensor<1024x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [1024], threadsPerWarp = [1], warpsPerProgram = [1], order = [0]}>>
func.func @vadd(%x: !weft.ptr<f32>, %out: !weft.ptr<f32>) attributes {weft.kernel} {
  %r = weft.make_range 0, 1024 : tensor<1024xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<1024x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %r : tensor<1024x!weft.ptr<f32>>, tensor<1024xi32>
  %v = weft.load %xp : tensor<1024x!weft.ptr<f32>>
  %e = math.exp %v : tensor<1024xf32>
  %os = weft.splat %out : !weft.ptr<f32> -> tensor<1024x!weft.ptr<f32>>
  %op = weft.addptr %os, %r : tensor<1024x!weft.ptr<f32>>, tensor<1024xi32>
  weft.store %op, %e : tensor<1024x!weft.ptr<f32>>
  return
}

// f16: 8 per thread make 16 bytes.
// NV-LABEL: func.func @halves
// NV:   weft.load %{{.*}} : tensor<256x!weft.ptr<f16>, #weft.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>

func.func @halves(%x: !weft.ptr<f16>) attributes {weft.kernel} {
  %r = weft.make_range 0, 256 : tensor<256xi32>
  %xs = weft.splat %x : !weft.ptr<f16> -> tensor<256x!weft.ptr<f16>>
  %xp = weft.addptr %xs, %r : tensor<256x!weft.ptr<f16>>, tensor<256xi32>
  %v = weft.load %xp : tensor<256x!weft.ptr<f16>>
  return
}

// Only 4-byte alignment is known: one element per thread.
// NV-LABEL: func.func @unaligned
// NV:   weft.load %{{.*}} : tensor<256x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>

func.func @unaligned(%x: !weft.ptr<f32> {weft.divisibility = 4 : i64}, %off: i32) attributes {weft.kernel} {
  %r = weft.make_range 0, 256 : tensor<256xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<256x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %r : tensor<256x!weft.ptr<f32>>, tensor<256xi32>
  %v = weft.load %xp : tensor<256x!weft.ptr<f32>>
  return
}

// Column-major: dimension 0 is the contiguous one, so it comes first in
// the order and holds the vector; the ranges take slices of that layout.
// NV-LABEL: func.func @columns
// NV:   weft.make_range 0, 64 : tensor<64xi32, #weft.slice<{dim = 1, parent = #weft.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerProgram = [1, 4], order = [0, 1]}>}>>
// NV:   weft.load %{{.*}} : tensor<64x16x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerProgram = [1, 4], order = [0, 1]}>>
// HOST-LABEL: func.func @columns
// HOST: weft.load %{{.*}} : tensor<64x16x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [64, 16], threadsPerWarp = [1, 1], warpsPerProgram = [1, 1], order = [0, 1]}>>

func.func @columns(%x: !weft.ptr<f32>) attributes {weft.kernel} {
  %rows = weft.make_range 0, 64 : tensor<64xi32>
  %cols = weft.make_range 0, 16 : tensor<16xi32>
  %re = weft.expand_dims %rows axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %ce = weft.expand_dims %cols axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
  %stride = arith.constant dense<64> : tensor<1x16xi32>
  %co = arith.muli %ce, %stride : tensor<1x16xi32>
  %rb = weft.broadcast %re : tensor<64x1xi32> -> tensor<64x16xi32>
  %cb = weft.broadcast %co : tensor<1x16xi32> -> tensor<64x16xi32>
  %offs = arith.addi %rb, %cb : tensor<64x16xi32>
  %xs = weft.splat %x : !weft.ptr<f32> -> tensor<64x16x!weft.ptr<f32>>
  %xp = weft.addptr %xs, %offs : tensor<64x16x!weft.ptr<f32>>, tensor<64x16xi32>
  %v = weft.load %xp : tensor<64x16x!weft.ptr<f32>>
  return
}

// A reduction yields a slice of its operand's layout; the store wants a
// plain 1-D layout for its pointers, so a conversion joins them.
// NV-LABEL: func.func @row_sums
// NV:   %[[T:.*]] = weft.load %{{.*}} : tensor<16x64x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerProgram = [4, 1], order = [1, 0]}>>
// NV:   %[[S:.*]] = weft.reduce %[[T]] axis = 1 : {{.*}} -> tensor<16xf32, #weft.slice<{dim = 1, parent = #weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerProgram = [4, 1], order = [1, 0]}>}>>
// NV:   %[[C:.*]] = weft.convert_layout %[[S]] : {{.*}} -> tensor<16xf32, #weft.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>
// NV:   weft.store %{{.*}}, %[[C]] : tensor<16x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>
func.func @row_sums(%src: !weft.ptr<f32>, %dst: !weft.ptr<f32>, %peer: i32) attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %c16 = arith.constant 16 : i32
  %c64 = arith.constant 64 : i32
  %row0 = arith.muli %pid, %c16 : i32
  %r = weft.make_range 0, 16 : tensor<16xi32>
  %rs = weft.splat %row0 : i32 -> tensor<16xi32>
  %rows = arith.addi %rs, %r : tensor<16xi32>
  %cols = weft.make_range 0, 64 : tensor<64xi32>
  %re = weft.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  %stride = weft.splat %c64 : i32 -> tensor<16x1xi32>
  %rowoff = arith.muli %re, %stride : tensor<16x1xi32>
  %rb = weft.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x64xi32>
  %ce = weft.expand_dims %cols axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cb = weft.broadcast %ce : tensor<1x64xi32> -> tensor<16x64xi32>
  %offs = arith.addi %rb, %cb : tensor<16x64xi32>
  %base = weft.splat %src : !weft.ptr<f32> -> tensor<16x64x!weft.ptr<f32>>
  %ptrs = weft.addptr %base, %offs : tensor<16x64x!weft.ptr<f32>>, tensor<16x64xi32>
  %tile = weft.load %ptrs : tensor<16x64x!weft.ptr<f32>>
  %sums = weft.reduce %tile axis = 1 : tensor<16x64xf32> -> tensor<16xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    weft.reduce.return %s : f32
  }
  %dbase = weft.splat %dst : !weft.ptr<f32> -> tensor<16x!weft.ptr<f32>>
  %dptrs = weft.addptr %dbase, %rows : tensor<16x!weft.ptr<f32>>, tensor<16xi32>
  %remote = weft.translate %dptrs, %peer : tensor<16x!weft.ptr<f32>>
  weft.store %remote, %sums : tensor<16x!weft.ptr<f32>>
  return
}
