//===- GpuFuseRows.cpp - Row reductions and their neighbours as one kernel ===//
//
// Softmax and the normalizations are chains of small linalg ops over the
// same rows: a reduction over each row (max, sum, sum of squares), ops that
// use the row's result on each element, another reduction. Lowered one op
// at a time (convert-linalg-to-parallel-loops), each is its own kernel and
// each reduction runs one thread per row over the row's elements, serially
// and with strided loads: BERT's 2 layers were 76 kernels, most of them
// these. This pass turns a run of such ops that agree on their rows into
// one kernel of one block per row: each op in turn over the row's elements
// (threads striding), a reduction as a tree of warp shuffles and one
// shared-memory step, and a block barrier between the ops, so the values
// one op writes are what the next one reads.
//
// It is sound because every access to a buffer that the run writes stays
// inside the row of the block that makes it (checked per operand: the
// leading indices of its map are the row loops, in order, over the
// buffer's leading sizes), so the blocks never see each other's data and
// each block runs the ops in program order. Buffers the run only reads may
// be read in any pattern (a bias, a constant).
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "GpuEmitter.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGPUFUSEROWS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

using Emitter = tessel::GpuEmitter;

constexpr int64_t kWarp = 32, kMaxThreads = 256;

/// The buffer a view is a view of (through expand/collapse shapes,
/// subviews, casts).
Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// A linalg op of the run, seen as rows x columns: its first `rowLoops`
/// loops are parallel and span the run's rows; the rest are its columns
/// (for a reduction, all reduction loops or of extent 1).
struct RowOp {
  mutable linalg::LinalgOp op; // interface calls are not const
  SmallVector<int64_t> bounds;
  int64_t rowLoops = 0;
  int64_t cols = 1;
  bool reduction = false;
  /// For a reduction: the op that combines an element's value with the
  /// output (out = combine(x, out) or combine(out, x)) and whether the
  /// output is its lhs.
  Operation *combine = nullptr;
  bool outIsLhs = false;
};

/// Static loop bounds, or nothing.
std::optional<SmallVector<int64_t>> staticBounds(linalg::LinalgOp op) {
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  if (llvm::any_of(bounds, ShapedType::isDynamic))
    return std::nullopt;
  return bounds;
}

/// Whether `op` is a reduction this pass can split across threads: its
/// single output is `combine(x, out)` of an associative, commutative
/// arith op with a neutral element (x computed without the output), on
/// f32 or i32 (what the warp shuffles carry).
bool asReduction(linalg::GenericOp op, RowOp &r) {
  if (op.getNumDpsInits() != 1)
    return false;
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArguments().back();
  Value yielded = body.getTerminator()->getOperand(0);
  Operation *comb = yielded.getDefiningOp();
  if (!comb || comb->getBlock() != &body || comb->getNumOperands() != 2 ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp, arith::MulIOp,
           arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::AndIOp, arith::OrIOp, arith::XOrIOp>(comb))
    return false;
  Type t = yielded.getType();
  if (!t.isF32() && !t.isInteger(32))
    return false;
  if (!arith::getNeutralElement(comb))
    return false;
  int outSide = comb->getOperand(0) == out ? 0
                : comb->getOperand(1) == out ? 1
                                              : -1;
  if (outSide < 0 || comb->getOperand(1 - outSide) == out)
    return false;
  // Only the combine may read the output.
  for (OpOperand &use : out.getUses())
    if (use.getOwner() != comb)
      return false;
  r.combine = comb;
  r.outIsLhs = outSide == 0;
  return true;
}

/// The rows of a reduction op (its leading parallel loops' product), if it
/// has static bounds.
std::optional<int64_t> reductionRows(Operation *o) {
  auto op = dyn_cast<linalg::GenericOp>(o);
  if (!op || !op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0)
    return std::nullopt;
  // Contractions and convolutions are tessel-gpu-tile-matmul's (tiled
  // kernels that reuse each operand across a block).
  if (linalg::isaContractionOpInterface(op) ||
      linalg::isaConvolutionOpInterface(op))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> bounds = staticBounds(op);
  if (!bounds)
    return std::nullopt;
  int64_t rows = 1;
  auto iters = op.getIteratorTypesArray();
  for (size_t k = 0; k < iters.size() &&
                     iters[k] == utils::IteratorType::parallel;
       ++k)
    rows *= (*bounds)[k];
  return rows;
}

/// `op` as a row op of `rows` rows, or nothing.
std::optional<RowOp> asRowOp(Operation *o, int64_t rows) {
  auto op = dyn_cast<linalg::LinalgOp>(o);
  if (!op || !op.hasPureBufferSemantics() || o->getNumRegions() != 1 ||
      !isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp>(o))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> bounds = staticBounds(op);
  if (!bounds)
    return std::nullopt;
  for (Value v : op->getOperands())
    if (auto t = dyn_cast<MemRefType>(v.getType()); t && !t.hasStaticShape())
      return std::nullopt;
  RowOp r;
  r.op = op;
  r.bounds = *bounds;
  auto iters = op.getIteratorTypesArray();
  r.reduction = llvm::any_of(iters, [](utils::IteratorType t) {
    return t == utils::IteratorType::reduction;
  });
  int64_t n = r.bounds.size(), product = 1, k = 0;
  if (r.reduction) {
    // Rows: the leading parallel loops; every loop after them reduces (or
    // has one iteration).
    auto generic = dyn_cast<linalg::GenericOp>(o);
    if (!generic || !reductionRows(o) || !asReduction(generic, r))
      return std::nullopt;
    while (k < n && iters[k] == utils::IteratorType::parallel)
      product *= r.bounds[k++];
    for (int64_t j = k; j < n; ++j)
      if (iters[j] == utils::IteratorType::parallel && r.bounds[j] != 1)
        return std::nullopt;
    if (product != rows)
      return std::nullopt;
  } else {
    // Rows: the fewest leading loops that span them.
    while (product != rows && k < n && product < rows)
      product *= r.bounds[k++];
    if (product != rows)
      return std::nullopt;
  }
  r.rowLoops = k;
  for (int64_t j = k; j < n; ++j)
    r.cols *= r.bounds[j];
  return r;
}

/// Whether `operand` of `r` touches only its own row: the buffer is
/// row-major and contiguous, and its indices, leaving out those that are
/// always 0, start with the op's row loops in order (each over a buffer
/// dim of the loop's extent) and go on with column loops only. The row
/// then owns one contiguous slice of the buffer, the same for every view
/// of it of this kind.
bool rowLocal(const RowOp &r, OpOperand &operand) {
  auto type = cast<MemRefType>(operand.get().getType());
  if (!type.getLayout().isIdentity())
    return false;
  AffineMap map = r.op.getMatchingIndexingMap(&operand);
  SmallVector<int64_t> rowDims;
  for (int64_t j = 0; j < r.rowLoops; ++j)
    if (r.bounds[j] != 1)
      rowDims.push_back(j);
  size_t next = 0;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (type.getDimSize(i) == 1)
      continue; // always 0
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return false;
    int64_t pos = d.getPosition();
    if (r.bounds[pos] == 1)
      continue;
    if (next < rowDims.size()) {
      if (pos != rowDims[next] || type.getDimSize(i) != r.bounds[pos])
        return false;
      ++next;
    } else if (pos < r.rowLoops) {
      return false;
    }
  }
  return next == rowDims.size();
}

/// Where an operand's buffer lies: bytes [offset, offset + size) of its
/// root, or all of the root (size < 0) where that is not known statically.
/// Buffers planned into one arena are byte views of it (memref.view),
/// reshaped; two views of one root at different offsets may overlap.
struct Region {
  Value root;
  int64_t offset = 0, size = -1;
  bool overlaps(const Region &o) const {
    if (root != o.root)
      return false;
    if (size < 0 || o.size < 0)
      return true;
    return offset < o.offset + o.size && o.offset < offset + size;
  }
};

Region regionOf(Value v) {
  auto type = cast<MemRefType>(v.getType());
  int64_t bytes =
      type.getNumElements() *
      llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  Value cur = v;
  while (isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
      cur.getDefiningOp()))
    cur = cur.getDefiningOp()->getOperand(0);
  if (auto view = cur.getDefiningOp<memref::ViewOp>()) {
    std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
    if (shift && view.getSizes().empty())
      return {rootOf(view.getSource()), *shift, bytes};
  } else if (!cur.getDefiningOp<ViewLikeOpInterface>()) {
    return {cur, 0, bytes};
  }
  return {rootOf(v), 0, -1};
}

/// Whether the ops can run as one kernel of one block per row: a block
/// touches no memory that another block's row of a buffer the run writes
/// holds. So every access that overlaps a written buffer must be
/// row-local, to the same bytes (the same offset and size, so that each
/// row is the same slice of both).
bool soundAsRows(ArrayRef<RowOp> ops) {
  struct Access {
    Region region;
    bool rowLocal, write;
  };
  SmallVector<Access> accesses;
  for (const RowOp &r : ops)
    for (OpOperand &operand : r.op->getOpOperands())
      if (isa<MemRefType>(operand.get().getType()))
        accesses.push_back({regionOf(operand.get()), rowLocal(r, operand),
                            r.op.isDpsInit(&operand)});
  for (const Access &w : accesses) {
    if (!w.write)
      continue;
    for (const Access &a : accesses)
      if (a.region.overlaps(w.region) &&
          (!a.rowLocal || !w.rowLocal || a.region.offset != w.region.offset ||
           a.region.size != w.region.size || w.region.size < 0))
        return false;
  }
  return true;
}

/// Values of `n` loops from a linear index over `bounds[first..first+n)`
/// (the last loop fastest); loops of extent 1 are 0.
void delinearize(Emitter &e, Value linear, ArrayRef<int64_t> bounds,
                 int64_t first, int64_t n, SmallVectorImpl<Value> &ivs) {
  SmallVector<Value> out(n);
  Value rest = linear;
  for (int64_t j = n - 1; j >= 0; --j) {
    int64_t extent = bounds[first + j];
    if (extent == 1) {
      out[j] = e.idx(0);
      continue;
    }
    out[j] = j == 0 ? rest : e.rem(rest, e.idx(extent));
    if (j > 0)
      rest = e.div(rest, e.idx(extent));
  }
  ivs.append(out.begin(), out.end());
}

/// The indices of `operand` at loop values `ivs`.
SmallVector<Value> indicesOf(Emitter &e, const RowOp &r, OpOperand &operand,
                             ArrayRef<Value> ivs) {
  AffineMap map = r.op.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (AffineExpr x : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(x))
      indices.push_back(ivs[d.getPosition()]);
    else if (auto c = dyn_cast<AffineConstantExpr>(x))
      indices.push_back(e.idx(c.getValue()));
    else
      indices.push_back(affine::AffineApplyOp::create(
          e.b, e.loc, AffineMap::get(map.getNumDims(), 0, x), ivs));
  }
  return indices;
}

/// The body of `r` at loop values `ivs` (row loops then column loops):
/// loads its operands, clones its body; returns the yielded values (for a
/// reduction, the element's value x instead, without the combine).
SmallVector<Value> emitBody(Emitter &e, const RowOp &r, ArrayRef<Value> ivs) {
  IRMapping map;
  Block &body = r.op->getRegion(0).front();
  for (OpOperand &operand : r.op->getOpOperands()) {
    BlockArgument arg = body.getArgument(operand.getOperandNumber());
    if (!isa<MemRefType>(operand.get().getType())) {
      map.map(arg, operand.get()); // a scalar input (linalg.fill's value)
      continue;
    }
    if (arg.use_empty() ||
        (r.reduction && r.op.isDpsInit(&operand)))
      continue;
    map.map(arg, memref::LoadOp::create(e.b, e.loc, operand.get(),
                                        indicesOf(e, r, operand, ivs)));
  }
  SmallVector<Value> results;
  for (Operation &op : body) {
    if (&op == r.combine)
      continue;
    if (auto yield = dyn_cast<linalg::YieldOp>(op)) {
      if (r.reduction)
        results.push_back(
            map.lookupOrDefault(r.combine->getOperand(r.outIsLhs ? 1 : 0)));
      else
        for (Value v : yield.getValues())
          results.push_back(map.lookupOrDefault(v));
      continue;
    }
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    e.b.clone(op, map);
  }
  return results;
}

/// `combine`'s kind applied to two values.
Value combineWith(Emitter &e, Operation *combine, Value a, Value b) {
  OperationState state(e.loc, combine->getName());
  state.addOperands({a, b});
  state.addTypes(a.getType());
  state.addAttributes(combine->getAttrs());
  return e.b.create(state)->getResult(0);
}

/// Reduces `v` across the first `lanes` lanes of each warp (a power of 2)
/// with xor shuffles.
Value warpReduce(Emitter &e, Operation *combine, Value v, int64_t lanes) {
  for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
    auto shuffle = gpu::ShuffleOp::create(e.b, e.loc, v, offset, kWarp,
                                          gpu::ShuffleMode::XOR);
    v = combineWith(e, combine, v, shuffle.getShuffleResult());
  }
  return v;
}

/// Builds the kernel: one block of `threads` threads per row.
void emitKernel(OpBuilder &b, Location loc, ArrayRef<RowOp> ops, int64_t rows,
                int64_t threads) {
  Emitter e{b, loc};
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  int64_t warps = threads / kWarp;
  // One shared slot per warp for each reduction.
  SmallVector<Type> shared;
  for (const RowOp &r : ops)
    if (r.reduction)
      shared.push_back(MemRefType::get({warps}, r.combine->getResultTypes()[0],
                                       MemRefLayoutAttrInterface(),
                                       workgroup));
  Value one = e.idx(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, e.idx(rows), one, one, e.idx(threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, shared);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value row = launch.getBlockIds().x, tid = launch.getThreadIds().x;
  Value zero = e.idx(0);
  Value first = e.eq(tid, zero);
  unsigned nextShared = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const RowOp &r = ops[i];
    if (i > 0)
      gpu::BarrierOp::create(b, loc);
    SmallVector<Value> rowIvs;
    delinearize(e, row, r.bounds, 0, r.rowLoops, rowIvs);
    int64_t colLoops = r.bounds.size() - r.rowLoops;
    auto ivsAt = [&](Value col) {
      SmallVector<Value> ivs(rowIvs);
      delinearize(e, col, r.bounds, r.rowLoops, colLoops, ivs);
      return ivs;
    };
    if (!r.reduction) {
      // Each thread its share of the row's elements (thread 0 alone for a
      // row of one element).
      auto stores = [&](Value col) {
        SmallVector<Value> ivs = ivsAt(col);
        SmallVector<Value> values = emitBody(e, r, ivs);
        for (auto [init, v] : llvm::zip(r.op.getDpsInitsMutable(), values))
          memref::StoreOp::create(b, loc, v, init.get(),
                                  indicesOf(e, r, init, ivs));
      };
      OpBuilder::InsertionGuard guard(b);
      if (r.cols == 1) {
        auto only = scf::IfOp::create(b, loc, first, /*withElse=*/false);
        b.setInsertionPointToStart(only.thenBlock());
        stores(zero);
      } else {
        auto loop = scf::ForOp::create(b, loc, tid, e.idx(r.cols),
                                       e.idx(threads));
        b.setInsertionPointToStart(loop.getBody());
        stores(loop.getInductionVar());
      }
      continue;
    }
    // A reduction: each thread's partial over its elements, the warps'
    // trees, the warps' results through shared memory, then thread 0
    // combines the row's value with the output's.
    Type t = r.combine->getResultTypes()[0];
    Value neutral = arith::ConstantOp::create(
        b, loc, *arith::getNeutralElement(r.combine));
    auto loop = scf::ForOp::create(b, loc, tid, e.idx(r.cols), e.idx(threads),
                                   ValueRange{neutral});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value x = emitBody(e, r, ivsAt(loop.getInductionVar()))[0];
      Value acc = loop.getRegionIterArgs()[0];
      scf::YieldOp::create(b, loc, combineWith(e, r.combine, acc, x));
    }
    Value partial = warpReduce(e, r.combine, loop.getResult(0), kWarp);
    if (warps > 1) {
      Value slots = launch.getWorkgroupAttributions()[nextShared++];
      Value lane = e.rem(tid, e.idx(kWarp)), warp = e.div(tid, e.idx(kWarp));
      {
        OpBuilder::InsertionGuard guard(b);
        auto put = scf::IfOp::create(b, loc, e.eq(lane, zero), false);
        b.setInsertionPointToStart(put.thenBlock());
        memref::StoreOp::create(b, loc, partial, slots, ValueRange{warp});
      }
      gpu::BarrierOp::create(b, loc);
      // Warp 0 reduces the warps' values (every lane of it shuffles).
      auto inWarp0 = scf::IfOp::create(b, loc, TypeRange{t},
                                       e.lt(tid, e.idx(kWarp)), true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(inWarp0.thenBlock());
        Value lane0 = e.min(tid, e.idx(warps - 1));
        Value v = memref::LoadOp::create(b, loc, slots, ValueRange{lane0});
        v = arith::SelectOp::create(b, loc, e.lt(tid, e.idx(warps)), v,
                                    neutral);
        scf::YieldOp::create(b, loc, warpReduce(e, r.combine, v, warps));
        b.setInsertionPointToStart(inWarp0.elseBlock());
        scf::YieldOp::create(b, loc, neutral);
      }
      partial = inWarp0.getResult(0);
    }
    OpBuilder::InsertionGuard guard(b);
    auto store = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(store.thenBlock());
    OpOperand &init = r.op.getDpsInitsMutable()[0];
    SmallVector<Value> ivs = ivsAt(zero);
    SmallVector<Value> at = indicesOf(e, r, init, ivs);
    Value old = memref::LoadOp::create(b, loc, init.get(), at);
    Value result = r.outIsLhs ? combineWith(e, r.combine, old, partial)
                              : combineWith(e, r.combine, partial, old);
    memref::StoreOp::create(b, loc, result, init.get(), at);
  }
  gpu::TerminatorOp::create(b, loc);
}

/// Ops between the run's members that neither touch memory nor free it.
bool transparent(Operation *op) {
  return isMemoryEffectFree(op) || isa<memref::AllocOp, memref::AllocaOp>(op);
}

struct TesselGpuFuseRowsPass
    : tessel::impl::TesselGpuFuseRowsBase<TesselGpuFuseRowsPass> {
  using Base::Base;

  /// The ops of `block` after `from` and before the next op that touches
  /// memory otherwise, as rows of `rows`, while they are row ops.
  void extend(Operation *from, int64_t rows, bool forward,
              SmallVectorImpl<RowOp> &run,
              const llvm::DenseSet<Operation *> &taken) {
    Operation *op = forward ? from->getNextNode() : from->getPrevNode();
    while (op) {
      if (!taken.contains(op)) {
        if (std::optional<RowOp> r = asRowOp(op, rows)) {
          // Elementwise ops join only where rows give enough blocks.
          if (!r->reduction && rows < minRows)
            return;
          if (forward)
            run.push_back(*r);
          else
            run.insert(run.begin(), *r);
        } else if (!transparent(op)) {
          return;
        }
      } else {
        return;
      }
      op = forward ? op->getNextNode() : op->getPrevNode();
    }
  }

  void runOnOperation() override {
    // Bufferization leaves copies between a run's ops (a fill's result
    // copied into the reduction's buffer): as linalg.copy they can join a
    // run; those that do not go back to memref.copy (gpu.memcpy later).
    SmallVector<Operation *> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto from = dyn_cast<MemRefType>(copy.getSource().getType());
      auto to = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (copy->getParentOfType<gpu::LaunchOp>() || !from || !to ||
          !from.hasStaticShape() || from != to)
        return;
      OpBuilder b(copy);
      copies.push_back(linalg::CopyOp::create(b, copy.getLoc(),
                                              copy.getSource(),
                                              copy.getTarget()));
      copy->erase();
    });
    SmallVector<Operation *> seeds;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>() && reductionRows(op))
        seeds.push_back(op);
    });
    // Runs are collected first and rewritten after, so `taken` only ever
    // holds live ops.
    llvm::DenseSet<Operation *> taken;
    struct Run {
      Operation *seed;
      int64_t rows;
      SmallVector<RowOp> ops;
    };
    SmallVector<Run> runs;
    for (Operation *seed : seeds) {
      if (taken.contains(seed))
        continue;
      int64_t rows = *reductionRows(seed);
      if (rows <= 0)
        continue; // no blocks to launch (an empty grid is a launch error)
      std::optional<RowOp> self = asRowOp(seed, rows);
      if (!self || self->cols < minCols)
        continue;
      SmallVector<RowOp> run{*self};
      extend(seed, rows, /*forward=*/false, run, taken);
      extend(seed, rows, /*forward=*/true, run, taken);
      // Shrink to the seed alone where the whole run is not row-local.
      if (!soundAsRows(run)) {
        run.assign({*self});
        if (!soundAsRows(run))
          continue;
      }
      for (const RowOp &r : run)
        taken.insert(r.op);
      runs.push_back({seed, rows, std::move(run)});
    }
    for (Operation *copy : copies) {
      if (taken.contains(copy))
        continue;
      OpBuilder b(copy);
      memref::CopyOp::create(b, copy->getLoc(), copy->getOperand(0),
                             copy->getOperand(1));
      copy->erase();
    }
    for (Run &run : runs) {
      int64_t widest = 1;
      for (const RowOp &r : run.ops)
        widest = std::max(widest, r.cols);
      int64_t threads = std::clamp<int64_t>(
          llvm::PowerOf2Ceil(widest), kWarp, kMaxThreads);
      // The kernel goes where the last op was: every operand is defined
      // before it, and no op between the members touches memory.
      OpBuilder b(run.ops.back().op);
      emitKernel(b, run.seed->getLoc(), run.ops, run.rows, threads);
      for (RowOp &r : run.ops)
        r.op->erase();
    }
  }
};

} // namespace
