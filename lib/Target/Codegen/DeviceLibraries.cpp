//===- DeviceLibraries.cpp - libdevice, NVSHMEM and OCML in GPU code ------===//
//
// Like CUDA and HIP without fast-math, and like Triton: the library's
// bitcode is linked before optimisation, only the functions the module
// needs, internalized so that O3 inlines them and drops what stays unused.
// NVSHMEM's device library also brings its device state, a global the host
// library fills in once the cubin is loaded (nvshmemx_cumodule_init finds
// it by name), so its globals stay visible.
//
//===----------------------------------------------------------------------===//
#include "DeviceLibraries.h"
#include "Toolchain.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/TargetParser/TargetParser.h"
#include "llvm/Transforms/IPO/Internalize.h"

using namespace weft;

namespace {

/// A bitcode library: the prefix of its functions and how it is found.
struct DeviceLibrary {
  llvm::StringRef symbolPrefix;
  FileSearch search;
  /// Its globals stay external: the host side finds them in the module.
  bool keepGlobals = false;
};

/// The first library function `module` calls, or null.
const llvm::Function *firstLibraryCall(const llvm::Module &module,
                                       const DeviceLibrary &library) {
  for (const llvm::Function &function : module.functions())
    if (function.isDeclaration() &&
        function.getName().starts_with(library.symbolPrefix))
      return &function;
  return nullptr;
}

llvm::Error linkBitcode(llvm::Module &module, llvm::StringRef path, bool keepGlobals) {
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> library =
      llvm::parseIRFile(path, diagnostic, module.getContext());
  if (!library)
    return llvm::createStringError("cannot read " + path + ": " +
                                   diagnostic.getMessage());
  // The libraries are built for a generic triple; adopting the module's
  // keeps the linker from warning about the mismatch.
  library->setTargetTriple(module.getTargetTriple());
  library->setDataLayout(module.getDataLayout());
  // The module's own processor and features, not the ones the library was
  // built for: the inliner refuses callees whose features differ.
  for (llvm::Function &function : *library) {
    function.removeFnAttr("target-cpu");
    function.removeFnAttr("target-features");
  }
  bool failed = llvm::Linker::linkModules(
      module, std::move(library), llvm::Linker::LinkOnlyNeeded,
      [keepGlobals](llvm::Module &linked, const llvm::StringSet<> &fromLibrary) {
        llvm::internalizeModule(linked, [&](const llvm::GlobalValue &value) {
          return !value.hasName() || !fromLibrary.contains(value.getName()) ||
                 (keepGlobals && llvm::isa<llvm::GlobalVariable>(value));
        });
      });
  if (failed)
    return llvm::createStringError("cannot link " + path);
  return llvm::Error::success();
}

/// OCML reads its configuration from constants that ROCm's oclc_*.bc
/// define; Debian's package predates gfx942, so they are defined here,
/// as hipcc's defaults: denormals kept, no finite-only or unsafe math, a
/// correctly rounded f32 sqrt.
void defineOcmlControls(llvm::Module &module, const TargetSpec &spec) {
  llvm::AMDGPU::IsaVersion isa = llvm::AMDGPU::getIsaVersion(spec.arch);
  const std::pair<llvm::StringRef, unsigned> controls[] = {
      {"__oclc_ISA_version", isa.Major * 1000 + isa.Minor * 100 + isa.Stepping},
      {"__oclc_wavefrontsize64", spec.warpSize() == 64},
      // The code object version Codegen.cpp sets.
      {"__oclc_ABI_version", 500},
      {"__oclc_correctly_rounded_sqrt32", 1},
      {"__oclc_daz_opt", 0},
      {"__oclc_finite_only_opt", 0},
      {"__oclc_unsafe_math_opt", 0},
  };
  for (auto [name, value] : controls) {
    llvm::GlobalVariable *control = module.getGlobalVariable(name);
    if (!control || !control->isDeclaration())
      continue;
    control->setInitializer(
        llvm::ConstantInt::get(control->getValueType(), value));
    control->setConstant(true);
    control->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

/// LLVM 22's NVVMReflect takes only __CUDA_FTZ from the module (the
/// nvvm-reflect-ftz flag) and folds any other query to 0, which would make
/// libdevice's sqrtf, hypotf and normf approximate (sqrt.approx.f32): the
/// precise square root's query is answered here, as nvcc's default
/// -prec-sqrt=true does.
void foldPreciseSqrtReflect(llvm::Module &module) {
  llvm::Function *reflect = module.getFunction("__nvvm_reflect");
  if (!reflect)
    return;
  for (llvm::User *user : llvm::make_early_inc_range(reflect->users())) {
    auto *call = llvm::dyn_cast<llvm::CallInst>(user);
    llvm::StringRef query;
    if (!call || !llvm::getConstantStringInfo(call->getArgOperand(0), query) ||
        query != "__CUDA_PREC_SQRT")
      continue;
    call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), 1));
    call->eraseFromParent();
  }
}

llvm::Error linkLibrary(llvm::Module &module, const DeviceLibrary &library) {
  const llvm::Function *callee = firstLibraryCall(module, library);
  if (!callee)
    return llvm::Error::success();
  auto path = library.search.find("the kernel calls " + callee->getName() +
                                  ", which needs " + library.search.what);
  if (!path)
    return path.takeError();
  if (llvm::Error err = linkBitcode(module, *path, library.keepGlobals))
    return err;
  if (const llvm::Function *missing = firstLibraryCall(module, library))
    return llvm::createStringError("the kernel calls " + missing->getName() + ", which " +
                                   *path + " does not define");
  return llvm::Error::success();
}

} // namespace

llvm::Error weft::linkDeviceLibraries(llvm::Module &module, const TargetSpec &spec,
                                      const CodegenOptions &options,
                                      std::string &unlinked) {
  switch (spec.kind) {
  case TargetKind::NVPTX: {
    // libdevice branches on __nvvm_reflect("__CUDA_FTZ"), which the
    // NVVMReflect pass of the NVPTX pipeline folds from this flag:
    // denormals are kept, as nvcc does without -ftz.
    if (!module.getModuleFlag("nvvm-reflect-ftz"))
      module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz",
                           uint32_t{0});
    // NVSHMEM first: its functions may call libdevice's. Where it is not
    // installed the calls stay external: the PTX is whole, a cubin is not.
    DeviceLibrary nvshmem{"nvshmem", *toolchainSearch("nvshmem-device", options),
                          /*keepGlobals=*/true};
    if (llvm::Error err = linkLibrary(module, nvshmem)) {
      unlinked = llvm::toString(std::move(err));
    }
    if (llvm::Error err = linkLibrary(
            module, {"__nv_", *toolchainSearch("libdevice", options)}))
      return err;
    foldPreciseSqrtReflect(module);
    return llvm::Error::success();
  }
  case TargetKind::AMDGPU:
    for (auto [prefix, library] : {std::pair{"__ocml_", "ocml"}, std::pair{"__ockl_", "ockl"}})
      if (llvm::Error err = linkLibrary(module, {prefix, *toolchainSearch(library, {})}))
        return err;
    defineOcmlControls(module, spec);
    return llvm::Error::success();
  case TargetKind::Host:
    // The C library's libm, resolved when the .so is loaded (LLDLink.cpp).
    return llvm::Error::success();
  }
  llvm_unreachable("unknown target kind");
}
