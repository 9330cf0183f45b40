//===- TesselOps.cpp - Tessel graph op verifiers ---------------------------===//
//
// Verifiers reject every malformed op with a diagnostic naming the attribute
// or operand at fault; later passes rely on these invariants.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/CheckedArithmetic.h"
#include <cmath>

using namespace mlir;
using namespace mlir::tessel;

/// How an op's axis attribute may count.
enum class AxisForm {
  FromEitherEnd, // negative counts from the back, as in ONNX
  Normalized,    // in [0, rank): the op takes it as it is
};

/// Checks that `axis` indexes a tensor of rank `rank` in the given form.
static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank,
                                StringRef attrName = "axis",
                                AxisForm form = AxisForm::FromEitherEnd) {
  if (form == AxisForm::Normalized) {
    if (axis < 0 || axis >= rank)
      return op->emitOpError() << "attribute '" << attrName << "' = " << axis
                               << " must be in [0, " << rank << ")";
    return success();
  }
  if (axis < -rank || axis >= rank || rank == 0)
    return op->emitOpError() << "attribute '" << attrName << "' = " << axis
                             << " is out of range for an input of rank "
                             << rank;
  return success();
}

/// TOSA, which these ops decompose into, rejects zero-sized tensors; say so
/// here, at the op the user wrote.
static LogicalResult verifyNonEmpty(Operation *op) {
  for (Type t : op->getOperandTypes())
    if (auto shaped = dyn_cast<ShapedType>(t);
        shaped && shaped.hasRank() && llvm::is_contained(shaped.getShape(), 0))
      return op->emitOpError() << "operand of type " << t
                               << " has a zero-sized dimension";
  return success();
}

/// Static-size equality that lets dynamic sizes through (checked at run time).
static bool compatibleDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult SoftmaxOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  return verifyAxis(*this, getAxis(), getInput().getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  return verifyAxis(*this, getAxis(), getInput().getType().getRank());
}

LogicalResult GeluOp::verify() { return verifyNonEmpty(*this); }

LogicalResult CheckIndicesOp::verify() {
  int64_t lower = getLower(), upper = getUpper();
  // Zeros stand in for indices out of range: they must be in range.
  if (!(lower <= 0 && 0 < upper))
    return emitOpError() << "needs lower <= 0 < upper, got [" << lower << ", "
                         << upper << ")";
  unsigned bits = getIndices().getType().getElementTypeBitWidth();
  if (bits < 64 && (lower < -(int64_t(1) << (bits - 1)) ||
                    upper > (int64_t(1) << (bits - 1))))
    return emitOpError() << "bounds [" << lower << ", " << upper
                         << ") do not fit the " << bits << "-bit indices";
  return success();
}

LogicalResult RequireOp::verify() {
  int32_t status = getStatus();
  if (status != TESSEL_ENTRY_SHAPE_MISMATCH &&
      status != TESSEL_ENTRY_INDEX_OUT_OF_RANGE &&
      status != TESSEL_ENTRY_DIVISION_BY_ZERO &&
      status != TESSEL_ENTRY_EMPTY_OPTIONAL)
    return emitOpError() << "status " << status
                         << " is not a TESSEL_ENTRY_* failure code (-3, -4, "
                            "-5, -6)";
  return success();
}

LogicalResult NonZeroOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getCoordinates().getType());
  if (in.getRank() == 0)
    return emitOpError() << "input must have rank 1 or more";
  if (out.getRank() != 2 || !compatibleDim(out.getDimSize(0), in.getRank()))
    return emitOpError() << "result must be " << in.getRank()
                         << " x ? (one row per input dimension), got " << out;
  return success();
}

LogicalResult GatherOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto idx = cast<RankedTensorType>(getIndices().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  int64_t axis = getAxis();
  if (failed(
          verifyAxis(*this, axis, in.getRank(), "axis", AxisForm::Normalized)))
    return failure();
  if (out.getElementType() != in.getElementType())
    return emitOpError() << "result element type " << out.getElementType()
                         << " differs from the input's " << in.getElementType();
  // input[:axis] ++ indices ++ input[axis + 1:], exactly: a static size
  // where the operand's is dynamic would be trusted by the expansion,
  // which reads the operands over the result's extent.
  SmallVector<int64_t> expected(in.getShape().take_front(axis));
  llvm::append_range(expected, idx.getShape());
  llvm::append_range(expected, in.getShape().drop_front(axis + 1));
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result type " << out
                         << " must have the input's sizes with dimension "
                         << axis << " replaced by the indices' sizes";
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto idx = cast<RankedTensorType>(getIndices().getType());
  auto upd = cast<RankedTensorType>(getUpdates().getType());
  if (failed(verifyAxis(*this, getAxis(), in.getRank(), "axis",
                        AxisForm::Normalized)))
    return failure();
  if (getResult().getType() != in)
    return emitOpError() << "result type " << getResult().getType()
                         << " must be the input's, " << in;
  if (idx.getRank() != in.getRank() || upd.getRank() != in.getRank())
    return emitOpError() << "indices and updates must have the input's rank "
                         << in.getRank();
  if (upd.getElementType() != in.getElementType())
    return emitOpError() << "updates' element type " << upd.getElementType()
                         << " differs from the input's "
                         << in.getElementType();
  if (!llvm::all_of(llvm::zip(idx.getShape(), upd.getShape()), [](auto p) {
        return compatibleDim(std::get<0>(p), std::get<1>(p));
      }))
    return emitOpError() << "indices " << idx << " and updates " << upd
                         << " must have the same sizes";
  // The reductions combine with arith ops: floats and signless integers
  // (max and min compare signed), not i1.
  Type elem = in.getElementType();
  if (getReduction() != ScatterReduction::None &&
      !isa<FloatType>(elem) &&
      !(elem.isSignlessInteger() && !elem.isInteger(1)))
    return emitOpError() << "reduction '"
                         << stringifyScatterReduction(getReduction())
                         << "' needs float or signless integer (not i1) "
                            "elements, got "
                         << elem;
  return success();
}

OpFoldResult RequireOp::fold(FoldAdaptor adaptor) {
  auto holds = dyn_cast_if_present<DenseElementsAttr>(adaptor.getCondition());
  if (holds && holds.getSplatValue<bool>())
    return getValue();
  return {};
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  RankedTensorType inTy = getInput().getType();
  if (failed(verifyAxis(*this, getAxis(), inTy.getRank())))
    return failure();
  SmallVector<int64_t> normShape(
      inTy.getShape().drop_front(getNormalizedAxis()));
  for (auto [name, v] : {std::pair<StringRef, Value>{"scale", getScale()},
                         {"bias", getBias()}}) {
    if (!v)
      continue;
    auto ty = cast<RankedTensorType>(v.getType());
    if (ty.getElementType() != inTy.getElementType())
      return emitOpError() << "'" << name
                           << "' element type must match the input's";
    if (ty.getRank() != static_cast<int64_t>(normShape.size()) ||
        !llvm::all_of(llvm::zip(ty.getShape(), normShape), [](auto p) {
          return compatibleDim(std::get<0>(p), std::get<1>(p));
        }))
      return emitOpError() << "'" << name << "' has type " << ty
                           << " but the normalized dimensions are ["
                           << ArrayRef<int64_t>(normShape) << "]";
  }
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError() << "attribute 'epsilon' must be non-negative";
  return success();
}

LogicalResult BatchNormOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  RankedTensorType inTy = getInput().getType();
  if (failed(verifyAxis(*this, getChannelAxis(), inTy.getRank(),
                        "channel_axis")))
    return failure();
  int64_t axis = normalizeAxis(getChannelAxis(), inTy.getRank());
  auto paramTy = cast<RankedTensorType>(getScale().getType());
  if (paramTy.getElementType() != inTy.getElementType())
    return emitOpError() << "parameter element type must match the input's";
  if (!compatibleDim(paramTy.getDimSize(0), inTy.getDimSize(axis)))
    return emitOpError() << "parameters have " << paramTy.getDimSize(0)
                         << " elements but the input has "
                         << inTy.getDimSize(axis) << " channels on axis "
                         << axis;
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError() << "attribute 'epsilon' must be non-negative";
  return success();
}

LogicalResult Conv2DOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  auto inTy = cast<RankedTensorType>(getInput().getType());
  auto wTy = cast<RankedTensorType>(getWeight().getType());
  auto bTy = cast<RankedTensorType>(getBias().getType());
  auto outTy = cast<RankedTensorType>(getOutput().getType());
  if (getPad().size() != 4)
    return emitOpError() << "attribute 'pad' must have 4 values [top, bottom, "
                            "left, right], got "
                         << getPad().size();
  if (getStride().size() != 2 || getDilation().size() != 2)
    return emitOpError()
           << "attributes 'stride' and 'dilation' must have 2 values each";
  if (llvm::any_of(getPad(), [](int64_t p) { return p < 0; }))
    return emitOpError() << "attribute 'pad' must be non-negative";
  if (llvm::any_of(getStride(), [](int64_t s) { return s < 1; }))
    return emitOpError() << "attribute 'stride' must be positive";
  if (llvm::any_of(getDilation(), [](int64_t d) { return d < 1; }))
    return emitOpError() << "attribute 'dilation' must be positive";
  int64_t groups = static_cast<int64_t>(getGroups());
  if (groups < 1)
    return emitOpError() << "attribute 'groups' must be positive, got "
                         << groups;
  if (inTy.getElementType() != wTy.getElementType() ||
      inTy.getElementType() != bTy.getElementType() ||
      inTy.getElementType() != outTy.getElementType())
    return emitOpError() << "input, weight, bias and result element types "
                            "must match";
  int64_t c = inTy.getDimSize(3), f = wTy.getDimSize(0);
  if (!ShapedType::isDynamic(c) && c % groups != 0)
    return emitOpError() << "input channels (" << c
                         << ") are not divisible by 'groups' (" << groups
                         << ")";
  if (!ShapedType::isDynamic(f) && f % groups != 0)
    return emitOpError() << "output channels (" << f
                         << ") are not divisible by 'groups' (" << groups
                         << ")";
  if (!ShapedType::isDynamic(c) &&
      !compatibleDim(wTy.getDimSize(3), c / groups))
    return emitOpError() << "weight input-channel dim is "
                         << wTy.getDimSize(3) << ", expected C/groups = "
                         << c / groups;
  if (!compatibleDim(bTy.getDimSize(0), f))
    return emitOpError() << "bias has " << bTy.getDimSize(0)
                         << " elements, expected " << f;
  // Result shape.
  SmallVector<int64_t> expected = {inTy.getDimSize(0), 0, 0, f};
  for (int i = 0; i < 2; ++i) {
    int64_t in = inTy.getDimSize(1 + i), k = wTy.getDimSize(1 + i);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      expected[1 + i] = ShapedType::kDynamic;
      continue;
    }
    // Attributes are user input: compute in checked arithmetic.
    std::optional<int64_t> reach = llvm::checkedMul(getDilation()[i], k - 1);
    std::optional<int64_t> padded = llvm::checkedAdd(in, getPad()[2 * i]);
    if (padded)
      padded = llvm::checkedAdd(*padded, getPad()[2 * i + 1]);
    if (!reach || !padded)
      return emitOpError() << "padding or dilation on spatial dim " << i
                           << " overflows 64-bit arithmetic";
    int64_t span = *padded - *reach - 1;
    if (span < 0)
      return emitOpError() << "kernel (with dilation) is larger than the "
                              "padded input on spatial dim "
                           << i;
    expected[1 + i] = span / getStride()[i] + 1;
  }
  for (int i = 0; i < 4; ++i)
    if (!compatibleDim(expected[i], outTy.getDimSize(i)))
      return emitOpError() << "result type " << outTy
                           << " does not match the inferred shape ["
                           << ArrayRef<int64_t>(expected) << "]";
  return success();
}

LogicalResult TopKOp::verify() {
  auto inTy = getInput().getType();
  if (failed(verifyNonEmpty(*this)) ||
      failed(verifyAxis(*this, getAxis(), inTy.getRank())))
    return failure();
  int64_t axis = getNormalizedAxis(), n = inTy.getDimSize(axis);
  if (getK() < 1 || (!ShapedType::isDynamic(n) && getK() > n))
    return emitOpError() << "k = " << getK() << " is outside [1, "
                         << (ShapedType::isDynamic(n) ? std::string("?")
                                                      : std::to_string(n))
                         << "]";
  auto valTy = cast<RankedTensorType>(getValues().getType());
  auto idxTy = getIndices().getType();
  if (valTy.getElementType() != inTy.getElementType())
    return emitOpError() << "values must have the input's element type";
  for (RankedTensorType t : {valTy, idxTy}) {
    if (t.getRank() != inTy.getRank())
      return emitOpError() << "results must have the input's rank";
    for (int64_t d = 0; d < inTy.getRank(); ++d) {
      int64_t want = d == axis ? getK() : inTy.getDimSize(d);
      if (!compatibleDim(want, t.getDimSize(d)))
        return emitOpError() << "result dim " << d << " is " << t.getDimSize(d)
                             << ", expected " << want;
    }
  }
  return success();
}

LogicalResult ReduceMeanOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  auto inTy = cast<RankedTensorType>(getInput().getType());
  auto outTy = cast<RankedTensorType>(getOutput().getType());
  if (failed(verifyAxis(*this, getAxis(), inTy.getRank())))
    return failure();
  int64_t axis = normalizeAxis(getAxis(), inTy.getRank());
  if (outTy.getRank() != inTy.getRank() ||
      outTy.getElementType() != inTy.getElementType())
    return emitOpError() << "result must keep the input's rank and element "
                            "type";
  for (int64_t i = 0; i < inTy.getRank(); ++i) {
    int64_t want = i == axis ? 1 : inTy.getDimSize(i);
    if (!compatibleDim(want, outTy.getDimSize(i)))
      return emitOpError() << "result dim " << i << " is "
                           << outTy.getDimSize(i) << ", expected " << want;
  }
  return success();
}

#define GET_OP_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Random values
//===----------------------------------------------------------------------===//

/// One size per dynamic dimension of the result, and finite parameters.
static LogicalResult verifyRandom(Operation *op, ValueRange dynamicSizes,
                                  Type result, StringRef firstName,
                                  double first, StringRef secondName,
                                  double second) {
  auto type = cast<RankedTensorType>(result);
  if (int64_t(dynamicSizes.size()) != type.getNumDynamicDims())
    return op->emitOpError()
           << "needs one size per dynamic dimension of " << type << " ("
           << type.getNumDynamicDims() << "), got " << dynamicSizes.size();
  if (!std::isfinite(first) || !std::isfinite(second))
    return op->emitOpError()
           << firstName << " and " << secondName << " must be finite, got "
           << first << " and " << second;
  return success();
}

LogicalResult RandomUniformOp::verify() {
  if (failed(verifyRandom(*this, getDynamicSizes(), getType(), "low",
                          getLow().convertToDouble(), "high",
                          getHigh().convertToDouble())))
    return failure();
  if (getLow().convertToDouble() > getHigh().convertToDouble())
    return emitOpError() << "low (" << getLow().convertToDouble()
                         << ") must not exceed high ("
                         << getHigh().convertToDouble() << ")";
  return success();
}

LogicalResult RandomNormalOp::verify() {
  if (failed(verifyRandom(*this, getDynamicSizes(), getType(), "mean",
                          getMean().convertToDouble(), "scale",
                          getScale().convertToDouble())))
    return failure();
  if (getScale().convertToDouble() < 0.0)
    return emitOpError() << "scale (" << getScale().convertToDouble()
                         << ") must not be negative";
  return success();
}

/// Seeded draws are a function of the seed and the shape (pure); unseeded
/// ones advance the artifact's counter, so they must neither be merged
/// nor moved across each other.
template <typename OpT>
static void randomEffects(
    OpT op, SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                &effects) {
  if (op.getSeed())
    return;
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

void RandomUniformOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  randomEffects(*this, effects);
}

void RandomNormalOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  randomEffects(*this, effects);
}
