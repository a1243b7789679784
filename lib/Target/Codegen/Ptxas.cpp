//===- Ptxas.cpp - PTX to cubin through NVIDIA's ptxas --------------------===//

#include "Tools.h"

#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

using namespace weft;

std::string weft::avoidPtxasSignErrors(llvm::StringRef ptx) {
  // LLVM prints one instruction a line: indent, an optional guard, the
  // opcode, destination and source registers.
  static const llvm::Regex signOp("^([ \t]*)(@!?%[a-z0-9]+[ \t]+)?(neg|abs)\\.s(16|32|64)"
                                  "[ \t]+(%[a-z0-9]+),[ \t]*(%[a-z0-9]+);$");
  llvm::SmallVector<llvm::StringRef> lines;
  ptx.split(lines, '\n');
  std::string out;
  out.reserve(ptx.size());
  for (auto [i, line] : llvm::enumerate(lines)) {
    if (i)
      out += '\n';
    llvm::SmallVector<llvm::StringRef, 7> m;
    if (!signOp.match(line, &m)) {
      out += line;
      continue;
    }
    llvm::StringRef indent = m[1], guard = m[2], bits = m[4], d = m[5], s = m[6];
    std::string at = (indent + guard).str();
    if (m[3] == "neg") {
      out += (at + "not.b" + bits + " \t" + d + ", " + s + ";\n").str();
      out += (at + "add.s" + bits + " \t" + d + ", " + d + ", 1;").str();
      continue;
    }
    // |s| = (s ^ m) - m with m = s >> (N - 1), in a scope of its own for m;
    // d may be s (m is taken first).
    unsigned width = 0;
    bits.getAsInteger(10, width);
    out += (indent + "{\n" + indent + ".reg .b" + bits + " %weft_sign;\n").str();
    out += (at + "shr.s" + bits + " \t%weft_sign, " + s + ", " + std::to_string(width - 1) +
            ";\n").str();
    out += (at + "xor.b" + bits + " \t" + d + ", " + s + ", %weft_sign;\n").str();
    out += (at + "sub.s" + bits + " \t" + d + ", " + d + ", %weft_sign;\n" + indent + "}").str();
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
