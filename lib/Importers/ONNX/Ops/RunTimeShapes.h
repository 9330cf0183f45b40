//===- RunTimeShapes.h - ONNX ops whose shape operands are data -*- C++ -*-===//
//
// Reshape's `shape`, Unsqueeze's `axes`, Expand's `shape`, Tile's
// `repeats`, ConstantOfShape's input and Range's operands may be graph
// inputs: the output's sizes then follow from the data. These converters
// compute them at run time (index arithmetic on the operand's elements),
// give the output dynamic dimensions, and check the operand where ONNX
// makes a bad value an error (tessel.require: the call fails with a shape
// mismatch, the code after stays in bounds). The entry returns such an
// output with its sizes (artifact ABI v6). Each converter is the run-time
// half of its op in Shape.cpp, which calls it when the operand is not a
// constant.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_OPS_RUNTIMESHAPES_H
#define TESSEL_LIB_IMPORTERS_ONNX_OPS_RUNTIMESHAPES_H

#include "Common.h"
#include "IndexMath.h"

namespace mlir::tessel::onnx_import {

/// Whether input `i` is present and not a compile-time constant: its
/// values (a shape, axes, repeats) are known only at run time.
bool isRunTimeOperand(NodeContext &ctx, unsigned i);

/// The scalar integer input `i` as an index in [lo, hi], read at run time:
/// a value outside fails the call (shape mismatch) and stands in as `lo`.
Value checkedRunTimeSize(NodeContext &ctx, unsigned i, int64_t lo, int64_t hi);

/// The integer scalar input `i` ('what') as an index in [lo, hi]: its value
/// when it is a constant (`staticValue` set; a value outside is a compile
/// error naming it), else read at run time and checked as
/// checkedRunTimeSize does (`staticValue` = ShapedType::kDynamic).
FailureOr<Value> constantOrRunTimeSize(NodeContext &ctx, unsigned i,
                                       StringRef what, int64_t lo, int64_t hi,
                                       int64_t &staticValue);

/// `sizes` where `ok` holds (and each is >= 0, their product at most
/// 2^31); else zeros and a failed call (shape mismatch).
SmallVector<Value> checkedRunTimeSizes(NodeContext &ctx, Value ok,
                                       ArrayRef<Value> sizes);

LogicalResult reshapeAtRunTime(NodeContext &ctx, bool allowZero);
/// Gather along `axis` (normalized) where the data or the indices have
/// run-time sizes: one tensor.generate reading data at each (wrapped)
/// index; an index outside [-dim, dim) fails the call (index out of range)
/// and reads in bounds.
LogicalResult gatherAtRunTime(NodeContext &ctx, int64_t axis);
/// Flatten at `axis` (normalized) of an input with run-time sizes.
LogicalResult flattenAtRunTime(NodeContext &ctx, int64_t axis);
LogicalResult unsqueezeAtRunTime(NodeContext &ctx);
/// Input 0 reshaped to `shape` (static where known) whose run-time sizes
/// are input dims, `source[j]` for each dynamic `shape[j]`: a Squeeze or
/// Unsqueeze of static 1s, which keeps the elements by construction.
LogicalResult reshapeKeepingRunTimeDims(NodeContext &ctx,
                                        ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> source);
/// `x` reshaped (tensor.reshape) to the sizes `dims`, typed `known` (static
/// where known): the caller guarantees the element count.
Value reshapeTo(IndexMath &m, Value x, ArrayRef<Value> dims,
                ArrayRef<int64_t> known);
/// Split along `axis` (of static size) into `sizes` where other dims have
/// run-time sizes: one tensor.extract_slice per output.
LogicalResult splitRunTimeSized(NodeContext &ctx, int64_t axis,
                                ArrayRef<int64_t> sizes);
/// ScatterElements along `axis` (normalized) where the indices and updates
/// have run-time sizes: a loop over them in order (the last of repeated
/// indices wins, or each is combined by `reduction`); an index outside
/// [-dim, dim) fails the call (index out of range).
LogicalResult scatterElementsAtRunTime(NodeContext &ctx, int64_t axis,
                                       StringRef reduction);
LogicalResult squeezeAtRunTime(NodeContext &ctx);
LogicalResult expandAtRunTime(NodeContext &ctx);
LogicalResult tileAtRunTime(NodeContext &ctx);
/// ConstantOfShape of a run-time shape, filled with `value`.
LogicalResult constantOfShapeAtRunTime(NodeContext &ctx, TypedAttr value);
LogicalResult rangeAtRunTime(NodeContext &ctx);
/// A reduction over the axes input 1, read at run time: one case per set of
/// axes (an scf.index_switch on their bit mask, inputs of rank <= 6), each
/// `reduce(axes)` with the reduced dimensions kept as 1s; without
/// `keepDims` the result is reshaped to drop them.
LogicalResult reduceOverRunTimeAxes(
    NodeContext &ctx, bool keepDims,
    function_ref<FailureOr<Value>(ArrayRef<int64_t>)> reduce);
/// Split of input 0 along `axis` by the sizes input 1 holds at run time.
LogicalResult splitAtRunTime(NodeContext &ctx, int64_t axis);
/// Pad (opset 11+) with pads or the constant value read at run time;
/// `mode` is "constant", "edge" or "reflect".
LogicalResult padAtRunTime(NodeContext &ctx, StringRef mode);
/// Slice (opset 10+) with starts, ends, axes or steps read at run time.
LogicalResult sliceAtRunTime(NodeContext &ctx);
/// OneHot with a run-time depth; `axis` already normalized.
LogicalResult oneHotAtRunTime(NodeContext &ctx, int64_t axis);
/// Unique (with or without an axis, sorted or in order of first
/// occurrence): its outputs Y, indices and counts have run-time sizes.
LogicalResult convertUnique(NodeContext &ctx);
/// NonMaxSuppression: the selected (batch, class, box) triples, however
/// many.
LogicalResult convertNonMaxSuppression(NodeContext &ctx);
/// MaxUnpool: the values scattered to their (flat) indices in zeros of
/// the default size or of output_shape (read at run time).
LogicalResult convertMaxUnpool(NodeContext &ctx);
/// NonZero: the indices of the nonzero elements, however many.
LogicalResult convertNonZero(NodeContext &ctx);
/// Compress with a run-time condition (`axis` absent: the flattened input).
LogicalResult compressAtRunTime(NodeContext &ctx, std::optional<int64_t> axis);

} // namespace mlir::tessel::onnx_import

#endif // TESSEL_LIB_IMPORTERS_ONNX_OPS_RUNTIMESHAPES_H
