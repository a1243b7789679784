// A kernel's tensor-descriptor stores on sm_90 become bulk tensor copies
// (weft-plan-bulk-stores): each block is written into a swizzled buffer
// of shared memory and one thread hands it to the copy engine, so the
// threads go on (a persistent GEMM's next block) while it writes. The
// descriptor's tensor map is reported as a bulk load's is, and the kernel
// waits at its return until its copies have read their buffer.
//
// @persistent: a dot's 128x256 sums rounded to bf16 and stored, a block
// a turn of a loop (weft.ops.matmul's persistent epilogue). Its buffer
// is 64 KiB in 128-byte column blocks (64 columns,
// all 128 rows deep), read by one box of a 3-D view of the tensor
// (64 columns, the rows, the column blocks in steps of 64). Each store
// first waits until the one before has read the buffer; the writes are
// fenced into the async proxy before the join after which the copy
// starts. The layouts leave the rounded sums in the threads' own layout:
// nothing crosses shared memory but the store's own writes. The sums are
// rounded in pairs (cvt.rn.bf16x2.f32), each pair one 4-byte write,
// though the wait's branch lies between the roundings and the writes.
//
// @released: a block stored, then a signal that releases it (a kernel
// counting its blocks for the copy engine's puts, weft_put_wait): before the
// signal, the thread that started the copies waits until they have
// written and fences their writes (async proxy) before its own accesses,
// then the signal joins the program and releases. @after_wait: a wait
// (an acquire) needs nothing of the copies.
//
// Left as tile stores: a kernel with a cross-rank barrier (@barrier), a
// descriptor that is also read (@read_back), a kernel that reads through
// a pointer (@pointer_read: it might read a block back before the copy
// has written it), a block whose buffer would take more than a third of
// shared memory (@too_wide: 128x256 f32), a tensor whose rows are not
// known to be whole 16-byte chunks (@unknown_width: the copy engine
// leaves out what lies past the last column only in 16-byte steps), and
// every store on targets without bulk copies.
//
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8" --weft-plan-bulk-stores | FileCheck %s
// RUN: weft-opt %s --weft-set-target="target=cuda:90 num-warps=8" --weft-plan-bulk-stores --weft-expand-tensor-descs --weft-assign-layouts | FileCheck %s --check-prefix=LAYOUT
// RUN: weft-opt %s --weft-set-target="target=host" --weft-plan-bulk-stores | FileCheck %s --check-prefix=HOST
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=cuda:90 --num-warps=8 --emit=kernels | FileCheck %s --check-prefix=MAPS

// CHECK-LABEL: func.func @persistent
// CHECK-SAME:  weft.tensor_maps = {"2" = array<i64: 128, 1, 1, 64, 64, 0, 1, 0, 128, 1, 64, 0, 4>}
// CHECK:       scf.for
// CHECK:       weft.desc_store %arg2[%{{.*}}, %{{.*}}], %{{.*}} {bulk}
// CHECK:       weft.bulk_store_wait
// CHECK-NEXT:  return
// CHECK-LABEL: func.func @released
// CHECK:       weft.desc_store %arg1[%{{.*}}, %{{.*}}], %{{.*}} {bulk}
// CHECK-NEXT:  weft.bulk_store_wait written
// CHECK-NEXT:  weft.signal add release sys
// CHECK-NEXT:  weft.signal add relaxed sys
// CHECK-NEXT:  weft.bulk_store_wait{{$}}
// CHECK-NEXT:  return
// CHECK-LABEL: func.func @after_wait
// CHECK:       weft.wait
// CHECK:       weft.desc_store {{.*}} {bulk}
// CHECK-NEXT:  weft.bulk_store_wait{{$}}
// CHECK-LABEL: func.func @barrier
// CHECK-NOT:   bulk
// CHECK-LABEL: func.func @read_back
// CHECK-NOT:   bulk
// CHECK-LABEL: func.func @pointer_read
// CHECK-NOT:   bulk
// CHECK-LABEL: func.func @too_wide
// CHECK-NOT:   bulk
// CHECK-LABEL: func.func @unknown_width
// CHECK-NOT:   bulk

// LAYOUT-LABEL: func.func @persistent
// LAYOUT-NOT:   weft.convert_layout
// LAYOUT:       weft.desc_store

// HOST-NOT:    bulk

// PTX-LABEL: .entry persistent(
// PTX-COUNT-64: cvt.rn.bf16x2.f32
// PTX:       cp.async.bulk.wait_group.read 0;
// PTX:       bar.sync 0;
// PTX-COUNT-64: st.shared.b32
// PTX:       fence.proxy.async.shared::cta;
// PTX:       bar.sync 0;
// PTX:       cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// PTX:       cp.async.bulk.commit_group;
// PTX:       cp.async.bulk.wait_group.read 0;
// PTX:       ret;
// PTX-LABEL: .entry released(
// PTX:       cp.async.bulk.commit_group;
// PTX:       cp.async.bulk.wait_group 0;
// PTX-NEXT:  fence.proxy.async.global;
// PTX:       bar.sync 0;
// PTX:       atom.release.sys.global.add
// PTX:       cp.async.bulk.wait_group.read 0;
// PTX:       ret;
// PTX-LABEL: .entry barrier(
// PTX-NOT:   cp.async.bulk
// PTX:       st.global
// PTX-LABEL: .entry read_back(
// PTX-NOT:   cp.async.bulk.tensor{{.*}}.global.shared
// PTX-LABEL: .entry too_wide(
// PTX-NOT:   cp.async.bulk
// PTX:       ret;

// MAPS: "persistent":{"dynamic_shared_bytes":{{[0-9]+}},"early_start":true,"tensor_maps":{"2":{"map":{{\[}}[1,64,0,4],[0,1,0,128],[1,1,64,64]],"swizzle":128}}}

func.func @persistent(%a: !weft.tensordesc<128x32xbf16>, %b: !weft.tensordesc<32x256xbf16>,
    %c: !weft.tensordesc<128x256xbf16> {weft.shape_divisibility = array<i64: 256, 256>},
    %blocks: i32) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %pid = weft.program_id x : i32
  %step = weft.num_programs x : i32
  scf.for %i = %pid to %blocks step %step : i32 {
    %m = arith.muli %i, %c128 : i32
    %x = weft.desc_load %a[%m, %c0] : !weft.tensordesc<128x32xbf16> -> tensor<128x32xbf16>
    %y = weft.desc_load %b[%c0, %c0] : !weft.tensordesc<32x256xbf16> -> tensor<32x256xbf16>
    %sums = weft.dot %x, %y, %zero : tensor<128x32xbf16>, tensor<32x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    %rounded = arith.truncf %sums : tensor<128x256xf32> to tensor<128x256xbf16>
    weft.desc_store %c[%m, %c0], %rounded : !weft.tensordesc<128x256xbf16>, tensor<128x256xbf16>
  }
  return
}

func.func @released(%count: !weft.ptr<i64>, %c: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 64, 64>}) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %one = arith.constant 1 : i64
  %t = arith.constant dense<1.0> : tensor<64x64xbf16>
  weft.desc_store %c[%c0, %c0], %t : !weft.tensordesc<64x64xbf16>, tensor<64x64xbf16>
  weft.signal add release sys %count, %one : !weft.ptr<i64>
  weft.signal add relaxed sys %count, %one : !weft.ptr<i64>
  return
}

func.func @after_wait(%flag: !weft.ptr<i64>, %c: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 64, 64>}) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %one = arith.constant 1 : i64
  %seen = weft.wait ge acquire sys %flag, %one : !weft.ptr<i64>
  %t = arith.constant dense<1.0> : tensor<64x64xbf16>
  weft.desc_store %c[%c0, %c0], %t : !weft.tensordesc<64x64xbf16>, tensor<64x64xbf16>
  return
}

func.func @barrier(%c: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 64, 64>}) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %t = arith.constant dense<1.0> : tensor<64x64xbf16>
  weft.desc_store %c[%c0, %c0], %t : !weft.tensordesc<64x64xbf16>, tensor<64x64xbf16>
  weft.barrier
  return
}

func.func @read_back(%c: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 64, 64>}) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %t = weft.desc_load %c[%c0, %c0] : !weft.tensordesc<64x64xbf16> -> tensor<64x64xbf16>
  %u = arith.addf %t, %t : tensor<64x64xbf16>
  weft.desc_store %c[%c0, %c0], %u : !weft.tensordesc<64x64xbf16>, tensor<64x64xbf16>
  return
}

func.func @pointer_read(%x: !weft.ptr<bf16>, %c: !weft.tensordesc<64x64xbf16> {weft.shape_divisibility = array<i64: 64, 64>}) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %v = weft.load %x : !weft.ptr<bf16>
  %t = weft.splat %v : bf16 -> tensor<64x64xbf16>
  weft.desc_store %c[%c0, %c0], %t : !weft.tensordesc<64x64xbf16>, tensor<64x64xbf16>
  return
}

func.func @too_wide(%c: !weft.tensordesc<128x256xf32> {weft.shape_divisibility = array<i64: 64, 64>}) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %t = arith.constant dense<1.0> : tensor<128x256xf32>
  weft.desc_store %c[%c0, %c0], %t : !weft.tensordesc<128x256xf32>, tensor<128x256xf32>
  return
}

func.func @unknown_width(%c: !weft.tensordesc<64x64xbf16>) attributes {weft.kernel} {
  %c0 = arith.constant 0 : i32
  %t = arith.constant dense<1.0> : tensor<64x64xbf16>
  weft.desc_store %c[%c0, %c0], %t : !weft.tensordesc<64x64xbf16>, tensor<64x64xbf16>
  return
}
