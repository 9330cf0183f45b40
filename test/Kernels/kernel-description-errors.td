// Descriptions the backends refuse, each with a diagnostic naming the
// kernel and the parameter.
// RUN: not tessel-tblgen -gen-kernel-c-header -I %tessel_src/include -DDUP_PARAM %s 2>&1 | FileCheck %s --check-prefix=DUP_PARAM
// RUN: not tessel-tblgen -gen-kernel-c-header -I %tessel_src/include -DDUP_KERNEL %s 2>&1 | FileCheck %s --check-prefix=DUP_KERNEL
// RUN: not tessel-tblgen -gen-kernel-c-header -I %tessel_src/include -DNOT_ARG %s 2>&1 | FileCheck %s --check-prefix=NOT_ARG
// RUN: not tessel-tblgen -gen-kernel-calls -I %tessel_src/include -DBAD_TYPE %s 2>&1 | FileCheck %s --check-prefix=BAD_TYPE
// RUN: not tessel-tblgen -gen-kernel-calls -I %tessel_src/include -DOPAQUE %s 2>&1 | FileCheck %s --check-prefix=OPAQUE

include "tessel/Kernels/KernelBase.td"

#ifdef DUP_PARAM
// DUP_PARAM: error: 'tessel_kernel_k' has two parameters named 'x_s'
def K : Kernel<"k"> {
  let arguments = (ins StridedArg<"float", "v", ["s"]>:$x, I64Arg<"0">:$x_s);
}
#endif

#ifdef DUP_KERNEL
// DUP_KERNEL: error: kernel 'tessel_kernel_k' is described twice
def K1 : Kernel<"k">;
def K2 : Kernel<"k">;
#endif

#ifdef NOT_ARG
// NOT_ARG: error: argument #0 of 'tessel_kernel_k' is not a KernelArg
def NotAnArg;
def K : Kernel<"k"> { let arguments = (ins NotAnArg:$x); }
#endif

#ifdef BAD_TYPE
// BAD_TYPE: error: parameter 'n' of 'tessel_kernel_k' has C type 'size_t', which compiled calls cannot pass
def K : Kernel<"k"> {
  let op = "SomeOp";
  let arguments = (ins KernelArg<["size_t"], ["$name"], "cb.i64(0);">:$n);
}
#endif

#ifdef OPAQUE
// OPAQUE: error: argument 'n' of 'tessel_kernel_k', which the compiler calls, has no marshalling
def K : Kernel<"k"> {
  let op = "SomeOp";
  let arguments = (ins OpaqueArg<"int64_t">:$n);
}
#endif
