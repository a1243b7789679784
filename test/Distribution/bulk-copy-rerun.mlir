// A K loop of bulk tensor copies inside another loop (one program taking
// several row blocks in turn): each turn runs the pipeline again over the
// buffers the last turn's warps read through the generic proxy (ldmatrix,
// with --warp-mma). The barriers' initialisation then carries a proxy
// fence, after the join that ended those reads, so that the turn's first
// copies (async proxy) come after them. A pipeline that runs once has
// nothing to order and starts without the fence, which at a kernel's
// start costs time.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=4 num-stages=2 warp-mma=true" --weft-pipeline-dot-operands | FileCheck %s --check-prefix=IR
// RUN: weft-compile %s --target=cuda:90 --num-warps=4 --num-stages=2 --warp-mma --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas %t.ptx

// The full barriers, which the copies complete on, are marked; the empty
// ones, which only the warps arrive at, are not.
// IR-LABEL: func.func @row_blocks
// IR:         scf.for
// IR:           weft.alloc_mbarriers {after_reads, arrivals = 2 : i32}
// IR-NEXT:      arith.constant
// IR-NEXT:      weft.alloc_mbarriers {arrivals = 4 : i32}
// IR-LABEL: func.func @one_block
// IR-NOT:     after_reads

// CHECK-LABEL: .entry row_blocks(
// CHECK:       mbarrier.init.shared::cta.b64
// CHECK:       fence.mbarrier_init.release.cluster; fence.proxy.async.shared::cta;
// CHECK:       cp.async.bulk.tensor
// CHECK:       mma.sync.aligned.m16n8k16
// CHECK:       mbarrier.inval.shared::cta.b64
// CHECK:       ret;
func.func @row_blocks(%a: !weft.tensordesc<64x64xbf16>, %b: !weft.tensordesc<64x64xbf16>,
                      %c: !weft.tensordesc<64x64xf32>, %K: i32, %blocks: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  scf.for %i = %c0 to %blocks step %c1 : i32 {
    %m0 = arith.muli %i, %c64 : i32
    %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %x = weft.desc_load %a[%m0, %k0] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
      %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
      %d = weft.dot %x, %y, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    weft.desc_store %c[%m0, %c0], %sum : !weft.tensordesc<64x64xf32>, tensor<64x64xf32>
  }
  return
}

// CHECK-LABEL: .entry one_block(
// CHECK:       mbarrier.init.shared::cta.b64
// CHECK:       fence.mbarrier_init.release.cluster;{{$}}
// CHECK-NOT:   fence.proxy.async
// CHECK:       cp.async.bulk.tensor
// CHECK:       ret;
func.func @one_block(%a: !weft.tensordesc<64x64xbf16>, %b: !weft.tensordesc<64x64xbf16>,
                     %c: !weft.tensordesc<64x64xf32>, %K: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %sum = scf.for %k0 = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %x = weft.desc_load %a[%c0, %k0] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
    %y = weft.desc_load %b[%k0, %c0] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
    %d = weft.dot %x, %y, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  weft.desc_store %c[%c0, %c0], %sum : !weft.tensordesc<64x64xf32>, tensor<64x64xf32>
  return
}
