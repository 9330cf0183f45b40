//===- Passes.h - Tessel conversion passes ----------------------*- C++ -*-===//
#ifndef TESSEL_CONVERSION_PASSES_H
#define TESSEL_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
// Pass option defaults name the kernel library's constants (TESSEL_KERNEL_NR).
#include "tessel/Kernels/tessel_kernels.h"

namespace mlir::tessel {

#define GEN_PASS_DECL
#include "tessel/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Conversion/Passes.h.inc"

/// Name of the module attribute written by tessel-record-signature.
inline constexpr llvm::StringLiteral kFunctionsAttrName = "tessel.functions";
/// Unit attribute on a gpu.launch (set by tessel-gpu-tile-matmul, taken
/// off by tessel-gpu-map-parallel-loops): the kernel gets its constants
/// back (sunk into the launch) before outlining, instead of parameters.
inline constexpr llvm::StringLiteral kSinkConstantsAttrName =
    "tessel.sink_constants";
/// Argument/result attribute naming a tensor in the artifact signature.
inline constexpr llvm::StringLiteral kNameAttrName = "tessel.name";
/// Argument/result attribute naming the dynamic dimensions of a tensor in
/// the artifact signature: an array of strings, one per dimension, "" for a
/// static one. Dimensions of one name have one run-time size (ABI v3).
inline constexpr llvm::StringLiteral kDimNamesAttrName = "tessel.dim_names";
/// The artifact-internal helper that calls an import through the table:
/// declared by tessel-imports-to-calls, defined by tessel-emit-artifact-abi.
inline constexpr llvm::StringLiteral kCallImportHelperName =
    "__tessel_call_import";
/// The artifact-internal helper `(i32 status) -> ()` that records a failure
/// for the running entry to return (the first one wins): declared by
/// tessel-check-result-dims, defined by tessel-emit-artifact-abi.
inline constexpr llvm::StringLiteral kSetStatusHelperName =
    "__tessel_set_status";

} // namespace mlir::tessel

#endif // TESSEL_CONVERSION_PASSES_H
