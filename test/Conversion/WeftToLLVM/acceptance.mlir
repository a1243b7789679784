// The tile IR's acceptance kernel: load a 16x64 f32 tile, sum its rows,
// store the 16 sums into a peer's copy. On sm_90 the tile arrives as
// ld.global.v4.b32, rows are summed in-thread and across 16 lanes with
// butterfly shuffles, the sums move to the store's layout through shared
// memory and leave as st.global.v4.b32 to the peer, translated with one
// heap-base pair; gfx942 does the same with dwordx4 and ds_bpermute. (It
// runs on the host in test/E2E, tile_row_sum_peer.mlir.)
//
// RUN: weft-compile %s --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=NV < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %s --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: FileCheck %s --check-prefix=AMD < %t.s
// RUN: weft-opt %s --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s --check-prefix=IR

// IR:      weft.load {{.*}}#weft.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerProgram = [4, 1], order = [1, 0]}>
// IR:      weft.reduce {{.*}} -> tensor<16xf32, #weft.slice<{dim = 1
// IR:      weft.translate {{.*}} : tensor<16x!weft.ptr<f32>, #weft.blocked<{sizePerThread = [4]

// NV-LABEL: .entry tile_row_sum_peer(
// NV-COUNT-2: ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}{{(\+[0-9]+)?}}];
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// NV-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// NV-NOT:   shfl
// NV-COUNT-2: ld.param.b64 {{.*}}+40];
// NV-NOT:   ld.param.b64
// NV:       bar.sync 0;
// NV:       ld.shared.v4.b32
// NV:       bar.sync 0;
// NV-NEXT:  st.global.v4.b32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};

// AMD-LABEL: tile_row_sum_peer:
// AMD:       global_load_dwordx4
// AMD-COUNT-4: ds_bpermute_b32
// AMD:       s_barrier
// AMD:       global_store_dwordx4
func.func @tile_row_sum_peer(%src: !weft.ptr<f32>, %out: !weft.ptr<f32>, %peer: i32) attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %c16 = arith.constant 16 : i32
  %row0 = arith.muli %pid, %c16 : i32
  %r = weft.make_range 0, 16 : tensor<16xi32>
  %rs = weft.splat %row0 : i32 -> tensor<16xi32>
  %rows = arith.addi %rs, %r : tensor<16xi32>
  %cols = weft.make_range 0, 64 : tensor<64xi32>
  %re = weft.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  %stride = arith.constant dense<64> : tensor<16x1xi32>
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
  %obase = weft.splat %out : !weft.ptr<f32> -> tensor<16x!weft.ptr<f32>>
  %optrs = weft.addptr %obase, %rows : tensor<16x!weft.ptr<f32>>, tensor<16xi32>
  %remote = weft.translate %optrs, %peer : tensor<16x!weft.ptr<f32>>
  weft.store %remote, %sums : tensor<16x!weft.ptr<f32>>
  return
}
