// MLIR's trait TypeIDs are function-local statics of templates. In the
// plugin and the C API library they must be global ("u") so the dynamic
// linker unifies them with libMLIR's; hidden copies fall back to type-name
// keys, which differ between GCC and the Clang that built libMLIR, and
// hasTrait<> then silently answers false.
//
// RUN: llvm-nm -D -C %plugin_dir/WeftPlugin.so | FileCheck %s
// RUN: llvm-nm -D -C %plugin_dir/libWeftCAPI.so | FileCheck %s
// CHECK: u mlir::detail::TypeIDResolver<mlir::OpTrait::{{.*}}>::resolveTypeID()::id
