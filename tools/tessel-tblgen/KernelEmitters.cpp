//===- KernelEmitters.cpp - kernel descriptions -> header, calls, docs -----===//
//
// Backends for include/tessel/Kernels/Kernels.td (the record classes are in
// KernelBase.td):
//   -gen-kernel-c-header  the C header of the kernel library;
//   -gen-kernel-calls     tessel-kernels-to-calls' marshalling (C++);
//   -gen-kernel-doc       a Markdown reference of every kernel.
//
//===----------------------------------------------------------------------===//
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace llvm;

namespace {

/// One C parameter.
struct Param {
  std::string type;
  std::string name;
  /// "int64_t x", or the type with the name in place for function pointers
  /// ("void (*fn)(void *)").
  std::string decl() const {
    StringRef t = type;
    if (t.contains("$name"))
      return replaceAll(type, "$name", name);
    return t.ends_with("*") ? type + name : type + " " + name;
  }
  static std::string replaceAll(StringRef s, StringRef from, StringRef to) {
    std::string out;
    while (true) {
      size_t i = s.find(from);
      out += s.take_front(i).str();
      if (i == StringRef::npos)
        return out;
      out += to.str();
      s = s.drop_front(i + from.size());
    }
  }
};

/// One `arguments` entry: its parameters and marshalling statement.
struct Arg {
  std::string name;
  std::vector<Param> params;
  std::string marshal;
};

/// A Kernel record, read and checked.
struct KernelDesc {
  const Record *def;
  std::string name; // the C symbol
  std::vector<Arg> args;

  std::vector<Param> params() const {
    std::vector<Param> all;
    for (const Arg &a : args)
      all.insert(all.end(), a.params.begin(), a.params.end());
    return all;
  }
  StringRef op() const { return def->getValueAsString("op"); }
};

std::string subst(StringRef code, StringRef op) {
  return Param::replaceAll(code, "$_op", op);
}

KernelDesc readKernel(const Record *def) {
  KernelDesc k{def, def->getValueAsString("symbol").str(), {}};
  const DagInit *args = def->getValueAsDag("arguments");
  StringSet<> names;
  for (unsigned i = 0, e = args->getNumArgs(); i < e; ++i) {
    const auto *argDef = dyn_cast<DefInit>(args->getArg(i));
    if (!argDef || !argDef->getDef()->isSubClassOf("KernelArg"))
      PrintFatalError(def, "argument #" + Twine(i) + " of '" + k.name +
                               "' is not a KernelArg");
    const Record *a = argDef->getDef();
    Arg arg;
    arg.name = args->getArgNameStr(i).str();
    if (arg.name.empty())
      PrintFatalError(def, "argument #" + Twine(i) + " of '" + k.name +
                               "' has no name");
    std::vector<StringRef> types = a->getValueAsListOfStrings("cTypes");
    std::vector<StringRef> cNames = a->getValueAsListOfStrings("cNames");
    if (types.size() != cNames.size() || types.empty())
      PrintFatalError(def, "argument '" + arg.name + "' of '" + k.name +
                               "' has mismatched cTypes and cNames");
    for (auto [t, n] : zip_equal(types, cNames)) {
      Param p{t.str(), Param::replaceAll(n, "$name", arg.name)};
      if (!names.insert(p.name).second)
        PrintFatalError(def, "'" + k.name + "' has two parameters named '" +
                                 p.name + "'");
      arg.params.push_back(std::move(p));
    }
    arg.marshal = a->getValueAsString("marshal").str();
    k.args.push_back(std::move(arg));
  }
  return k;
}

/// Every Kernel record in the order of the .td file, names unique.
std::vector<KernelDesc> readKernels(const RecordKeeper &records) {
  std::vector<const Record *> defs(
      records.getAllDerivedDefinitions("Kernel").begin(),
      records.getAllDerivedDefinitions("Kernel").end());
  llvm::sort(defs, [](const Record *a, const Record *b) {
    return a->getID() < b->getID();
  });
  std::vector<KernelDesc> kernels;
  StringSet<> seen;
  for (const Record *d : defs) {
    kernels.push_back(readKernel(d));
    if (!seen.insert(kernels.back().name).second)
      PrintFatalError(d, "kernel '" + kernels.back().name +
                             "' is described twice");
  }
  return kernels;
}

std::vector<const Record *> byId(ArrayRef<const Record *> defs) {
  std::vector<const Record *> v(defs.begin(), defs.end());
  llvm::sort(v, [](const Record *a, const Record *b) {
    return a->getID() < b->getID();
  });
  return v;
}

/// `text` as a C block comment, re-indented, each line prefixed " * ".
void emitComment(raw_ostream &os, StringRef text, StringRef indent = "") {
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  // Drop the common indentation and the blank first/last lines TableGen's
  // [{ }] blocks leave.
  while (!lines.empty() && lines.front().trim().empty())
    lines.erase(lines.begin());
  while (!lines.empty() && lines.back().trim().empty())
    lines.pop_back();
  size_t common = StringRef::npos;
  for (StringRef l : lines)
    if (!l.trim().empty())
      common = std::min(common, l.find_first_not_of(' '));
  if (common == StringRef::npos)
    common = 0;
  for (StringRef l : lines) {
    StringRef body = l.size() > common ? l.drop_front(common).rtrim() : "";
    os << indent << (body.empty() ? " *" : " * ") << body << "\n";
  }
}

/// `void name(p1, p2, ...);` filled to 80 columns.
void emitPrototype(raw_ostream &os, StringRef ret, StringRef name,
                   ArrayRef<Param> params) {
  std::string head =
      (ret + (ret.ends_with("*") ? "" : " ") + name + "(").str();
  if (params.empty()) {
    os << head << "void);\n";
    return;
  }
  std::string line = head;
  bool first = true;
  for (size_t i = 0; i < params.size(); ++i) {
    std::string piece = params[i].decl() + (i + 1 == params.size() ? ");" : ",");
    if (!first && line.size() + 1 + piece.size() > 80) {
      os << line << "\n";
      line = "    " + piece;
    } else {
      line += (first ? "" : " ") + piece;
    }
    first = false;
  }
  os << line << "\n";
}

/// C++ statements from a [{ }] block, re-indented by two spaces.
void emitCode(raw_ostream &os, StringRef code) {
  SmallVector<StringRef> lines;
  code.split(lines, '\n');
  size_t common = StringRef::npos;
  for (StringRef l : lines)
    if (!l.trim().empty())
      common = std::min(common, l.find_first_not_of(' '));
  for (StringRef l : lines)
    if (!l.trim().empty())
      os << "  " << l.drop_front(common).rtrim() << "\n";
}

//===----------------------------------------------------------------------===//
// -gen-kernel-c-header
//===----------------------------------------------------------------------===//

void emitCHeader(const RecordKeeper &records, raw_ostream &os) {
  std::vector<KernelDesc> kernels = readKernels(records);
  os << "/* Generated by tessel-tblgen -gen-kernel-c-header from\n"
        " * include/tessel/Kernels/Kernels.td: edit that, not this. */\n";
  os << "/*\n * tessel_kernels.h - the kernel library\n *\n";
  for (const Record *lib : byId(records.getAllDerivedDefinitions("KernelLibrary")))
    emitComment(os, lib->getValueAsString("description"));
  os << " */\n#ifndef TESSEL_KERNELS_TESSEL_KERNELS_H\n"
        "#define TESSEL_KERNELS_TESSEL_KERNELS_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n";
  for (const Record *c :
       byId(records.getAllDerivedDefinitions("KernelConstant"))) {
    StringRef doc = c->getValueAsString("doc").trim();
    if (!doc.contains('\n') && doc.size() < 72) {
      os << "\n/* " << doc << " */\n";
    } else {
      os << "\n/*\n";
      emitComment(os, c->getValueAsString("doc"));
      os << " */\n";
    }
    os << "#define TESSEL_KERNEL_" << c->getValueAsString("constName")
       << " " << c->getValueAsInt("value") << "\n";
  }
  for (const KernelDesc &k : kernels) {
    os << "\n/* " << k.def->getValueAsString("summary") << "\n";
    StringRef desc = k.def->getValueAsString("description");
    if (!desc.trim().empty()) {
      os << " *\n";
      emitComment(os, desc);
    }
    os << " */\n";
    emitPrototype(os, k.def->getValueAsString("returnType"), k.name,
                  k.params());
  }
  os << "\n#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n"
        "#endif /* TESSEL_KERNELS_TESSEL_KERNELS_H */\n";
}

//===----------------------------------------------------------------------===//
// -gen-kernel-calls
//===----------------------------------------------------------------------===//

/// The MLIR type builder expression of a C parameter type, for kernels the
/// compiler calls.
std::string mlirType(const KernelDesc &k, const Param &p) {
  StringRef t = StringRef(p.type).trim();
  if (t == "int64_t")
    return "i64";
  if (t == "int32_t")
    return "i32";
  if (t == "float")
    return "f32";
  if (t.ends_with("*") && !t.contains("("))
    return "ptr";
  PrintFatalError(k.def, "parameter '" + p.name + "' of '" + k.name +
                             "' has C type '" + t +
                             "', which compiled calls cannot pass (int64_t, "
                             "int32_t, float and data pointers can)");
}

void emitCalls(const RecordKeeper &records, raw_ostream &os) {
  std::vector<KernelDesc> kernels = readKernels(records);
  os << "// Generated by tessel-tblgen -gen-kernel-calls from\n"
        "// include/tessel/Kernels/Kernels.td: edit that, not this.\n"
        "// Included by lib/Conversion/KernelsToCalls, which defines\n"
        "// KernelCallBuilder.\n\n";
  std::vector<std::string> ops;
  for (const KernelDesc &k : kernels) {
    if (k.op().empty())
      continue;
    if (!llvm::is_contained(ops, k.op()))
      ops.push_back(k.op().str());
    // The declared type, from the description alone.
    os << "/// The C type of " << k.name << ".\n";
    os << "static FunctionType " << k.name
       << "_type(Builder &b) {\n";
    os << "  Type i64 = b.getI64Type(), i32 = b.getI32Type(), "
          "f32 = b.getF32Type();\n"
          "  Type ptr = LLVM::LLVMPointerType::get(b.getContext());\n"
          "  (void)i64, (void)i32, (void)f32, (void)ptr;\n"
          "  return b.getFunctionType({";
    std::vector<Param> params = k.params();
    std::string line;
    for (size_t i = 0; i < params.size(); ++i) {
      std::string piece =
          mlirType(k, params[i]) + (i + 1 < params.size() ? "," : "");
      if (line.size() + piece.size() > 72) {
        os << "\n" << line;
        line.clear();
      }
      line += (line.empty() ? "      " : " ") + piece;
    }
    os << "\n" << line << "}, {});\n}\n\n";

    os << "/// " << k.op() << " -> " << k.name
       << " when it applies: true if lowered.\n";
    os << "static FailureOr<bool> lower_" << k.name << "(ModuleOp module, "
       << k.op() << " op) {\n";
    os << "  if (!(" << subst(k.def->getValueAsString("predicate"), "op")
       << "))\n    return false;\n";
    os << "  KernelCallBuilder cb(op);\n";
    StringRef prologue = k.def->getValueAsString("prologue");
    // The prologue's locals are in scope of the marshalling below.
    if (!prologue.trim().empty())
      emitCode(os, subst(prologue, "op"));
    for (const Arg &a : k.args) {
      if (a.marshal.empty())
        PrintFatalError(k.def, "argument '" + a.name + "' of '" + k.name +
                                   "', which the compiler calls, has no "
                                   "marshalling (an OpaqueArg?)");
      os << "  " << subst(a.marshal, "op") << " // " << a.name << "\n";
    }
    os << "  if (failed(cb.call(module, \"" << k.name << "\", " << k.name
       << "_type(cb.b))))\n    return failure();\n";
    os << "  op->erase();\n  return true;\n}\n\n";
  }

  os << "/// Lowers `op` to the first kernel whose description takes it:\n"
        "/// true if it did, false if no kernel applies, failure on error.\n";
  os << "static FailureOr<bool> lowerToKernelCall(ModuleOp module, "
        "Operation *op) {\n";
  for (const KernelDesc &k : kernels) {
    if (k.op().empty())
      continue;
    os << "  if (auto o = dyn_cast<" << k.op() << ">(op)) {\n"
       << "    FailureOr<bool> r = lower_" << k.name << "(module, o);\n"
       << "    if (failed(r) || *r)\n      return r;\n  }\n";
  }
  os << "  return false;\n}\n\n";
  os << "/// Whether some kernel's description lowers ops like `op`.\n";
  os << "static bool hasKernelLowering(Operation *op) {\n  return isa<";
  os << join(ops, ", ") << ">(op);\n}\n";
}

//===----------------------------------------------------------------------===//
// -gen-kernel-doc
//===----------------------------------------------------------------------===//

void emitDoc(const RecordKeeper &records, raw_ostream &os) {
  std::vector<KernelDesc> kernels = readKernels(records);
  os << "<!-- Generated by tessel-tblgen -gen-kernel-doc from "
        "include/tessel/Kernels/Kernels.td. -->\n\n";
  os << "| kernel | called for | when | summary |\n|---|---|---|---|\n";
  for (const KernelDesc &k : kernels) {
    StringRef pred = k.def->getValueAsString("predicate").trim();
    os << "| `" << k.name << "` | "
       << (k.op().empty() ? "(not called by compiled code)"
                          : ("`" + k.op() + "`").str())
       << " | " << (pred == "true" ? "" : ("`" + subst(pred, "op") + "`"))
       << " | " << k.def->getValueAsString("summary") << " |\n";
  }
  os << "\n| constant | value | meaning |\n|---|---|---|\n";
  for (const Record *c :
       byId(records.getAllDerivedDefinitions("KernelConstant"))) {
    std::string doc = c->getValueAsString("doc").str();
    std::replace(doc.begin(), doc.end(), '\n', ' ');
    os << "| `TESSEL_KERNEL_" << c->getValueAsString("constName") << "` | "
       << c->getValueAsInt("value") << " | " << doc << " |\n";
  }
}

TableGen::Emitter::Opt genHeader("gen-kernel-c-header", emitCHeader,
                                 "Generate the kernel library's C header");
TableGen::Emitter::Opt genCalls("gen-kernel-calls", emitCalls,
                                "Generate the compiler's kernel-call "
                                "marshalling");
TableGen::Emitter::Opt genDoc("gen-kernel-doc", emitDoc,
                              "Generate the kernel reference (Markdown)");

} // namespace
