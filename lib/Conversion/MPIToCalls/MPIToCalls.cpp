//===- MPIToCalls.cpp - the MPI collectives -> calls of lib/RuntimeMPI ----===//
//
// The runtime part moves whole rows with MPI's own datatypes (mpi.h is
// compiled there), so these calls pass plain pointers and byte counts and
// the compiler needs no knowledge of an MPI implementation's ABI beyond
// what upstream's lowering of the communicator already has.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/BufferPointers.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/AsmParser/AsmParser.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELMPITOCALLS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr StringLiteral kAllToAllV = "tessel_mpi_all_to_all_v";
constexpr StringLiteral kAllGather = "tessel_mpi_all_gather";

func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

/// Bytes of one row (all dimensions past the first), which must be static.
FailureOr<int64_t> rowBytes(Operation *op, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t d : type.getShape().drop_front()) {
    if (ShapedType::isDynamic(d))
      return op->emitOpError()
             << "needs static dimensions past the first, got " << type;
    bytes *= d;
  }
  return bytes;
}

struct MPIToCallsPass
    : mlir::tessel::impl::TesselMPIToCallsBase<MPIToCallsPass> {
  using Base::Base;

  /// Dense buffers for the call: strided ones through copies, read in
  /// before the call and (the init) written back after it.
  struct Operands {
    SmallVector<Value> pointers;
    SmallVector<std::pair<Value, Value>> writeBack;
  };

  Operands densePointers(OpBuilder &b, Location loc,
                         MutableArrayRef<OpOperand> operands) {
    Operands result;
    for (OpOperand &operand : operands) {
      Value v = operand.get();
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type)
        continue; // the communicator
      if (!isContiguousRowMajor(type)) {
        Value copy = allocDenseLike(b, loc, v);
        if (&operand == &operands.back())
          result.writeBack.push_back({copy, v});
        else
          memref::CopyOp::create(b, loc, v, copy);
        v = copy;
      }
      result.pointers.push_back(firstElement(b, loc, v));
    }
    return result;
  }

  void finish(OpBuilder &b, Location loc, Operands &ops) {
    for (auto [copy, target] : ops.writeBack) {
      memref::CopyOp::create(b, loc, copy, target);
      memref::DeallocOp::create(b, loc, copy);
    }
  }

  LogicalResult lower(ModuleOp module, Operation *op) {
    auto dps = cast<DestinationStyleOpInterface>(op);
    if (!dps.hasPureBufferSemantics())
      return op->emitOpError() << "must be bufferized before "
                                  "tessel-mpi-to-calls";
    MLIRContext *ctx = op->getContext();
    Location loc = op->getLoc();
    OpBuilder b(op);
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = b.getI64Type();
    Type comm = mpi::CommType::get(ctx);
    auto i64Const = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
    };
    if (auto a2a = dyn_cast<AllToAllVOp>(op)) {
      FailureOr<int64_t> row = rowBytes(op, a2a.getInput());
      if (failed(row))
        return failure();
      Operands ops = densePointers(b, loc, op->getOpOperands());
      // Operand order: input, send_rows, recv_rows, (comm), init.
      auto fn = declare(module, kAllToAllV,
                        b.getFunctionType({comm, ptr, ptr, ptr, ptr, i64}, {}));
      func::CallOp::create(b, loc, fn,
                           ValueRange{a2a.getComm(), ops.pointers[0],
                                      ops.pointers[1], ops.pointers[3],
                                      ops.pointers[2], i64Const(*row)});
      finish(b, loc, ops);
    } else {
      auto gather = cast<AllGatherOp>(op);
      FailureOr<int64_t> row = rowBytes(op, gather.getInput());
      if (failed(row))
        return failure();
      Operands ops = densePointers(b, loc, op->getOpOperands());
      Value rows = memref::DimOp::create(b, loc, gather.getInput(), 0);
      Value bytes = arith::MulIOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, i64, rows),
          i64Const(*row));
      auto fn = declare(module, kAllGather,
                        b.getFunctionType({comm, ptr, ptr, i64}, {}));
      func::CallOp::create(b, loc, fn,
                           ValueRange{gather.getComm(), ops.pointers[0],
                                      ops.pointers[1], bytes});
      finish(b, loc, ops);
    }
    op->erase();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (implementation != "OpenMPI" && implementation != "MPICH") {
      module.emitError() << "tessel-mpi-to-calls: 'implementation' must be "
                            "OpenMPI or MPICH, got '"
                         << implementation << "'";
      return signalPassFailure();
    }
    SmallVector<Operation *> collectives;
    bool usesMPI = false;
    module.walk([&](Operation *op) {
      if (isa<AllToAllVOp, AllGatherOp>(op))
        collectives.push_back(op);
      if (isa<mpi::MPIDialect>(op->getDialect()))
        usesMPI = true;
    });
    for (Operation *op : collectives)
      if (failed(lower(module, op)))
        return signalPassFailure();
    if ((usesMPI || !collectives.empty()) && !module->hasAttr("dlti.map")) {
      Attribute map = parseAttribute("#dlti.map<\"MPI:Implementation\" = \"" +
                                         implementation + "\">",
                                     &getContext());
      module->setAttr("dlti.map", map);
    }
  }
};

} // namespace
