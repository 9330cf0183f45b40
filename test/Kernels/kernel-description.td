// The kernel description backends (tessel-tblgen, KernelBase.td): one
// description gives the C prototype, the compiler's marshalling with its
// declared type, and the doc table.
// RUN: tessel-tblgen -gen-kernel-c-header -I %tessel_src/include %s | FileCheck %s --check-prefix=HEADER
// RUN: tessel-tblgen -gen-kernel-calls -I %tessel_src/include %s | FileCheck %s --check-prefix=CALLS
// RUN: tessel-tblgen -gen-kernel-doc -I %tessel_src/include %s | FileCheck %s --check-prefix=DOC

include "tessel/Kernels/KernelBase.td"

def : KernelConstant<"TILE", 16, "rows per tile">;

// HEADER: /* rows per tile */
// HEADER-NEXT: #define TESSEL_KERNEL_TILE 16

def Scale : Kernel<"scale_f32"> {
  let summary = "out = alpha * in";
  let description = [{
    Every element, in order.
  }];
  let op = "ScaleOp";
  let predicate = "$_op.isFloat()";
  let prologue = [{
    Value dense = denseOperand(cb.b, $_op, $_op.getInput());
  }];
  let arguments = (ins DimArg<"$_op.getInit()", 0>:$n,
                       I64Arg<"$_op.getCount()">:$count,
                       StridedArg<"const float", "dense", ["sr", "sc"]>:$in,
                       PtrArg<"float", "$_op.getInit()">:$out,
                       F32Arg<"$_op.getAlpha()">:$alpha,
                       I32Arg<"0">:$flags);
}

// HEADER-LABEL: /* out = alpha * in
// HEADER-NEXT:  *
// HEADER-NEXT:  * Every element, in order.
// HEADER-NEXT:  */
// HEADER-NEXT: void tessel_kernel_scale_f32(int64_t n, int64_t count, const float *in,
// HEADER-NEXT:     int64_t in_sr, int64_t in_sc, float *out, float alpha, int32_t flags);

// CALLS-LABEL: static FunctionType tessel_kernel_scale_f32_type(Builder &b) {
// CALLS:         return b.getFunctionType({
// CALLS-NEXT:        i64, i64, ptr, i64, i64, ptr, f32, i32}, {});
// CALLS-LABEL: static FailureOr<bool> lower_tessel_kernel_scale_f32(ModuleOp module, ScaleOp op) {
// CALLS-NEXT:    if (!(op.isFloat()))
// CALLS-NEXT:      return false;
// CALLS-NEXT:    KernelCallBuilder cb(op);
// CALLS-NEXT:    Value dense = denseOperand(cb.b, op, op.getInput());
// CALLS-NEXT:    cb.i64(cb.dim(op.getInit(), 0)); // n
// CALLS-NEXT:    cb.i64(op.getCount()); // count
// CALLS-NEXT:    cb.strides(cb.buffer(dense), 2); // in
// CALLS-NEXT:    cb.buffer(op.getInit()); // out
// CALLS-NEXT:    cb.f32(op.getAlpha()); // alpha
// CALLS-NEXT:    cb.i32(0); // flags
// CALLS-NEXT:    if (failed(cb.call(module, "tessel_kernel_scale_f32", tessel_kernel_scale_f32_type(cb.b))))

// A function compiled code does not call: declared only, with any C type.
def Hook : Kernel<"hook"> {
  let symbol = "my_hook";
  let summary = "a hook";
  let returnType = "void *";
  let arguments = (ins OpaqueArg<"size_t">:$size,
                       OpaqueArg<"void (*$name)(void *)">:$callback);
}

// HEADER-LABEL: /* a hook
// HEADER-NEXT:  */
// HEADER-NEXT: void *my_hook(size_t size, void (*callback)(void *));

// Only kernels with an op are lowered, in description order.
// CALLS-NOT: my_hook
// CALLS-LABEL: static FailureOr<bool> lowerToKernelCall(ModuleOp module, Operation *op) {
// CALLS-NEXT:    if (auto o = dyn_cast<ScaleOp>(op)) {
// CALLS-LABEL: static bool hasKernelLowering(Operation *op) {
// CALLS-NEXT:    return isa<ScaleOp>(op);

// DOC: | `tessel_kernel_scale_f32` | `ScaleOp` | `op.isFloat()` | out = alpha * in |
// DOC: | `my_hook` | (not called by compiled code) |  | a hook |
// DOC: | `TESSEL_KERNEL_TILE` | 16 | rows per tile |
