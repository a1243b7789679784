//===- Compiler.cpp - weft IR text to target artifacts --------------------===//

#include "weft/Compiler/Compiler.h"
#include "weft/Analysis/Passes.h"
#include "weft/Conversion/Passes.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"
#include "weft/Dialect/Weft/IR/Dialect.h"
#include "weft/Dialect/Weft/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include <mutex>

using namespace weft;

namespace {

/// LLVM's errors (a back end that cannot select an operation, ...) kept
/// for the compile's error: LLVM's default handler would print them and
/// exit the process.
struct LLVMErrorCollector : llvm::DiagnosticHandler {
  std::string text;
  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    if (info.getSeverity() != llvm::DS_Error)
      return false; // LLVM's default: warnings printed, remarks dropped
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    os << (text.empty() ? "" : "\n") << "LLVM: ";
    info.print(printer);
    return true;
  }
};

/// Everything MLIR reports while this lives, as mlir-opt prints it
/// ("file:line:col: error: ..." with the offending source line).
class DiagnosticCollector {
public:
  DiagnosticCollector(llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context)
      : stream(text), handler(sourceMgr, context, stream) {}

  /// The collected diagnostics, or `fallback` when MLIR reported nothing.
  llvm::Error error(llvm::StringRef fallback) {
    llvm::StringRef message = llvm::StringRef(text).rtrim();
    return llvm::createStringError(message.empty() ? fallback : message);
  }

private:
  std::string text;
  llvm::raw_string_ostream stream;
  mlir::SourceMgrDiagnosticHandler handler;
};

/// A parsed module together with the source buffer its locations point into
/// and the diagnostics reported about it.
struct ParsedInput {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<DiagnosticCollector> diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Parses and verifies `source` into `input`: the module, or the
/// diagnostics that say why there is none.
llvm::Expected<mlir::ModuleOp> parse(ParsedInput &input,
                                     mlir::MLIRContext &context,
                                     llvm::StringRef source,
                                     llvm::StringRef bufferName) {
  // A copy: the MLIR lexer needs a NUL-terminated buffer.
  input.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  input.diagnostics =
      std::make_unique<DiagnosticCollector>(input.sourceMgr, &context);
  input.module = mlir::parseSourceFile<mlir::ModuleOp>(
      input.sourceMgr, mlir::ParserConfig(&context));
  if (!input.module)
    return input.diagnostics->error("cannot parse the weft IR");
  return *input.module;
}

std::string print(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

} // namespace

void weft::registerCompilerDialects(mlir::DialectRegistry &registry) {
  registry.insert<weft::WeftDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::LLVM::LLVMDialect, mlir::math::MathDialect,
                  mlir::NVVM::NVVMDialect, mlir::ROCDL::ROCDLDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect>();
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::registerROCDLDialectTranslation(registry);
}

void weft::registerCompilerPasses() {
  // MLIR's pass registry rejects a second registration of the same name.
  static std::once_flag once;
  std::call_once(once, [] {
    weft::registerWeftAnalysisPasses();
    weft::registerWeftPasses();
    weft::registerWeftTransformsPasses();
    weft::registerWeftOptimizePipeline();
  });
}

Compiler::Compiler() {
  registerCompilerPasses();
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  // Compilers live inside user processes (Python) and compile one small
  // kernel at a time: no thread pool per compiler.
  context = std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
}

Compiler::~Compiler() = default;

llvm::Expected<Artifacts> Compiler::compile(llvm::StringRef source,
                                            const CompileOptions &options,
                                            llvm::StringRef bufferName) {
  ParsedInput input;
  llvm::Expected<mlir::ModuleOp> parsedModule =
      parse(input, *context, source, bufferName);
  if (!parsedModule)
    return parsedModule.takeError();
  mlir::ModuleOp module = *parsedModule;

  if (options.optimize) {
    mlir::PassManager optimize(module->getName());
    buildOptimizePipeline(optimize);
    if (mlir::failed(optimize.run(module)))
      return input.diagnostics->error("weft-optimize failed");
  }

  Artifacts artifacts;
  artifacts["weft"] = print(module);

  mlir::PassManager lowering(module->getName());
  buildLoweringPipeline(lowering, options.target);
  if (mlir::failed(lowering.run(module)))
    return input.diagnostics->error("lowering to the LLVM dialect failed");

  // What launches must set per kernel (compiler.h, "kernels").
  llvm::json::Object kernels;
  module.walk([&](mlir::LLVM::LLVMFuncOp func) {
    llvm::json::Object settings;
    if (auto bytes = func->getAttrOfType<mlir::IntegerAttr>(kDynamicSharedBytesAttrName))
      settings["dynamic_shared_bytes"] = bytes.getInt();
    if (auto maps = func->getAttrOfType<mlir::DictionaryAttr>(kTensorMapsAttrName)) {
      llvm::json::Object byArg;
      for (mlir::NamedAttribute map : maps) {
        TensorCopyPlan plan =
            decodeTensorCopyPlan(llvm::cast<mlir::DenseI64ArrayAttr>(map.getValue()));
        // The runtime takes dimensions outermost first.
        llvm::json::Array dims;
        for (const TensorMapDim &d : llvm::reverse(plan.dims))
          dims.push_back(llvm::json::Array{d.dim, d.step, d.size, d.box});
        byArg[map.getName().strref()] =
            llvm::json::Object{{"map", std::move(dims)}, {"swizzle", plan.swizzle}};
      }
      settings["tensor_maps"] = std::move(byArg);
    }
    if (auto cluster = func->getAttrOfType<mlir::DenseI32ArrayAttr>(kClusterAttrName))
      settings["cluster"] = llvm::json::Array(cluster.asArrayRef());
    if (func->hasAttr(kEarlyStartAttrName))
      settings["early_start"] = true;
    if (auto threads = func->getAttrOfType<mlir::IntegerAttr>(kThreadsAttrName))
      settings["threads"] = threads.getInt();
    if (!settings.empty())
      kernels[func.getSymName()] = std::move(settings);
  });
  if (!kernels.empty())
    artifacts["kernels"] = llvm::formatv("{0}", llvm::json::Value(std::move(kernels))).str();

  llvm::Expected<std::string> layout = dataLayout(options.target.spec);
  if (!layout)
    return layout.takeError();
  module->setAttr(mlir::LLVM::LLVMDialect::getDataLayoutAttrName(),
                  mlir::StringAttr::get(context.get(), *layout));
  llvm::LLVMContext llvmContext;
  auto llvmErrors = std::make_unique<LLVMErrorCollector>();
  LLVMErrorCollector &collected = *llvmErrors;
  llvmContext.setDiagnosticHandler(std::move(llvmErrors));
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext, bufferName);
  if (!llvmModule)
    return input.diagnostics->error("translation to LLVM IR failed");

  auto generated = emitArtifacts(*llvmModule, options.target.spec, options.codegen);
  if (!collected.text.empty()) {
    llvm::consumeError(generated.takeError());
    return llvm::createStringError(collected.text);
  }
  if (!generated)
    return generated.takeError();
  for (auto &[name, bytes] : *generated)
    artifacts[name] = std::move(bytes);
  return artifacts;
}

llvm::Expected<std::string> Compiler::runPipeline(llvm::StringRef source,
                                                  llvm::StringRef pipeline,
                                                  llvm::StringRef bufferName) {
  ParsedInput input;
  llvm::Expected<mlir::ModuleOp> parsedModule =
      parse(input, *context, source, bufferName);
  if (!parsedModule)
    return parsedModule.takeError();
  mlir::ModuleOp module = *parsedModule;

  // The pipeline names its anchor ("builtin.module(...)"); parsing it into
  // a module-anchored manager would nest it one level too deep.
  std::string pipelineErrors;
  llvm::raw_string_ostream pipelineErrorStream(pipelineErrors);
  auto parsed = mlir::parsePassPipeline(pipeline, pipelineErrorStream);
  if (mlir::failed(parsed))
    return llvm::createStringError("invalid pass pipeline '" + pipeline +
                                   "': " + pipelineErrors);
  mlir::PassManager pm(context.get(), parsed->getOpAnchorName());
  static_cast<mlir::OpPassManager &>(pm) = *parsed;
  if (mlir::failed(pm.run(module)))
    return input.diagnostics->error("the pass pipeline failed");
  return print(module);
}
