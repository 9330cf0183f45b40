//===- MatMul.cpp - ONNX MatMul, Gemm, Einsum converters -------------------===//
//
// Everything lowers to tosa.matmul, which is [B, M, K] x [B, K, N] with equal
// batch sizes: operands are broadcast, transposed and reshaped to fit.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "RunTimeShapes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <map>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

bool isMatMulFloat(Type t) {
  return t.isF32() || t.isF16() || t.isBF16() || t.isF64();
}

LogicalResult checkMatMulTypes(NodeContext &ctx, Value a, Value b) {
  if (elemOf(a) != elemOf(b)) {
    ctx.emitError() << "input element types differ";
    return failure();
  }
  if (!isMatMulFloat(elemOf(a)))
    return ctx.unsupported("matrix multiplication of element type other "
                           "than f32, f16, bf16, f64");
  return success();
}

/// [B, M, K] x [B, K, N]: tosa.matmul, where f16/bf16 accumulate in f32
/// (bf16 must, per TOSA) and round once at the end.
Value matmul3D(NodeContext &ctx, Value a, Value b) {
  Type et = elemOf(a);
  tessel::TosaBuilder &tb = ctx.tosa();
  if (et.isF64()) {
    // tosa.matmul has no f64: [B,M,K,1] * [B,1,K,N] summed over K. It
    // materializes B*M*K*N products, acceptable for the small f64 graphs.
    ArrayRef<int64_t> sa = typeOf(a).getShape(), sb = typeOf(b).getShape();
    Value prod = tb.mul(tb.reshape(a, {sa[0], sa[1], sa[2], 1}),
                        tb.reshape(b, {sb[0], 1, sb[1], sb[2]}));
    return tb.reshape(tb.reduceSum(prod, 2), {sa[0], sa[1], sb[2]});
  }
  Type acc = et.isF32() ? et : ctx.builder().getF32Type();
  auto outTy = RankedTensorType::get(
      {typeOf(a).getDimSize(0), typeOf(a).getDimSize(1),
       typeOf(b).getDimSize(2)},
      acc);
  Value y = tosa::MatMulOp::create(ctx.builder(), ctx.loc(), outTy, a, b,
                                   tb.zeroPoint(et), tb.zeroPoint(et));
  return tb.narrow(y, et);
}

/// Batched MatMul where sizes are known only at run time (a symbolic batch
/// or sequence): A's batch dims fold into its rows when B has none (a
/// linear layer), else A and B must have equal batch dims (attention's
/// [B, h, S, D] x [B, h, D, S]). Sizes that must agree (batch dims, the
/// inner dim) are checked at run time: a mismatch fails the call, the
/// operands then viewed as empty so that nothing reads past them.
/// Reshapes are tensor.reshape of run-time sizes.
FailureOr<Value> batchedMatMulAtRunTime(NodeContext &ctx, Value a, Value b) {
  RankedTensorType at = typeOf(a), bt = typeOf(b);
  int64_t ra = at.getRank(), rb = bt.getRank();
  int64_t ka = at.getDimSize(ra - 1), kb = bt.getDimSize(rb - 2);
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb) {
    ctx.emitError() << "inner dimensions differ: " << ka << " and " << kb;
    return failure();
  }
  IndexMath m(ctx);
  auto product = [&](Value x, int64_t from, int64_t to) {
    Value p = from < to ? m.dim(x, from) : m.c(1);
    for (int64_t d = from + 1; d < to; ++d)
      p = m.mul(p, m.dim(x, d));
    return p;
  };
  int64_t k = ShapedType::isDynamic(ka) ? kb : ka;
  int64_t n = bt.getDimSize(rb - 1), rowsA = at.getDimSize(ra - 2);
  Value kV = m.dim(a, ra - 1), nV = m.dim(b, rb - 1);
  Value ok = m.eq(kV, m.dim(b, rb - 2));
  bool checked = ShapedType::isDynamic(ka) || ShapedType::isDynamic(kb);
  bool sharedB = llvm::all_of(bt.getShape().drop_back(2),
                              [](int64_t d) { return d == 1; });
  if (!sharedB) {
    if (ra != rb)
      return FailureOr<Value>(ctx.unsupported(
          "a MatMul broadcasting batch dims of different ranks with sizes "
          "known only at run time"));
    for (int64_t d = 0; d < ra - 2; ++d) {
      int64_t sa = at.getDimSize(d), sb = bt.getDimSize(d);
      if (!ShapedType::isDynamic(sa) && !ShapedType::isDynamic(sb) && sa != sb)
        return FailureOr<Value>(ctx.unsupported(
            "a MatMul broadcasting batch dims with sizes known only at run "
            "time"));
      checked |= ShapedType::isDynamic(sa) || ShapedType::isDynamic(sb);
      ok = m.both(ok, m.eq(m.dim(a, d), m.dim(b, d)));
    }
  }
  // The leading size of every view is 0 where a check fails; it is typed
  // dynamic wherever a check is made.
  auto lead = [&](Value size, int64_t known) {
    return std::make_pair(m.select(ok, size, m.c(0)),
                          checked ? ShapedType::kDynamic : known);
  };
  SmallVector<Value> outDims;
  SmallVector<int64_t> outShape;
  Value y;
  if (sharedB) {
    // One big matmul: [1, batch * M, K] x [1, K, N].
    auto [rows, rowsKnown] =
        lead(product(a, 0, ra - 1), staticNumElements(at.getShape().drop_back()));
    Value a3 = reshapeTo(m, a, {m.c(1), rows, kV}, {1, rowsKnown, k});
    Value b3 = reshapeTo(m, b, {m.c(1), m.dim(b, rb - 2), nV}, {1, k, n});
    y = matmul3D(ctx, a3, b3);
    for (int64_t d = 0; d < ra - 1; ++d) {
      outDims.push_back(m.dim(a, d));
      outShape.push_back(at.getDimSize(d));
    }
  } else {
    // Each operand's view is sized by its own dims (equal where `ok`
    // holds): a rank-3 operand's is then its sizes or empty, which
    // tessel-fuse-attention recognizes as a checked identity.
    int64_t batch = checked ? ShapedType::kDynamic
                            : staticNumElements(at.getShape().drop_back(2));
    Value a3 = reshapeTo(m, a,
                         {lead(product(a, 0, ra - 2), batch).first,
                          m.dim(a, ra - 2), kV},
                         {batch, rowsA, k});
    Value b3 = reshapeTo(m, b,
                         {lead(product(b, 0, rb - 2), batch).first,
                          m.dim(b, rb - 2), nV},
                         {batch, k, n});
    y = matmul3D(ctx, a3, b3);
    // Rank 3: the product has the result's sizes, and is empty where a
    // check failed; only the check is left to make.
    if (ra == 3)
      return required(m, ok, y, y, TESSEL_ENTRY_SHAPE_MISMATCH);
    for (int64_t d = 0; d < ra - 2; ++d) {
      int64_t sa = at.getDimSize(d);
      outDims.push_back(m.dim(a, d));
      outShape.push_back(ShapedType::isDynamic(sa) ? bt.getDimSize(d) : sa);
    }
    outDims.push_back(m.dim(a, ra - 2));
    outShape.push_back(rowsA);
  }
  if (!outDims.empty()) {
    std::tie(outDims.front(), outShape.front()) =
        lead(outDims.front(), outShape.front());
  }
  outDims.push_back(nV);
  outShape.push_back(n);
  Value out = reshapeTo(m, y, outDims, outShape);
  return required(m, ok, out, out, TESSEL_ENTRY_SHAPE_MISMATCH);
}

/// numpy matmul: 1-D operands get a unit M / N that is dropped afterwards;
/// batch dims broadcast.
FailureOr<Value> numpyMatMul(NodeContext &ctx, Value a, Value b) {
  if (failed(checkMatMulTypes(ctx, a, b)))
    return failure();
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t ra = typeOf(a).getRank(), rb = typeOf(b).getRank();
  if (ra == 0 || rb == 0) {
    ctx.emitError() << "MatMul operands must have rank >= 1";
    return failure();
  }
  if ((!typeOf(a).hasStaticShape() || !typeOf(b).hasStaticShape()) &&
      (ra != 2 || rb != 2)) {
    if (ra < 2 || rb < 2)
      return FailureOr<Value>(ctx.unsupported(
          "MatMul of a 1-D operand with sizes known only at run time "
          "(--shape pins a graph input's symbolic dimensions)"));
    return batchedMatMulAtRunTime(ctx, a, b);
  }
  bool dropM = ra == 1, dropN = rb == 1;
  if (dropM)
    a = tb.reshape(a, {1, typeOf(a).getDimSize(0)});
  if (dropN)
    b = tb.reshape(b, {typeOf(b).getDimSize(0), 1});
  ArrayRef<int64_t> sa = typeOf(a).getShape(), sb = typeOf(b).getShape();
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k) {
    ctx.emitError() << "inner dimensions differ: [" << sa << "] x [" << sb
                    << "]";
    return failure();
  }
  auto batch = broadcastShape(ctx, sa.drop_back(2), sb.drop_back(2));
  if (failed(batch))
    return failure();
  int64_t nb = numElements(*batch);
  Value y;
  if (numElements(sb.drop_back(2)) == 1) {
    // B is shared by every batch: fold A's batch into M, one big matmul.
    y = matmul3D(ctx, tb.reshape(a, {1, numElements(sa.drop_back(2)) * m, k}),
                 tb.reshape(b, {1, k, n}));
  } else {
    SmallVector<int64_t> fullA(*batch), fullB(*batch);
    fullA.append({m, k});
    fullB.append({k, n});
    y = matmul3D(ctx, tb.reshape(broadcastTo(ctx, a, fullA), {nb, m, k}),
                 tb.reshape(broadcastTo(ctx, b, fullB), {nb, k, n}));
  }
  SmallVector<int64_t> outShape(*batch);
  if (!dropM)
    outShape.push_back(m);
  if (!dropN)
    outShape.push_back(n);
  return tb.reshape(y, outShape);
}

LogicalResult convertMatMul(NodeContext &ctx) {
  FailureOr<Value> y = numpyMatMul(ctx, ctx.input(0), ctx.input(1));
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

/// Y = alpha * A' B' + beta * C, C broadcast to [M, N] (legacy opsets: only
/// with broadcast = 1, else C must be [M, N]).
LogicalResult convertGemm(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  auto alpha = ctx.floatAttr("alpha", 1.0f);
  auto beta = ctx.floatAttr("beta", 1.0f);
  auto transA = ctx.intAttr("transA", 0);
  auto transB = ctx.intAttr("transB", 0);
  auto broadcast = ctx.intAttr("broadcast", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB) ||
      failed(broadcast) || failed(checkMatMulTypes(ctx, a, b)))
    return failure();
  if (typeOf(a).getRank() != 2 || typeOf(b).getRank() != 2) {
    ctx.emitError() << "expects 2-D A and B";
    return failure();
  }
  tessel::TosaBuilder &tb = ctx.tosa();
  if (*transA)
    a = tb.transpose(a, {1, 0});
  if (*transB)
    b = tb.transpose(b, {1, 0});
  int64_t m = typeOf(a).getDimSize(0), k = typeOf(a).getDimSize(1),
          n = typeOf(b).getDimSize(1);
  if (typeOf(b).getDimSize(0) != k) {
    ctx.emitError() << "inner dimensions differ: A' is " << m << "x" << k
                    << ", B' is " << typeOf(b).getDimSize(0) << "x" << n;
    return failure();
  }
  Type et = elemOf(a);
  Value y = matmul3D(ctx, tb.reshape(a, {1, m, k}), tb.reshape(b, {1, k, n}));
  y = tb.reshape(y, {m, n});
  if (*alpha != 1.0f)
    y = tb.mul(y, tb.scalar(et, *alpha, 2));
  // beta = 0 drops C (as ONNX Runtime does), so C may be anything then.
  if (ctx.hasInput(2) && *beta != 0.0f) {
    Value c = ctx.input(2);
    ArrayRef<int64_t> cs = typeOf(c).getShape();
    bool fits = cs.size() <= 2;
    for (size_t i = 0; fits && i < cs.size(); ++i) {
      int64_t want = i + 2 - cs.size() == 0 ? m : n;
      fits = cs[i] == want || cs[i] == 1;
    }
    if (!fits || (ctx.opset() < 7 && !*broadcast &&
                  cs != ArrayRef<int64_t>{m, n})) {
      ctx.emitError() << "C of shape [" << cs
                      << "] does not broadcast to [" << m << ", " << n << "]";
      return failure();
    }
    if (elemOf(c) != et) {
      ctx.emitError() << "C's element type differs from A's";
      return failure();
    }
    c = expandRank(ctx, c, 2);
    if (*beta != 1.0f)
      c = tb.mul(c, tb.scalar(et, *beta, 2));
    y = tb.add(y, c);
  }
  ctx.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// One operand while contracting: its value and one label per dim.
struct Labeled {
  Value v;
  std::string labels;
};

/// Sums away dim `i` of `t`.
void sumAway(NodeContext &ctx, Labeled &t, size_t i) {
  SmallVector<int64_t> shape(typeOf(t.v).getShape());
  t.v = ctx.tosa().reduceSum(t.v, static_cast<int64_t>(i));
  shape.erase(shape.begin() + i);
  t.v = ctx.tosa().reshape(t.v, shape);
  t.labels.erase(i, 1);
}

/// Takes the diagonal of dims p < q (equal sizes): x * eye, summed over q.
void takeDiagonal(NodeContext &ctx, Labeled &t, size_t p, size_t q) {
  RankedTensorType ty = typeOf(t.v);
  int64_t n = ty.getDimSize(p);
  SmallVector<int64_t> eyeShape(ty.getRank(), 1);
  eyeShape[p] = eyeShape[q] = n;
  SmallVector<double> eye(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    eye[i * n + i] = 1.0;
  Value mask =
      ctx.materializeConstant(doublesAttr(withShape(ty, eyeShape), eye));
  t.v = ctx.tosa().mul(t.v, mask);
  sumAway(ctx, t, q);
}

/// Moves `t`'s dims into the order of `labels` (a permutation of its own).
Value permuteTo(NodeContext &ctx, const Labeled &t, StringRef labels) {
  SmallVector<int32_t> perm;
  for (char c : labels)
    perm.push_back(static_cast<int32_t>(t.labels.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == static_cast<int32_t>(i);
  return identity ? t.v : ctx.tosa().transpose(t.v, perm);
}

/// Einsum with one or two operands: diagonals and labels found nowhere else
/// are summed first; two operands then become one batched matmul
/// ([batch, A-only, contracted] x [batch, contracted, B-only]).
LogicalResult convertEinsum(NodeContext &ctx) {
  auto eqAttr = ctx.stringAttr("equation");
  if (failed(eqAttr))
    return failure();
  std::string eq;
  for (char c : *eqAttr)
    if (c != ' ')
      eq += c;
  auto reject = [&](const Twine &why) {
    return ctx.attrError("equation", "'" + *eqAttr + "' is not supported: " +
                                         why);
  };
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  SmallVector<StringRef> terms;
  StringRef(lhs).split(terms, ',');
  if (terms.size() != ctx.numInputs())
    return reject("it names " + Twine(terms.size()) + " operands, the node "
                  "has " + Twine(ctx.numInputs()));
  if (terms.size() > 2)
    return reject("more than two operands");
  // Expand "..." into labels '0', '1', .. aligned from the right.
  SmallVector<Labeled> ops;
  int64_t ellipsisRank = 0;
  for (auto [i, term] : llvm::enumerate(terms)) {
    int64_t rank = ctx.inputType(i).getRank();
    size_t dots = term.find("...");
    int64_t named = static_cast<int64_t>(term.size()) -
                    (dots == StringRef::npos ? 0 : 3);
    if (dots == StringRef::npos ? named != rank : named > rank)
      return reject("operand " + Twine(i) + " has rank " + Twine(rank));
    if (dots != StringRef::npos)
      ellipsisRank = std::max(ellipsisRank, rank - named);
  }
  auto expand = [&](StringRef term, int64_t rank) {
    size_t dots = term.find("...");
    if (dots == StringRef::npos)
      return term.str();
    int64_t e = rank - (static_cast<int64_t>(term.size()) - 3);
    std::string s = term.substr(0, dots).str();
    for (int64_t j = ellipsisRank - e; j < ellipsisRank; ++j)
      s += static_cast<char>('0' + j);
    return s + term.substr(dots + 3).str();
  };
  for (auto [i, term] : llvm::enumerate(terms))
    ops.push_back({ctx.input(i), expand(term, ctx.inputType(i).getRank())});
  std::string out;
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    size_t dots = rhs.find("...");
    out = rhs.substr(0, dots);
    if (dots != std::string::npos) {
      for (int64_t j = 0; j < ellipsisRank; ++j)
        out += static_cast<char>('0' + j);
      out += rhs.substr(dots + 3);
    }
  } else {
    // Implicit output: broadcast dims, then labels used once, sorted.
    std::map<char, int> count;
    for (const Labeled &t : ops)
      for (char c : t.labels)
        ++count[c];
    for (int64_t j = 0; j < ellipsisRank; ++j)
      out += static_cast<char>('0' + j);
    for (auto [c, k] : count)
      if (k == 1 && !isdigit(c))
        out += c;
  }
  // Label sizes must agree (no broadcasting of size-1 dims).
  std::map<char, int64_t> sizes;
  for (const Labeled &t : ops)
    for (auto [j, c] : llvm::enumerate(t.labels)) {
      int64_t d = typeOf(t.v).getDimSize(j);
      auto [it, inserted] = sizes.insert({c, d});
      if (!inserted && it->second != d)
        return reject(std::string("label '") + c +
                      "' has different sizes (broadcasting)");
    }
  for (char c : out)
    if (!sizes.count(c) || llvm::count(out, c) != 1)
      return reject(std::string("output label '") + c +
                    "' is unknown or repeated");
  for (Labeled &t : ops) {
    if (!isa<FloatType>(elemOf(t.v)))
      return ctx.unsupported("Einsum of non-float tensors");
    // Diagonals: a label repeated within one operand.
    for (size_t p = 0; p < t.labels.size(); ++p)
      for (size_t q = t.labels.size() - 1; q > p; --q)
        if (t.labels[q] == t.labels[p])
          takeDiagonal(ctx, t, p, q);
  }
  // Sum labels that appear in neither the output nor the other operand.
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t j = ops[i].labels.size(); j-- > 0;) {
      char c = ops[i].labels[j];
      bool elsewhere = out.find(c) != std::string::npos ||
                       (ops.size() == 2 &&
                        ops[1 - i].labels.find(c) != std::string::npos);
      if (!elsewhere)
        sumAway(ctx, ops[i], j);
    }
  if (ops.size() == 1) {
    ctx.setOutput(0, permuteTo(ctx, ops[0], out));
    return success();
  }
  Labeled &a = ops[0], &b = ops[1];
  std::string batch, contract, aOnly, bOnly;
  for (char c : a.labels) {
    bool inB = b.labels.find(c) != std::string::npos;
    bool inOut = out.find(c) != std::string::npos;
    (inB ? (inOut ? batch : contract) : aOnly) += c;
  }
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos)
      bOnly += c;
  if (failed(checkMatMulTypes(ctx, a.v, b.v)))
    return failure();
  auto prod = [&](StringRef labels) {
    int64_t p = 1;
    for (char c : labels)
      p *= sizes[c];
    return p;
  };
  tessel::TosaBuilder &tb = ctx.tosa();
  Value a3 = tb.reshape(permuteTo(ctx, a, batch + aOnly + contract),
                        {prod(batch), prod(aOnly), prod(contract)});
  Value b3 = tb.reshape(permuteTo(ctx, b, batch + contract + bOnly),
                        {prod(batch), prod(contract), prod(bOnly)});
  Labeled y{matmul3D(ctx, a3, b3), batch + aOnly + bOnly};
  SmallVector<int64_t> shape;
  for (char c : y.labels)
    shape.push_back(sizes[c]);
  y.v = tb.reshape(y.v, shape);
  ctx.setOutput(0, permuteTo(ctx, y, out));
  return success();
}

/// Det of [..., M, M] for M <= 3 by cofactor expansion (exact formulas,
/// elementwise over the batch); larger matrices need a pivoted LU, which
/// Tessel does not generate yet.
LogicalResult convertDet(NodeContext &ctx) {
  Value x = ctx.input(0);
  auto t = cast<RankedTensorType>(x.getType());
  int64_t r = t.getRank();
  if (r < 2 || t.getDimSize(r - 1) != t.getDimSize(r - 2))
    return ctx.emitError() << "input must be [..., M, M]";
  int64_t m = t.getDimSize(r - 1);
  if (!isa<FloatType>(t.getElementType()))
    return ctx.emitError() << "expects a floating-point input";
  if (m > 3)
    return ctx.unsupported("Det of matrices larger than 3x3");
  SmallVector<int64_t> batch(t.getShape().drop_back(2));
  int64_t b = 1;
  for (int64_t d : batch)
    b *= d;
  Value flat = ctx.tosa().reshape(x, {b, m * m});
  auto at = [&](int64_t i, int64_t j) {
    return ctx.tosa().slice(flat, {0, i * m + j}, {b, 1});
  };
  tessel::TosaBuilder &tb = ctx.tosa();
  Value det;
  if (m == 1) {
    det = at(0, 0);
  } else if (m == 2) {
    det = tb.sub(tb.mul(at(0, 0), at(1, 1)), tb.mul(at(0, 1), at(1, 0)));
  } else {
    auto minor = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      return tb.sub(tb.mul(at(r0, c0), at(r1, c1)),
                    tb.mul(at(r0, c1), at(r1, c0)));
    };
    det = tb.add(tb.sub(tb.mul(at(0, 0), minor(1, 2, 1, 2)),
                        tb.mul(at(0, 1), minor(1, 2, 0, 2))),
                 tb.mul(at(0, 2), minor(1, 2, 0, 1)));
  }
  ctx.setOutput(0, tb.reshape(det, batch));
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerMatMulConverters(ConverterMap &map) {
  map["MatMul"] = convertMatMul;
  map["Det"] = convertDet;
  map["Gemm"] = convertGemm;
  map["Einsum"] = convertEinsum;
}
