//===- CheckResultDims.cpp - named output dims equal their inputs' --------===//
//
// ABI v3 lets an entry's shapes name dynamic dimensions; the runtime binds
// a name from the inputs and allocates the outputs with it. The compiled
// function trusts that buffer, so here, on linalg/tensor IR, each named
// output dimension is proven equal to the input dimension of its name, or
// else checked at run time: a mismatch returns zeros of the bound size and
// fails the entry, never writes past the buffer. (Value bounds see through
// DPS ops, empty tensors and slices, not through the collapse/expand pairs
// of a lowered reshape; the guard costs one compare per output.)
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/ArtifactSignature.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Conversion/StatusHelper.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCHECKRESULTDIMS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// The dim names of the `values` of a record; an entry without names is
/// an empty list.
SmallVector<SmallVector<StringRef>> dimNames(DictionaryAttr record,
                                             StringRef key) {
  SmallVector<SmallVector<StringRef>> result;
  auto values = record.getAs<ArrayAttr>(key);
  for (Attribute a : values ? values.getValue() : ArrayRef<Attribute>()) {
    // tessel-emit-artifact-abi reports a malformed field.
    FailureOr<SmallVector<StringRef>> names = tessel::recordDimNames(a);
    result.push_back(succeeded(names) ? *names : SmallVector<StringRef>());
  }
  return result;
}

struct TesselCheckResultDimsPass
    : tessel::impl::TesselCheckResultDimsBase<TesselCheckResultDimsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto records = module->getAttrOfType<ArrayAttr>(tessel::kFunctionsAttrName);
    if (!records)
      return;
    bool ok = true;
    for (Attribute a : records) {
      auto record = dyn_cast<DictionaryAttr>(a);
      auto symbol = record ? record.getAs<StringAttr>("symbol") : StringAttr();
      auto fn = symbol ? module.lookupSymbol<func::FuncOp>(symbol)
                       : func::FuncOp();
      if (!fn || fn.isDeclaration())
        continue; // tessel-emit-artifact-abi reports broken records
      if (failed(guard(fn, dimNames(record, "inputs"),
                       dimNames(record, "outputs"))))
        ok = false;
    }
    if (!ok)
      signalPassFailure();
  }

  LogicalResult guard(func::FuncOp fn,
                      ArrayRef<SmallVector<StringRef>> inputs,
                      ArrayRef<SmallVector<StringRef>> outputs) {
    // Where each name is bound: the first input dimension that has it.
    llvm::StringMap<std::pair<unsigned, int64_t>> bound;
    for (auto [i, names] : llvm::enumerate(inputs))
      for (auto [d, name] : llvm::enumerate(names))
        if (!name.empty())
          bound.try_emplace(name, i, d);
    SmallVector<func::ReturnOp> returns;
    fn.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
    for (func::ReturnOp ret : returns) {
      OpBuilder b(ret);
      Location loc = ret.getLoc();
      for (auto [i, names] : llvm::enumerate(outputs)) {
        if (i >= ret.getNumOperands())
          break;
        Value result = ret.getOperand(i);
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type || names.size() != size_t(type.getRank()))
          continue; // the record is checked where it is written
        // Each dimension's size as the runtime binds it.
        SmallVector<Value> boundSizes;
        Value ok;
        for (auto [d, name] : llvm::enumerate(names)) {
          if (name.empty())
            continue;
          // A run-time size is the result's own: nothing to agree with (the
          // fallback keeps it).
          if (name == tessel::kRunTimeDimName) {
            boundSizes.push_back(tensor::DimOp::create(b, loc, result, d));
            continue;
          }
          auto it = bound.find(name);
          if (it == bound.end() || it->second.first >= fn.getNumArguments())
            return fn.emitError() << "output #" << i << " names '" << name
                                  << "', which no input binds";
          auto [input, inputDim] = it->second;
          Value arg = fn.getArgument(input);
          boundSizes.push_back(tensor::DimOp::create(b, loc, arg, inputDim));
          FailureOr<bool> equal = ValueBoundsConstraintSet::areEqual(
              {result, int64_t(d)}, {arg, inputDim});
          if (succeeded(equal) && *equal)
            continue;
          Value same = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq,
              tensor::DimOp::create(b, loc, result, d), boundSizes.back());
          ok = ok ? arith::AndIOp::create(b, loc, ok, same) : same;
        }
        if (!ok)
          continue; // proven
        FailureOr<SmallVector<Value>> guarded = tessel::valuesOrShapeMismatch(
            fn, b, loc, ok, result, [&](OpBuilder &e, Location l) {
              return SmallVector<Value>{
                  tessel::zeroTensor(e, l, type, boundSizes)};
            });
        if (failed(guarded))
          return failure();
        ret.setOperand(i, guarded->front());
      }
    }
    return success();
  }
};

} // namespace
