//===- OutlineParallelLoops.cpp - scf.parallel -> thread-pool tasks -------===//
//
// The kernel library's thread pool runs `void fn(void *context, int64_t
// task)`. A parallel loop nest becomes such a function: its first parallel
// dimension with two or more iterations is cut into contiguous chunks, one
// per task, and everything the nest reads from outside travels in a stack
// struct. Buffers travel as (aligned pointer, offset, sizes, strides) and are
// rebuilt as memref descriptors inside the task, so any strided layout works
// and nothing here depends on how memrefs lower beyond the descriptor layout
// every MLIR memref-to-LLVM lowering uses.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELOUTLINEPARALLELLOOPS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

static constexpr llvm::StringLiteral kParallelFor =
    "tessel_kernel_parallel_for";

namespace {

int64_t tripCount(Value lb, Value ub, Value step) {
  auto l = getConstantIntValue(lb), u = getConstantIntValue(ub),
       s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return -1;
  return *u <= *l ? 0 : (*u - *l + *s - 1) / *s;
}

int64_t saturatingMul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    return std::numeric_limits<int64_t>::max();
  return a * b;
}

/// Estimated element operations of `block` run once: each op counts its
/// result's elements (a vector op many, a scalar op one), loops multiply
/// their bodies by their static trip counts (one when not static).
int64_t estimateWork(Block &block);

/// The work of a whole parallel nest.
int64_t estimateWork(scf::ParallelOp loop) {
  int64_t work = estimateWork(*loop.getBody());
  for (unsigned d = 0; d < loop.getNumLoops(); ++d)
    work = saturatingMul(std::max<int64_t>(tripCount(loop.getLowerBound()[d],
                                                     loop.getUpperBound()[d],
                                                     loop.getStep()[d]),
                                           1),
                         work);
  return work;
}

int64_t estimateWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    int64_t opWork = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      int64_t n = tripCount(loop.getLowerBound(), loop.getUpperBound(),
                            loop.getStep());
      opWork = saturatingMul(std::max<int64_t>(n, 1),
                             estimateWork(*loop.getBody()));
    } else if (auto par = dyn_cast<scf::ParallelOp>(op)) {
      opWork = estimateWork(par);
    } else if (op.getNumRegions() > 0) {
      for (Region &r : op.getRegions())
        for (Block &b : r)
          opWork = std::max(opWork, estimateWork(b));
    } else if (op.getNumResults() == 1) {
      if (auto vt = dyn_cast<VectorType>(op.getResult(0).getType()))
        opWork = vt.getNumElements();
    } else if (op.getNumOperands() > 0) { // stores: count the stored value
      if (auto vt = dyn_cast<VectorType>(op.getOperand(0).getType()))
        opWork = vt.getNumElements();
    }
    work = work > std::numeric_limits<int64_t>::max() - opWork
               ? std::numeric_limits<int64_t>::max()
               : work + opWork;
  }
  return work;
}

/// Ops that are re-created inside the task instead of being passed.
bool isRematerializable(Operation *op) {
  return op && op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         (matchPattern(op, m_Constant()) || isa<memref::GetGlobalOp>(op));
}

/// Scalars that travel in the context as they are.
bool isScalar(Type t) { return isa<IntegerType, FloatType, IndexType>(t); }

/// What travels in the context for one captured value.
struct Capture {
  Value value;
  unsigned firstField; // index of its first field in the context struct
};

class Outliner {
public:
  Outliner(ModuleOp module, func::FuncOp parent, int64_t maxTasks,
           int64_t minTaskWork)
      : module(module), parent(parent), maxTasks(maxTasks),
        minTaskWork(minTaskWork), ctx(module.getContext()),
        ptrTy(LLVM::LLVMPointerType::get(ctx)),
        i64Ty(IntegerType::get(ctx, 64)) {}

  /// Outlines `loop` (work estimated at `work`); false leaves it serial.
  bool run(scf::ParallelOp loop, int64_t work, unsigned index);

private:
  /// The LLVM types of a value's fields in the context.
  void appendFieldTypes(Value v, SmallVectorImpl<Type> &fields);
  /// Stores `v`'s fields at `firstField` of `context` (before the loop).
  void storeFields(OpBuilder &b, Location loc, Value context,
                   LLVM::LLVMStructType ctxTy, Value v, unsigned firstField);
  /// Loads `v`'s fields (inside the task) and rebuilds a value of its type.
  Value loadFields(OpBuilder &b, Location loc, Value context,
                   LLVM::LLVMStructType ctxTy, Value v, unsigned firstField);
  func::FuncOp declareParallelFor(Location loc);

  ModuleOp module;
  func::FuncOp parent;
  int64_t maxTasks, minTaskWork;
  MLIRContext *ctx;
  Type ptrTy, i64Ty;
};

void Outliner::appendFieldTypes(Value v, SmallVectorImpl<Type> &fields) {
  if (auto mt = dyn_cast<MemRefType>(v.getType())) {
    fields.push_back(ptrTy);                                 // aligned ptr
    fields.append(1 + 2 * mt.getRank(), i64Ty);              // off, sizes, strides
    return;
  }
  fields.push_back(v.getType().isIndex() ? i64Ty : v.getType());
}

static Value fieldPtr(OpBuilder &b, Location loc, Value context,
                      LLVM::LLVMStructType ctxTy, unsigned field) {
  return LLVM::GEPOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), ctxTy, context,
      ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(field)});
}

void Outliner::storeFields(OpBuilder &b, Location loc, Value context,
                           LLVM::LLVMStructType ctxTy, Value v,
                           unsigned field) {
  auto store = [&](Value x) {
    if (x.getType().isIndex())
      x = arith::IndexCastOp::create(b, loc, i64Ty, x);
    LLVM::StoreOp::create(b, loc, x, fieldPtr(b, loc, context, ctxTy, field++));
  };
  auto mt = dyn_cast<MemRefType>(v.getType());
  if (!mt) {
    store(v);
    return;
  }
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, v);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
  Value base64 = arith::IndexCastOp::create(b, loc, i64Ty, base);
  store(LLVM::IntToPtrOp::create(b, loc, ptrTy, base64));
  store(md.getOffset());
  for (Value s : md.getSizes())
    store(s);
  for (Value s : md.getStrides())
    store(s);
}

Value Outliner::loadFields(OpBuilder &b, Location loc, Value context,
                           LLVM::LLVMStructType ctxTy, Value v,
                           unsigned field) {
  auto load = [&](Type t) -> Value {
    return LLVM::LoadOp::create(b, loc, t,
                                fieldPtr(b, loc, context, ctxTy, field++));
  };
  auto mt = dyn_cast<MemRefType>(v.getType());
  if (!mt) {
    Value x = load(v.getType().isIndex() ? i64Ty : v.getType());
    if (v.getType().isIndex())
      x = arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
    return x;
  }
  // The memref descriptor: {allocated, aligned, offset, sizes[], strides[]}.
  // The allocated pointer only matters for deallocation, which the task
  // never does; it repeats the aligned one.
  int64_t rank = mt.getRank();
  SmallVector<Type> descFields{ptrTy, ptrTy, i64Ty};
  if (rank > 0) {
    descFields.push_back(LLVM::LLVMArrayType::get(i64Ty, rank));
    descFields.push_back(LLVM::LLVMArrayType::get(i64Ty, rank));
  }
  auto descTy = LLVM::LLVMStructType::getLiteral(ctx, descFields);
  Value desc = LLVM::PoisonOp::create(b, loc, descTy);
  Value ptr = load(ptrTy);
  desc = LLVM::InsertValueOp::create(b, loc, desc, ptr, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, ptr, ArrayRef<int64_t>{1});
  desc = LLVM::InsertValueOp::create(b, loc, desc, load(i64Ty),
                                     ArrayRef<int64_t>{2});
  for (int64_t d = 0; d < rank; ++d)
    desc = LLVM::InsertValueOp::create(b, loc, desc, load(i64Ty),
                                       ArrayRef<int64_t>{3, d});
  for (int64_t d = 0; d < rank; ++d)
    desc = LLVM::InsertValueOp::create(b, loc, desc, load(i64Ty),
                                       ArrayRef<int64_t>{4, d});
  // Reconciled with the memref-to-LLVM lowering's own casts of the uses.
  return UnrealizedConversionCastOp::create(b, loc, mt, desc).getResult(0);
}

func::FuncOp Outliner::declareParallelFor(Location loc) {
  auto taskTy = FunctionType::get(ctx, {ptrTy, i64Ty}, {});
  auto fnTy = FunctionType::get(ctx, {i64Ty, taskTy, ptrTy}, {});
  if (auto fn = module.lookupSymbol<func::FuncOp>(kParallelFor))
    return fn.getFunctionType() == fnTy ? fn : func::FuncOp();
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(b, loc, kParallelFor, fnTy);
  fn.setPrivate();
  return fn;
}

bool Outliner::run(scf::ParallelOp loop, int64_t work, unsigned index) {
  Location loc = loop.getLoc();
  // The dimension to split: the first static one with two or more
  // iterations. Others may run to sizes known only at run time (a batch):
  // each task runs all of them, and the work estimate counts them once.
  unsigned numLoops = loop.getNumLoops();
  int64_t dim = -1, trips = 0;
  for (unsigned d = 0; d < numLoops; ++d) {
    int64_t n = tripCount(loop.getLowerBound()[d], loop.getUpperBound()[d],
                          loop.getStep()[d]);
    if (n >= 2) {
      dim = d;
      trips = n;
      break;
    }
  }
  if (dim < 0)
    return false;
  int64_t tasks = std::min({trips, maxTasks,
                            std::max<int64_t>(work / minTaskWork, 1)});
  int64_t chunk = (trips + tasks - 1) / tasks;
  tasks = (trips + chunk - 1) / chunk;
  if (tasks < 2)
    return false;

  // What the nest uses from outside: re-created or passed.
  SetVector<Value> used;
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  // Bounds of the other dimensions that are not constants travel too.
  for (Value v : loop.getOperands())
    used.insert(v);
  SmallVector<Value> remat, passed;
  for (Value v : used) {
    if (isRematerializable(v.getDefiningOp()))
      remat.push_back(v);
    else if (isa<MemRefType>(v.getType()) || isScalar(v.getType()))
      passed.push_back(v);
    else
      return false;
  }
  func::FuncOp parallelFor = declareParallelFor(loc);
  if (!parallelFor)
    return false;

  SmallVector<Type> fields;
  SmallVector<Capture> captures;
  for (Value v : passed) {
    captures.push_back({v, static_cast<unsigned>(fields.size())});
    appendFieldTypes(v, fields);
  }
  if (fields.empty())
    fields.push_back(i64Ty); // an empty struct cannot be allocated
  auto ctxTy = LLVM::LLVMStructType::getLiteral(ctx, fields);

  // The task function, next to its parent.
  OpBuilder b(ctx);
  b.setInsertionPointAfter(parent);
  std::string name =
      (parent.getSymName() + "__parallel" + Twine(index)).str();
  auto task = func::FuncOp::create(
      b, loc, name, FunctionType::get(ctx, {ptrTy, i64Ty}, {}));
  task.setPrivate();
  SymbolTable(module).insert(task); // uniquifies the name if taken
  Block *entry = task.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value context = entry->getArgument(0);
  IRMapping map;
  for (Value v : remat)
    map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
  for (const Capture &c : captures)
    map.map(c.value, loadFields(b, loc, context, ctxTy, c.value,
                                c.firstField));
  // This task's chunk of dimension `dim`: [lb + t*chunk*step, min(.., ub)).
  Value t = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                       entry->getArgument(1));
  Value lb = map.lookup(loop.getLowerBound()[dim]);
  Value ub = map.lookup(loop.getUpperBound()[dim]);
  Value step = map.lookup(loop.getStep()[dim]);
  Value span = arith::MulIOp::create(
      b, loc, step, arith::ConstantIndexOp::create(b, loc, chunk));
  Value lo = arith::AddIOp::create(b, loc, lb,
                                   arith::MulIOp::create(b, loc, t, span));
  Value hi = arith::MinSIOp::create(b, loc,
                                    arith::AddIOp::create(b, loc, lo, span), ub);
  auto body = cast<scf::ParallelOp>(b.clone(*loop, map));
  body->setOperand(dim, lo);
  body->setOperand(numLoops + dim, hi);
  func::ReturnOp::create(b, loc);

  // The call, in place of the loop; the context lives in the entry block's
  // frame so a call inside an outer loop does not grow the stack.
  Block &parentEntry = parent.getBody().front();
  b.setInsertionPointToStart(&parentEntry);
  Value one = LLVM::ConstantOp::create(b, loc, i64Ty, b.getI64IntegerAttr(1));
  Value ctxPtr = LLVM::AllocaOp::create(b, loc, ptrTy, ctxTy, one);
  b.setInsertionPoint(loop);
  for (const Capture &c : captures)
    storeFields(b, loc, ctxPtr, ctxTy, c.value, c.firstField);
  Value fn = func::ConstantOp::create(b, loc, task.getFunctionType(),
                                      SymbolRefAttr::get(task));
  Value n = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(tasks));
  func::CallOp::create(b, loc, parallelFor, ValueRange{n, fn, ctxPtr});
  loop.erase();
  return true;
}

/// Nests that may not run on several threads at once as they are.
bool hasUnsafeOps(scf::ParallelOp loop) {
  return loop
      ->walk([](Operation *op) {
        if (isa<CallOpInterface, memref::AllocOp, memref::DeallocOp,
                memref::ReallocOp>(op))
          return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

struct OutlineParallelLoops
    : public tessel::impl::TesselOutlineParallelLoopsBase<
          OutlineParallelLoops> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxTasks < 2 || minTaskWork < 1 || minWork < 0) {
      module.emitError("tessel-outline-parallel-loops: max-tasks must be at "
                       "least 2, min-task-work at least 1, min-work at "
                       "least 0");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : funcs) {
      if (fn.isExternal())
        continue;
      SmallVector<scf::ParallelOp> loops;
      fn.walk([&](scf::ParallelOp loop) {
        if (!loop->getParentOfType<scf::ParallelOp>())
          loops.push_back(loop);
      });
      unsigned index = 0;
      Outliner outliner(module, fn, maxTasks, minTaskWork);
      for (scf::ParallelOp loop : loops) {
        if (loop.getNumResults() != 0 || hasUnsafeOps(loop))
          continue;
        int64_t work = estimateWork(loop);
        if (work < minWork)
          continue;
        if (outliner.run(loop, work, index))
          ++index;
      }
    }
  }
};

} // namespace
