//===- RecordSignature.cpp - Capture the tensor-level signature -----------===//
//
// The artifact manifest must describe tensors as the user wrote them; after
// bufferization and LLVM lowering that information is gone, so it is
// recorded here, at the model level, into the module attribute
// `tessel.functions`.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELRECORDSIGNATURE
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// The ABI dtype name of `t`, or "" if the ABI cannot carry it.
StringRef abiDType(Type t) {
  if (t.isF32()) return "f32";
  if (t.isF16()) return "f16";
  if (t.isBF16()) return "bf16";
  if (t.isF64()) return "f64";
  if (t.isSignlessInteger(64) || t.isSignedInteger(64)) return "i64";
  if (t.isSignlessInteger(32) || t.isSignedInteger(32)) return "i32";
  if (t.isSignlessInteger(16) || t.isSignedInteger(16)) return "i16";
  if (t.isSignlessInteger(8) || t.isSignedInteger(8)) return "i8";
  if (t.isUnsignedInteger(8)) return "u8";
  if (t.isSignlessInteger(1)) return "i1";
  return "";
}

/// Whitespace would break the line-oriented manifest.
std::string sanitize(StringRef name) {
  std::string s = name.str();
  for (char &c : s)
    if (isspace(static_cast<unsigned char>(c)))
      c = '_';
  return s;
}

struct TesselRecordSignaturePass
    : tessel::impl::TesselRecordSignatureBase<TesselRecordSignaturePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    SmallVector<Attribute> functions;
    bool ok = true;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isDeclaration() || !fn.isPublic())
        continue;
      FailureOr<DictionaryAttr> sig = recordFunction(fn, b);
      if (failed(sig)) {
        ok = false;
        continue;
      }
      functions.push_back(*sig);
    }
    if (!ok)
      return signalPassFailure();
    if (functions.empty()) {
      module.emitError() << "the model has no public function with a body to "
                            "export as an entry point";
      return signalPassFailure();
    }
    module->setAttr(tessel::kFunctionsAttrName, b.getArrayAttr(functions));
  }

  FailureOr<DictionaryAttr> recordFunction(func::FuncOp fn, Builder &b) {
    auto describe = [&](Type type, StringAttr nameAttr, StringRef kind,
                        unsigned index,
                        llvm::StringSet<> &seen) -> FailureOr<Attribute> {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor) {
        fn.emitError() << kind << " #" << index << " has type " << type
                       << "; entry points take and return ranked tensors";
        return failure();
      }
      if (!tensor.hasStaticShape()) {
        fn.emitError() << kind << " #" << index << " has dynamic shape "
                       << type
                       << "; artifact ABI v1 needs static shapes (pin them)";
        return failure();
      }
      StringRef dtype = abiDType(tensor.getElementType());
      if (dtype.empty()) {
        fn.emitError() << kind << " #" << index << " has element type "
                       << tensor.getElementType()
                       << ", which the artifact ABI cannot carry";
        return failure();
      }
      std::string name = nameAttr ? sanitize(nameAttr.getValue())
                                  : (kind + std::to_string(index)).str();
      if (name.empty() || !seen.insert(name).second) {
        fn.emitError() << kind << " name '" << name
                       << "' is empty or used twice";
        return failure();
      }
      return Attribute(b.getDictionaryAttr({
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("dtype", b.getStringAttr(dtype)),
          b.getNamedAttr("shape", b.getDenseI64ArrayAttr(tensor.getShape())),
      }));
    };

    SmallVector<Attribute> inputs, outputs;
    llvm::StringSet<> inNames, outNames;
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      auto r = describe(type, fn.getArgAttrOfType<StringAttr>(i,
                                                  tessel::kNameAttrName),
                        "input", i, inNames);
      if (failed(r))
        return failure();
      inputs.push_back(*r);
    }
    for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
      auto r = describe(type, fn.getResultAttrOfType<StringAttr>(
                                  i, tessel::kNameAttrName),
                        "output", i, outNames);
      if (failed(r))
        return failure();
      outputs.push_back(*r);
    }
    if (outputs.empty()) {
      fn.emitError() << "entry point '" << fn.getName()
                     << "' returns nothing";
      return failure();
    }
    return b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(fn.getName())),
        b.getNamedAttr("inputs", b.getArrayAttr(inputs)),
        b.getNamedAttr("outputs", b.getArrayAttr(outputs)),
    });
  }
};

} // namespace
