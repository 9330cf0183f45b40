//===- TfIdf.cpp - ONNX TfIdfVectorizer -----------------------------------===//
//
// TfIdfVectorizer (opset 9) over integer tokens. Each output coordinate o
// counts, in a row, the pool n-grams that ngram_indexes maps to o, counted
// as ONNX Runtime (the runtime the ONNX test data and the converters follow)
// counts them: a 1-gram once per position; an n-gram (n >= 2) once per start
// position and skip distance d = 1 .. max_skip_count + 1, its items d apart.
// Only n-grams of a length in [min_gram_length, max_gram_length] count.
// Weighting: TF gives the count, IDF weights[o] where the count is nonzero,
// TFIDF count * weights[o] (weights default to 1 and, as in ONNX Runtime,
// are indexed by output coordinate). Tokens are int32 or int64; string pools
// are rejected (Tessel has no string tensors).
//
// The output is one tensor.generate: per (row, o) loops over the n-grams of
// o (a compressed table built here), skip distances and start positions, so
// the work is O(rows * pool * skips * C * n) with no intermediate tensors.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

/// The n-grams each output coordinate counts, as compressed rows: those of
/// coordinate o are first[o] .. first[o + 1] - 1, each with its length and
/// its offset into pool_int64s.
struct NgramTable {
  SmallVector<int64_t> first, length, offset;
};

/// Reads ngram_counts over the pool, keeping the n-grams of a counted
/// length; fails with a diagnostic on an inconsistent pool.
FailureOr<NgramTable> buildTable(NodeContext &ctx, ArrayRef<int64_t> counts,
                                 ArrayRef<int64_t> indexes, int64_t poolSize,
                                 int64_t minN, int64_t maxN, int64_t outSize) {
  SmallVector<SmallVector<std::pair<int64_t, int64_t>>> byOutput(outSize);
  int64_t id = 0;
  for (size_t g = 0; g < counts.size(); ++g) {
    int64_t n = g + 1;
    int64_t begin = counts[g];
    int64_t end = g + 1 < counts.size() ? counts[g + 1] : poolSize;
    if (begin < 0 || end < begin || end > poolSize || (end - begin) % n != 0) {
      (void)ctx.attrError("ngram_counts",
                          "does not split the pool into whole " +
                              std::to_string(n) + "-grams (items " +
                              std::to_string(begin) + " to " +
                              std::to_string(end) + " of " +
                              std::to_string(poolSize) + ")");
      return failure();
    }
    for (int64_t at = begin; at < end; at += n, ++id) {
      if (id >= static_cast<int64_t>(indexes.size())) {
        (void)ctx.attrError("ngram_indexes",
                            "has " + std::to_string(indexes.size()) +
                                " entries, fewer than the pool's n-grams");
        return failure();
      }
      if (n >= minN && n <= maxN)
        byOutput[indexes[id]].push_back({n, at});
    }
  }
  NgramTable t;
  t.first.push_back(0);
  for (auto &grams : byOutput) {
    for (auto [n, at] : grams) {
      t.length.push_back(n);
      t.offset.push_back(at);
    }
    t.first.push_back(t.length.size());
  }
  return t;
}

Value indexTable(NodeContext &ctx, ArrayRef<int64_t> values) {
  // Never empty: a pool with nothing counted still indexes a 1-element table
  // (no row of `first` reaches it).
  SmallVector<int64_t> v(values);
  if (v.empty())
    v.push_back(0);
  auto type = RankedTensorType::get({static_cast<int64_t>(v.size())},
                                    ctx.builder().getI64Type());
  return ctx.materializeConstant(DenseElementsAttr::get(type, ArrayRef(v)));
}

LogicalResult convertTfIdfVectorizer(NodeContext &ctx) {
  RankedTensorType xType = ctx.inputType(0);
  if (!xType || (xType.getRank() != 1 && xType.getRank() != 2) ||
      !(xType.getElementType().isSignlessInteger(32) ||
        xType.getElementType().isSignlessInteger(64)))
    return ctx.emitError() << "input must be an int32 or int64 tensor [C] or "
                              "[N, C]";
  FailureOr<std::string> mode = ctx.stringAttr("mode");
  FailureOr<int64_t> minN = ctx.intAttr("min_gram_length");
  FailureOr<int64_t> maxN = ctx.intAttr("max_gram_length");
  FailureOr<int64_t> maxSkip = ctx.intAttr("max_skip_count");
  FailureOr<SmallVector<int64_t>> counts = ctx.intsAttr("ngram_counts");
  FailureOr<SmallVector<int64_t>> indexes = ctx.intsAttr("ngram_indexes");
  if (failed(mode) || failed(minN) || failed(maxN) || failed(maxSkip) ||
      failed(counts) || failed(indexes))
    return failure();
  if (ctx.hasAttr("pool_strings"))
    return ctx.unsupported("TfIdfVectorizer over strings (pool_strings)");
  FailureOr<SmallVector<int64_t>> pool = ctx.intsAttr("pool_int64s");
  FailureOr<SmallVector<float>> weights =
      ctx.floatsAttr("weights", SmallVector<float>{});
  if (failed(pool) || failed(weights))
    return failure();
  if (*mode != "TF" && *mode != "IDF" && *mode != "TFIDF")
    return ctx.attrError("mode", "= '" + *mode + "' must be TF, IDF or TFIDF");
  if (*minN < 1)
    return ctx.attrError("min_gram_length",
                         "= " + std::to_string(*minN) + " must be positive");
  if (*maxN < *minN || *maxN > static_cast<int64_t>(counts->size()))
    return ctx.attrError("max_gram_length",
                         "= " + std::to_string(*maxN) +
                             " must lie in [min_gram_length, the length of "
                             "ngram_counts]");
  if (*maxSkip < 0)
    return ctx.attrError("max_skip_count", "= " + std::to_string(*maxSkip) +
                                               " must not be negative");
  if (indexes->empty() || llvm::any_of(*indexes, [](int64_t i) { return i < 0; }))
    return ctx.attrError("ngram_indexes", "must be non-empty and non-negative");
  int64_t outSize = *std::max_element(indexes->begin(), indexes->end()) + 1;
  if (!weights->empty() && static_cast<int64_t>(weights->size()) < outSize)
    return ctx.attrError("weights",
                         "has " + std::to_string(weights->size()) +
                             " entries; it needs one per output coordinate (" +
                             std::to_string(outSize) + ")");
  FailureOr<NgramTable> table = buildTable(ctx, *counts, *indexes, pool->size(),
                                           *minN, *maxN, outSize);
  if (failed(table))
    return failure();

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value x = ctx.input(0);
  Value first = indexTable(ctx, table->first);
  Value length = indexTable(ctx, table->length);
  Value offset = indexTable(ctx, table->offset);
  Value poolValues = indexTable(ctx, *pool);
  SmallVector<float> w(weights->begin(), weights->end());
  if (w.empty())
    w.assign(outSize, 1.0f);
  Type f32 = b.getF32Type();
  Value weightValues = ctx.materializeConstant(DenseElementsAttr::get(
      RankedTensorType::get({outSize}, f32), ArrayRef(w)));

  bool batched = xType.getRank() == 2;
  SmallVector<int64_t> outShape;
  SmallVector<Value> dynSizes;
  if (batched) {
    outShape.push_back(xType.getDimSize(0));
    if (xType.isDynamicDim(0))
      dynSizes.push_back(tensor::DimOp::create(b, loc, x, 0));
  }
  outShape.push_back(outSize);
  Value columns = tensor::DimOp::create(b, loc, x, xType.getRank() - 1);
  int64_t skipDistances = *maxSkip + 1;
  auto outType = RankedTensorType::get(outShape, f32);
  std::string modeName = *mode;

  Value out = tensor::GenerateOp::create(
      b, loc, outType, dynSizes,
      [&](OpBuilder &gb, Location l, ValueRange ivs) {
        auto idx = [&](OpBuilder &ob, int64_t v) -> Value {
          return arith::ConstantIndexOp::create(ob, l, v);
        };
        auto read = [&](OpBuilder &ob, Value table, Value at) -> Value {
          Value v = tensor::ExtractOp::create(ob, l, table, ValueRange{at});
          return arith::IndexCastOp::create(ob, l, ob.getIndexType(), v);
        };
        Value row = batched ? ivs[0] : Value();
        Value o = ivs.back();
        Value zero64 = arith::ConstantIntOp::create(gb, l, gb.getI64Type(), 0);
        Value begin = read(gb, first, o);
        Value end = read(gb, first, arith::AddIOp::create(gb, l, o, idx(gb, 1)));
        auto grams = scf::ForOp::create(
            gb, l, begin, end, idx(gb, 1), ValueRange{zero64},
            [&](OpBuilder &rb, Location, Value r, ValueRange racc) {
              Value n = read(rb, length, r);
              Value at = read(rb, offset, r);
              // 1-grams once per position: one skip distance.
              Value isUnigram = arith::CmpIOp::create(rb, l, arith::CmpIPredicate::eq,
                                                      n, idx(rb, 1));
              Value dLimit = arith::SelectOp::create(rb, l, isUnigram, idx(rb, 2),
                                                     idx(rb, skipDistances + 1));
              Value span = arith::SubIOp::create(rb, l, n, idx(rb, 1));
              auto skips = scf::ForOp::create(
                  rb, l, idx(rb, 1), dLimit, idx(rb, 1), racc,
                  [&](OpBuilder &db, Location, Value d, ValueRange dacc) {
                    // Start positions whose last item d * (n - 1) further
                    // on is inside the row.
                    Value last = arith::MulIOp::create(db, l, d, span);
                    Value starts = arith::MaxSIOp::create(
                        db, l, arith::SubIOp::create(db, l, columns, last),
                        idx(db, 0));
                    auto positions = scf::ForOp::create(
                        db, l, idx(db, 0), starts, idx(db, 1), dacc,
                        [&](OpBuilder &pb, Location, Value i, ValueRange pacc) {
                          auto match = scf::ForOp::create(
                              pb, l, idx(pb, 0), n, idx(pb, 1),
                              ValueRange{arith::ConstantIntOp::create(
                                  pb, l, pb.getI1Type(), 1)},
                              [&](OpBuilder &jb, Location, Value j,
                                  ValueRange all) {
                                Value col = arith::AddIOp::create(
                                    jb, l, i, arith::MulIOp::create(jb, l, d, j));
                                SmallVector<Value> at2{col};
                                if (batched)
                                  at2.insert(at2.begin(), row);
                                Value token =
                                    tensor::ExtractOp::create(jb, l, x, at2);
                                if (!token.getType().isInteger(64))
                                  token = arith::ExtSIOp::create(
                                      jb, l, jb.getI64Type(), token);
                                Value want = tensor::ExtractOp::create(
                                    jb, l, poolValues,
                                    ValueRange{arith::AddIOp::create(jb, l, at, j)});
                                Value eq = arith::CmpIOp::create(
                                    jb, l, arith::CmpIPredicate::eq, token, want);
                                scf::YieldOp::create(
                                    jb, l,
                                    ValueRange{arith::AndIOp::create(jb, l, all[0], eq)});
                              });
                          Value hit = arith::ExtUIOp::create(
                              pb, l, pb.getI64Type(), match.getResult(0));
                          scf::YieldOp::create(
                              pb, l, ValueRange{arith::AddIOp::create(pb, l, pacc[0], hit)});
                        });
                    scf::YieldOp::create(db, l, positions.getResults());
                  });
              scf::YieldOp::create(rb, l, skips.getResults());
            });
        Value count = grams.getResult(0);
        Value tf = arith::SIToFPOp::create(gb, l, f32, count);
        Value weight = tensor::ExtractOp::create(gb, l, weightValues, ValueRange{o});
        Value result = tf;
        if (modeName == "IDF") {
          Value seen = arith::CmpIOp::create(gb, l, arith::CmpIPredicate::sgt,
                                             count, zero64);
          result = arith::SelectOp::create(
              gb, l, seen, weight,
              arith::ConstantOp::create(gb, l, f32, gb.getF32FloatAttr(0)));
        } else if (modeName == "TFIDF") {
          result = arith::MulFOp::create(gb, l, tf, weight);
        }
        tensor::YieldOp::create(gb, l, result);
      });
  ctx.setOutput(0, out);
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerTfIdfConverters(ConverterMap &m) {
  m["TfIdfVectorizer"] = convertTfIdfVectorizer;
}
