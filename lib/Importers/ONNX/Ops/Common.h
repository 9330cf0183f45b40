//===- Common.h - Helpers shared by the ONNX op converters ------*- C++ -*-===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_OPS_COMMON_H
#define TESSEL_LIB_IMPORTERS_ONNX_OPS_COMMON_H

#include "../NodeContext.h"
#include "tessel/Dialect/Tessel/Utils/SizeNames.h"

namespace mlir::tessel::onnx_import {

// Run-time sizes by name (tessel/Dialect/Tessel/Utils/SizeNames.h).
using mlir::tessel::kSizeNamesAttr;
using mlir::tessel::sizeNameOf;

// Every value the importer makes is a ranked tensor.
inline RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}
inline Type elemOf(Value v) { return typeOf(v).getElementType(); }

/// A constant `v` of `x`'s element type and rank, every dim 1 (a
/// broadcastable scalar).
Value scalarLike(NodeContext &ctx, Value x, double v);

/// A float tensor clamped to [lo, hi] (tosa.clamp).
Value clampF(NodeContext &ctx, Value x, double lo, double hi);

//===--- Registration (one function per Ops/*.cpp file) -------------------===//
void registerElementwiseConverters(ConverterMap &map);
void registerMiscConverters(ConverterMap &map);
void registerRandomConverters(ConverterMap &map);
void registerConvPoolConverters(ConverterMap &map);
void registerMatMulConverters(ConverterMap &map);
void registerNormalizationConverters(ConverterMap &map);
void registerShapeConverters(ConverterMap &map);
void registerReductionConverters(ConverterMap &map);
void registerLossConverters(ConverterMap &map);
void registerRecurrentConverters(ConverterMap &map);
void registerQuantizationConverters(ConverterMap &map);
void registerGridSampleConverters(ConverterMap &map);
void registerSignalConverters(ConverterMap &map);
void registerRoiAlignConverters(ConverterMap &map);
void registerTfIdfConverters(ConverterMap &map);

//===--- Types and axes ----------------------------------------------------===//
/// `axis` normalized into [0, rank) (ONNX allows [-rank, rank)); emits an
/// error naming `attrName` when out of range.
FailureOr<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis, int64_t rank,
                                 StringRef attrName = "axis");
/// Reads the axis attribute `name` (default `dflt`) and normalizes it for
/// `rank`, with diagnostics naming the attribute.
FailureOr<int64_t> readAxis(NodeContext &ctx, StringRef name, int64_t dflt,
                            int64_t rank);
RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape);
/// Largest element count Tessel builds a tensor with (2^31): shapes come
/// from attributes and constants, so they are checked before use.
constexpr int64_t kMaxElements = int64_t(1) << 31;
/// Fails with a diagnostic naming `what` unless every dim is >= 0 and the
/// element count is at most kMaxElements.
LogicalResult checkShape(NodeContext &ctx, ArrayRef<int64_t> shape,
                         StringRef what);
RankedTensorType withElementType(RankedTensorType t, Type elem);
int64_t numElements(ArrayRef<int64_t> shape);
/// The element count of `shape`, or ShapedType::kDynamic if a dim is.
int64_t staticNumElements(ArrayRef<int64_t> shape);

//===--- Broadcasting (numpy rules, as every ONNX broadcasting op) ---------===//
/// Reshapes `v` to `rank` by prepending size-1 dims.
Value expandRank(NodeContext &ctx, Value v, int64_t rank);
/// The numpy broadcast shape of `a` and `b`, or an error on the node.
FailureOr<SmallVector<int64_t>> broadcastShape(NodeContext &ctx,
                                               ArrayRef<int64_t> a,
                                               ArrayRef<int64_t> b);
/// Both values expanded to a common rank (TOSA broadcasts size-1 dims of
/// equal-rank operands itself).
FailureOr<std::pair<Value, Value>> equalizeRanks(NodeContext &ctx, Value a,
                                                 Value b);
/// `v` materialized at `shape` (numpy broadcast), e.g. for Expand.
Value broadcastTo(NodeContext &ctx, Value v, ArrayRef<int64_t> shape);

//===--- Layout --------------------------------------------------------------===//
/// NCHW -> NHWC and back (TOSA convolutions and pooling are NHWC).
Value toNHWC(NodeContext &ctx, Value nchw);
Value toNCHW(NodeContext &ctx, Value nhwc);

//===--- Constants -----------------------------------------------------------===//
/// A constant of `type` filled with `value` (float or integer element type).
Value splatConstant(NodeContext &ctx, RankedTensorType type, double value);
/// Values of a constant attribute as int64 / double.
SmallVector<int64_t> toInts(DenseElementsAttr attr);

/// The elements of the small integer tensor `v` known at compile time, in
/// row-major order (nullopt where known only at run time), through what the
/// converters build for shape arithmetic on run-time sizes: constants,
/// `tensor.from_elements` of sizes (Shape of a partly static tensor),
/// reshapes, casts and axis-0 concatenations. nullopt for anything else.
/// With `names`, also each run-time entry's symbolic name where known (empty
/// otherwise): the `tessel.size_names` a Shape converter puts on its
/// tensor.from_elements (the input's ONNX dim names), or a graph input's
/// named dimension read with tensor.dim.
std::optional<SmallVector<std::optional<int64_t>>>
knownInts(Value v, SmallVectorImpl<std::string> *names = nullptr);

SmallVector<double> toDoubles(DenseElementsAttr attr);
/// An attribute of `type` holding `values` (converted to its element type).
DenseElementsAttr intsAttr(RankedTensorType type, ArrayRef<int64_t> values);
DenseElementsAttr doublesAttr(RankedTensorType type, ArrayRef<double> values);

//===--- Scalars -----------------------------------------------------------===//
/// An index value as an f64 (through i64): the loop positions the
/// run-time formulas (Range, windows, Resize, DFT, RoiAlign) compute with.
Value indexToF64(OpBuilder &b, Location loc, Value index);

//===--- Indices ----------------------------------------------------------===//
/// An i32 tensor of `indices` with negative entries wrapped by `dim`
/// (ONNX allows [-dim, dim)). Unless `checked` is false (OneHot, where an
/// index out of range selects nothing), an index out of [-dim, dim) fails
/// the call at run time (tessel.check_indices, on the indices as given:
/// before the cast to i32, which could wrap a 64-bit index into range).
Value wrapIndices(NodeContext &ctx, Value indices, int64_t dim,
                  bool checked = true);

//===--- Unsigned integers ------------------------------------------------===//
/// Maps every element of `x` through `fn` into a tensor of `outElem`, one
/// scalar at a time. For unsigned integer tensors: arith rejects them, and
/// the tensor-level casts (tosa.cast, tensor.bitcast) that reinterpret them
/// as signless do not bufferize, whereas scalar casts inside tensor.generate
/// lower fine (ui8 and i8 are both i8 in LLVM).
Value mapScalars(NodeContext &ctx, Value x, Type outElem,
                 function_ref<Value(OpBuilder &, Location, Value)> fn);
/// A scalar with its integer bits reinterpreted as type `to`.
Value reinterpret(OpBuilder &b, Location loc, Value v, Type to);
/// Element-wise ONNX Cast of a tensor (any supported types, unsigned too).
Value castValue(NodeContext &ctx, Value x, Type to);
/// One element cast with ONNX/C semantics; unsigned types are handled
/// through their signless bit patterns.
Value castScalar(OpBuilder &b, Location loc, Value e, Type from, Type to);
/// Runs `convert` with every unsigned input zero-extended (u8 and u16 to
/// i32, u32 to i64) and narrows each output that came back widened to the
/// unsigned type again: TOSA and arith have no unsigned forms, and for the
/// integer ops that use this (arithmetic wraps modulo 2^w in the low bits;
/// compare, min/max, div, mod and pooling see the true non-negative
/// values) the result is exactly the unsigned one. u64 has no wider signed
/// type: it is taken as the same bits in i64 by the ops for which that is
/// exact (wrapping arithmetic, bitwise ops, equality, logical shifts), with
/// the sign bit flipped by those that order values (max, min, compare,
/// clip, pooling), and left as it is for Div and Mod, which divide it
/// unsigned themselves.
LogicalResult convertViaSignless(NodeContext &ctx, Converter convert);

} // namespace mlir::tessel::onnx_import

#endif
