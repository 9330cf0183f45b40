//===- VectorizeLinalg.cpp - tile linalg ops on buffers into vectors ------===//
//
// What the kernel library does not run (elementwise chains, bias and
// activation tails, pooling-like reductions over outer dimensions, copies)
// is tiled so each tile is one row of vector registers along the innermost
// dimension, and each tile is vectorized with upstream `linalg::vectorize`.
// The tile loops over the parallel dimensions form an `scf.parallel`, which
// tessel-outline-parallel-loops later hands to the thread pool.
//
// Tiles: every outer dimension by 1, the innermost by a multiple of the
// target's vector width (up to `max-unroll` registers, so the loop body has
// independent chains), or whole when it is short, or by one register plus
// one remainder tile. Every tile has a static shape: no masks.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "PoolingWindows.h"
#include "VectorizeGathers.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <utility>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELVECTORIZELINALG
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// The longest innermost reduction vectorized, in registers of f32: a row
/// of layer norm over 768 channels is 48 AVX-512 registers.
constexpr int64_t kMaxRowRegisters = 64;

/// The most registers a tile's whole reduction window may take (window
/// elements x registers per row).
constexpr int64_t kMaxWindowRegisters = 32;

/// True if the innermost stride of `memref` is 1 (vector loads/stores).
bool innermostContiguous(Value memref) {
  auto ty = dyn_cast<MemRefType>(memref.getType());
  if (!ty || ty.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(ty.getStridesAndOffset(strides, offset)))
    return false;
  return strides.back() == 1;
}

/// True if every floating-point op of `op`'s body may be reassociated
/// (tessel-reassociate-reductions marks reduction bodies so).
bool bodyReassociates(linalg::LinalgOp op) {
  for (Operation &bodyOp : op.getBlock()->without_terminator()) {
    auto fm = dyn_cast<arith::ArithFastMathInterface>(&bodyOp);
    if (!fm)
      continue;
    if (!arith::bitEnumContainsAll(fm.getFastMathFlagsAttr().getValue(),
                                   arith::FastMathFlags::reassoc))
      return false;
  }
  return true;
}

/// True if reducing `op`'s window in any order gives its loops' result:
/// its body is one max/min combiner, or reassociates.
bool wholeWindowReduces(linalg::LinalgOp op) {
  if (bodyReassociates(op) &&
      llvm::any_of(op.getBlock()->without_terminator(), [](Operation &o) {
        return isa<arith::ArithFastMathInterface>(o);
      }))
    return true;
  auto ops = op.getBlock()->without_terminator();
  return llvm::hasSingleElement(ops) &&
         isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp,
             arith::MinUIOp>(*ops.begin());
}

/// Why `op` is left to the scalar loops, or nullopt if it is vectorized.
/// `maxRow`: the longest innermost reduction held in registers at once.
std::optional<StringRef> rejectReason(linalg::LinalgOp op, int64_t maxRow) {
  if (!op.hasPureBufferSemantics())
    return "not on buffers";
  if (linalg::isaContractionOpInterface(op) ||
      linalg::isaConvolutionOpInterface(op))
    return "contraction or convolution";
  if (!isa<TilingInterface>(op.getOperation()))
    return "not tileable";
  unsigned n = op.getNumLoops();
  if (n == 0)
    return "no loops";
  // Outer dimensions may be dynamic (a run-time batch): the tiles are
  // static all the same, and only their loops take run-time bounds.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges.back()))
    return "dynamic innermost dimension";
  if (ranges.back() < 4)
    return "innermost dimension too short";
  // A reduction along the innermost dimension (layer norm's statistics,
  // softmax's sums) reads a whole row into registers and reduces it in a
  // tree: only if the row fits and the body may be reassociated.
  bool innerReduction =
      op.getIteratorTypesArray().back() == utils::IteratorType::reduction;
  if (innerReduction && ranges.back() > maxRow)
    return "innermost reduction longer than the registers";
  if (innerReduction && !bodyReassociates(op))
    return "reduction order must be kept";
  AffineExpr inner = getAffineDimExpr(n - 1, op.getContext());
  for (OpOperand &operand : op->getOpOperands()) {
    Type t = operand.get().getType();
    if (!isa<MemRefType>(t)) {
      if (!t.isIntOrIndexOrFloat())
        return "non-scalar operand";
      continue;
    }
    // i1 buffers hold a byte per element, vector<Nxi1> is N bits in memory.
    Type elt = getElementTypeOrSelf(t);
    if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
      return "element type";
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return "indexing map is not a projected permutation";
    bool usesInner = map.isFunctionOfDim(n - 1);
    bool isInit = op.isDpsInit(&operand);
    // Vector tiles walk the innermost dimension: it must be each buffer's
    // contiguous one (an operand without it is broadcast).
    if (((isInit && !innerReduction) || usesInner) &&
        (map.getNumResults() == 0 || map.getResults().back() != inner ||
         !innermostContiguous(operand.get())))
      return "innermost dimension is not contiguous";
  }
  // Gathers: VectorizeGathers.cpp vectorizes the tiles.
  if (bodyLoadsBuffers(op))
    return loadingBodyRejectReason(op);
  for (Operation &bodyOp : op.getBlock()->without_terminator())
    if (!isa<arith::ArithDialect, math::MathDialect>(bodyOp.getDialect()) &&
        !isa<linalg::IndexOp>(bodyOp))
      return "body op not elementwise arithmetic";
  if (failed(linalg::vectorizeOpPrecondition(op)))
    return "not vectorizable";
  return std::nullopt;
}

/// A multi_reduction whose kept dimensions are all unit (one row of an
/// innermost reduction tile) becomes one `vector.reduction` with
/// reassociation: LLVM reduces the row as a tree. Upstream's lowering would
/// move the reduced dimension outward and add one lane at a time.
struct MultiReductionOfOneRow
    : public OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    VectorType src = op.getSourceVectorType();
    if (src.isScalable())
      return failure();
    int64_t row = 1;
    for (int64_t d = 0; d < src.getRank(); ++d) {
      if (op.isReducedDim(d))
        row *= src.getDimSize(d);
      else if (src.getDimSize(d) != 1)
        return failure();
    }
    Location loc = op.getLoc();
    Value flat = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({row}, src.getElementType()),
        op.getSource());
    Value acc = op.getAcc();
    if (auto accType = dyn_cast<VectorType>(acc.getType()))
      acc = vector::ExtractOp::create(
          rewriter, loc, acc, SmallVector<int64_t>(accType.getRank(), 0));
    Value sum = vector::ReductionOp::create(rewriter, loc, op.getKind(), flat,
                                            acc,
                                            arith::FastMathFlags::reassoc);
    if (auto resultType = dyn_cast<VectorType>(op.getType()))
      sum = vector::BroadcastOp::create(rewriter, loc, resultType, sum);
    rewriter.replaceOp(op, sum);
    return success();
  }
};

/// A max/min multi_reduction over leading dimensions (a whole pooling
/// window: vector<3x3x24xf32> reduced over the 3x3) as a balanced tree of
/// element-wise max/min over the window's rows and the accumulator.
/// Upstream's lowering chains them one after the other, and NaN-propagating
/// maximumf is several instructions: the chain was the pool's time. These
/// kinds are associative and commutative bit for bit (NaN and signed zeros
/// included), so the tree gives the chain's result.
struct WindowReductionAsTree
    : public OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    using vector::CombiningKind;
    switch (op.getKind()) {
    case CombiningKind::MAXIMUMF:
    case CombiningKind::MINIMUMF:
    case CombiningKind::MAXNUMF:
    case CombiningKind::MINNUMF:
    case CombiningKind::MAXSI:
    case CombiningKind::MINSI:
    case CombiningKind::MAXUI:
    case CombiningKind::MINUI:
      break;
    default:
      return failure();
    }
    VectorType src = op.getSourceVectorType();
    if (src.isScalable() || src.getRank() < 2)
      return failure();
    // Reduced dimensions: all but the last (once the unit dimensions are
    // gone: the other patterns drop them first).
    int64_t lead = src.getRank() - 1;
    for (int64_t d = 0; d < src.getRank(); ++d)
      if (op.isReducedDim(d) != (d < lead) || src.getDimSize(d) == 1)
        return failure();
    int64_t count = 1;
    for (int64_t d = 0; d < lead; ++d)
      count *= src.getDimSize(d);
    if (count < 2)
      return failure();
    Location loc = op.getLoc();
    // The accumulator is one more leaf (these kinds do not care where).
    SmallVector<Value> level = {op.getAcc()};
    for (int64_t i = 0; i < count; ++i) {
      SmallVector<int64_t> pos(lead);
      for (int64_t d = lead - 1, r = i; d >= 0; --d) {
        pos[d] = r % src.getDimSize(d);
        r /= src.getDimSize(d);
      }
      level.push_back(
          vector::ExtractOp::create(rewriter, loc, op.getSource(), pos));
    }
    while (level.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(vector::makeArithReduction(rewriter, loc, op.getKind(),
                                                  level[i], level[i + 1]));
      if (level.size() % 2)
        next.push_back(level.back());
      level = std::move(next);
    }
    rewriter.replaceOp(op, level.front());
    return success();
  }
};

struct VectorizeLinalg
    : public tessel::impl::TesselVectorizeLinalgBase<VectorizeLinalg> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Replaces `op` by a loop nest over static tiles; returns the tiles.
  FailureOr<SmallVector<Operation *>> tile(RewriterBase &rewriter,
                                           linalg::LinalgOp op);
};

FailureOr<SmallVector<Operation *>>
VectorizeLinalg::tile(RewriterBase &rewriter, linalg::LinalgOp op) {
  Location loc = op.getLoc();
  unsigned n = op.getNumLoops();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();

  // Innermost tile: registers of the widest element type.
  unsigned bits = 8;
  for (Value v : op->getOperands())
    bits = std::max(bits, getElementTypeOrSelf(v.getType())
                              .getIntOrFloatBitWidth());
  int64_t lanes = std::max<int64_t>(vectorBits / bits, 1);
  int64_t inner = ranges.back();
  int64_t tileSize, mainTiles, rem;
  if (iters.back() == utils::IteratorType::reduction) {
    // The whole row in one tile (rejectReason bounds it).
    tileSize = inner;
    rem = 0;
  } else if (inner % lanes == 0) {
    int64_t unroll = 1;
    while (unroll * 2 <= maxUnroll && (inner / lanes) % (unroll * 2) == 0)
      unroll *= 2;
    tileSize = lanes * unroll;
    rem = 0;
  } else if (inner <= lanes * maxUnroll) {
    tileSize = inner;
    rem = 0;
  } else {
    tileSize = lanes;
    rem = inner % lanes;
  }
  mainTiles = inner / tileSize;

  // Parallel loops: outer parallel dims of extent > 1 (or known only at
  // run time), plus the innermost tiles when they need a loop and no
  // remainder follows it.
  SmallVector<unsigned> parDims, redDims, wholeDims;
  for (unsigned d = 0; d + 1 < n; ++d) {
    if (!ShapedType::isDynamic(ranges[d]) && ranges[d] <= 1)
      continue;
    (iters[d] == utils::IteratorType::parallel ? parDims : redDims)
        .push_back(d);
  }
  // A short window of outer reduction dimensions (a 3x3 pooling's kh, kw)
  // goes whole into each tile: the window is reduced in registers and the
  // output row is read and written once, not once per window element
  // through memory (ShuffleNetV2's max pool: 9 store-to-load round trips
  // per pixel). Only where the order of the reduction cannot matter: a
  // max/min body, or one tessel-reassociate-reductions marked.
  if (!redDims.empty() && wholeWindowReduces(op)) {
    int64_t window = 1;
    for (unsigned d : redDims)
      window = ShapedType::isDynamic(ranges[d]) ? kMaxWindowRegisters + 1
                                                : window * ranges[d];
    if (window * ((tileSize + lanes - 1) / lanes) <= kMaxWindowRegisters)
      wholeDims = std::exchange(redDims, {});
  }
  bool innerLoop = mainTiles > 1;
  bool innerInParallel = innerLoop && rem == 0;

  SmallVector<Operation *> tiles;
  bool tilingFailed = false;
  auto idx = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // The extent of loop `d`: a constant, or read from the operands before
  // the op (where the loops that use it are built).
  SmallVector<Value> dynamicExtents(n);
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    SmallVector<Range> loopRanges = op.createLoopRanges(rewriter, loc);
    for (unsigned d = 0; d < n; ++d)
      if (ShapedType::isDynamic(ranges[d]))
        dynamicExtents[d] = getValueOrCreateConstantIndexOp(
            rewriter, loc, loopRanges[d].size);
  }
  auto extent = [&](OpBuilder &b, unsigned d) -> Value {
    return dynamicExtents[d] ? dynamicExtents[d] : idx(b, ranges[d]);
  };
  // Emits the tile at `offsets` (innermost offset and size given) inside
  // loops over the reduction dimensions.
  auto emitTile = [&](OpBuilder &b, SmallVector<OpFoldResult> offsets,
                      OpFoldResult innerOffset, int64_t innerSize) {
    std::function<void(OpBuilder &, unsigned)> nest = [&](OpBuilder &b,
                                                          unsigned r) {
      if (r < redDims.size()) {
        scf::ForOp::create(b, loc, idx(b, 0), extent(b, redDims[r]),
                           idx(b, 1), ValueRange{},
                           [&](OpBuilder &b, Location, Value iv, ValueRange) {
                             offsets[redDims[r]] = iv;
                             nest(b, r + 1);
                             scf::YieldOp::create(b, loc);
                           });
        return;
      }
      offsets[n - 1] = innerOffset;
      SmallVector<OpFoldResult> sizes(n, b.getIndexAttr(1));
      sizes[n - 1] = b.getIndexAttr(innerSize);
      for (unsigned d : wholeDims)
        sizes[d] = b.getIndexAttr(ranges[d]);
      FailureOr<TilingResult> tiled =
          cast<TilingInterface>(op.getOperation())
              .getTiledImplementation(b, offsets, sizes);
      if (failed(tiled)) {
        tilingFailed = true;
        return;
      }
      tiles.append(tiled->tiledOps.begin(), tiled->tiledOps.end());
    };
    nest(b, 0);
  };
  // Inside the parallel loops: the innermost tiles (and remainder).
  auto emitInner = [&](OpBuilder &b, SmallVector<OpFoldResult> offsets) {
    if (innerLoop && !innerInParallel) {
      scf::ForOp::create(b, loc, idx(b, 0), idx(b, mainTiles * tileSize),
                         idx(b, tileSize), ValueRange{},
                         [&](OpBuilder &b, Location, Value iv, ValueRange) {
                           emitTile(b, offsets, iv, tileSize);
                           scf::YieldOp::create(b, loc);
                         });
    } else if (!innerLoop) {
      emitTile(b, offsets, b.getIndexAttr(0), tileSize);
    }
    if (rem > 0)
      emitTile(b, offsets, b.getIndexAttr(mainTiles * tileSize), rem);
  };

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  SmallVector<OpFoldResult> zeros(n, rewriter.getIndexAttr(0));
  SmallVector<unsigned> loopDims = parDims;
  if (innerInParallel)
    loopDims.push_back(n - 1);
  if (loopDims.empty()) {
    emitInner(rewriter, zeros);
  } else {
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned d : loopDims) {
      bool isInner = d == n - 1;
      lbs.push_back(idx(rewriter, 0));
      ubs.push_back(isInner ? idx(rewriter, mainTiles * tileSize)
                            : extent(rewriter, d));
      steps.push_back(idx(rewriter, isInner ? tileSize : 1));
    }
    scf::ParallelOp::create(
        rewriter, loc, lbs, ubs, steps,
        [&](OpBuilder &b, Location, ValueRange ivs) {
          SmallVector<OpFoldResult> offsets = zeros;
          for (auto [d, iv] : llvm::zip(loopDims, ivs))
            offsets[d] = iv;
          if (innerInParallel)
            emitTile(b, offsets, offsets[n - 1], tileSize);
          else
            emitInner(b, offsets);
        });
  }
  // The op passed the checks of rejectReason, so its tiling cannot fail;
  // if it ever did, the loop nest would miss tiles: fail loudly instead.
  if (tilingFailed) {
    op.emitError("tessel-vectorize-linalg: tiling failed");
    return failure();
  }
  rewriter.eraseOp(op);
  return tiles;
}

void VectorizeLinalg::runOnOperation() {
  if (vectorBits < 64 || maxUnroll < 1) {
    getOperation()->emitError("tessel-vectorize-linalg: vector-bits must be "
                              "at least 64 and max-unroll at least 1");
    return signalPassFailure();
  }
  IRRewriter rewriter(&getContext());
  // Sliding-window pooling first becomes a reduction over a window view
  // of its input (PoolingWindows.h), which the tiling below vectorizes.
  SmallVector<linalg::LinalgOp> pools;
  getOperation()->walk([&](linalg::LinalgOp op) {
    if (isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcMinOp,
            linalg::PoolingNhwcSumOp>(op.getOperation()))
      pools.push_back(op);
  });
  for (linalg::LinalgOp op : pools)
    (void)poolingAsWindowReduction(rewriter, op);

  SmallVector<linalg::LinalgOp> candidates;
  getOperation()->walk([&](linalg::LinalgOp op) {
    if (!rejectReason(op, kMaxRowRegisters * (vectorBits / 32)))
      candidates.push_back(op);
  });
  for (linalg::LinalgOp op : candidates) {
    FailureOr<SmallVector<Operation *>> tiles = tile(rewriter, op);
    if (failed(tiles))
      return signalPassFailure();
    for (Operation *t : *tiles) {
      rewriter.setInsertionPoint(t);
      // A tile that does not vectorize stays a (correct) linalg op and
      // becomes loops later.
      auto generic = dyn_cast<linalg::GenericOp>(t);
      if (generic && bodyLoadsBuffers(generic)) {
        (void)vectorizeLoadingTile(rewriter, generic, vectorBits >= 512);
        continue;
      }
      FailureOr<linalg::VectorizationResult> result =
          linalg::vectorize(rewriter, t);
      if (succeeded(result))
        rewriter.eraseOp(t);
    }
  }

  // Unit dimensions of the tiles out of the vectors, transfers on
  // contiguous rows to plain loads.
  RewritePatternSet patterns(&getContext());
  patterns.add<MultiReductionOfOneRow>(&getContext(), /*benefit=*/2);
  patterns.add<WindowReductionAsTree>(&getContext(), /*benefit=*/2);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  vector::populateVectorTransferDropUnitDimsPatterns(patterns);
  vector::populateDropUnitDimWithShapeCastPatterns(patterns);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerParallel);
  // A whole window's read (vector<3x3x24xf32> through the pooling view) as
  // one row read per window element, not through a stack buffer.
  populateVectorToSCFConversionPatterns(
      patterns, VectorTransferToSCFOptions().enableFullUnroll());
  for (auto *dialect : getContext().getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName name : getContext().getRegisteredOperations())
    if (isa<vector::VectorDialect, memref::MemRefDialect,
            affine::AffineDialect>(name.getDialect()))
      name.getCanonicalizationPatterns(patterns, &getContext());
  if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
    return signalPassFailure();
}

} // namespace
