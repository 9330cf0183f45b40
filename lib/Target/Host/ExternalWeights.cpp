//===- ExternalWeights.cpp - Weights next to the LLVM IR, not in it -------===//
//
// A model's weights are most of its artifact (ViT-B/16: 330 MB). Kept in
// the LLVM IR they are copied into LLVM constants, walked by the optimizer,
// and emitted byte by byte by the code generator into a buffer that is a
// fourth copy: 3.7 of ViT-B/16's 10 s of compile time and a good part of
// its 2 GB. Instead, as IREE keeps parameters out of its executables, the
// bytes go straight from the MLIR attribute to a file, and the artifact's
// link assembles a few lines that `.incbin` them into .rodata.
//
//===----------------------------------------------------------------------===//
#include "ExternalWeights.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

/// Names the assembler takes unquoted.
bool plainSymbol(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) {
           return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
         });
}

/// The global's bytes as they sit in memory, if it is one to move.
std::optional<ArrayRef<char>> externalBytes(LLVM::GlobalOp global) {
  if (!global.getConstant() || global.getThreadLocal_() ||
      !global.getInitializer().empty() || global.getSection() ||
      global.getAddrSpace() != 0 || !plainSymbol(global.getSymName()))
    return std::nullopt;
  auto dense = dyn_cast_or_null<DenseElementsAttr>(global.getValueAttr());
  // A splat stores one element; i1 and other sub-byte types are packed.
  if (!dense || dense.isSplat())
    return std::nullopt;
  Type elt = dense.getElementType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  ArrayRef<char> raw = dense.getRawData();
  int64_t bytes = dense.getNumElements() * (elt.getIntOrFloatBitWidth() / 8);
  if (bytes < tessel::kMinExternalWeightBytes ||
      static_cast<int64_t>(raw.size()) != bytes)
    return std::nullopt;
  return raw;
}

} // namespace

FailureOr<bool> mlir::tessel::externalizeWeights(ModuleOp module,
                                                 StringRef dataPath,
                                                 StringRef asmPath) {
  SmallVector<std::pair<LLVM::GlobalOp, ArrayRef<char>>> moved;
  module.walk([&](LLVM::GlobalOp global) {
    if (std::optional<ArrayRef<char>> bytes = externalBytes(global))
      moved.push_back({global, *bytes});
  });
  if (moved.empty())
    return false;

  std::error_code ec;
  llvm::raw_fd_ostream data(dataPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return module.emitError() << "cannot write '" << dataPath
                              << "': " << ec.message();
  llvm::raw_fd_ostream assembly(asmPath, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return module.emitError() << "cannot write '" << asmPath
                              << "': " << ec.message();
  // The path is quoted in the assembly: refuse what would need escaping.
  if (dataPath.contains('"') || dataPath.contains('\\') ||
      dataPath.contains('\n'))
    return module.emitError() << "unusable temporary path '" << dataPath
                              << "'";
  assembly << "\t.section .rodata.tessel_weights,\"a\",@progbits\n";
  uint64_t offset = 0;
  for (auto &[global, bytes] : moved) {
    // At least a cache line (and what the IR declaration then promises).
    uint64_t align = llvm::PowerOf2Ceil(
        std::max<uint64_t>(global.getAlignment().value_or(1), 64));
    global.setAlignment(align);
    StringRef name = global.getSymName();
    assembly << "\t.p2align " << llvm::Log2_64(align)
             << "\n\t.globl " << name << "\n\t.hidden " << name
             << "\n\t.type " << name << ",@object\n\t.size " << name << ", "
             << bytes.size() << "\n"
             << name << ":\n\t.incbin \"" << dataPath << "\", " << offset
             << ", " << bytes.size() << "\n";
    data.write(bytes.data(), bytes.size());
    offset += bytes.size();
    // The IR keeps a declaration: hidden, so references bind within the
    // artifact and nothing is exported.
    global.removeValueAttr();
    global.setLinkage(LLVM::Linkage::External);
    global.setVisibility_(LLVM::Visibility::Hidden);
    global.setDsoLocal(true);
    global.setUnnamedAddrAttr(nullptr);
  }
  assembly << "\t.section .note.GNU-stack,\"\",@progbits\n";
  data.close();
  assembly.close();
  if (data.has_error() || assembly.has_error())
    return module.emitError() << "cannot write the weights' files";
  return true;
}
