//===- LLDLink.cpp - shared objects with lld as a library -----------------===//

#include "Tools.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"
#include <mutex>

LLD_HAS_DRIVER(elf)

using namespace weft;

namespace {
// lld keeps global state for the duration of a link, so links run one at a
// time; after a crash inside lld it cannot safely run again in this process.
std::mutex lldMutex;
bool lldUnusable = false;
} // namespace

llvm::Expected<std::string>
weft::linkSharedObject(llvm::StringRef object,
                       llvm::ArrayRef<const char *> extraArgs) {
  auto input = TempFile::create("o");
  if (!input)
    return input.takeError();
  auto output = TempFile::create("so");
  if (!output)
    return output.takeError();
  if (llvm::Error err = input->write(object))
    return std::move(err);

  std::string outputPath = output->path().str();
  std::string inputPath = input->path().str();
  llvm::SmallVector<const char *, 12> args = {
      "ld.lld", "-shared", "-o", outputPath.c_str(), inputPath.c_str()};
  args.append(extraArgs.begin(), extraArgs.end());
  std::string log;
  llvm::raw_string_ostream logStream(log);
  {
    std::lock_guard<std::mutex> lock(lldMutex);
    if (lldUnusable)
      return llvm::createStringError(
          "lld crashed earlier in this process and cannot link again");
    lld::Result result =
        lld::lldMain(args, logStream, logStream, {{lld::Gnu, &lld::elf::link}});
    lldUnusable = !result.canRunAgain;
    if (result.retCode != 0)
      return llvm::createStringError("ld.lld failed:\n" + log);
  }
  return output->read();
}
