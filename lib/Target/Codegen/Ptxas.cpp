//===- Ptxas.cpp - PTX to cubin through NVIDIA's ptxas --------------------===//

#include "Tools.h"

#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

using namespace weft;

std::string weft::avoidNegationFusion(llvm::StringRef ptx) {
  // LLVM prints one instruction a line: indent, an optional guard, the
  // opcode, destination and source registers.
  static const llvm::Regex negation(
      "^([ \t]*(@!?%[a-z0-9]+[ \t]+)?)neg\\.s(16|32|64)[ \t]+(%[a-z0-9]+),[ \t]*(%[a-z0-9]+);$");
  llvm::SmallVector<llvm::StringRef> lines;
  ptx.split(lines, '\n');
  std::string out;
  out.reserve(ptx.size());
  for (auto [i, line] : llvm::enumerate(lines)) {
    if (i)
      out += '\n';
    llvm::SmallVector<llvm::StringRef, 6> m;
    if (!negation.match(line, &m)) {
      out += line;
      continue;
    }
    out += (m[1] + "not.b" + m[3] + " \t" + m[4] + ", " + m[5] + ";\n").str();
    out += (m[1] + "add.s" + m[3] + " \t" + m[4] + ", " + m[4] + ", 1;").str();
  }
  return out;
}

llvm::Expected<std::string> weft::assemblePtx(llvm::StringRef ptxas,
                                              llvm::StringRef ptx,
                                              llvm::StringRef arch,
                                              unsigned optLevel) {
  auto input = TempFile::create("ptx");
  if (!input)
    return input.takeError();
  auto output = TempFile::create("cubin");
  if (!output)
    return output.takeError();
  auto log = TempFile::create("log");
  if (!log)
    return log.takeError();
  if (llvm::Error err = input->write(ptx))
    return std::move(err);

  std::string archFlag = ("-arch=" + arch).str();
  std::string optFlag = "-O" + std::to_string(optLevel);
  llvm::StringRef args[] = {ptxas,         archFlag, optFlag, "-o",
                            output->path(), input->path()};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log->path(),
                                                log->path()};
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, /*Env=*/std::nullopt,
                                     redirects, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &errorMessage);
  if (rc != 0) {
    std::string diagnostics;
    if (auto text = log->read())
      diagnostics = std::move(*text);
    else
      llvm::consumeError(text.takeError());
    return llvm::createStringError(
        "ptxas failed (" + ptxas.str() + ", exit code " + std::to_string(rc) +
        (errorMessage.empty() ? "" : ", " + errorMessage) + "):\n" +
        diagnostics);
  }
  return output->read();
}
