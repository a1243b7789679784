//===- DeviceLibraries.h - math libraries linked into GPU code --*- C++ -*-===//
//
// Internal to WeftCodegen. The lowering turns `math` ops into calls to
// NVIDIA's libdevice (`__nv_*`) and AMD's OCML (`__ocml_*`); these link the
// library's bitcode into the module before it is optimised.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_LIB_TARGET_DEVICELIBRARIES_H
#define WEFT_LIB_TARGET_DEVICELIBRARIES_H

#include "weft/Target/Codegen.h"

#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace weft {

/// Links the functions `module` calls from its target's device libraries
/// (math; NVSHMEM's on NVPTX), internalized so that the optimiser inlines
/// them and drops the rest, and sets the library's configuration (precise,
/// denormals kept). A module that calls no library function is left alone;
/// one that does fails with the paths searched when the library is not
/// installed, except NVSHMEM's: then `unlinked` says why its calls stay
/// external (the PTX is whole, but no cubin can be made). The searches are
/// Toolchain.h's, with `options`' roots.
llvm::Error linkDeviceLibraries(llvm::Module &module, const TargetSpec &spec,
                                const CodegenOptions &options, std::string &unlinked);

} // namespace weft

#endif // WEFT_LIB_TARGET_DEVICELIBRARIES_H
