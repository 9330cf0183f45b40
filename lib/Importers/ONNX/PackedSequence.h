//===- PackedSequence.h - ONNX sequences of run-time length -----*- C++ -*-===//
//
// A sequence whose length is known only at run time lives in the IR packed
// (SequenceValue::packed): `sizes`, tensor<?x?xi64> with one row per
// element (its shape; rows as wide as the highest rank, a lower-rank
// element's padded in front with -1), and `data`, tensor<?xT> with the
// elements' contents one after another, row-major. That is also how a sequence crosses the
// artifact ABI (docs/artifact-abi.md, parts), so a graph's sequence inputs
// and outputs need no conversion. These helpers build the index arithmetic
// (scf.for over the rows) and the slices each sequence op needs.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_PACKEDSEQUENCE_H
#define TESSEL_LIB_IMPORTERS_ONNX_PACKEDSEQUENCE_H

#include "NodeContext.h"

namespace mlir::tessel::onnx_import {

/// tensor<?x?xi64>: the type of a packed sequence's sizes.
RankedTensorType packedSizesType(MLIRContext *context);

/// The number of elements of packed `s` (index).
Value packedLength(OpBuilder &b, Location loc, const SequenceValue &s);

/// `s` in packed form (itself when it already is); tensors of several
/// ranks make a sequence of unknown rank, their rows padded.
FailureOr<std::shared_ptr<const SequenceValue>>
packSequence(OpBuilder &b, Location loc,
             std::shared_ptr<const SequenceValue> s);

/// A graph input's packed sequence, checked: where the sizes are negative
/// or their element counts do not add up to the data's length, the call
/// fails (shape mismatch) and every element is empty, so reads stay in
/// bounds.
std::shared_ptr<const SequenceValue>
checkedPackedInput(OpBuilder &b, Location loc, Type elementType, int64_t rank,
                   Value sizes, Value data);

/// Element `i` (an index) of packed `s`, a tensor of rank `s.rank` (which
/// must be known) with run-time sizes: the last `s.rank` columns of its
/// row. Where `ok` (i1) is false, `i` is not read and the result is empty;
/// `ok` turns false too where the element is not of that rank.
Value unpackElement(OpBuilder &b, Location loc, const SequenceValue &s,
                    Value i, Value &ok);

/// Packed `s` with tensor `t` inserted before element `i` (an index in
/// [0, length]). The rows widen to the higher of their width and `t`'s
/// rank; the result's rank is `t`'s where `s` is empty or of that rank,
/// else unknown.
std::shared_ptr<const SequenceValue> insertPacked(OpBuilder &b, Location loc,
                                                  const SequenceValue &s,
                                                  Value t, Value i);

/// An ONNX position (an integer scalar tensor) into a packed sequence of
/// `length` elements as an index in range: ONNX's [-length, length - 1], or
/// [-length, length] with `endOk`, negative ones wrapped. `ok` says whether
/// it was in range; where it was not, the result is 0 (or `length` with
/// `endOk`).
Value packedPosition(OpBuilder &b, Location loc, Value position, Value length,
                     bool endOk, Value &ok);

/// The tensors `v` is made of, in the order of its ABI parts: a tensor
/// itself; a sequence its sizes and data (packed here if it is a list); an
/// optional its flag, then its value's parts. Control flow carries and
/// yields these.
FailureOr<SmallVector<Value>> valueParts(OpBuilder &b, Location loc,
                                         const TensorValue &v);

/// A value of `like`'s kind made of the front of `parts` (which it drops):
/// valueParts' inverse. Its sequences have `like`'s element ranks.
TensorValue valueFromParts(const TensorValue &like, ValueRange &parts);

/// `a`, with the element rank of each sequence that `b` has of another
/// rank made unknown: the kind of a value that is `a` or `b` (If's
/// branches, a loop's entry and body). Fails where their kinds differ (a
/// tensor and a sequence, sequences of other element types).
FailureOr<TensorValue> mergeKinds(const TensorValue &a, const TensorValue &b);

/// "a tensor", "a sequence", "an optional".
const char *kindName(const TensorValue &v);

} // namespace mlir::tessel::onnx_import

#endif
