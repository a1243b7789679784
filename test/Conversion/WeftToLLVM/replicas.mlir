// A layout wider than its tile holds some elements in several threads.
// Whatever such a tile writes to shared memory is written by one of them,
// the element's owner (the thread whose coordinate did not wrap): every
// copy would write the same value to the same address, which is harmless
// but a write-write race to compute-sanitizer's racecheck. The three
// writers: the row-major half of a layout conversion, the per-warp
// partials of a reduction across warps (where every lane of a butterfly
// also holds the result), and asynchronous copies into shared buffers.
// Atomics, whose copies must not all add, are in access.mlir.
//
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s

// 16 elements over 128 threads: threads 16..127 hold copies.
#a = #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>
#b = #weft.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>

// CHECK-LABEL: llvm.func @replicated_convert(
// CHECK:         %[[IN:.*]] = llvm.icmp "ult"
// CHECK-NEXT:    %[[OWNER:.*]] = llvm.and %{{.*}}, %[[IN]] : i1
// CHECK:         llvm.cond_br %[[OWNER]], ^[[STORE:bb[0-9]+]], ^[[JOIN:bb[0-9]+]]
// CHECK:       ^[[STORE]]:
// CHECK-NEXT:    llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK:       ^[[JOIN]]:
// CHECK-NEXT:    nvvm.barrier0
func.func @replicated_convert(%p: !weft.ptr<f32>) attributes {weft.kernel} {
  %r = weft.make_range 0, 16 : tensor<16xi32, #a>
  %f = arith.sitofp %r : tensor<16xi32, #a> to tensor<16xf32, #a>
  %c = weft.convert_layout %f : tensor<16xf32, #a> -> tensor<16xf32, #b>
  %ps = weft.splat %p : !weft.ptr<f32> -> tensor<16x!weft.ptr<f32>, #b>
  %r2 = weft.make_range 0, 16 : tensor<16xi32, #b>
  %pp = weft.addptr %ps, %r2 : tensor<16x!weft.ptr<f32>, #b>, tensor<16xi32, #b>
  weft.store %pp, %c : tensor<16x!weft.ptr<f32>, #b>
  return
}

// Rows of 64 over 32 lanes and 4 warps: two warps hold distinct halves,
// the other two copies; after the butterfly all 32 lanes hold each
// warp's partial. The first lane of an owning warp writes it.
#rows = #weft.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerProgram = [1, 4], order = [1, 0]}>
#row_sums = #weft.slice<{dim = 1, parent = #rows}>

// CHECK-LABEL: llvm.func @replicated_reduce(
// CHECK-COUNT-5: nvvm.shfl.sync bfly
// CHECK:         %[[LANE:.*]] = llvm.icmp "eq"
// CHECK:         %[[WRITES:.*]] = llvm.and %[[LANE]],
// CHECK:         llvm.cond_br %[[WRITES]], ^[[STORE:bb[0-9]+]], ^{{bb[0-9]+}}
// CHECK:       ^[[STORE]]:
// CHECK:         llvm.store %{{.*}} : f32, !llvm.ptr<3>
func.func @replicated_reduce(%x: f32, %p: !weft.ptr<f32>) attributes {weft.kernel} {
  %t = weft.splat %x : f32 -> tensor<2x64xf32, #rows>
  %s = weft.reduce %t axis = 1 : tensor<2x64xf32, #rows> -> tensor<2xf32, #row_sums> {
  ^bb0(%l: f32, %r: f32):
    %y = arith.addf %l, %r : f32
    weft.reduce.return %y : f32
  }
  %ps = weft.splat %p : !weft.ptr<f32> -> tensor<2x!weft.ptr<f32>, #row_sums>
  %i = weft.make_range 0, 2 : tensor<2xi32, #row_sums>
  %pp = weft.addptr %ps, %i : tensor<2x!weft.ptr<f32>, #row_sums>, tensor<2xi32, #row_sums>
  weft.store %pp, %s : tensor<2x!weft.ptr<f32>, #row_sums>
  return
}

// 32 groups of 8 halves over 128 threads: threads 32..127 hold copies, and
// only the owners' cp.async are made.
#groups = #weft.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 2], warpsPerProgram = [1, 4], order = [1, 0]}>

// CHECK-LABEL: llvm.func @replicated_async_copy(
// CHECK-NOT:     nvvm.cp.async
// CHECK:         llvm.cond_br %{{.*}}, ^[[COPY:bb[0-9]+]], ^{{bb[0-9]+}}
// CHECK-NEXT:  ^[[COPY]]:
// CHECK:         nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
func.func @replicated_async_copy(%src: !weft.ptr<f16> {weft.divisibility = 16 : i32}) attributes {weft.kernel} {
  %buf = weft.alloc_shared : !weft.shared<16x16xf16>
  %rows = weft.make_range 0, 16 : tensor<16xi32, #weft.slice<{dim = 1, parent = #groups}>>
  %cols = weft.make_range 0, 16 : tensor<16xi32, #weft.slice<{dim = 0, parent = #groups}>>
  %r = weft.expand_dims %rows axis = 1 : tensor<16xi32, #weft.slice<{dim = 1, parent = #groups}>> -> tensor<16x1xi32, #groups>
  %c = weft.expand_dims %cols axis = 0 : tensor<16xi32, #weft.slice<{dim = 0, parent = #groups}>> -> tensor<1x16xi32, #groups>
  %c16 = arith.constant dense<16> : tensor<16x1xi32, #groups>
  %ro = arith.muli %r, %c16 : tensor<16x1xi32, #groups>
  %rb = weft.broadcast %ro : tensor<16x1xi32, #groups> -> tensor<16x16xi32, #groups>
  %cb = weft.broadcast %c : tensor<1x16xi32, #groups> -> tensor<16x16xi32, #groups>
  %off = arith.addi %rb, %cb : tensor<16x16xi32, #groups>
  %base = weft.splat %src : !weft.ptr<f16> -> tensor<16x16x!weft.ptr<f16>, #groups>
  %ptrs = weft.addptr %base, %off : tensor<16x16x!weft.ptr<f16>, #groups>, tensor<16x16xi32, #groups>
  weft.async_copy %ptrs, %buf : tensor<16x16x!weft.ptr<f16>, #groups>, !weft.shared<16x16xf16>
  weft.async_commit
  return
}
