//===- NameDynamicDims.cpp - name the dims an entry leaves unnamed --------===//
//
// The artifact ABI binds every dynamic dimension of an entry point by name
// (tessel.dim_names): inputs bind the names, outputs are allocated from
// them before the call. ONNX models name their dimensions; MLIR written by
// hand (`tensor<?x16xf32>`) often does not. Inputs get fresh names; an
// output takes the input dimension it provably equals, else the inputs'
// only name, else the first input's at the same index
// (tessel-check-result-dims guards those choices at run time), else, when
// no input has one, the run-time name "?": a size that follows from the
// data, returned with the output (ABI v6).
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/ArtifactSignature.h"
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELNAMEDYNAMICDIMS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// `name` as an identifier ([A-Za-z_][A-Za-z0-9_]*), the form dim names
/// take in the manifest.
std::string identifier(StringRef name) {
  std::string s;
  for (char c : name)
    s.push_back(isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (s.empty() || isdigit(static_cast<unsigned char>(s[0])))
    s.insert(s.begin(), '_');
  return s;
}

/// The value's dim names: its `tessel.dim_names` when well-formed for
/// `type`, else one empty string per dimension (a malformed attribute is
/// left for tessel-record-signature to report).
SmallVector<std::string> namesOf(RankedTensorType type, DictionaryAttr attrs) {
  SmallVector<std::string> names(type.getRank());
  auto attr = attrs ? attrs.getAs<ArrayAttr>(tessel::kDimNamesAttrName)
                    : ArrayAttr();
  if (attr && attr.size() == size_t(type.getRank()))
    for (auto [i, a] : llvm::enumerate(attr))
      if (auto s = dyn_cast<StringAttr>(a))
        names[i] = s.getValue().str();
  return names;
}

struct InputDim {
  unsigned arg;
  int64_t dim;
  std::string name;
};

struct TesselNameDynamicDimsPass
    : tessel::impl::TesselNameDynamicDimsBase<TesselNameDynamicDimsPass> {
  void runOnOperation() override {
    bool ok = true;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isDeclaration() && fn.isPublic() && failed(name(fn)))
        ok = false;
    if (!ok)
      signalPassFailure();
  }

  LogicalResult name(func::FuncOp fn) {
    Builder b(fn.getContext());
    auto setNames = [&](ArrayRef<std::string> names) {
      SmallVector<Attribute> attrs;
      for (const std::string &n : names)
        attrs.push_back(b.getStringAttr(n));
      return b.getArrayAttr(attrs);
    };
    // Names in use, so fresh ones do not merge two dimensions.
    llvm::StringSet<> taken;
    auto collect = [&](Type type, DictionaryAttr attrs) {
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        for (const std::string &n : namesOf(tensor, attrs))
          if (!n.empty())
            taken.insert(n);
    };
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      collect(fn.getArgumentTypes()[i], fn.getArgAttrDict(i));
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      collect(fn.getResultTypes()[i], fn.getResultAttrDict(i));

    // Inputs: every dynamic dimension named, fresh names where missing.
    SmallVector<InputDim> inputDims;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto tensor = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i]);
      if (!tensor || tensor.hasStaticShape())
        continue; // non-tensors are tessel-record-signature's to reject
      SmallVector<std::string> names = namesOf(tensor, fn.getArgAttrDict(i));
      auto nameAttr = fn.getArgAttrOfType<StringAttr>(i, tessel::kNameAttrName);
      std::string base = nameAttr ? identifier(nameAttr.getValue())
                                  : "arg" + std::to_string(i);
      bool changed = false;
      for (int64_t d = 0; d < tensor.getRank(); ++d) {
        if (!tensor.isDynamicDim(d))
          continue;
        if (names[d].empty()) {
          std::string fresh = base + "_d" + std::to_string(d);
          for (int k = 2; taken.contains(fresh); ++k)
            fresh = base + "_d" + std::to_string(d) + "_" + std::to_string(k);
          taken.insert(fresh);
          names[d] = fresh;
          changed = true;
        }
        inputDims.push_back({i, d, names[d]});
      }
      if (changed)
        fn.setArgAttr(i, tessel::kDimNamesAttrName, setNames(names));
    }
    llvm::SetVector<StringRef> inputNames;
    for (const InputDim &in : inputDims)
      inputNames.insert(in.name);

    // Outputs: the input dimension each equals at every return.
    SmallVector<func::ReturnOp> returns;
    fn.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      auto tensor = dyn_cast<RankedTensorType>(fn.getResultTypes()[i]);
      if (!tensor || tensor.hasStaticShape())
        continue;
      SmallVector<std::string> names =
          namesOf(tensor, fn.getResultAttrDict(i));
      bool changed = false;
      for (int64_t d = 0; d < tensor.getRank(); ++d) {
        if (!tensor.isDynamicDim(d) || !names[d].empty())
          continue;
        std::string found;
        for (const InputDim &in : inputDims) {
          bool everywhere = !returns.empty();
          for (func::ReturnOp ret : returns) {
            FailureOr<bool> equal = ValueBoundsConstraintSet::areEqual(
                {ret.getOperand(i), d}, {fn.getArgument(in.arg), in.dim});
            everywhere &= succeeded(equal) && *equal;
          }
          if (everywhere) {
            found = in.name;
            break;
          }
        }
        // Not proven (value bounds do not see through TOSA ops): the
        // inputs' only name, else the first input dynamic at the same
        // index (a batch), both checked at run time.
        if (found.empty() && inputNames.size() == 1)
          found = inputNames.front().str();
        for (const InputDim &in : inputDims)
          if (found.empty() && in.dim == d)
            found = in.name;
        // No input has a dynamic size it could follow: the size comes from
        // the data (ABI v6), and the entry returns the output with it.
        if (found.empty())
          found = tessel::kRunTimeDimName.str();
        names[d] = found;
        changed = true;
      }
      if (changed)
        fn.setResultAttr(i, tessel::kDimNamesAttrName, setNames(names));
    }
    return success();
  }
};

} // namespace
