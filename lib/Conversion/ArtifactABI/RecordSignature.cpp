//===- RecordSignature.cpp - Capture the tensor-level signature -----------===//
//
// The artifact manifest must describe tensors as the user wrote them; after
// bufferization and LLVM lowering that information is gone, so it is
// recorded here, at the model level, into the module attributes
// `tessel.functions` (the entry points) and `tessel.imports` (the functions
// other artifacts provide, declared by compose-lower-external-calls). Both
// kinds of interface are described alike, symbol vocabularies included, so
// that the runtime can check an import against its provider.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/ArtifactSignature.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Sym/IR/SymDialect.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
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
  if (t.isUnsignedInteger(16)) return "u16";
  if (t.isUnsignedInteger(32)) return "u32";
  if (t.isUnsignedInteger(64)) return "u64";
  if (t.isSignlessInteger(1)) return "i1";
  return "";
}

/// Whitespace, control characters and NUL would break the line-oriented,
/// NUL-terminated manifest.
std::string sanitize(StringRef name) {
  std::string s = name.str();
  for (char &c : s)
    if (isspace(static_cast<unsigned char>(c)) ||
        iscntrl(static_cast<unsigned char>(c)))
      c = '_';
  return s;
}

/// The C symbol of an entry point: every character outside [A-Za-z0-9_]
/// becomes '_'.
std::string entrySymbol(StringRef name) {
  std::string s = "tessel_entry_";
  for (char c : name)
    s.push_back(isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return s;
}

/// Prefix of every model function's symbol once recorded, so no user name
/// can clash with the ABI's symbols or with what lowering adds (malloc,
/// free, libm functions).
constexpr llvm::StringLiteral kInternalPrefix = "__tessel_fn_";

/// Names of the imports `entry` calls, directly or through the functions
/// it calls, in first-call order.
SmallVector<Attribute> importsUsedBy(func::FuncOp entry, ModuleOp module,
                                     Builder &b) {
  llvm::SetVector<StringRef> names;
  llvm::SmallPtrSet<Operation *, 8> visited = {entry};
  SmallVector<func::FuncOp> work = {entry};
  while (!work.empty()) {
    func::FuncOp fn = work.pop_back_val();
    fn.walk([&](Operation *op) {
      if (auto call = dyn_cast<tessel::CallImportOp>(op)) {
        names.insert(call.getCallee());
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (callee && !callee.isDeclaration() &&
            visited.insert(callee).second)
          work.push_back(callee);
      }
    });
  }
  SmallVector<Attribute> result;
  for (StringRef name : names)
    result.push_back(b.getStringAttr(name));
  return result;
}

struct TesselRecordSignaturePass
    : tessel::impl::TesselRecordSignatureBase<TesselRecordSignaturePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    SmallVector<func::FuncOp> entries, imports;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn.isDeclaration() && fn.isPublic())
        entries.push_back(fn);
      else if (fn.isDeclaration() &&
               fn->hasAttr(tessel::TesselDialect::getImportAttrName()))
        imports.push_back(fn);
    }
    if (entries.empty()) {
      module.emitError() << "the model has no public function with a body to "
                            "export as an entry point";
      return signalPassFailure();
    }
    // Give every function with a body a reserved internal symbol first; the
    // record keeps both the user's name and that symbol.
    SymbolTable symbols(module);
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (fn.isDeclaration() || fn.getName().starts_with(kInternalPrefix))
        continue;
      fn->setAttr("tessel.source_name", b.getStringAttr(fn.getName()));
      StringAttr internal =
          b.getStringAttr(kInternalPrefix + fn.getName().str());
      if (symbols.lookup(internal) ||
          failed(symbols.rename(fn.getOperation(), internal))) {
        fn.emitError() << "cannot rename function '" << fn.getName()
                       << "' to its internal symbol '" << internal.getValue()
                       << "': the name is taken";
        return signalPassFailure();
      }
    }
    SmallVector<Attribute> functions;
    llvm::StringSet<> entryNames, exported;
    bool ok = true;
    for (func::FuncOp fn : entries) {
      FailureOr<DictionaryAttr> sig = recordFunction(fn, b, entryNames);
      if (failed(sig)) {
        ok = false;
        continue;
      }
      exported.insert(sig->getAs<StringAttr>("name").getValue());
      functions.push_back(*sig);
      // The ABI makes inputs read-only: bufferization must copy before
      // writing into an argument's buffer instead of writing in place.
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        fn.setArgAttr(i, "bufferization.writable", b.getBoolAttr(false));
    }
    SmallVector<Attribute> importRecords;
    for (func::FuncOp fn : imports) {
      FailureOr<DictionaryAttr> record = recordImport(fn, b, exported);
      if (failed(record)) {
        ok = false;
        continue;
      }
      importRecords.push_back(*record);
    }
    if (!ok)
      return signalPassFailure();
    module->setAttr(tessel::kFunctionsAttrName, b.getArrayAttr(functions));
    if (!importRecords.empty())
      module->setAttr(tessel::TesselDialect::getImportsAttrName(),
                      b.getArrayAttr(importRecords));
    // The records replace the declarations: a declaration with tensor types
    // has nothing to become in the lowered module.
    for (func::FuncOp fn : imports)
      fn.erase();
  }

  /// The interface of `fn` (an entry point or an import) as
  /// {inputs, outputs} arrays of {name, dtype, shape[, vocab]}.
  FailureOr<std::pair<ArrayAttr, ArrayAttr>>
  recordInterface(func::FuncOp fn, Builder &b, StringRef what) {
    auto describe = [&](Type type, DictionaryAttr attrs, StringRef kind,
                        unsigned index,
                        llvm::StringSet<> &seen) -> FailureOr<Attribute> {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor) {
        fn.emitError() << kind << " #" << index << " has type " << type
                       << "; " << what << "s take and return ranked tensors";
        return failure();
      }
      ArrayAttr dimNames;
      if (!tensor.hasStaticShape()) {
        FailureOr<ArrayAttr> names =
            readDimNames(fn, tensor, attrs, kind, index, what);
        if (failed(names))
          return failure();
        dimNames = *names;
      }
      StringRef dtype = abiDType(tensor.getElementType());
      if (dtype.empty()) {
        fn.emitError() << kind << " #" << index << " has element type "
                       << tensor.getElementType()
                       << ", which the artifact ABI cannot carry";
        return failure();
      }
      auto nameAttr =
          attrs ? attrs.getAs<StringAttr>(tessel::kNameAttrName) : StringAttr();
      std::string name = nameAttr ? sanitize(nameAttr.getValue())
                                  : (kind + std::to_string(index)).str();
      if (name.empty() || !seen.insert(name).second) {
        fn.emitError() << kind << " name '" << name
                       << "' is empty or used twice";
        return failure();
      }
      SmallVector<NamedAttribute> fields = {
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("dtype", b.getStringAttr(dtype)),
          b.getNamedAttr("shape", b.getDenseI64ArrayAttr(tensor.getShape())),
      };
      if (dimNames)
        fields.push_back(
            b.getNamedAttr(tessel::kRecordDimNamesKey, dimNames));
      // Symbols cross the ABI as i32 ids; the vocabulary (set by
      // tessel-lower-sym) is the part of the interface the dtype lost.
      if (auto vocab = attrs ? attrs.getAs<IntegerAttr>(
                                   tessel::sym::SymDialect::getVocabAttrName())
                             : IntegerAttr()) {
        if (dtype != "i32") {
          fn.emitError() << kind << " #" << index << " has '"
                         << tessel::sym::SymDialect::getVocabAttrName()
                         << "' but element type " << tensor.getElementType()
                         << "; symbol ids are i32";
          return failure();
        }
        fields.push_back(b.getNamedAttr("vocab", vocab));
      }
      // A part of a sequence or optional that crosses the ABI as several
      // tensors ("ROLE:OWNER", set by the importer).
      if (auto part = attrs ? attrs.getAs<StringAttr>("tessel.part")
                            : StringAttr())
        fields.push_back(
            b.getNamedAttr("part", b.getStringAttr(sanitize(part.getValue()))));
      return Attribute(b.getDictionaryAttr(fields));
    };

    SmallVector<Attribute> inputs, outputs;
    llvm::StringSet<> inNames, outNames;
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      auto r = describe(type, fn.getArgAttrDict(i), "input", i, inNames);
      if (failed(r))
        return failure();
      inputs.push_back(*r);
    }
    llvm::StringSet<> inputDims;
    // The records were just written, so their names are well-formed.
    for (Attribute in : inputs) {
      SmallVector<StringRef> names = *tessel::recordDimNames(in);
      inputDims.insert(names.begin(), names.end());
    }
    for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
      auto r = describe(type, fn.getResultAttrDict(i), "output", i, outNames);
      if (failed(r))
        return failure();
      SmallVector<StringRef> names = *tessel::recordDimNames(*r);
      for (StringRef name : names)
        if (!name.empty() && name != tessel::kRunTimeDimName &&
            !inputDims.contains(name)) {
          fn.emitError() << "output #" << i << " has the dynamic dimension '"
                         << name
                         << "', which no input has: the caller could not "
                            "know the output's size";
          return failure();
        }
      outputs.push_back(*r);
    }
    return std::make_pair(b.getArrayAttr(inputs), b.getArrayAttr(outputs));
  }

  /// The names of `tensor`'s dimensions from the value's
  /// `tessel.dim_names` ("" at static ones), which every dynamic dimension
  /// needs: the manifest names the run-time sizes (ABI v3).
  static FailureOr<ArrayAttr> readDimNames(Operation *fn,
                                           RankedTensorType tensor,
                                           DictionaryAttr attrs,
                                           StringRef kind, unsigned index,
                                           StringRef what) {
    auto names =
        attrs ? attrs.getAs<ArrayAttr>(tessel::kDimNamesAttrName) : ArrayAttr();
    auto err = [&]() {
      InFlightDiagnostic d = fn->emitError();
      d << what << " " << kind << " #" << index << " has type " << tensor
        << "; ";
      return d;
    };
    if (!names) {
      err() << "name its dynamic dimensions with '"
            << tessel::kDimNamesAttrName
            << "' (the artifact ABI binds them from the inputs) or pin them";
      return failure();
    }
    if (names.size() != size_t(tensor.getRank()) ||
        !llvm::all_of(names, llvm::IsaPred<StringAttr>)) {
      err() << "'" << tessel::kDimNamesAttrName
            << "' must be an array of one string per dimension";
      return failure();
    }
    for (auto [d, a] : llvm::zip(tensor.getShape(), names)) {
      StringRef name = cast<StringAttr>(a).getValue();
      bool identifier =
          !name.empty() && !isdigit(static_cast<unsigned char>(name[0])) &&
          llvm::all_of(name, [](char c) {
            return isalnum(static_cast<unsigned char>(c)) || c == '_';
          });
      // Only an entry's outputs may have run-time sizes: the entry
      // allocates those, while inputs bind their names and an import's
      // outputs are allocated by its caller before the call.
      if (ShapedType::isDynamic(d) && name == tessel::kRunTimeDimName) {
        if (kind == "output" && what == "entry point")
          continue;
        err() << "dimension sizes that follow from the data ('"
              << tessel::kRunTimeDimName << "') are only for an entry "
              << "point's outputs";
        return failure();
      }
      if (ShapedType::isDynamic(d) ? !identifier : !name.empty()) {
        err() << "'" << tessel::kDimNamesAttrName
              << "' must name each dynamic dimension with an identifier "
                 "([A-Za-z_][A-Za-z0-9_]*) and each static one \"\", got "
              << names;
        return failure();
      }
    }
    return names;
  }

  FailureOr<DictionaryAttr> recordFunction(func::FuncOp fn, Builder &b,
                                           llvm::StringSet<> &entryNames) {
    std::string name =
        sanitize(fn->getAttrOfType<StringAttr>("tessel.source_name").getValue());
    std::string entry = entrySymbol(name);
    if (!entryNames.insert(entry).second) {
      fn.emitError() << "entry point '" << name << "' maps to the symbol '"
                     << entry << "' of another entry point; rename one";
      return failure();
    }
    auto sig = recordInterface(fn, b, "entry point");
    if (failed(sig))
      return failure();
    if (sig->second.empty()) {
      fn.emitError() << "entry point '" << name << "' returns nothing";
      return failure();
    }
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("symbol", b.getStringAttr(fn.getName())),
        b.getNamedAttr("entry", b.getStringAttr(entry)),
        b.getNamedAttr("inputs", sig->first),
        b.getNamedAttr("outputs", sig->second),
    };
    SmallVector<Attribute> used =
        importsUsedBy(fn, fn->getParentOfType<ModuleOp>(), b);
    if (!used.empty())
      fields.push_back(b.getNamedAttr("imports", b.getArrayAttr(used)));
    return b.getDictionaryAttr(fields);
  }

  FailureOr<DictionaryAttr> recordImport(func::FuncOp fn, Builder &b,
                                         const llvm::StringSet<> &exported) {
    // The runtime finds the provider by this name, and the call sites name
    // the import by its symbol: both must be the same manifest token.
    StringRef name = fn.getName();
    if (sanitize(name) != name || name.empty()) {
      fn.emitError() << "import '" << name
                     << "' has whitespace or control characters in its name; "
                        "rename the component";
      return failure();
    }
    if (exported.contains(name)) {
      fn.emitError() << "import '" << name
                     << "' has the name of an entry point of this artifact";
      return failure();
    }
    auto sig = recordInterface(fn, b, "import");
    if (failed(sig))
      return failure();
    if (sig->second.empty()) {
      fn.emitError() << "import '" << name << "' returns nothing";
      return failure();
    }
    return b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("inputs", sig->first),
        b.getNamedAttr("outputs", sig->second),
    });
  }
};

} // namespace
