//===- Codegen.cpp - LLVM IR to PTX/cubin, HSACO, host .so ----------------===//

#include "weft/Target/Codegen.h"
#include "DeviceLibraries.h"
#include "Toolchain.h"
#include "Tools.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCAsmBackend.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCObjectWriter.h"
#include "llvm/MC/MCParser/MCAsmParser.h"
#include "llvm/MC/MCParser/MCTargetAsmParser.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include <mutex>

using namespace weft;

namespace {

// PTX ISA 8.6: the first with `fence.acquire` and `fence.release`. On
// sm_90 `fence.acq_rel.sys` is a MEMBAR.ALL.SYS (about 1400 cycles with a
// store in flight) where `fence.acquire.sys` is an L1 invalidate (about 350,
// as cheap as `ld.acquire`): the acquire after every wait pays that
// (docs/memory-model.md). Weft ships cubins assembled by ptxas, so the PTX
// version does not limit the driver.
constexpr llvm::StringLiteral kNvptxFeatures = "+ptx86";

/// Only the three targets weft compiles for, registered once per process.
void initializeLLVMTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // Shared-memory pointers in 32 bits, the shared window's width (as
    // Triton sets it): every ring, staged tile and barrier address that a
    // pipelined loop keeps live takes one register instead of two (a
    // fused GEMM's K loop keeps 18 of them).
    if (llvm::cl::Option *shortPointers =
            llvm::cl::getRegisteredOptions().lookup("nvptx-short-ptr"))
      static_cast<llvm::cl::opt<bool> *>(shortPointers)->setValue(true);
    // AMDGPU and X86 also get their assembly parsers: inline assembly is
    // parsed when an object file is emitted.
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
  });
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetSpec &spec, unsigned optLevel) {
  initializeLLVMTargets();
  llvm::Triple triple(spec.triple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM backend for target " + spec.str() +
                                   ": " + error);
  llvm::StringRef features;
  if (spec.kind == TargetKind::NVPTX)
    features = kNvptxFeatures;
  // PIC: the host .so is dlopen()ed; GPU backends ignore the model.
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, spec.arch, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, *llvm::CodeGenOpt::getLevel(optLevel)));
  if (!machine)
    return llvm::createStringError("LLVM cannot create a target machine for " +
                                   spec.str() + " (cpu " + spec.arch + ")");
  return machine;
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine,
              unsigned optLevel) {
  // Declared in this order so that they are destroyed in the right one.
  llvm::LoopAnalysisManager loopAM;
  llvm::FunctionAnalysisManager functionAM;
  llvm::CGSCCAnalysisManager cgsccAM;
  llvm::ModuleAnalysisManager moduleAM;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(moduleAM);
  builder.registerCGSCCAnalyses(cgsccAM);
  builder.registerFunctionAnalyses(functionAM);
  builder.registerLoopAnalyses(loopAM);
  builder.crossRegisterProxies(loopAM, functionAM, cgsccAM, moduleAM);

  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::ModulePassManager pipeline =
      optLevel == 0 ? builder.buildO0DefaultPipeline(levels[0])
                    : builder.buildPerModuleDefaultPipeline(levels[optLevel]);
  pipeline.run(module, moduleAM);
}

/// gfx942 has no bf16 remainder and no library function for one, and the
/// optimiser narrows the f32 remainder the frontend writes for bf16 back
/// to bf16 (fptrunc(frem(fpext a, fpext b)) is exact): after optimising,
/// every bf16 frem is an f32 one again (the same value: fmod is exact).
void widenBFloatRemainders(llvm::Module &module) {
  llvm::SmallVector<llvm::Instruction *> rems;
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (inst.getOpcode() == llvm::Instruction::FRem &&
          inst.getType()->getScalarType()->isBFloatTy())
        rems.push_back(&inst);
  for (llvm::Instruction *rem : rems) {
    llvm::IRBuilder<> b(rem);
    llvm::Type *wide = rem->getType()->getWithNewType(b.getFloatTy());
    llvm::Value *r = b.CreateFRem(b.CreateFPExt(rem->getOperand(0), wide),
                                  b.CreateFPExt(rem->getOperand(1), wide));
    rem->replaceAllUsesWith(b.CreateFPTrunc(r, rem->getType()));
    rem->eraseFromParent();
  }
}

/// Runs the backend over `module`, which it changes (codegen rewrites IR),
/// and returns the assembly or object bytes.
llvm::Expected<std::string> runBackend(llvm::Module &module,
                                       llvm::TargetMachine &machine,
                                       llvm::CodeGenFileType type) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  passes.add(new llvm::TargetLibraryInfoWrapperPass(module.getTargetTriple()));
  if (machine.addPassesToEmitFile(passes, os, nullptr, type))
    return llvm::createStringError(
        "the LLVM backend for " + module.getTargetTriple().str() +
        " cannot emit " +
        (type == llvm::CodeGenFileType::ObjectFile ? "objects" : "assembly"));
  passes.run(module);
  return std::string(buffer.str());
}

/// The object file that `assembly` (the backend's text for `machine`)
/// assembles to: the backend's costly part (instruction selection, most of
/// a large host kernel's compile time) then runs once for both the text
/// and the object.
llvm::Expected<std::string> assemble(llvm::StringRef assembly,
                                     const llvm::TargetMachine &machine) {
  const llvm::Target &target = machine.getTarget();
  const llvm::Triple &triple = machine.getTargetTriple();
  const llvm::MCTargetOptions &options = machine.Options.MCOptions;
  const llvm::MCSubtargetInfo &subtarget = *machine.getMCSubtargetInfo();
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(assembly, "assembly", /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  sources.setDiagHandler(
      [](const llvm::SMDiagnostic &diagnostic, void *stream) {
        diagnostic.print(nullptr, *static_cast<llvm::raw_ostream *>(stream));
      },
      &diagnosticStream);
  llvm::MCContext context(triple, machine.getMCAsmInfo(), machine.getMCRegisterInfo(),
                          &subtarget, &sources, &options);
  std::unique_ptr<llvm::MCObjectFileInfo> files(
      target.createMCObjectFileInfo(context, /*PIC=*/true));
  context.setObjectFileInfo(files.get());
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  std::unique_ptr<llvm::MCAsmBackend> backend(
      target.createMCAsmBackend(subtarget, *machine.getMCRegisterInfo(), options));
  std::unique_ptr<llvm::MCCodeEmitter> emitter(
      target.createMCCodeEmitter(*machine.getMCInstrInfo(), context));
  if (!backend || !emitter)
    return llvm::createStringError("LLVM cannot assemble for " + triple.str());
  std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(stream);
  std::unique_ptr<llvm::MCStreamer> streamer(target.createMCObjectStreamer(
      triple, context, std::move(backend), std::move(writer), std::move(emitter), subtarget));
  std::unique_ptr<llvm::MCAsmParser> parser(
      llvm::createMCAsmParser(sources, context, *streamer, *machine.getMCAsmInfo()));
  std::unique_ptr<llvm::MCTargetAsmParser> targetParser(
      target.createMCAsmParser(subtarget, *parser, *machine.getMCInstrInfo(), options));
  if (!targetParser)
    return llvm::createStringError("LLVM has no assembly parser for " + triple.str());
  parser->setTargetParser(*targetParser);
  if (parser->Run(/*NoInitialTextSection=*/false))
    return llvm::createStringError("LLVM: " + diagnostics);
  return std::string(buffer.str());
}

/// `unlinked`: why the PTX calls functions no library here defines
/// (linkDeviceLibraries), so that ptxas cannot make a cubin of it.
llvm::Error emitNvptx(llvm::Module &module, llvm::TargetMachine &machine,
                      const TargetSpec &spec, const CodegenOptions &options,
                      const std::string &unlinked, Artifacts &artifacts) {
  auto ptx =
      runBackend(module, machine, llvm::CodeGenFileType::AssemblyFile);
  if (!ptx)
    return ptx.takeError();
  // Before ptxas, or the driver's compiler where ptxas is not found.
  *ptx = avoidPtxasSignErrors(*ptx);
  auto ptxas = unlinked.empty() ? locate("ptxas", options)
                                : llvm::Expected<std::string>(
                                      llvm::createStringError(unlinked));
  if (!ptxas) {
    artifacts["ptx"] = std::move(*ptx);
    if (options.requireCubin)
      return ptxas.takeError();
    llvm::consumeError(ptxas.takeError());
    return llvm::Error::success();
  }
  auto cubin = assemblePtx(*ptxas, *ptx, spec.arch, options.optLevel);
  if (!cubin)
    return cubin.takeError();
  artifacts["ptx"] = std::move(*ptx);
  artifacts["cubin"] = std::move(*cubin);
  return llvm::Error::success();
}

/// lld searches no system directories of its own: these are where glibc's
/// libm.so.6 lives (Debian multiarch, then the Red Hat layout). Linked
/// --as-needed, a .so that calls expf & co names libm as a dependency, so
/// that dlopen() resolves them in any process; others do not.
constexpr const char *kHostLibraryArgs[] = {
    "-L/lib/x86_64-linux-gnu", "-L/usr/lib/x86_64-linux-gnu", "-L/lib64",
    "-L/usr/lib64", "--as-needed", "-l:libm.so.6"};

/// x86-64 has no f16/bf16 arithmetic: the backend computes in f32 and
/// calls compiler-rt's conversions (__extendhfsf2, __truncsfhf2,
/// __truncsfbf2, ...), which round to nearest even as IEEE requires and
/// which no process that dlopen()s the .so is sure to have. The builtins
/// archive of the LLVM weft is built with ships beside the compiler
/// (Toolchain.h), is linked in, only the members the object needs, and
/// --exclude-libs keeps them out of the .so's exports.
llvm::Expected<std::string> findHostBuiltins() {
  return locate("host-builtins", CodegenOptions{});
}

/// AMDGPU and host: assembly for reading, and the object it assembles to,
/// which lld links into a shared object (HSACO or .so) with `linkArgs`
/// after the object. (Emitting the object from the module too would select
/// instructions twice: a 64-wide host attention kernel took 47 s, 32 s
/// assembled.)
llvm::Error emitLinked(llvm::Module &module, llvm::TargetMachine &machine,
                       llvm::StringRef asmName, llvm::StringRef sharedName,
                       llvm::ArrayRef<const char *> linkArgs,
                       Artifacts &artifacts) {
  auto assembly = runBackend(module, machine, llvm::CodeGenFileType::AssemblyFile);
  if (!assembly)
    return assembly.takeError();
  auto object = assemble(*assembly, machine);
  if (!object)
    return object.takeError();
  auto shared = linkSharedObject(*object, linkArgs);
  if (!shared)
    return shared.takeError();
  artifacts[asmName.str()] = std::move(*assembly);
  artifacts[sharedName.str()] = std::move(*shared);
  return llvm::Error::success();
}

llvm::Error emitTargetCode(llvm::Module &module, llvm::TargetMachine &machine,
                           const TargetSpec &spec,
                           const CodegenOptions &options,
                           const std::string &unlinked, Artifacts &artifacts) {
  switch (spec.kind) {
  case TargetKind::NVPTX:
    return emitNvptx(module, machine, spec, options, unlinked, artifacts);
  case TargetKind::AMDGPU:
    return emitLinked(module, machine, "amdgcn", "hsaco", {}, artifacts);
  case TargetKind::Host: {
    auto builtins = findHostBuiltins();
    if (!builtins)
      return builtins.takeError();
    llvm::SmallVector<const char *, 10> args = {builtins->c_str(),
                                                "--exclude-libs=ALL"};
    args.append(std::begin(kHostLibraryArgs), std::end(kHostLibraryArgs));
    return emitLinked(module, machine, "asm", "so", args, artifacts);
  }
  }
  llvm_unreachable("unknown target kind");
}

} // namespace

llvm::Expected<std::string> weft::dataLayout(const TargetSpec &target) {
  auto machine = createTargetMachine(target, /*optLevel=*/0);
  if (!machine)
    return machine.takeError();
  return (*machine)->createDataLayout().getStringRepresentation();
}

llvm::Expected<Artifacts> weft::emitArtifacts(llvm::Module &module,
                                              const TargetSpec &spec,
                                              const CodegenOptions &options) {
  if (options.optLevel > 3)
    return llvm::createStringError("invalid optimisation level " +
                                   std::to_string(options.optLevel) +
                                   " (expected 0..3)");
  auto machine = createTargetMachine(spec, options.optLevel);
  if (!machine)
    return machine.takeError();
  module.setTargetTriple((*machine)->getTargetTriple());
  module.setDataLayout((*machine)->createDataLayout());
  // LLVM 22 defaults to code object v6, which older ROCm runtimes reject;
  // v5 is what ROCm 6 loads everywhere.
  if (spec.kind == TargetKind::AMDGPU &&
      !module.getModuleFlag("amdhsa_code_object_version"))
    module.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version",
                         500);
  std::string unlinked;
  if (llvm::Error err = linkDeviceLibraries(module, spec, options, unlinked))
    return std::move(err);

  std::string verifierMessages;
  llvm::raw_string_ostream verifierStream(verifierMessages);
  if (llvm::verifyModule(module, &verifierStream))
    return llvm::createStringError("invalid LLVM IR:\n" + verifierMessages);

  optimize(module, **machine, options.optLevel);
  if (spec.kind == TargetKind::AMDGPU)
    widenBFloatRemainders(module);

  Artifacts artifacts;
  std::string llir;
  llvm::raw_string_ostream llirStream(llir);
  module.print(llirStream, nullptr);
  artifacts["llir"] = std::move(llir);
  if (llvm::Error err =
          emitTargetCode(module, **machine, spec, options, unlinked, artifacts))
    return std::move(err);
  return artifacts;
}
