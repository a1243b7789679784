//===- Toolchain.cpp - files the compiler finds on the machine ------------===//

#include "Toolchain.h"
#include "weft/Target/Codegen.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include <dlfcn.h>

using namespace weft;

llvm::Expected<std::string> FileSearch::find(const llvm::Twine &why) const {
  std::vector<std::string> paths = candidates;
  if (auto path = llvm::sys::Process::GetEnv(overrideVariable))
    paths.assign({*path});
  for (const std::string &path : paths) {
    bool found = executable ? llvm::sys::fs::can_execute(path) &&
                                  !llvm::sys::fs::is_directory(path)
                            : llvm::sys::fs::is_regular_file(path);
    if (found)
      return path;
  }
  std::string looked = paths.empty() ? "nowhere to look" : "looked for " + llvm::join(paths, ", ");
  return llvm::createStringError(why + ", but no " + what + " was found (" + looked + "; $" +
                                 overrideVariable + " names the file)");
}

namespace {

/// Files that ship with the compiler (the wheel's OCML and builtins; the
/// build tree's copies, lib/Target/Codegen/CMakeLists.txt): <directory of
/// the library or program holding this code>/../share/weft.
std::string resourceDirectory() {
  // The object this function is in: libWeftCAPI.so, or a program that links
  // the compiler statically.
  Dl_info self;
  if (!dladdr(reinterpret_cast<void *>(&resourceDirectory), &self) ||
      !self.dli_fname)
    return "";
  llvm::SmallString<256> path(self.dli_fname);
  llvm::sys::fs::make_absolute(path);
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "..", "share", "weft");
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return path.str().str();
}

/// CUDA toolkit roots in the order they are searched: $CUDA_HOME, the
/// toolkit of the ptxas on PATH, /usr/local/cuda, then `extraRoots` (the
/// Python frontend passes the nvidia-cuda-nvcc pip package's).
std::vector<std::string> cudaRoots(llvm::ArrayRef<std::string> extraRoots) {
  std::vector<std::string> roots;
  if (auto home = llvm::sys::Process::GetEnv("CUDA_HOME"))
    roots.push_back(*home);
  if (auto onPath = llvm::sys::findProgramByName("ptxas")) {
    // <root>/bin/ptxas, through symbolic links (/usr/bin/ptxas of a
    // distribution's toolkit).
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(*onPath, real))
      real = *onPath;
    roots.push_back(llvm::sys::path::parent_path(
                        llvm::sys::path::parent_path(real))
                        .str());
  }
  roots.push_back("/usr/local/cuda");
  roots.insert(roots.end(), extraRoots.begin(), extraRoots.end());
  return roots;
}

/// `root/relativePath` for each root, then `fallbacks`.
std::vector<std::string> underRoots(llvm::ArrayRef<std::string> roots,
                                    llvm::StringRef relativePath,
                                    llvm::ArrayRef<std::string> fallbacks = {}) {
  std::vector<std::string> paths;
  for (const std::string &root : roots) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, relativePath);
    paths.push_back(path.str().str());
  }
  paths.insert(paths.end(), fallbacks.begin(), fallbacks.end());
  return paths;
}

} // namespace

std::optional<FileSearch> weft::toolchainSearch(llvm::StringRef name,
                                                const CodegenOptions &options) {
  if (name == "ptxas")
    return FileSearch{"ptxas", "a cubin needs ptxas", "PTXAS",
                      underRoots(cudaRoots(options.cudaRoots), "bin/ptxas"),
                      /*executable=*/true};
  if (name == "libdevice")
    return FileSearch{"libdevice", "math functions on cuda need libdevice",
                      "WEFT_LIBDEVICE",
                      underRoots(cudaRoots(options.cudaRoots),
                                 "nvvm/libdevice/libdevice.10.bc")};
  if (name == "nvshmem-device") {
    std::vector<std::string> roots;
    if (auto home = llvm::sys::Process::GetEnv("NVSHMEM_HOME"))
      roots.push_back(*home);
    roots.insert(roots.end(), options.nvshmemRoots.begin(), options.nvshmemRoots.end());
    return FileSearch{"libnvshmem_device.bc",
                      "off-node operations on cuda call NVSHMEM's device library",
                      "WEFT_NVSHMEM_DEVICE_BC",
                      underRoots(roots, "lib/libnvshmem_device.bc")};
  }
  if (name == "ocml" || name == "ockl") {
    // ROCm's device libraries: math (OCML) and the kernel library (OCKL:
    // device printf).
    std::vector<std::string> roots;
    if (auto root = llvm::sys::Process::GetEnv("ROCM_PATH"))
      roots.push_back(*root);
    roots.push_back("/opt/rocm");
    std::string file = (name + ".bc").str();
    bool math = name == "ocml";
    return FileSearch{math ? "OCML" : "OCKL",
                      math ? "math functions on hip need OCML" : "device_print on hip needs OCKL",
                      math ? "WEFT_OCML" : "WEFT_OCKL",
                      underRoots(roots, "amdgcn/bitcode/" + file,
                                 underRoots({resourceDirectory()}, file))};
  }
  if (name == "host-builtins")
    return FileSearch{"compiler-rt builtins archive",
                      "host code links compiler-rt's builtins (for f16/bf16)",
                      "WEFT_HOST_BUILTINS",
                      underRoots({resourceDirectory()},
                                 "libclang_rt.builtins-x86_64.a")};
  return std::nullopt;
}

llvm::Expected<std::string> weft::locate(llvm::StringRef name,
                                         const CodegenOptions &options) {
  std::optional<FileSearch> search = toolchainSearch(name, options);
  if (!search)
    return llvm::createStringError(
        "no file named '" + name +
        "' (ptxas, libdevice, nvshmem-device, ocml, ockl or host-builtins)");
  return search->find();
}
