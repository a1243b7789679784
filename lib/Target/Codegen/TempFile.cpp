//===- TempFile.cpp - self-removing temporary files -----------------------===//

#include "Tools.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace weft;

llvm::Expected<TempFile> TempFile::create(llvm::StringRef suffix) {
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("weft", suffix, path))
    return llvm::createStringError(ec, "cannot create a temporary file: " +
                                           ec.message());
  return TempFile(path.str().str());
}

TempFile::TempFile(TempFile &&other) : filePath(std::move(other.filePath)) {
  other.filePath.clear();
}

TempFile::~TempFile() {
  if (!filePath.empty())
    llvm::sys::fs::remove(filePath);
}

llvm::Error TempFile::write(llvm::StringRef bytes) const {
  std::error_code ec;
  llvm::raw_fd_ostream os(filePath, ec);
  if (!ec) {
    os << bytes;
    os.close();
    ec = os.error();
    // An uncleared stream error is a fatal error when `os` is destroyed.
    os.clear_error();
  }
  if (ec)
    return llvm::createStringError(ec, "cannot write " + filePath + ": " +
                                           ec.message());
  return llvm::Error::success();
}

llvm::Expected<std::string> TempFile::read() const {
  auto buffer = llvm::MemoryBuffer::getFile(filePath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read " + filePath + ": " +
                                       buffer.getError().message());
  return (*buffer)->getBuffer().str();
}
