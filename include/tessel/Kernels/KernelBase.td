//===- KernelBase.td - how a kernel-library function is described -*- tablegen -*-===//
//
// One `Kernel` record per function of the kernel library (lib/Kernels). From
// it tessel-tblgen generates
//   -gen-kernel-c-header  the C header the implementation is compiled
//                         against (tessel/Kernels/tessel_kernels.h), so a
//                         definition that does not match is a C error;
//   -gen-kernel-calls     the compiler's call marshalling: for the kernel op
//                         `op` (when `predicate` holds) the arguments, in
//                         order, from the op's operands and attributes;
//   -gen-kernel-doc       the reference table of docs/pipeline/kernels.md.
// Constants the compiler and the kernels must agree on (tile widths, flags)
// are `KernelConstant`s: one #define, seen by both.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_KERNEL_BASE_TD
#define TESSEL_KERNEL_BASE_TD

// The operator of every `arguments` dag.
def ins;

// The library as a whole: the header's opening comment.
class KernelLibrary {
  string description = "";
}

// `#define TESSEL_KERNEL_<name> <value>`.
class KernelConstant<string name, int val, string text> {
  string constName = name;
  int value = val;
  string doc = text;
}

//===----------------------------------------------------------------------===//
// Arguments. Each expands to one or more C parameters (`cTypes` and
// `cNames`, where `$name` is the name the argument has in `arguments`) and
// to the C++ statement that pushes exactly those values onto the call
// (`marshal`, run with a KernelCallBuilder `cb`; `$_op` is the op).
//===----------------------------------------------------------------------===//

class KernelArg<list<string> types, list<string> names, code statement> {
  list<string> cTypes = types;
  list<string> cNames = names;
  code marshal = statement;
}

// An int64_t: a size, stride or count (an index Value or an int64_t).
class I64Arg<code value>
    : KernelArg<["int64_t"], ["$name"], "cb.i64(" # value # ");">;
// Size `d` of a memref.
class DimArg<code memref, int d> : I64Arg<"cb.dim(" # memref # ", " # d # ")">;
class I32Arg<code value>
    : KernelArg<["int32_t"], ["$name"], "cb.i32(" # value # ");">;
class F32Arg<code value>
    : KernelArg<["float"], ["$name"], "cb.f32(" # value # ");">;
// A pointer to the first element of a memref.
class PtrArg<string cType, code memref>
    : KernelArg<[cType # " *"], ["$name"], "cb.buffer(" # memref # ");">;
// PtrArg of an optional memref (a null Value): NULL without it.
class OptPtrArg<string cType, code memref>
    : KernelArg<[cType # " *"], ["$name"],
                "cb.optionalBuffer(" # memref # ");">;
// A pointer to the first element of a memref and its leading strides (in
// elements), named `<name>_<suffix>`: as many as `strides` has.
class StridedArg<string cType, code memref, list<string> strides>
    : KernelArg<!listconcat([cType # " *"], !foreach(s, strides, "int64_t")),
                !listconcat(["$name"], !foreach(s, strides, "$name_" # s)),
                "cb.strides(cb.buffer(" # memref # "), " # !size(strides) # ");">;
// A parameter that no compiled call passes (functions the generated code
// calls by other means, or that only kernels call).
class OpaqueArg<string cType> : KernelArg<[cType], ["$name"], "">;

//===----------------------------------------------------------------------===//
// Kernels.
//===----------------------------------------------------------------------===//

class Kernel<string name> {
  // The C function.
  string symbol = "tessel_kernel_" # name;
  string summary = "";
  string description = "";
  string returnType = "void";
  dag arguments = (ins);
  // The op (C++ class in mlir::tessel or a qualified name) lowered to a call
  // of this kernel by tessel-kernels-to-calls; "" for functions it does not
  // call.
  string op = "";
  // When `op` is lowered to this kernel (C++ boolean on `$_op`).
  code predicate = "true";
  // Statements run before the arguments are marshalled: locals they use,
  // and `return false;` when this op is left alone after all.
  code prologue = "";
}

#endif // TESSEL_KERNEL_BASE_TD
