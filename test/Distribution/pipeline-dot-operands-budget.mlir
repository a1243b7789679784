// weft-pipeline-dot-operands's shared-memory budget. Two K loops in one
// kernel, one after the other. On sm_90 their rings go to dynamic shared
// memory, where a loop's rings live from their allocation to the
// weft.release_shared after the loop (the products complete first, then
// the copies, then the program joins). The first loop's are dead when the
// second runs, so each gets the whole budget (227 KiB less 1 KiB static,
// less the 48 KiB kept for the loop's exchanges): three stages of 64x32 +
// 32x64 bf16 in wgmma's swizzled layouts and a spare buffer per ring,
// since each step's products overlap the next's; and the second's take
// the first's room: the kernel's dynamic shared memory is one loop's
// rings (4 x 8192 bytes and 1008 to align them to 1024). On gfx942 the
// rings are static and share the 64 KiB of LDS with the scratch area
// (less 8 KiB for other uses and the operand scratch of dots that stay in
// registers), all at once: the first loop takes three stages (29184
// bytes), the second only two. (GPU targets only: a host program holds
// 64x64 tiles as one thread's vectors, which take minutes to compile.)
//
// The same loops in the two branches of an scf.if never run together: in
// dynamic shared memory their rings share their room, while in gfx942's
// static LDS they still add up.
//
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-pipeline-dot-operands | FileCheck %s --check-prefix=NV
// RUN: weft-opt %s --weft-lower="target=cuda:90" | FileCheck %s --check-prefix=LLVM
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-opt %s --weft-set-target=target=hip:gfx942 --weft-pipeline-dot-operands | FileCheck %s --check-prefix=AMD
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s

// NV-LABEL:    func.func @two_loops
// NV-COUNT-4:  weft.alloc_shared : !weft.shared<64x32xbf16, #weft.swizzled<bytes = 64, warps = 4>>
// NV-COUNT-4:  weft.alloc_shared : !weft.shared<32x64xbf16, #weft.swizzled<bytes = 128, warps = 0>>
// NV:          weft.dot_wait %{{.*}}, 1
// NV:          weft.dot_wait %{{.*}}, 0
// NV-NEXT:     weft.release_shared
// NV-COUNT-8:  weft.alloc_shared
// NV:          weft.dot_wait %{{.*}}, 0
// NV-NEXT:     weft.release_shared
// LLVM:        llvm.func @two_loops({{.*}} weft.dynamic_shared_bytes = 33776 : i64
// AMD-LABEL:   func.func @two_loops
// AMD-COUNT-6: weft.alloc_shared
// AMD:         weft.release_shared
// AMD-COUNT-4: weft.alloc_shared
// AMD-NOT:     weft.alloc_shared
// AMD:         weft.release_shared
// NV-LABEL:    func.func @two_branches
// NV:          scf.if
// NV-COUNT-8:  weft.alloc_shared
// NV:          weft.release_shared
// NV:          } else {
// NV-COUNT-8:  weft.alloc_shared
// NV:          weft.release_shared
// LLVM:        llvm.func @two_branches({{.*}} weft.dynamic_shared_bytes = 33776 : i64
// AMD-LABEL:   func.func @two_branches
// AMD-COUNT-6: weft.alloc_shared
// AMD:         weft.release_shared
// AMD:         } else {
// AMD-COUNT-4: weft.alloc_shared
// AMD-NOT:     weft.alloc_shared
// AMD:         weft.release_shared
func.func @two_loops(%a: !weft.ptr<bf16>, %c: !weft.ptr<f32>, %lo: i32, %hi: i32)
    attributes {weft.kernel} {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %offa = arith.constant dense<0> : tensor<64x32xi32>
  %offb = arith.constant dense<0> : tensor<32x64xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
  %bs = weft.splat %a : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %first = scf.for %k = %lo to %hi step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %ka = weft.splat %k : i32 -> tensor<64x32xi32>
    %oa = arith.addi %offa, %ka : tensor<64x32xi32>
    %pa = weft.addptr %as, %oa : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
    %x = weft.load %pa : tensor<64x32x!weft.ptr<bf16>>
    %kb = weft.splat %k : i32 -> tensor<32x64xi32>
    %ob = arith.addi %offb, %kb : tensor<32x64xi32>
    %pb = weft.addptr %bs, %ob : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
    %y = weft.load %pb : tensor<32x64x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %second = scf.for %k = %lo to %hi step %c32 iter_args(%acc = %first) -> (tensor<64x64xf32>) : i32 {
    %ka = weft.splat %k : i32 -> tensor<64x32xi32>
    %oa = arith.addi %offa, %ka : tensor<64x32xi32>
    %pa = weft.addptr %as, %oa : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
    %x = weft.load %pa : tensor<64x32x!weft.ptr<bf16>>
    %kb = weft.splat %k : i32 -> tensor<32x64xi32>
    %ob = arith.addi %offb, %kb : tensor<32x64xi32>
    %pb = weft.addptr %bs, %ob : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
    %y = weft.load %pb : tensor<32x64x!weft.ptr<bf16>>
    %d = weft.dot %x, %y, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  weft.store %cs, %second : tensor<64x64x!weft.ptr<f32>>
  return
}

func.func @two_branches(%a: !weft.ptr<bf16>, %c: !weft.ptr<f32>, %lo: i32, %hi: i32,
                        %cond: i1) attributes {weft.kernel} {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %offa = arith.constant dense<0> : tensor<64x32xi32>
  %offb = arith.constant dense<0> : tensor<32x64xi32>
  %as = weft.splat %a : !weft.ptr<bf16> -> tensor<64x32x!weft.ptr<bf16>>
  %bs = weft.splat %a : !weft.ptr<bf16> -> tensor<32x64x!weft.ptr<bf16>>
  %sums = scf.if %cond -> (tensor<64x64xf32>) {
    %first = scf.for %k = %lo to %hi step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ka = weft.splat %k : i32 -> tensor<64x32xi32>
      %oa = arith.addi %offa, %ka : tensor<64x32xi32>
      %pa = weft.addptr %as, %oa : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
      %x = weft.load %pa : tensor<64x32x!weft.ptr<bf16>>
      %kb = weft.splat %k : i32 -> tensor<32x64xi32>
      %ob = arith.addi %offb, %kb : tensor<32x64xi32>
      %pb = weft.addptr %bs, %ob : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
      %y = weft.load %pb : tensor<32x64x!weft.ptr<bf16>>
      %d = weft.dot %x, %y, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    scf.yield %first : tensor<64x64xf32>
  } else {
    %second = scf.for %k = %lo to %hi step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %ka = weft.splat %k : i32 -> tensor<64x32xi32>
      %oa = arith.addi %offa, %ka : tensor<64x32xi32>
      %pa = weft.addptr %as, %oa : tensor<64x32x!weft.ptr<bf16>>, tensor<64x32xi32>
      %x = weft.load %pa : tensor<64x32x!weft.ptr<bf16>>
      %kb = weft.splat %k : i32 -> tensor<32x64xi32>
      %ob = arith.addi %offb, %kb : tensor<32x64xi32>
      %pb = weft.addptr %bs, %ob : tensor<32x64x!weft.ptr<bf16>>, tensor<32x64xi32>
      %y = weft.load %pb : tensor<32x64x!weft.ptr<bf16>>
      %d = weft.dot %x, %y, %acc : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    scf.yield %second : tensor<64x64xf32>
  }
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<64x64x!weft.ptr<f32>>
  weft.store %cs, %sums : tensor<64x64x!weft.ptr<f32>>
  return
}

// Rings of the two kinds in the branches of one scf.if: bulk copies'
// (async proxy) never share room with the threads' cp.async rings
// (placeSharedBuffers), whichever runs, so the second loop's budget
// leaves out the first loop's rings. The bulk loop takes three stages and
// a spare buffer of 128x64 + 64x128 bf16 (128 KiB); the pointer loop asks
// for eight stages of 128x32 + 32x128 (16 KiB each) and gets the two that
// fit beside them (with its spare buffer, 48 KiB), where the whole budget
// would have given it eight and placement no room.
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8 num-stages=3" --weft-pipeline-dot-operands | FileCheck %s --check-prefix=KINDS
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --num-stages=3 --emit=ptx -o %t.kinds.ptx
// RUN: %ptxas %t.kinds.ptx

// KINDS-LABEL:    func.func @bulk_and_generic_branches
// KINDS:          scf.if
// KINDS-COUNT-4:  weft.alloc_shared {bulk} : !weft.shared<128x64xbf16
// KINDS-COUNT-4:  weft.alloc_shared {bulk} : !weft.shared<64x128xbf16
// KINDS:          } else {
// KINDS-COUNT-3:  weft.alloc_shared : !weft.shared<128x32xbf16
// KINDS-COUNT-3:  weft.alloc_shared : !weft.shared<32x128xbf16
// KINDS-NOT:      weft.alloc_shared
func.func @bulk_and_generic_branches(%a: !weft.tensordesc<128x64xbf16>,
                                     %b: !weft.tensordesc<64x128xbf16>, %p: !weft.ptr<bf16>,
                                     %c: !weft.ptr<f32>, %K: i32, %cond: i1)
    attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %offa = arith.constant dense<0> : tensor<128x32xi32>
  %offb = arith.constant dense<0> : tensor<32x128xi32>
  %as = weft.splat %p : !weft.ptr<bf16> -> tensor<128x32x!weft.ptr<bf16>>
  %bs = weft.splat %p : !weft.ptr<bf16> -> tensor<32x128x!weft.ptr<bf16>>
  %sums = scf.if %cond -> (tensor<128x128xf32>) {
    %bulk = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = weft.desc_load %a[%c0, %k] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
      %y = weft.desc_load %b[%k, %c0] : !weft.tensordesc<64x128xbf16> -> tensor<64x128xbf16>
      %d = weft.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    scf.yield %bulk : tensor<128x128xf32>
  } else {
    %threads = scf.for %k = %c0 to %K step %c32 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %ka = weft.splat %k : i32 -> tensor<128x32xi32>
      %oa = arith.addi %offa, %ka : tensor<128x32xi32>
      %pa = weft.addptr %as, %oa : tensor<128x32x!weft.ptr<bf16>>, tensor<128x32xi32>
      %x = weft.load %pa : tensor<128x32x!weft.ptr<bf16>>
      %kb = weft.splat %k : i32 -> tensor<32x128xi32>
      %ob = arith.addi %offb, %kb : tensor<32x128xi32>
      %pb = weft.addptr %bs, %ob : tensor<32x128x!weft.ptr<bf16>>, tensor<32x128xi32>
      %y = weft.load %pb : tensor<32x128x!weft.ptr<bf16>>
      %d = weft.dot %x, %y, %acc : tensor<128x32xbf16>, tensor<32x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    } {weft.num_stages = 8 : i32}
    scf.yield %threads : tensor<128x128xf32>
  }
  %cs = weft.splat %c : !weft.ptr<f32> -> tensor<128x128x!weft.ptr<f32>>
  weft.store %cs, %sums : tensor<128x128x!weft.ptr<f32>>
  return
}
