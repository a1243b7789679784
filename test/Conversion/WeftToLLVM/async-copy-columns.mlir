// weft.async_copy of a tile whose threads hold columns (layout order
// [0, 1]: b^T read through pointers, as attention reads k^T): a thread's
// consecutive elements run down a column, which the row-major ring holds
// a row pitch apart, so each element is copied to its own place. (They
// were stored as one run along the row: a silent miscompile of every
// pipelined dot with a transposed operand.) a's tile comes from a fixed
// address at every step, so its ring is refilled with the same block.
// python/test/language/test_kernels.py runs it against numpy.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-pipeline-dot-operands=unroll-rings=false --weft-assign-layouts | FileCheck %s --check-prefix=IR
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=host --emit=so -o %t.so

// IR:       weft.async_copy {{.*}}order = [1, 0]{{.*}}!weft.shared<16x16xf16
// IR:       weft.async_copy {{.*}}order = [0, 1]{{.*}}!weft.shared<16x16xf16

// a's rows go as 16-byte cp.async pieces; b^T's elements one by one.
// PTX-LABEL: .entry transposed_b(
// PTX:       cp.async.cg.shared.global
// PTX:       ld.global{{.*}}.b16
// PTX:       st.shared.b16
module {
  func.func @transposed_b(%a: !weft.ptr<f16> {weft.divisibility = 16 : i32}, %b: !weft.ptr<f16> {weft.divisibility = 16 : i32}, %out: !weft.ptr<f32> {weft.divisibility = 16 : i32}, %n: i32) attributes {weft.kernel} {
    %1 = weft.make_range 0, 16 : tensor<16xi32>
    %2 = arith.constant 0x00000000 : f32
    %3 = weft.splat %2 : f32 -> tensor<16x16xf32>
    %4 = arith.constant 0 : i32
    %5 = arith.constant 16 : i32
    %33 = scf.for %6 = %4 to %n step %5 iter_args(%7 = %3) -> (tensor<16x16xf32>) : i32 {
      %8 = weft.expand_dims %1 axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
      %9 = weft.splat %6 : i32 -> tensor<1x16xi32>
      %10 = arith.addi %9, %8 : tensor<1x16xi32>
      %11 = arith.constant 16 : i32
      %12 = weft.splat %11 : i32 -> tensor<1x16xi32>
      %13 = arith.muli %10, %12 : tensor<1x16xi32>
      %14 = weft.splat %b : !weft.ptr<f16> -> tensor<1x16x!weft.ptr<f16>>
      %15 = weft.addptr %14, %13 : tensor<1x16x!weft.ptr<f16>>, tensor<1x16xi32>
      %16 = weft.expand_dims %1 axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
      %17 = weft.broadcast %15 : tensor<1x16x!weft.ptr<f16>> -> tensor<16x16x!weft.ptr<f16>>
      %18 = weft.broadcast %16 : tensor<16x1xi32> -> tensor<16x16xi32>
      %19 = weft.addptr %17, %18 : tensor<16x16x!weft.ptr<f16>>, tensor<16x16xi32>
      %20 = weft.load %19 : tensor<16x16x!weft.ptr<f16>>
      %21 = weft.expand_dims %1 axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
      %22 = arith.constant 16 : i32
      %23 = weft.splat %22 : i32 -> tensor<16x1xi32>
      %24 = arith.muli %21, %23 : tensor<16x1xi32>
      %25 = weft.splat %a : !weft.ptr<f16> -> tensor<16x1x!weft.ptr<f16>>
      %26 = weft.addptr %25, %24 : tensor<16x1x!weft.ptr<f16>>, tensor<16x1xi32>
      %27 = weft.expand_dims %1 axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
      %28 = weft.broadcast %26 : tensor<16x1x!weft.ptr<f16>> -> tensor<16x16x!weft.ptr<f16>>
      %29 = weft.broadcast %27 : tensor<1x16xi32> -> tensor<16x16xi32>
      %30 = weft.addptr %28, %29 : tensor<16x16x!weft.ptr<f16>>, tensor<16x16xi32>
      %31 = weft.load %30 : tensor<16x16x!weft.ptr<f16>>
      %32 = weft.dot %31, %20, %7 : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
      scf.yield %32 : tensor<16x16xf32>
    }
    %34 = weft.expand_dims %1 axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
    %35 = arith.constant 16 : i32
    %36 = weft.splat %35 : i32 -> tensor<16x1xi32>
    %37 = arith.muli %34, %36 : tensor<16x1xi32>
    %38 = weft.splat %out : !weft.ptr<f32> -> tensor<16x1x!weft.ptr<f32>>
    %39 = weft.addptr %38, %37 : tensor<16x1x!weft.ptr<f32>>, tensor<16x1xi32>
    %40 = weft.expand_dims %1 axis = 0 : tensor<16xi32> -> tensor<1x16xi32>
    %41 = weft.broadcast %39 : tensor<16x1x!weft.ptr<f32>> -> tensor<16x16x!weft.ptr<f32>>
    %42 = weft.broadcast %40 : tensor<1x16xi32> -> tensor<16x16xi32>
    %43 = weft.addptr %41, %42 : tensor<16x16x!weft.ptr<f32>>, tensor<16x16xi32>
    weft.store %43, %33 : tensor<16x16x!weft.ptr<f32>>
    return
  }
}
