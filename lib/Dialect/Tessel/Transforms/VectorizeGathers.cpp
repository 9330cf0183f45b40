//===- VectorizeGathers.cpp - vector tiles of generics that load buffers --===//
//
// Gathers (ONNX Resize, Gather, upsampling) reach the buffers as generics
// whose body loads its source with memref.load at indices computed from
// linalg.index and from other loads (an index list). Upstream's
// linalg::vectorize takes tensor.extract but not memref.load, so these
// stayed scalar loops, and LLVM does not vectorize them either (it cannot
// bound the loads against the store): a bilinear resize to 224 x 224 x 21
// ran at about three cycles an element.
//
// A tile of such a generic (every loop of extent 1 but the innermost) is
// vectorized here over the innermost loop: each body value is the same in
// every lane (a scalar, computed once), lane i holding base + i (an index
// that walks the lanes: the innermost linalg.index plus anything uniform),
// or a vector. Arithmetic on uniform values stays scalar; otherwise it is
// done on vectors. A load at uniform indices is one scalar load; with its
// last index walking the lanes (the buffer's innermost stride 1), one
// vector load; otherwise a vector.gather at the lanes' linear offsets
// (32-bit where the buffer is small enough: vgatherdps, not vgatherqps).
//
//===----------------------------------------------------------------------===//
#include "VectorizeGathers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;

namespace {

/// The strides of `t` if all static, its innermost 1.
std::optional<SmallVector<int64_t>> unitInnerStrides(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic) ||
      (!strides.empty() && strides.back() != 1))
    return std::nullopt;
  return strides;
}

/// A body value in the vector code.
struct Lanes {
  enum Kind { Uniform, Step, Vector } kind;
  /// The scalar (Uniform), the index of lane 0 (Step), or the vector.
  Value value;
};

class TileVectorizer {
public:
  TileVectorizer(RewriterBase &rewriter, linalg::GenericOp tile, int64_t width,
                 bool permutes)
      : b(rewriter), tile(tile), loc(tile.getLoc()), width(width),
        permutes(permutes) {}

  LogicalResult run();

private:
  Lanes get(Value v) {
    auto it = lanes.find(v);
    return it != lanes.end() ? it->second : Lanes{Lanes::Uniform, v};
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  VectorType vectorOf(Type t) { return VectorType::get({width}, t); }
  /// `l` as a vector.
  Value vector(Lanes l);
  FailureOr<Lanes> indexOp(linalg::IndexOp op);
  FailureOr<Lanes> apply(affine::AffineApplyOp op);
  FailureOr<Lanes> load(memref::LoadOp op);
  Value permuteRow(Value mem, ArrayRef<Lanes> idx, int64_t along,
                   int64_t rowLength);
  FailureOr<Lanes> elementwise(Operation *op);

  RewriterBase &b;
  linalg::GenericOp tile;
  Location loc;
  int64_t width;
  bool permutes;
  DenseMap<Value, Lanes> lanes;
};

/// Lanes of an AVX-512 register of 32-bit elements.
constexpr int64_t kPermuteLanes = 16;

Value TileVectorizer::vector(Lanes l) {
  if (l.kind == Lanes::Vector)
    return l.value;
  Value v =
      vector::BroadcastOp::create(b, loc, vectorOf(l.value.getType()), l.value);
  if (l.kind == Lanes::Uniform)
    return v;
  SmallVector<int64_t> iota(width);
  for (int64_t i = 0; i < width; ++i)
    iota[i] = i;
  Value step = arith::ConstantOp::create(b, loc, b.getIndexVectorAttr(iota));
  return arith::AddIOp::create(b, loc, v, step);
}

FailureOr<Lanes> TileVectorizer::indexOp(linalg::IndexOp op) {
  // The tile's own loops: the innermost walks the lanes, the others have
  // extent 1 (tiling offsets them with affine.apply in the body).
  bool inner = op.getDim() == tile.getNumLoops() - 1;
  return Lanes{inner ? Lanes::Step : Lanes::Uniform, index(0)};
}

FailureOr<Lanes> TileVectorizer::apply(affine::AffineApplyOp op) {
  SmallVector<Value> operands;
  int stepAt = -1;
  for (auto [i, v] : llvm::enumerate(op.getMapOperands())) {
    Lanes l = get(v);
    if (l.kind == Lanes::Vector || (l.kind == Lanes::Step && stepAt >= 0))
      return failure();
    if (l.kind == Lanes::Step)
      stepAt = static_cast<int>(i);
    operands.push_back(l.value);
  }
  AffineMap map = op.getAffineMap();
  Value base = affine::AffineApplyOp::create(b, loc, map, operands);
  if (stepAt < 0)
    return Lanes{Lanes::Uniform, base};
  // A step stays one where the map adds it with coefficient 1.
  unsigned dims = map.getNumDims();
  AffineExpr x = stepAt < static_cast<int>(dims)
                     ? getAffineDimExpr(stepAt, b.getContext())
                     : getAffineSymbolExpr(stepAt - dims, b.getContext());
  AffineExpr e = map.getResult(0);
  AffineExpr diff =
      simplifyAffineExpr(e.replace(x, x + 1) - e, dims, map.getNumSymbols());
  auto c = dyn_cast<AffineConstantExpr>(diff);
  if (!c || c.getValue() != 1)
    return failure();
  return Lanes{Lanes::Step, base};
}

FailureOr<Lanes> TileVectorizer::load(memref::LoadOp op) {
  Value mem = op.getMemRef();
  auto type = cast<MemRefType>(mem.getType());
  SmallVector<Lanes> idx;
  bool uniform = true;
  for (Value v : op.getIndices()) {
    idx.push_back(get(v));
    uniform &= idx.back().kind == Lanes::Uniform;
  }
  auto scalars = [&] {
    SmallVector<Value> s;
    for (const Lanes &l : idx)
      s.push_back(l.value);
    return s;
  };
  if (uniform)
    return Lanes{Lanes::Uniform,
                 memref::LoadOp::create(b, loc, mem, scalars())};
  std::optional<SmallVector<int64_t>> strides = unitInnerStrides(type);
  if (!strides)
    return failure();
  VectorType result = vectorOf(type.getElementType());
  // The last index walks the lanes, the others are uniform: one row.
  if (idx.back().kind == Lanes::Step &&
      llvm::all_of(ArrayRef(idx).drop_back(),
                   [](const Lanes &l) { return l.kind == Lanes::Uniform; }))
    return Lanes{Lanes::Vector,
                 vector::LoadOp::create(b, loc, result, mem, scalars())};
  // A row of at most two registers, the lanes picking from it: permutes.
  // The row is along the one index that differs between lanes; dims after
  // it, if any, of size 1 (a [N, K, 1] gather source).
  int64_t along = -1;
  for (auto [d, l] : llvm::enumerate(idx))
    if (l.kind != Lanes::Uniform)
      along = along < 0 ? static_cast<int64_t>(d) : -2;
  if (permutes && along >= 0 && idx[along].kind == Lanes::Vector &&
      type.getElementType().isF32() && width % kPermuteLanes == 0 &&
      (*strides)[along] == 1 &&
      !ShapedType::isDynamic(type.getShape()[along]) &&
      type.getShape()[along] <= 2 * kPermuteLanes &&
      llvm::all_of(type.getShape().drop_front(along + 1),
                   [](int64_t size) { return size == 1; }))
    return Lanes{Lanes::Vector,
                 permuteRow(mem, idx, along, type.getShape()[along])};
  // A gather at the lanes' linear offsets from element 0: the uniform part
  // summed as a scalar, the rest as vectors.
  Value scalarPart, vectorPart;
  for (auto [l, stride] : llvm::zip(idx, *strides)) {
    if (l.kind == Lanes::Uniform) {
      Value term = arith::MulIOp::create(b, loc, l.value, index(stride));
      scalarPart =
          scalarPart ? arith::AddIOp::create(b, loc, scalarPart, term) : term;
      continue;
    }
    Value term = arith::MulIOp::create(
        b, loc, vector(l), vector(Lanes{Lanes::Uniform, index(stride)}));
    vectorPart =
        vectorPart ? arith::AddIOp::create(b, loc, vectorPart, term) : term;
  }
  if (scalarPart)
    vectorPart = arith::AddIOp::create(
        b, loc, vectorPart, vector(Lanes{Lanes::Uniform, scalarPart}));
  // 32-bit offsets where every element of the buffer is in reach.
  int64_t last = 0;
  for (auto [size, stride] : llvm::zip(type.getShape(), *strides))
    last = ShapedType::isDynamic(size) || last < 0 ? -1
                                                   : last + (size - 1) * stride;
  if (last >= 0 && last < std::numeric_limits<int32_t>::max())
    vectorPart = arith::IndexCastOp::create(b, loc, vectorOf(b.getI32Type()),
                                            vectorPart);
  SmallVector<Value> zeros(type.getRank(), index(0));
  Value mask = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(vectorOf(b.getI1Type()), ArrayRef<bool>{true}));
  Value pass = arith::ConstantOp::create(b, loc, b.getZeroAttr(result));
  return Lanes{Lanes::Vector,
               vector::GatherOp::create(b, loc, result, mem, zeros, vectorPart,
                                        mask, pass)};
}

/// The gather of lanes idx[along] from the row of `mem` at the uniform
/// other indices, `rowLength` <= 32 contiguous f32: the row in two
/// registers (a masked load, nothing read past it) and one vpermi2ps per
/// 16 lanes. A 28-column row gathered by a resize to 224 columns: a
/// gather (which LLVM scalarizes on AMD) cost about 2.5 cycles an
/// element, a permute 16 elements a cycle.
Value TileVectorizer::permuteRow(Value mem, ArrayRef<Lanes> idx, int64_t along,
                                 int64_t rowLength) {
  Type f32 = b.getF32Type();
  auto two = VectorType::get({2 * kPermuteLanes}, f32);
  auto one = VectorType::get({kPermuteLanes}, f32);
  // Unit dims after the row ([N, K, 1]) folded into it, so that the masked
  // load below walks the row itself and stays inside the buffer's shape.
  auto rank = static_cast<int64_t>(idx.size());
  if (along < rank - 1) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < along; ++d)
      groups.push_back({d});
    groups.emplace_back();
    for (int64_t d = along; d < rank; ++d)
      groups.back().push_back(d);
    mem = memref::CollapseShapeOp::create(b, loc, mem, groups);
  }
  SmallVector<Value> at;
  for (auto [d, l] : llvm::enumerate(idx.take_front(along + 1)))
    at.push_back(static_cast<int64_t>(d) == along ? index(0) : l.value);
  SmallVector<bool> inRow(2 * kPermuteLanes);
  for (int64_t i = 0; i < 2 * kPermuteLanes; ++i)
    inRow[i] = i < rowLength;
  Value mask = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          VectorType::get({2 * kPermuteLanes}, b.getI1Type()),
          ArrayRef<bool>(inRow)));
  Value zeros = arith::ConstantOp::create(b, loc, b.getZeroAttr(two));
  Value r = vector::MaskedLoadOp::create(b, loc, two, mem, at, mask, zeros);
  Value lo = vector::ExtractStridedSliceOp::create(b, loc, r, {0},
                                                   {kPermuteLanes}, {1});
  Value hi = vector::ExtractStridedSliceOp::create(b, loc, r, {kPermuteLanes},
                                                   {kPermuteLanes}, {1});
  Value lanesIdx = arith::IndexCastOp::create(b, loc, vectorOf(b.getI32Type()),
                                              idx[along].value);
  Value out = arith::ConstantOp::create(b, loc, b.getZeroAttr(vectorOf(f32)));
  for (int64_t c = 0; c < width; c += kPermuteLanes) {
    Value part = vector::ExtractStridedSliceOp::create(b, loc, lanesIdx, {c},
                                                       {kPermuteLanes}, {1});
    Value picked =
        LLVM::CallIntrinsicOp::create(
            b, loc, one, b.getStringAttr("llvm.x86.avx512.vpermi2var.ps.512"),
            ValueRange{lo, part, hi})
            .getResult(0);
    out = vector::InsertStridedSliceOp::create(b, loc, picked, out, {c}, {1});
  }
  return out;
}

FailureOr<Lanes> TileVectorizer::elementwise(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return failure();
  SmallVector<Lanes> in;
  bool uniform = true;
  for (Value v : op->getOperands()) {
    in.push_back(get(v));
    uniform &= in.back().kind == Lanes::Uniform;
  }
  if (uniform) {
    IRMapping mapping;
    for (auto [v, l] : llvm::zip(op->getOperands(), in))
      mapping.map(v, l.value);
    return Lanes{Lanes::Uniform, b.clone(*op, mapping)->getResult(0)};
  }
  // An index walking the lanes plus (or minus) a uniform one still walks
  // them.
  if (in.size() == 2 &&
      ((isa<arith::AddIOp, arith::SubIOp>(op) && in[0].kind == Lanes::Step &&
        in[1].kind == Lanes::Uniform) ||
       (isa<arith::AddIOp>(op) && in[0].kind == Lanes::Uniform &&
        in[1].kind == Lanes::Step))) {
    IRMapping mapping;
    mapping.map(op->getOperand(0), in[0].value);
    mapping.map(op->getOperand(1), in[1].value);
    return Lanes{Lanes::Step, b.clone(*op, mapping)->getResult(0)};
  }
  if (!op->hasTrait<OpTrait::Elementwise>())
    return failure();
  OperationState state(loc, op->getName());
  for (const Lanes &l : in)
    state.addOperands(vector(l));
  state.addTypes(vectorOf(op->getResult(0).getType()));
  state.addAttributes(op->getAttrs());
  return Lanes{Lanes::Vector, b.create(state)->getResult(0)};
}

LogicalResult TileVectorizer::run() {
  Block *body = tile.getBody();
  unsigned n = tile.getNumLoops();
  auto readOperand = [&](OpOperand *operand) -> Lanes {
    Value v = operand->get();
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type)
      return Lanes{Lanes::Uniform, v};
    SmallVector<Value> zeros(type.getRank(), index(0));
    AffineMap map = tile.getMatchingIndexingMap(operand);
    if (map.getNumResults() > 0 && map.isFunctionOfDim(n - 1))
      return Lanes{Lanes::Vector,
                   vector::LoadOp::create(
                       b, loc, vectorOf(type.getElementType()), v, zeros)};
    return Lanes{Lanes::Uniform, memref::LoadOp::create(b, loc, v, zeros)};
  };
  for (OpOperand &operand : tile->getOpOperands()) {
    BlockArgument arg = body->getArgument(operand.getOperandNumber());
    if (!arg.use_empty())
      lanes[arg] = readOperand(&operand);
  }
  for (Operation &op : body->without_terminator()) {
    FailureOr<Lanes> l = failure();
    if (auto i = dyn_cast<linalg::IndexOp>(op))
      l = indexOp(i);
    else if (auto a = dyn_cast<affine::AffineApplyOp>(op))
      l = apply(a);
    else if (auto ld = dyn_cast<memref::LoadOp>(op))
      l = load(ld);
    else if (isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      l = elementwise(&op);
    if (failed(l))
      return failure();
    lanes[op.getResult(0)] = *l;
  }
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (auto [value, init] : llvm::zip(yield.getValues(), tile.getDpsInits())) {
    auto type = cast<MemRefType>(init.getType());
    SmallVector<Value> zeros(type.getRank(), index(0));
    vector::StoreOp::create(b, loc, vector(get(value)), init, zeros);
  }
  return success();
}

} // namespace

bool mlir::tessel::bodyLoadsBuffers(linalg::LinalgOp op) {
  return llvm::any_of(op.getBlock()->without_terminator(),
                      [](Operation &o) { return isa<memref::LoadOp>(o); });
}

std::optional<StringRef>
mlir::tessel::loadingBodyRejectReason(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp>(op))
    return "not a generic";
  if (op.getNumParallelLoops() != op.getNumLoops())
    return "loads in a reduction";
  for (Operation &o : op.getBlock()->without_terminator()) {
    if (o.getNumRegions() != 0 || o.getNumResults() != 1)
      return "body op with regions or several results";
    if (auto ld = dyn_cast<memref::LoadOp>(o)) {
      auto type = ld.getMemRefType();
      Type elt = type.getElementType();
      if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
        return "loaded element type";
      if (type.getRank() > 0 && !unitInnerStrides(type))
        return "loaded buffer not of static unit innermost stride";
      continue;
    }
    if (!isa<arith::ArithDialect, math::MathDialect>(o.getDialect()) &&
        !isa<linalg::IndexOp, affine::AffineApplyOp>(o))
      return "body op not arithmetic, index or load";
  }
  return std::nullopt;
}

LogicalResult mlir::tessel::vectorizeLoadingTile(RewriterBase &rewriter,
                                                 linalg::GenericOp tile,
                                                 bool avx512Permutes) {
  SmallVector<int64_t> ranges = tile.getStaticLoopRanges();
  if (ranges.empty() || ShapedType::isDynamic(ranges.back()) ||
      llvm::any_of(ArrayRef(ranges).drop_back(),
                   [](int64_t r) { return r != 1; }))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(tile);
  // What it built before the tile goes again where a body op cannot be
  // taken.
  Operation *before = tile->getPrevNode();
  TileVectorizer v(rewriter, tile, ranges.back(), avx512Permutes);
  if (failed(v.run())) {
    while (tile->getPrevNode() != before)
      rewriter.eraseOp(tile->getPrevNode());
    return failure();
  }
  rewriter.eraseOp(tile);
  return success();
}
