//===- CompileMain.cpp - weft IR to PTX/cubin, HSACO or a host .so --------===//
//
//   weft-compile kernel.mlir --target=cuda:90 --emit=ptx [-O3]
//                [--num-warps=4] [--num-stages=3] [--warp-mma] [--debug] [--multinode]
//                [--no-optimize]
//                [-o out.ptx]
//
// weft_compile_main (weft/compiler.h): libWeftCAPI.so carries it, and the
// weft-compile program is a main that calls it.
//
//===----------------------------------------------------------------------===//

#include "CompileOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

namespace cl = llvm::cl;

namespace {

/// The artifacts that compiling for `kind` produces.
bool targetProduces(weft::TargetKind kind, llvm::StringRef name) {
  if (name == "weft" || name == "llir" || name == "kernels")
    return true;
  switch (kind) {
  case weft::TargetKind::NVPTX:
    return name == "ptx" || name == "cubin";
  case weft::TargetKind::AMDGPU:
    return name == "amdgcn" || name == "hsaco";
  case weft::TargetKind::Host:
    return name == "asm" || name == "so";
  }
  return false;
}

bool isBinary(llvm::StringRef name) {
  return name == "cubin" || name == "hsaco" || name == "so";
}

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "weft-compile") << message << "\n";
  return 1;
}

} // namespace

int weft_compile_main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Registered here, not at load time: the library that carries this is
  // also loaded by processes that never run the tool.
  cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input weft IR>"),
                                 cl::init("-"));
  cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                  cl::value_desc("file"), cl::init("-"));
  cl::opt<std::string> target("target", cl::desc("cuda:90, hip:gfx942 or host"),
                              cl::init("host"));
  cl::opt<std::string> emit(
      "emit",
      cl::desc("Artifact to write: weft, llir, kernels (launch settings, "
               "JSON); ptx, cubin (cuda); amdgcn, hsaco (hip); asm, so (host)"),
      cl::Required);
  cl::opt<int> optLevel("O", cl::desc("LLVM optimisation level"), cl::Prefix,
                        cl::init(3));
  cl::opt<int> numWarps(
      "num-warps", cl::desc("Warps per program (GPU targets)"), cl::init(4));
  cl::opt<int> numStages(
      "num-stages",
      cl::desc("Stages of K-loop dot operand pipelining (1: none)"),
      cl::init(3));
  cl::opt<bool> warpMma(
      "warp-mma", cl::desc("wl.dot takes warp-level MMA (mma.sync) even where "
                           "warpgroup MMA (wgmma) applies"));
  cl::opt<bool> debug("debug",
                      cl::desc("Bounds checks on peer ids and heap ranges"));
  cl::opt<bool> multinode("multinode",
                          cl::desc("The kernel runs in a job across nodes (peers "
                                   "on other nodes through NVSHMEM or MPI)"));
  cl::opt<bool> noOptimize("no-optimize",
                           cl::desc("Skip the weft-optimize pipeline "
                                    "(co-optimisation of the tile IR)"));

  cl::ParseCommandLineOptions(argc, argv, "weft kernel compiler\n");
  // Copies: lld, linked in, resets every cl::opt to its default when it
  // parses its own command line.
  const std::string input = inputFile, output = outputFile, artifact = emit;

  weft_compile_options opts;
  weft_compile_options_default(&opts);
  opts.target = target.c_str();
  opts.num_warps = numWarps;
  opts.num_stages = numStages;
  opts.warp_mma = warpMma;
  opts.debug = debug;
  opts.multinode = multinode;
  opts.opt_level = optLevel;
  weft::CompileOptions options;
  std::string error;
  if (weft::makeCompileOptions(&opts, options, error) != WEFT_SUCCESS)
    return fail(error);
  const weft::TargetSpec &spec = options.target.spec;
  if (!targetProduces(spec.kind, artifact))
    return fail("target " + spec.str() + " does not produce '" + artifact + "'");
  if (isBinary(artifact) && output == "-")
    return fail("--emit=" + artifact + " is binary: write it with -o FILE");

  auto source = llvm::MemoryBuffer::getFileOrSTDIN(input);
  if (!source)
    return fail("cannot read " + input + ": " + source.getError().message());
  options.codegen.requireCubin = artifact == "cubin";
  options.optimize = !noOptimize;

  weft::Compiler compiler;
  auto artifacts = compiler.compile((*source)->getBuffer(), options,
                                    input == "-" ? "<stdin>" : input);
  if (!artifacts) {
    llvm::errs() << llvm::toString(artifacts.takeError()) << "\n";
    return 1;
  }

  std::error_code ec;
  llvm::ToolOutputFile file(output, ec,
                            isBinary(artifact)
                                ? llvm::sys::fs::OpenFlags::OF_None
                                : llvm::sys::fs::OpenFlags::OF_Text);
  if (ec)
    return fail("cannot write " + output + ": " + ec.message());
  // "kernels" exists only where some kernel needs a launch setting.
  auto found = artifacts->find(artifact);
  file.os() << (found != artifacts->end() ? found->second
                                          : artifact == "kernels" ? "{}" : "");
  file.keep();
  return 0;
}
