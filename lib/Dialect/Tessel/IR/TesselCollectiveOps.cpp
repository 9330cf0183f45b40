//===- TesselCollectiveOps.cpp - verifiers of the MPI collectives ---------===//
//
// The runtime part moves whole rows by byte counts, so the verifiers pin
// what it trusts: same element type, same trailing dimensions, i32 counts.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

using namespace mlir;
using namespace mlir::tessel;

/// All operands tensors (with a result of the init's type) or all memrefs
/// (without), ranked, of rank at least one.
static LogicalResult verifyDestinationStyle(Operation *op, ValueRange shaped,
                                            Value init, Value result) {
  bool tensors = isa<RankedTensorType>(init.getType());
  for (Value v : shaped) {
    auto t = dyn_cast<ShapedType>(v.getType());
    if (!t || !t.hasRank() || t.getRank() == 0 ||
        isa<RankedTensorType>(t) != tensors)
      return op->emitOpError()
             << "operands must be all ranked tensors or all memrefs, of rank "
                "1 or more; got "
             << v.getType();
  }
  if (!tensors && result)
    return op->emitOpError() << "has no result on memrefs";
  if (tensors && (!result || result.getType() != init.getType()))
    return op->emitOpError()
           << "on tensors has one result of the init's type " << init.getType();
  return success();
}

/// `input` and `init` move the same rows: element type and dimensions past
/// the first.
static LogicalResult verifyRows(Operation *op, Value input, Value init) {
  auto in = cast<ShapedType>(input.getType());
  auto out = cast<ShapedType>(init.getType());
  if (in.getElementType() != out.getElementType() ||
      in.getShape().drop_front() != out.getShape().drop_front())
    return op->emitOpError() << "input " << in << " and init " << out
                             << " must have the same element type and the "
                                "same dimensions past the first";
  return success();
}

static void collectiveEffects(
    Operation *op, ArrayRef<OpOperand *> reads, OpOperand &init,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand *operand : reads)
    if (isa<MemRefType>(operand->get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), operand, /*stage=*/0,
                           /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
  if (isa<MemRefType>(init.get().getType()))
    effects.emplace_back(MemoryEffects::Write::get(), &init, /*stage=*/0,
                         /*effectOnFullRegion=*/true,
                         SideEffects::DefaultResource::get());
  // Every process must run each collective, in the same order: on tensors
  // too, the op is neither removed nor reordered with the others.
  effects.emplace_back(MemoryEffects::Write::get(),
                       SideEffects::DefaultResource::get());
}

LogicalResult AllToAllVOp::verify() {
  if (failed(verifyDestinationStyle(
          *this, {getInput(), getSendRows(), getRecvRows(), getInit()},
          getInit(), getResult())) ||
      failed(verifyRows(*this, getInput(), getInit())))
    return failure();
  auto send = cast<ShapedType>(getSendRows().getType());
  auto recv = cast<ShapedType>(getRecvRows().getType());
  for (ShapedType t : {send, recv})
    if (t.getRank() != 1 || !t.getElementType().isInteger(32))
      return emitOpError() << "row counts must be 1-D i32 (one per process), "
                              "got "
                           << t;
  if (send.hasStaticShape() && recv.hasStaticShape() &&
      send.getDimSize(0) != recv.getDimSize(0))
    return emitOpError() << "send_rows and recv_rows must have one count per "
                            "process each, got "
                         << send.getDimSize(0) << " and " << recv.getDimSize(0);
  return success();
}

void AllToAllVOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  collectiveEffects(
      *this, {&getInputMutable(), &getSendRowsMutable(), &getRecvRowsMutable()},
      getInitMutable(), effects);
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyDestinationStyle(*this, {getInput(), getInit()}, getInit(),
                                    getResult())) ||
      failed(verifyRows(*this, getInput(), getInit())))
    return failure();
  int64_t rows = cast<ShapedType>(getInput().getType()).getDimSize(0);
  int64_t all = cast<ShapedType>(getInit().getType()).getDimSize(0);
  if (!ShapedType::isDynamic(rows) && !ShapedType::isDynamic(all) &&
      (rows == 0 ? all != 0 : all % rows != 0))
    return emitOpError() << "init's " << all
                         << " rows must be a whole number of copies of the "
                            "input's "
                         << rows;
  return success();
}

void AllGatherOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  collectiveEffects(*this, {&getInputMutable()}, getInitMutable(), effects);
}
