//===- BufferizableOpInterfaceImpl.cpp - bufferizing kernel-call ops -------===//
//
// The kernel ops (tessel.packed_conv2d, tessel.depthwise_conv2d,
// tessel.attention, tessel.packed_matmul_i8[_requant],
// tessel.depthwise_conv2d_i8) are in
// destination-passing style, like linalg ops: on tensors the result is the
// `init`; bufferized, they write the init buffer in place and read it only
// when `accumulate` is set. tessel.call_import is in the same style: the
// callee reads its inputs and overwrites every init, never reading it.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::tessel;

namespace {

/// Rebuilds `op` on buffers (its tensor operands' buffers; other operands,
/// such as a communicator, as they are), with no results, and replaces its
/// one result with the buffer of its init `init`.
LogicalResult bufferizeOneInit(Operation *op, unsigned init,
                               RewriterBase &rewriter,
                               const BufferizationOptions &options,
                               BufferizationState &state) {
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<TensorType>(operand.get().getType())) {
      operands.push_back(operand.get());
      continue;
    }
    FailureOr<Value> buffer =
        getBuffer(rewriter, operand.get(), options, state);
    if (failed(buffer))
      return failure();
    operands.push_back(*buffer);
  }
  rewriter.setInsertionPoint(op);
  rewriter.create(op->getLoc(), op->getName().getIdentifier(), operands,
                  TypeRange{}, op->getAttrs());
  replaceOpWithBufferizedValues(rewriter, op, operands[init]);
  return success();
}

template <typename OpT>
struct KernelOpInterface
    : DstBufferizableOpInterfaceExternalModel<KernelOpInterface<OpT>, OpT> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &state) const {
    auto conv = cast<OpT>(op);
    return !conv.isDpsInit(&operand) || conv.getAccumulate();
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto conv = cast<OpT>(op);
    if (conv.hasPureBufferSemantics())
      return success();
    return bufferizeOneInit(op, conv.getInitMutable().getOperandNumber(),
                            rewriter, options, state);
  }
};

struct CallImportOpInterface
    : DstBufferizableOpInterfaceExternalModel<CallImportOpInterface,
                                              CallImportOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &state) const {
    return !cast<CallImportOp>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto call = cast<CallImportOp>(op);
    if (call.hasPureBufferSemantics())
      return success();
    auto buffers = [&](OperandRange values) -> FailureOr<SmallVector<Value>> {
      SmallVector<Value> result;
      for (Value v : values) {
        FailureOr<Value> buffer = getBuffer(rewriter, v, options, state);
        if (failed(buffer))
          return failure();
        result.push_back(*buffer);
      }
      return result;
    };
    FailureOr<SmallVector<Value>> inputs = buffers(call.getInputs());
    FailureOr<SmallVector<Value>> inits = buffers(call.getInits());
    if (failed(inputs) || failed(inits))
      return failure();
    rewriter.setInsertionPoint(op);
    CallImportOp::create(rewriter, op->getLoc(), TypeRange{},
                         call.getCalleeAttr(), *inputs, *inits);
    replaceOpWithBufferizedValues(rewriter, op, *inits);
    return success();
  }
};

/// tessel.all_to_all_v and tessel.all_gather: they read every operand but
/// the init (the communicator is no tensor) and overwrite the init, never
/// reading it.
template <typename OpT>
struct CollectiveOpInterface
    : DstBufferizableOpInterfaceExternalModel<CollectiveOpInterface<OpT>, OpT> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &state) const {
    return !cast<OpT>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto collective = cast<OpT>(op);
    if (collective.hasPureBufferSemantics())
      return success();
    return bufferizeOneInit(op, collective.getInitMutable().getOperandNumber(),
                            rewriter, options, state);
  }
};

} // namespace

void mlir::tessel::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TesselDialect *) {
    PackedConv2DOp::attachInterface<KernelOpInterface<PackedConv2DOp>>(*ctx);
    DepthwiseConv2DOp::attachInterface<KernelOpInterface<DepthwiseConv2DOp>>(
        *ctx);
    AttentionOp::attachInterface<KernelOpInterface<AttentionOp>>(*ctx);
    PackedMatmulI8Op::attachInterface<KernelOpInterface<PackedMatmulI8Op>>(
        *ctx);
    PackedMatmulI8RequantOp::attachInterface<
        KernelOpInterface<PackedMatmulI8RequantOp>>(*ctx);
    DepthwiseConv2DI8Op::attachInterface<
        KernelOpInterface<DepthwiseConv2DI8Op>>(*ctx);
    SparseMatmulOp::attachInterface<KernelOpInterface<SparseMatmulOp>>(*ctx);
    SparseConv2DOp::attachInterface<KernelOpInterface<SparseConv2DOp>>(*ctx);
    GroupedConv2DOp::attachInterface<KernelOpInterface<GroupedConv2DOp>>(*ctx);
    CallImportOp::attachInterface<CallImportOpInterface>(*ctx);
    AllToAllVOp::attachInterface<CollectiveOpInterface<AllToAllVOp>>(*ctx);
    AllGatherOp::attachInterface<CollectiveOpInterface<AllGatherOp>>(*ctx);
  });
}
