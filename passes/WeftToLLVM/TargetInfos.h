//===- TargetInfos.h - factories of the concrete TargetInfos ----*- C++ -*-===//
#ifndef WEFT_PASSES_WEFTTOLLVM_TARGETINFOS_H
#define WEFT_PASSES_WEFTTOLLVM_TARGETINFOS_H

#include "weft/Conversion/TargetInfo.h"

namespace weft {

std::unique_ptr<TargetInfo> createNVPTXTargetInfo(const TargetSpec &spec);
std::unique_ptr<TargetInfo> createAMDGPUTargetInfo(const TargetSpec &spec);
std::unique_ptr<TargetInfo> createHostTargetInfo(const TargetSpec &spec);

mlir::LLVM::AtomicOrdering toLLVMOrdering(MemOrder order);

} // namespace weft

#endif
