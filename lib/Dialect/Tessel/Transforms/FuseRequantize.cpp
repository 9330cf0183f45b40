//===- FuseRequantize.cpp - int8 kernel epilogues into the kernel ---------===//
//
// A QDQ model's int8 layer is, after tessel-fold-qdq and elementwise
// fusion, a tessel.packed_matmul_i8 (or tessel.depthwise_conv2d_i8)
// writing int32 and one linalg.generic
// reading it back: dequantize (x scale[n], + bias[n]), clip, quantize for
// the next layer, and often a dequantize, an activation and a requantize
// of the quantized value. Run over a separate int32 buffer, that generic
// cost MobileNetV2 in int8 as much time as its matmuls. Here it becomes
// the kernel's epilogue (tessel.packed_matmul_i8_requant, or the
// depthwise op's scale, bias and attributes), computed while the tile is in
// registers. A column is an output channel of the depthwise convolution.
//
// Exactness: the epilogue performs the generic's f32 operations in the
// same order, so the fused result is the unfused one bit for bit. What
// follows the quantization is a function of one 8-bit value, evaluated
// here by folding the generic's own ops for each of the 256 values.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>
#include <optional>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELFUSEREQUANTIZE
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// The int8 kernel op writing the exact int32 result `v` is, through
/// single-use reshapes: a tessel.packed_matmul_i8 that does not accumulate
/// or a tessel.depthwise_conv2d_i8 without an epilogue; null if none.
Operation *int32KernelThroughReshapes(Value v,
                                      SmallVectorImpl<Operation *> &chain) {
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!def || !def->hasOneUse())
      return nullptr;
    chain.push_back(def);
    if (auto mm = dyn_cast<PackedMatmulI8Op>(def))
      return mm.getAccumulate() ? nullptr : mm;
    if (auto dw = dyn_cast<DepthwiseConv2DI8Op>(def))
      return dw.getScale() ? nullptr : dw;
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
      v = c.getSrc();
    else
      return nullptr;
  }
}

/// The f32 values of a constant tensor: a dense or resource constant, or a
/// fill of a constant.
std::optional<SmallVector<float>> constantFloats(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    FloatAttr f;
    if (!matchPattern(fill.getInputs()[0], m_Constant(&f)) ||
        !f.getType().isF32())
      return std::nullopt;
    return SmallVector<float>{float(f.getValueAsDouble())};
  }
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr)) {
    if (!dense.getElementType().isF32())
      return std::nullopt;
    if (dense.isSplat())
      return SmallVector<float>{dense.getSplatValue<float>()};
    return SmallVector<float>(dense.getValues<float>());
  }
  if (auto res = dyn_cast<DenseF32ResourceElementsAttr>(attr))
    if (std::optional<ArrayRef<float>> data = res.tryGetAsArrayRef())
      return SmallVector<float>(data->begin(), data->end());
  return std::nullopt;
}

/// One f32 per output column (or one for all): what a body value that does
/// not depend on the kernel is.
struct Column {
  SmallVector<float> values; // 1 (uniform) or N
  bool uniform() const {
    return llvm::all_equal(values);
  }
  float at(int64_t n) const { return values.size() == 1 ? values[0] : values[n]; }
};

/// A generic on tensors with one result (and init) and only parallel
/// loops: the elementwise form every pattern here starts from.
static bool isParallelOneResult(linalg::GenericOp g) {
  return g.getNumDpsInits() == 1 && g->getNumResults() == 1 &&
         g.getNumParallelLoops() == g.getNumLoops() &&
         g.hasPureTensorSemantics();
}

struct EpilogueMatch {
  Column scale;
  std::optional<Column> bias;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  std::optional<float> outScale;
  float outZp = 0.0f, qmin = -std::numeric_limits<float>::infinity(),
        qmax = std::numeric_limits<float>::infinity();
  Value quantized;               // the trunci to i8
  SmallVector<Operation *> tail; // ops after it, in order
  // A tail that is a dequantization: (f32(v) - zp) * scale.
  std::optional<float> dqScale;
  float dqZp = 0.0f;
  float dqLo = -std::numeric_limits<float>::infinity();
  float dqHi = std::numeric_limits<float>::infinity();
  bool dqSigned = false;
  // What the epilogue computes before the residual: the yielded value, or
  // the other operand of the residual's addf.
  Value end;
  // The residual's addf and clamps, when the generic has a residual.
  SmallVector<Operation *> residualOps;
  float resLo = -std::numeric_limits<float>::infinity();
  float resHi = std::numeric_limits<float>::infinity();
};

class FuseRequantize : public OpRewritePattern<linalg::GenericOp> {
public:
  FuseRequantize(MLIRContext *ctx, bool fuseResidual)
      : OpRewritePattern(ctx), fuseResidual(fuseResidual) {}

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (!isParallelOneResult(g))
      return rewriter.notifyMatchFailure(g, "not a parallel one-result generic");
    auto outTy = cast<RankedTensorType>(g->getResult(0).getType());
    Type outElem = outTy.getElementType();
    Block &body = g.getRegion().front();
    if (!outTy.hasStaticShape() || outTy.getRank() == 0 ||
        !(outElem.isF32() || outElem.isInteger(8)) ||
        !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
        !g.getMatchingBlockArgument(g.getDpsInitOperand(0)).use_empty())
      return rewriter.notifyMatchFailure(g, "output");

    // The kernel's operand and the per-column constants.
    Operation *kernel = nullptr;
    SmallVector<Operation *> chain;
    BlockArgument acc, residualArg;
    Value residual;
    DenseMap<Value, Column> columns;
    const int64_t lastLoop = g.getNumLoops() - 1;
    const int64_t n = outTy.getShape().back();
    for (OpOperand *in : g.getDpsInputOperands()) {
      AffineMap map = g.getMatchingIndexingMap(in);
      SmallVector<Operation *> c;
      if (!kernel) {
        if (Operation *found = int32KernelThroughReshapes(in->get(), c)) {
          auto resTy = cast<RankedTensorType>(found->getResult(0).getType());
          if (!map.isIdentity() || !resTy.hasStaticShape() ||
              resTy.getShape().back() != n)
            return rewriter.notifyMatchFailure(g, "kernel result read oddly");
          kernel = found;
          chain = std::move(c);
          acc = g.getMatchingBlockArgument(in);
          continue;
        }
      }
      std::optional<Column> col = columnOperand(in, map, lastLoop, n);
      if (col) {
        columns[g.getMatchingBlockArgument(in)] = *col;
        continue;
      }
      // One f32 tensor read element for element: a residual.
      if (fuseResidual && !residual && map.isIdentity() &&
          in->get().getType() == outTy && outElem.isF32()) {
        residual = in->get();
        residualArg = g.getMatchingBlockArgument(in);
        continue;
      }
      return rewriter.notifyMatchFailure(g, "an operand is not per column");
    }
    if (!kernel)
      return rewriter.notifyMatchFailure(g, "no int8 kernel read");
    if (residual && !isa<PackedMatmulI8Op>(kernel))
      return rewriter.notifyMatchFailure(g, "residual of a depthwise kernel");

    EpilogueMatch m;
    if (failed(matchBody(body, acc, residualArg, columns, outElem, m)))
      return rewriter.notifyMatchFailure(g, "body is not a requantization");
    // The tail: an f32 result that dequantizes an 8-bit value w (v itself,
    // or an 8-bit value the tail computes from v) is (w - zp) * scale in
    // the kernel, w by a table of v when it is not v; anything else is a
    // table of the result.
    Value table;
    ArrayRef<Operation *> tail = m.tail;
    Value tabled = m.end;
    Type tableElem = outElem;
    if (outElem.isF32() && !tail.empty()) {
      // The dequantization starts at the last int-to-float of an i8.
      for (size_t split = tail.size(); split-- > 0;) {
        if (!isa<arith::UIToFPOp, arith::SIToFPOp>(tail[split]))
          continue;
        Value w = tail[split]->getOperand(0);
        if (!w.getType().isInteger(8))
          break;
        bool made = w == m.quantized ||
                    llvm::is_contained(tail.take_front(split), w.getDefiningOp());
        if (made && matchDequant(m, w, tail.drop_front(split))) {
          tail = tail.take_front(split);
          tabled = w;
          tableElem = rewriter.getI8Type();
        }
        break;
      }
    }
    if (!tail.empty()) {
      std::optional<Attribute> t = tabulate(m.quantized, tail, tabled, tableElem);
      if (!t)
        return rewriter.notifyMatchFailure(g, "tail does not fold");
      table = arith::ConstantOp::create(rewriter, g.getLoc(),
                                        cast<TypedAttr>(*t));
    } else if (m.outScale && !outElem.isInteger(8) && !m.dqScale) {
      return rewriter.notifyMatchFailure(g, "quantized value read as f32");
    }

    Location loc = g.getLoc();
    auto mmTy = cast<RankedTensorType>(kernel->getResult(0).getType());
    auto vecTy = RankedTensorType::get({n}, rewriter.getF32Type());
    auto columnConst = [&](const Column &c) -> Value {
      SmallVector<float> v(n);
      for (int64_t i = 0; i < n; ++i)
        v[i] = c.at(i);
      return arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(vecTy, ArrayRef<float>(v)));
    };
    Value scale = columnConst(m.scale);
    Value bias = m.bias ? columnConst(*m.bias) : Value();
    Value init = tensor::EmptyOp::create(rewriter, loc, mmTy.getShape(), outElem);
    auto f32 = [&](float v) { return rewriter.getF32FloatAttr(v); };
    // The epilogue's attributes (the clamp and Tessel_RequantOutputArgs).
    FloatAttr lo = f32(m.lo), hi = f32(m.hi);
    FloatAttr outScale = m.outScale ? f32(*m.outScale) : FloatAttr();
    FloatAttr outZp = f32(m.outZp), qmin = f32(m.outScale ? m.qmin : 0.0f),
              qmax = f32(m.outScale ? m.qmax : 255.0f);
    FloatAttr dqScale = m.dqScale ? f32(*m.dqScale) : FloatAttr();
    FloatAttr dqZp = f32(m.dqZp), dqLo = f32(m.dqLo), dqHi = f32(m.dqHi);
    UnitAttr dqSigned = m.dqSigned ? rewriter.getUnitAttr() : UnitAttr();
    Operation *fused;
    if (auto mm = dyn_cast<PackedMatmulI8Op>(kernel))
      fused = PackedMatmulI8RequantOp::create(
          rewriter, loc, TypeRange{init.getType()}, mm.getInput(),
          mm.getPackedB(), mm.getColumnSums(), scale, bias, table,
          residual ? reshapeTo(rewriter, loc, residual,
                               mmTy.clone(rewriter.getF32Type()))
                   : Value(),
          init,
          mm.getAZpAttr(), mm.getBZpAttr(), mm.getASignedAttr(), lo, hi,
          outScale, outZp, qmin, qmax, dqScale, dqZp, dqSigned, dqLo, dqHi,
          mm.getKernelSizeAttr(), mm.getStridesAttr(), mm.getDilationsAttr(),
          f32(m.resLo), f32(m.resHi), mm.getBlockPtr(), mm.getBlockK(),
          mm.getBlockSizeAttr());
    else {
      auto dw = cast<DepthwiseConv2DI8Op>(kernel);
      fused = DepthwiseConv2DI8Op::create(
          rewriter, loc, TypeRange{init.getType()}, dw.getInput(),
          dw.getPackedFilter(), dw.getColumnSums(), scale, bias, table, init,
          dw.getKernelSizeAttr(), dw.getStridesAttr(), dw.getDilationsAttr(),
          dw.getPadAttr(), dw.getAZpAttr(), dw.getASignedAttr(), lo, hi,
          outScale, outZp, qmin, qmax, dqScale, dqZp, dqSigned, dqLo, dqHi);
    }
    rewriter.replaceOp(g, reshapeTo(rewriter, loc, fused->getResult(0), outTy));
    for (Operation *op : chain) // kernel last: users first
      if (op->use_empty())
        rewriter.eraseOp(op);
    return success();
  }

  /// Whether `in` is a constant read the same at every row (columnOperand).
  static bool isColumnOperand(OpOperand *in, AffineMap map, int64_t lastLoop,
                              int64_t n) {
    return columnOperand(in, map, lastLoop, n).has_value();
  }

private:
  /// Whether an f32 operand added to the epilogue's value (a residual
  /// connection) is fused too (the pass's `residual` option).
  bool fuseResidual;

public: // the body matchers, shared with the split patterns below
  /// A constant input read the same at every row: its only non-unit dim (if
  /// any) is indexed by the last loop and has N entries.
  static std::optional<Column> columnOperand(OpOperand *in, AffineMap map,
                                             int64_t lastLoop, int64_t n) {
    auto ty = dyn_cast<RankedTensorType>(in->get().getType());
    if (!ty || !ty.hasStaticShape())
      return std::nullopt;
    std::optional<SmallVector<float>> values = constantFloats(in->get());
    if (!values)
      return std::nullopt;
    bool perColumn = false;
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      if (ty.getDimSize(d) == 1)
        continue; // whatever indexes it, it reads index 0
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || dim.getPosition() != lastLoop || ty.getDimSize(d) != n)
        return std::nullopt;
      perColumn = true;
    }
    // One value for all columns (a splat), or one per column.
    if (values->size() != 1 && (!perColumn || values->size() != size_t(n)))
      return std::nullopt;
    return Column{*values};
  }

  /// The only user of `v`, if it has exactly one.
  static Operation *onlyUser(Value v) {
    return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
  }

  /// The operand of binary `op` other than `v`, as a known column value.
  static std::optional<Column> other(Operation *op, Value v,
                                     const DenseMap<Value, Column> &columns,
                                     bool mustBeRhs = false) {
    if (op->getNumOperands() != 2)
      return std::nullopt;
    if (mustBeRhs && op->getOperand(0) != v)
      return std::nullopt;
    Value o = op->getOperand(0) == v ? op->getOperand(1) : op->getOperand(0);
    if (o == v)
      return std::nullopt;
    auto it = columns.find(o);
    if (it != columns.end())
      return it->second;
    FloatAttr f;
    if (matchPattern(o, m_Constant(&f)) && f.getType().isF32())
      return Column{{float(f.getValueAsDouble())}};
    return std::nullopt;
  }

  /// minimumf / maximumf by uniform constants starting at `v`: folds them
  /// into [lo, hi] (in any order, which is a clamp when lo <= hi).
  static Value clamps(Value v, const DenseMap<Value, Column> &columns,
                      float &lo, float &hi, size_t *count = nullptr) {
    while (Operation *u = onlyUser(v)) {
      if (!isa<arith::MinimumFOp, arith::MaximumFOp>(u))
        break;
      std::optional<Column> c = other(u, v, columns);
      if (!c || !c->uniform())
        break;
      if (isa<arith::MinimumFOp>(u))
        hi = std::min(hi, c->values[0]);
      else
        lo = std::max(lo, c->values[0]);
      v = u->getResult(0);
      if (count)
        ++*count;
    }
    return v;
  }

private:
  static LogicalResult matchBody(Block &body, BlockArgument acc,
                                 BlockArgument residual,
                                 const DenseMap<Value, Column> &columns,
                                 Type outElem, EpilogueMatch &m) {
    auto *yield = body.getTerminator();
    m.end = yield->getOperand(0);
    SmallPtrSet<Operation *, 16> matched;
    // A residual: yield(clamps(addf(end, residual))), end used only there.
    if (residual) {
      auto add = dyn_cast_or_null<arith::AddFOp>(onlyUser(residual));
      if (!add)
        return failure();
      Value other = add.getLhs() == residual ? add.getRhs() : add.getLhs();
      if (other == residual || !other.hasOneUse())
        return failure();
      Value v = clamps(add, columns, m.resLo, m.resHi);
      if (!(m.resLo <= m.resHi) || v != m.end || !v.hasOneUse())
        return failure();
      for (Operation *op = add; op; op = onlyUser(op->getResult(0))) {
        m.residualOps.push_back(op);
        matched.insert(op);
        if (op->getResult(0) == v)
          break;
      }
      m.end = other;
    }
    // sitofp, x scale, + bias
    auto toF = dyn_cast_or_null<arith::SIToFPOp>(onlyUser(acc));
    if (!toF || !toF.getType().isF32())
      return failure();
    auto mul = dyn_cast_or_null<arith::MulFOp>(onlyUser(toF));
    std::optional<Column> scale;
    if (!mul || !(scale = other(mul, toF, columns)))
      return failure();
    m.scale = *scale;
    Value v = mul;
    if (auto add = dyn_cast_or_null<arith::AddFOp>(onlyUser(v)))
      if (std::optional<Column> b = other(add, v, columns)) {
        m.bias = *b;
        v = add;
      }
    v = clamps(v, columns, m.lo, m.hi);
    if (!(m.lo <= m.hi))
      return failure();
    // The single-use chain sitofp ... v.
    for (Operation *op = toF;; op = onlyUser(op->getResult(0))) {
      matched.insert(op);
      if (op == v.getDefiningOp())
        break;
    }
    if (v == m.end) {
      if (!outElem.isF32())
        return failure();
      return success(allAccounted(body, matched));
    }
    // / out_scale, roundeven, + zero point, saturate, to 8 bits
    auto div = dyn_cast_or_null<arith::DivFOp>(onlyUser(v));
    std::optional<Column> s;
    if (!div || !(s = other(div, v, columns, /*mustBeRhs=*/true)) ||
        !s->uniform())
      return failure();
    m.outScale = s->values[0];
    if (!(*m.outScale > 0.0f) || !std::isfinite(*m.outScale))
      return failure();
    auto round = dyn_cast_or_null<math::RoundEvenOp>(onlyUser(div));
    if (!round)
      return failure();
    v = round;
    if (auto add = dyn_cast_or_null<arith::AddFOp>(onlyUser(v)))
      if (std::optional<Column> zp = other(add, v, columns);
          zp && zp->uniform()) {
        m.outZp = zp->values[0];
        v = add;
      }
    Value clamped = clamps(v, columns, m.qmin, m.qmax);
    auto toI = dyn_cast_or_null<arith::FPToSIOp>(onlyUser(clamped));
    if (!toI || !toI.getType().isInteger(32))
      return failure();
    auto trunc = dyn_cast_or_null<arith::TruncIOp>(onlyUser(toI));
    if (!trunc || !trunc.getType().isInteger(8))
      return failure();
    if (m.qmin != std::floor(m.qmin) || m.qmax != std::floor(m.qmax) ||
        m.qmin < -128.0f || m.qmax > 255.0f || m.qmin > m.qmax ||
        m.qmax - m.qmin > 255.0f)
      return failure();
    for (Operation *op = div; op; op = op == trunc ? nullptr
                                                   : onlyUser(op->getResult(0)))
      matched.insert(op);
    m.quantized = trunc;
    // The tail: ops of the 8-bit value and constants only.
    DenseSet<Value> tailValues = {trunc};
    for (Operation &op : body.without_terminator()) {
      if (matched.contains(&op) || matchPattern(&op, m_Constant()))
        continue;
      if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
          op.getNumResults() != 1 || op.getNumRegions() != 0)
        return failure();
      for (Value o : op.getOperands())
        if (!tailValues.contains(o) && !matchPattern(o, m_Constant()))
          return failure();
      tailValues.insert(op.getResult(0));
      m.tail.push_back(&op);
    }
    Value out = m.end;
    if (!tailValues.contains(out))
      return failure();
    if (out == trunc.getResult())
      m.tail.clear();
    return success();
  }

  /// `ops` are `mulf(subf(uitofp|sitofp(w), zp), scale)` (the subf
  /// optional), with constant zp and scale, then clamps by constants: the
  /// dequantization of `w` (and a ReLU/ReLU6 of it).
  static bool matchDequant(EpilogueMatch &m, Value w,
                           ArrayRef<Operation *> ops) {
    if (ops.size() < 2)
      return false;
    Operation *toF = ops[0];
    if (!isa<arith::UIToFPOp, arith::SIToFPOp>(toF) ||
        toF->getOperand(0) != w || !toF->getResult(0).getType().isF32() ||
        !toF->hasOneUse())
      return false;
    DenseMap<Value, Column> none;
    Value v = toF->getResult(0);
    float zp = 0.0f;
    size_t count = 2; // the cast and the mulf
    if (auto sub = dyn_cast<arith::SubFOp>(ops[1])) {
      std::optional<Column> z;
      if (onlyUser(v) != sub || !(z = other(sub, v, none, /*mustBeRhs=*/true)))
        return false;
      ++count;
      zp = z->values[0];
      v = sub;
    }
    auto mul = dyn_cast_or_null<arith::MulFOp>(onlyUser(v));
    std::optional<Column> s;
    if (!mul || !(s = other(mul, v, none)))
      return false;
    float lo = -std::numeric_limits<float>::infinity(),
          hi = std::numeric_limits<float>::infinity();
    Value end = clamps(mul, none, lo, hi, &count);
    if (!(lo <= hi) || end.getDefiningOp() != ops.back() ||
        count != ops.size())
      return false;
    m.dqScale = s->values[0];
    m.dqZp = zp;
    m.dqSigned = isa<arith::SIToFPOp>(toF);
    m.dqLo = lo;
    m.dqHi = hi;
    return true;
  }

  /// Every non-constant op of the body is in `matched`.
  static bool allAccounted(Block &body,
                           const SmallPtrSetImpl<Operation *> &matched) {
    for (Operation &op : body.without_terminator())
      if (!matched.contains(&op) && !matchPattern(&op, m_Constant()))
        return false;
    return true;
  }

  /// `out` for each of the 256 values of the 8-bit `in`, by folding `ops`
  /// (which compute it from `in` and constants) on constants.
  static std::optional<Attribute> tabulate(Value in, ArrayRef<Operation *> ops,
                                           Value out, Type outElem) {
    Builder b(in.getContext());
    SmallVector<Attribute> entries;
    for (int i = 0; i < 256; ++i) {
      DenseMap<Value, Attribute> known;
      known[in] = b.getIntegerAttr(b.getI8Type(), APInt(8, i));
      for (Operation *op : ops) {
        SmallVector<Attribute> operands;
        for (Value o : op->getOperands()) {
          Attribute a = known.lookup(o);
          if (!a)
            matchPattern(o, m_Constant(&a));
          operands.push_back(a);
        }
        SmallVector<OpFoldResult> results;
        if (failed(op->fold(operands, results)) || results.size() != 1)
          return std::nullopt;
        // A fold may answer with an operand (x * 1 is x): its value.
        auto attr = dyn_cast<Attribute>(results[0]);
        if (!attr) {
          Value same = cast<Value>(results[0]);
          attr = known.lookup(same);
          if (!attr && !matchPattern(same, m_Constant(&attr)))
            return std::nullopt;
        }
        known[op->getResult(0)] = attr;
      }
      Attribute r = known.lookup(out);
      if (!r)
        return std::nullopt;
      entries.push_back(r);
    }
    auto ty = RankedTensorType::get({256}, outElem);
    if (outElem.isF32()) {
      SmallVector<float> v;
      for (Attribute a : entries) {
        auto f = dyn_cast<FloatAttr>(a);
        if (!f)
          return std::nullopt;
        v.push_back(f.getValue().convertToFloat());
      }
      return DenseElementsAttr::get(ty, ArrayRef<float>(v));
    }
    SmallVector<int8_t> v;
    for (Attribute a : entries) {
      auto i = dyn_cast<IntegerAttr>(a);
      if (!i || i.getType() != outElem)
        return std::nullopt;
      v.push_back(int8_t(i.getValue().getZExtValue()));
    }
    return DenseElementsAttr::get(ty, ArrayRef<int8_t>(v));
  }

  /// `v` (B x M x N) reshaped to `to` (the same elements, N last).
  static Value reshapeTo(PatternRewriter &rewriter, Location loc, Value v,
                         RankedTensorType to) {
    auto from = cast<RankedTensorType>(v.getType());
    if (from == to)
      return v;
    if (from.getRank() < to.getRank())
      if (auto re = getReassociationIndicesForReshape(from, to))
        return tensor::ExpandShapeOp::create(rewriter, loc, to, v, *re);
    if (from.getRank() > to.getRank())
      if (auto re = getReassociationIndicesForReshape(from, to))
        return tensor::CollapseShapeOp::create(rewriter, loc, to, v, *re);
    auto flatTy = RankedTensorType::get({from.getNumElements()},
                                        from.getElementType());
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < from.getRank(); ++d)
      all[0].push_back(d);
    Value flat = tensor::CollapseShapeOp::create(rewriter, loc, flatTy, v, all);
    SmallVector<ReassociationIndices> allTo(1);
    for (int64_t d = 0; d < to.getRank(); ++d)
      allTo[0].push_back(d);
    return tensor::ExpandShapeOp::create(rewriter, loc, to, flat, allTo);
  }
};

/// A generic that reads two int8 kernels' int32 results (ResNet's first
/// block of a stage adds its projection shortcut's convolution to the
/// block's last one) is split in two: the ops that depend on one kernel's
/// result and constants alone, up to the single f32 value the rest reads,
/// become a generic of their own, whose f32 result the original reads
/// instead. Each generic then has one kernel, and FuseRequantize makes
/// the new one that kernel's epilogue and the rest the other kernel's,
/// with a residual.
class SplitKernelEpilogues : public OpRewritePattern<linalg::GenericOp> {
public:
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (!isParallelOneResult(g))
      return rewriter.notifyMatchFailure(g, "not a parallel one-result generic");
    auto outTy = cast<RankedTensorType>(g->getResult(0).getType());
    if (!outTy.hasStaticShape())
      return rewriter.notifyMatchFailure(g, "dynamic shape");
    // The int32 kernel results read element for element; the last one is
    // split off.
    SmallVector<OpOperand *> kernels;
    for (OpOperand *in : g.getDpsInputOperands()) {
      SmallVector<Operation *> chain;
      if (g.getMatchingIndexingMap(in).isIdentity() &&
          int32KernelThroughReshapes(in->get(), chain))
        kernels.push_back(in);
    }
    if (kernels.size() < 2)
      return rewriter.notifyMatchFailure(g, "fewer than two kernels read");
    OpOperand *split = kernels.back();
    BlockArgument acc = g.getMatchingBlockArgument(split);
    Block &body = g.getRegion().front();

    // The ops computed from acc, other inputs' constant per-column values
    // and constants only.
    const int64_t lastLoop = g.getNumLoops() - 1;
    const int64_t n = outTy.getShape().back();
    SmallVector<OpOperand *> columnInputs;
    DenseSet<Value> available = {acc};
    for (OpOperand *in : g.getDpsInputOperands())
      if (in != split && FuseRequantize::isColumnOperand(
                             in, g.getMatchingIndexingMap(in), lastLoop, n)) {
        columnInputs.push_back(in);
        available.insert(g.getMatchingBlockArgument(in));
      }
    SetVector<Operation *> part;
    for (Operation &op : body.without_terminator()) {
      if (op.getNumRegions() != 0 || op.getNumResults() != 1)
        continue;
      bool fromAcc = false, ok = true;
      for (Value o : op.getOperands()) {
        Operation *def = o.getDefiningOp();
        if (o == acc || (def && part.contains(def)))
          fromAcc = true;
        else if (!available.contains(o) && !matchPattern(o, m_Constant()) &&
                 o.getParentBlock() == &body)
          ok = false; // another kernel's value, or computed from one
      }
      if (ok && fromAcc) {
        part.insert(&op);
        available.insert(op.getResult(0));
      }
    }
    // Exactly one of its values is read by the rest, an f32 one.
    Value escaping;
    for (Operation *op : part)
      for (Operation *user : op->getResult(0).getUsers()) {
        if (part.contains(user))
          continue;
        if (isa<linalg::YieldOp>(user) ||
            (escaping && escaping != op->getResult(0)))
          return rewriter.notifyMatchFailure(g, "not one value split off");
        escaping = op->getResult(0);
      }
    if (!escaping || !escaping.getType().isF32())
      return rewriter.notifyMatchFailure(g, "no f32 value split off");

    // The new generic: acc and the per-column inputs in, the value out.
    Location loc = g.getLoc();
    SmallVector<Value> inputs = {split->get()};
    SmallVector<AffineMap> maps = {g.getMatchingIndexingMap(split)};
    for (OpOperand *in : columnInputs) {
      inputs.push_back(in->get());
      maps.push_back(g.getMatchingIndexingMap(in));
    }
    maps.push_back(g.getMatchingIndexingMap(g.getDpsInitOperand(0)));
    Value init = tensor::EmptyOp::create(rewriter, loc, outTy.getShape(),
                                         rewriter.getF32Type());
    auto first = linalg::GenericOp::create(
        rewriter, loc, init.getType(), inputs, ValueRange{init}, maps,
        g.getIteratorTypesArray(),
        [&](OpBuilder &b, Location, ValueRange args) {
          IRMapping map;
          map.map(acc, args[0]);
          for (auto [i, in] : llvm::enumerate(columnInputs))
            map.map(g.getMatchingBlockArgument(in), args[i + 1]);
          for (Operation &op : body.without_terminator())
            if (part.contains(&op) ||
                (matchPattern(&op, m_Constant()) &&
                 llvm::any_of(op.getUsers(), [&](Operation *u) {
                   return part.contains(u);
                 })))
              b.clone(op, map);
          linalg::YieldOp::create(b, loc, map.lookup(escaping));
        });

    // The original reads it in place of the kernel's result.
    rewriter.modifyOpInPlace(g, [&] {
      split->set(first->getResult(0));
      acc.setType(rewriter.getF32Type());
    });
    rewriter.replaceAllUsesWith(escaping, acc);
    for (Operation *op : llvm::reverse(part))
      rewriter.eraseOp(op);
    return success();
  }
};

/// A residual add whose clamped sum is not the generic's result but feeds
/// more ops (the last block of a ResNet stage: the add and ReLU, then the
/// quantize of the next stage's input) is split after the clamps. The
/// head (the kernel's dequantization, the add and its clamps) becomes a
/// generic of its own with the f32 sum as result, which FuseRequantize
/// makes the kernel's epilogue with a residual; the tail reads that sum
/// in a generic without the int32 operand. The int32 tensor is then never
/// written, and the tail is a plain loop over f32.
class SplitResidualTail : public OpRewritePattern<linalg::GenericOp> {
public:
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (!isParallelOneResult(g))
      return rewriter.notifyMatchFailure(g, "not a parallel one-result generic");
    auto outTy = cast<RankedTensorType>(g->getResult(0).getType());
    if (!outTy.hasStaticShape() || outTy.getRank() == 0 ||
        !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity())
      return rewriter.notifyMatchFailure(g, "output");
    const int64_t lastLoop = g.getNumLoops() - 1;
    const int64_t n = outTy.getShape().back();
    OpOperand *kernel = nullptr, *residual = nullptr;
    DenseMap<Value, Column> columns;
    for (OpOperand *in : g.getDpsInputOperands()) {
      AffineMap map = g.getMatchingIndexingMap(in);
      SmallVector<Operation *> chain;
      if (!kernel && map.isIdentity() &&
          int32KernelThroughReshapes(in->get(), chain)) {
        kernel = in;
        continue;
      }
      if (std::optional<Column> c =
              FuseRequantize::columnOperand(in, map, lastLoop, n)) {
        columns[g.getMatchingBlockArgument(in)] = *c;
        continue;
      }
      auto ty = cast<RankedTensorType>(in->get().getType());
      if (residual || !map.isIdentity() || !ty.getElementType().isF32() ||
          ty.getShape() != outTy.getShape())
        return rewriter.notifyMatchFailure(g, "not one kernel and a residual");
      residual = in;
    }
    if (!kernel || !residual)
      return rewriter.notifyMatchFailure(g, "not one kernel and a residual");
    BlockArgument resArg = g.getMatchingBlockArgument(residual);
    BlockArgument acc = g.getMatchingBlockArgument(kernel);
    auto add = dyn_cast_or_null<arith::AddFOp>(
        resArg.hasOneUse() ? *resArg.getUsers().begin() : nullptr);
    if (!add)
      return rewriter.notifyMatchFailure(g, "residual not added");
    float lo = -std::numeric_limits<float>::infinity(),
          hi = std::numeric_limits<float>::infinity();
    Value sum = FuseRequantize::clamps(add, columns, lo, hi);
    Block &body = g.getRegion().front();
    Operation *yield = body.getTerminator();
    if (!sum.getType().isF32() || !(lo <= hi) ||
        llvm::is_contained(sum.getUsers(), yield))
      return rewriter.notifyMatchFailure(g, "no tail after the clamps");

    // The head: every op of the body that `sum` depends on.
    SetVector<Operation *> head;
    SmallVector<Operation *> work = {sum.getDefiningOp()};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!op || op->getBlock() != &body || !head.insert(op))
        continue;
      for (Value o : op->getOperands())
        work.push_back(o.getDefiningOp());
    }
    // The tail reads nothing of the head but the sum (constants aside),
    // and not the kernel's result.
    for (Operation &op : body) {
      if (head.contains(&op))
        continue;
      for (Value o : op.getOperands()) {
        Operation *def = o.getDefiningOp();
        if (o == acc || (def && head.contains(def) && o != sum &&
                         !matchPattern(o, m_Constant())))
          return rewriter.notifyMatchFailure(g, "the tail reads the head");
      }
    }

    Location loc = g.getLoc();
    // Operands whose block argument `ops` read, in the generic's order.
    auto inputsOf = [&](auto &&ops, OpOperand *skip) {
      SmallVector<OpOperand *> used;
      for (OpOperand *in : g.getDpsInputOperands()) {
        BlockArgument a = g.getMatchingBlockArgument(in);
        if (in != skip && llvm::any_of(a.getUsers(), [&](Operation *u) {
              return llvm::is_contained(ops, u);
            }))
          used.push_back(in);
      }
      return used;
    };
    // A constant of the head that the tail reads too is cloned into both.
    SmallVector<Operation *> headOps, tailOps;
    for (Operation &op : body.without_terminator()) {
      if (!head.contains(&op)) {
        tailOps.push_back(&op);
        continue;
      }
      headOps.push_back(&op);
      if (matchPattern(&op, m_Constant()) &&
          llvm::any_of(op.getUsers(),
                       [&](Operation *u) { return !head.contains(u); }))
        tailOps.push_back(&op);
    }
    auto cloneInto = [&](OpBuilder &b, ArrayRef<Operation *> ops,
                         IRMapping &map) {
      for (Operation *op : ops)
        b.clone(*op, map);
    };
    AffineMap idMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));

    SmallVector<OpOperand *> headIn = inputsOf(headOps, nullptr);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : headIn) {
      inputs.push_back(in->get());
      maps.push_back(g.getMatchingIndexingMap(in));
    }
    maps.push_back(idMap);
    Value sumInit = tensor::EmptyOp::create(rewriter, loc, outTy.getShape(),
                                            rewriter.getF32Type());
    auto first = linalg::GenericOp::create(
        rewriter, loc, sumInit.getType(), inputs, ValueRange{sumInit}, maps,
        g.getIteratorTypesArray(),
        [&](OpBuilder &b, Location, ValueRange args) {
          IRMapping map;
          for (auto [i, in] : llvm::enumerate(headIn))
            map.map(g.getMatchingBlockArgument(in), args[i]);
          cloneInto(b, headOps, map);
          linalg::YieldOp::create(b, loc, map.lookup(sum));
        });

    SmallVector<OpOperand *> tailIn = inputsOf(tailOps, kernel);
    SmallVector<Value> tailInputs = {first->getResult(0)};
    SmallVector<AffineMap> tailMaps = {idMap};
    for (OpOperand *in : tailIn) {
      tailInputs.push_back(in->get());
      tailMaps.push_back(g.getMatchingIndexingMap(in));
    }
    tailMaps.push_back(idMap);
    auto second = linalg::GenericOp::create(
        rewriter, loc, outTy, tailInputs, ValueRange{g.getDpsInits()[0]},
        tailMaps, g.getIteratorTypesArray(),
        [&](OpBuilder &b, Location, ValueRange args) {
          IRMapping map;
          map.map(sum, args[0]);
          for (auto [i, in] : llvm::enumerate(tailIn))
            map.map(g.getMatchingBlockArgument(in), args[i + 1]);
          map.map(g.getMatchingBlockArgument(g.getDpsInitOperand(0)),
                  args.back());
          cloneInto(b, tailOps, map);
          linalg::YieldOp::create(b, loc,
                                  map.lookupOrDefault(yield->getOperand(0)));
        });
    rewriter.replaceOp(g, second->getResults());
    return success();
  }
};

struct FuseRequantizePass
    : tessel::impl::TesselFuseRequantizeBase<FuseRequantizePass> {
  using TesselFuseRequantizeBase::TesselFuseRequantizeBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseRequantize>(&getContext(), residual);
    if (residual)
      patterns.add<SplitKernelEpilogues, SplitResidualTail>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
