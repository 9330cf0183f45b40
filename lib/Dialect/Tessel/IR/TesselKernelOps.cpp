//===- TesselKernelOps.cpp - verifiers of the kernel-call ops --------------===//
//
// The kernel library trusts these shapes (it does no bounds checks), so the
// verifier checks every size relation the lowering to a call relies on.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

using namespace mlir;
using namespace mlir::tessel;

static bool known(int64_t d) { return !ShapedType::isDynamic(d); }

LogicalResult PackedConv2DOp::verify() {
  auto inTy = cast<ShapedType>(getInput().getType());
  auto wTy = cast<ShapedType>(getPackedFilter().getType());
  auto outTy = cast<ShapedType>(getInit().getType());
  bool tensors = isa<RankedTensorType>(inTy);
  SmallVector<Value> operands = {getInput(), getPackedFilter(), getInit()};
  if (getBias())
    operands.push_back(getBias());
  for (Value v : operands) {
    auto t = dyn_cast<ShapedType>(v.getType());
    if (!t || !t.hasRank() || isa<RankedTensorType>(t) != tensors)
      return emitOpError() << "operands must be all ranked tensors or all "
                              "memrefs, got "
                           << v.getType();
    if (!t.getElementType().isF32())
      return emitOpError() << "only f32 is supported, got " << v.getType();
  }
  if (tensors != (getNumResults() == 1))
    return emitOpError() << "has one result on tensors and none on memrefs";
  if (tensors && getResult()[0].getType() != outTy)
    return emitOpError() << "result type must match 'init' type " << outTy;
  if (inTy.getRank() != 4 || outTy.getRank() != 4)
    return emitOpError() << "input and init must be rank 4 (NHWC)";
  if (wTy.getRank() != 3 && wTy.getRank() != 4)
    return emitOpError() << "packed_filter must be rank 3 (P x K x NR) or 4 "
                            "(N x P x K x NR), got rank "
                         << wTy.getRank();
  if (getKernelSize().size() != 2 || getStrides().size() != 2 ||
      getDilations().size() != 2)
    return emitOpError() << "kernel_size, strides and dilations must have 2 "
                            "values each";
  if (llvm::any_of(getKernelSize(), [](int64_t v) { return v < 1; }) ||
      llvm::any_of(getStrides(), [](int64_t v) { return v < 1; }) ||
      llvm::any_of(getDilations(), [](int64_t v) { return v < 1; }))
    return emitOpError() << "kernel_size, strides and dilations must be "
                            "positive";
  int64_t n = inTy.getDimSize(0), c = inTy.getDimSize(3);
  int64_t f = outTy.getDimSize(3);
  if (known(n) && known(outTy.getDimSize(0)) && n != outTy.getDimSize(0))
    return emitOpError() << "input and init batch sizes differ";
  for (int i = 0; i < 2; ++i) {
    int64_t in = inTy.getDimSize(1 + i), out = outTy.getDimSize(1 + i);
    int64_t need = (out - 1) * getStrides()[i] +
                   (getKernelSize()[i] - 1) * getDilations()[i] + 1;
    if (known(in) && known(out) && out > 0 && in < need)
      return emitOpError() << "input spatial dim " << i << " is " << in
                           << ", but the output needs at least " << need;
  }
  int64_t rank = wTy.getRank();
  if (rank == 4 && known(n) && known(wTy.getDimSize(0)) &&
      wTy.getDimSize(0) != n)
    return emitOpError() << "a rank-4 packed_filter needs one filter per "
                            "batch image";
  int64_t p = wTy.getDimSize(rank - 3), k = wTy.getDimSize(rank - 2);
  int64_t nr = wTy.getDimSize(rank - 1);
  if (!known(nr) || nr < 1)
    return emitOpError() << "packed_filter panel width must be static";
  if (known(c) && known(k) &&
      k != c * getKernelSize()[0] * getKernelSize()[1])
    return emitOpError() << "packed_filter reduction size is " << k
                         << ", expected KH*KW*C = "
                         << c * getKernelSize()[0] * getKernelSize()[1];
  if (known(f) && known(p) && p != (f + nr - 1) / nr)
    return emitOpError() << "packed_filter has " << p << " panels, but "
                         << f << " output channels need " << (f + nr - 1) / nr;
  if (Value bias = getBias()) {
    auto bTy = cast<ShapedType>(bias.getType());
    if (bTy.getRank() != 1 ||
        (known(f) && known(bTy.getDimSize(0)) && bTy.getDimSize(0) != f))
      return emitOpError() << "bias must be 1-D with one value per output "
                              "channel";
  }
  if (getClampMin() && getClampMax() &&
      getClampMin()->convertToFloat() > getClampMax()->convertToFloat())
    return emitOpError() << "clamp_min is greater than clamp_max";
  return success();
}

/// On memrefs: reads every input buffer, writes the init buffer (and reads
/// it when accumulating). On tensors the op is pure.
void PackedConv2DOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    bool isInit = &operand == &getInitMutable();
    if (!isInit || getAccumulate())
      effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
    if (isInit)
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           /*stage=*/0, /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
  }
}
