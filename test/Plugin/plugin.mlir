// WeftPlugin.so (tools/weft-plugin) loads into the stock mlir-opt-22: the
// dialect plugin registers `weft` (round trip, generic form, verifier), the
// pass plugin registers the lowering passes and the `weft-lower` pipeline.
// Passes registered by a plugin exist only after the command line is
// parsed, so they are named through --pass-pipeline.
//
// RUN: mlir-opt %s --load-dialect-plugin=%plugin_dir/WeftPlugin.so \
// RUN:   | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt %s --load-dialect-plugin=%plugin_dir/WeftPlugin.so --mlir-print-op-generic \
// RUN:   | mlir-opt --load-dialect-plugin=%plugin_dir/WeftPlugin.so \
// RUN:   | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt %s --load-dialect-plugin=%plugin_dir/WeftPlugin.so \
// RUN:   --load-pass-plugin=%plugin_dir/WeftPlugin.so \
// RUN:   --pass-pipeline='builtin.module(weft-lower{target=cuda:90})' \
// RUN:   | FileCheck %s --check-prefix=NVPTX
// RUN: mlir-opt %s --load-dialect-plugin=%plugin_dir/WeftPlugin.so \
// RUN:   --load-pass-plugin=%plugin_dir/WeftPlugin.so \
// RUN:   --pass-pipeline='builtin.module(weft-set-target{target=host},weft-add-hidden-args,convert-weft-to-llvm,weft-finalize-kernels,reconcile-unrealized-casts)' \
// RUN:   | FileCheck %s --check-prefix=HOST
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// NOPLUGIN: error: {{.*}}unregistered dialect

// ROUNDTRIP-LABEL: func.func @kernel(
// ROUNDTRIP-SAME:    %{{.*}}: !weft.ptr<i64>, %{{.*}}: i64, %{{.*}}: i32) attributes {weft.kernel}
// ROUNDTRIP:         weft.translate %{{.*}}, %{{.*}} : !weft.ptr<i64>
// ROUNDTRIP:         weft.signal add release sys %{{.*}}, %{{.*}} : !weft.ptr<i64>
// ROUNDTRIP:         weft.wait ge acquire sys %{{.*}}, %{{.*}} : !weft.ptr<i64>
// ROUNDTRIP:         weft.barrier

// NVPTX-LABEL: llvm.func @kernel(
// NVPTX-SAME:    nvvm.grid_constant
// NVPTX:         llvm.inline_asm has_side_effects "atom.release.sys.global.add.u64
// NVPTX:         nvvm.barrier0

// HOST-LABEL: llvm.func internal @__weft_impl_kernel(
// HOST:         llvm.atomicrmw add %{{.*}}, %{{.*}} release : !llvm.ptr, i64
// HOST:         llvm.call @sched_yield
// HOST-LABEL: llvm.func @kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
func.func @kernel(%flag: !weft.ptr<i64>, %epoch: i64, %peer: i32)
    attributes {weft.kernel} {
  %remote = weft.translate %flag, %peer : !weft.ptr<i64>
  weft.signal add release sys %remote, %epoch : !weft.ptr<i64>
  %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
  weft.barrier
  return
}
