// A reduction of a reduction's result (`wl.max(wl.sum(t, axis=1))`): the
// row sums come out in a slice layout, which weft-assign-layouts converts to
// a blocked one for the second reduction, since the reduce lowering combines
// along a blocked layout's threads, lanes and warps. The E2E test runs the
// kernel on the host.
//
// RUN: weft-opt %S/../E2E/tile_max_of_sums.mlir --weft-set-target=target=cuda:90 --weft-assign-layouts | FileCheck %s --check-prefix=IR
// RUN: weft-compile %S/../E2E/tile_max_of_sums.mlir --target=cuda:90 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=NV < %t.ptx
// RUN: %ptxas %t.ptx
// RUN: weft-compile %S/../E2E/tile_max_of_sums.mlir --target=hip:gfx942 --emit=amdgcn -o %t.s
// RUN: weft-compile %S/../E2E/tile_max_of_sums.mlir --target=host --emit=so -o %t.so

// IR-LABEL: func.func @tile_max_of_sums
// IR:       %[[SUMS:.*]] = weft.reduce %{{.*}} axis = 1 : tensor<16x64xi32, #[[B:weft.blocked<.*>]]> -> tensor<16xi32, #weft.slice<{dim = 1, parent = #[[B]]}>>
// IR:       arith.addi
// IR:       %[[CVT:.*]] = weft.convert_layout %[[SUMS]] : tensor<16xi32, #weft.slice<{dim = 1, parent = #[[B]]}>> -> tensor<16xi32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>>
// IR-NEXT:  weft.reduce %[[CVT]] axis = 0 : tensor<16xi32, #weft.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerProgram = [4], order = [0]}>> -> i32
// IR:       arith.maxsi

// The row sums: lanes along a row, by butterflies; the conversion through
// shared memory; then the maximum over the 16 lanes that hold distinct rows.
// NV-LABEL: .entry tile_max_of_sums(
// NV:       shfl.sync.bfly.b32
// NV:       st.shared.b32
// NV:       bar.sync
// NV:       ld.shared.b32
// NV:       shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// NV:       max.s32
// NV:       shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// NV:       max.s32
