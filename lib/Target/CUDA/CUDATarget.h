//===- CUDATarget.h - The CUDA target backend ----------------------*- C++ -*-===//
#ifndef TESSEL_LIB_TARGET_CUDA_CUDATARGET_H
#define TESSEL_LIB_TARGET_CUDA_CUDATARGET_H

#include "tessel/Target/TargetBackend.h"

namespace mlir::tessel {

class CUDATargetBackend : public TargetBackend {
public:
  llvm::StringRef name() const override;
  TargetCapabilities
  capabilities(const llvm::TargetMachine *host) const override;
  std::optional<std::string>
  unsupported(const PipelineOptions &options) const override;
  void buildBufferPipeline(OpPassManager &pm,
                           const PipelineOptions &options) const override;
  void buildCodegenPipeline(OpPassManager &pm,
                            const PipelineOptions &options) const override;
  llvm::Expected<std::vector<std::string>>
  linkArchives(const llvm::TargetMachine &host,
               const SerializeOptions &options) const override;
  LogicalResult serialize(ModuleOp module, llvm::TargetMachine &host,
                          const SerializeOptions &options,
                          TimingScope &timing) const override;
};

} // namespace mlir::tessel

#endif // TESSEL_LIB_TARGET_CUDA_CUDATARGET_H
