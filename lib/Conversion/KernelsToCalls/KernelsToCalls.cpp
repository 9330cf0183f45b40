//===- KernelsToCalls.cpp - kernel ops -> calls into the kernel library ----===//
//
// Which op becomes which call, and each argument's value, are described
// per kernel in include/tessel/Kernels/Kernels.td; tessel-tblgen generates
// the marshalling (KernelCalls.cpp.inc) from it, with the same C signature
// the kernel library is compiled against. This file has the builder those
// descriptions use: a buffer is a pointer to its first element (aligned
// base + offset) and its strides in elements.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Kernels/tessel_kernels.h"
#include "tessel/Support/QuantizeDivision.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

#include <limits>
#include <type_traits>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELKERNELSTOCALLS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// Builds call arguments in the kernel ABI's types; the generated
/// marshalling (KernelCalls.cpp.inc) calls it, one statement per argument.
struct KernelCallBuilder {
  explicit KernelCallBuilder(Operation *op) : op(op), b(op), loc(op->getLoc()) {}

  Operation *op;
  OpBuilder b;
  Location loc;
  SmallVector<Value> args;
  SmallVector<Type> types;

  void i64(Value index) {
    args.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), index));
    types.push_back(b.getI64Type());
  }
  void i64(int64_t v) {
    args.push_back(arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v)));
    types.push_back(b.getI64Type());
  }
  /// A constant where `v` is one, else the index value.
  void i64(OpFoldResult v) {
    if (std::optional<int64_t> c = getConstantIntValue(v))
      i64(*c);
    else
      i64(cast<Value>(v));
  }
  void i32(int32_t v) {
    args.push_back(arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v)));
    types.push_back(b.getI32Type());
  }
  void f32(float v) {
    args.push_back(arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)));
    types.push_back(b.getF32Type());
  }
  void nullPtr() {
    auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
    args.push_back(LLVM::ZeroOp::create(b, loc, ptrTy));
    types.push_back(ptrTy);
  }
  /// buffer(memref), or a null pointer without `memref`.
  void optionalBuffer(Value memref) {
    if (memref)
      buffer(memref);
    else
      nullPtr();
  }
  Value dim(Value memref, unsigned d) {
    return memref::DimOp::create(b, loc, memref, d);
  }
  /// Pushes a pointer to the first element of `memref`; returns its strides.
  SmallVector<Value> buffer(Value memref) {
    auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    Value base =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, md.getBaseBuffer());
    unsigned bytes =
        cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
    Value byteOff = arith::MulIOp::create(
        b, loc, md.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
    Value addr = arith::AddIOp::create(b, loc, base, byteOff);
    Value addr64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), addr);
    auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
    args.push_back(LLVM::IntToPtrOp::create(b, loc, ptrTy, addr64));
    types.push_back(ptrTy);
    return SmallVector<Value>(md.getStrides().begin(), md.getStrides().end());
  }
  /// Pushes the first `n` of `s` (all there are if fewer: the call's type
  /// check then reports the mismatch).
  void strides(ArrayRef<Value> s, size_t n) {
    for (Value v : s.take_front(std::min(n, s.size())))
      i64(v);
  }
  /// A pointer, `rank` sizes and `rank` strides; null and zeros without
  /// `memref`.
  void optionalSizedStrided(Value memref, unsigned rank) {
    if (!memref) {
      nullPtr();
      for (unsigned i = 0; i < 2 * rank; ++i)
        i64(int64_t(0));
      return;
    }
    SmallVector<Value> s = buffer(memref);
    for (unsigned d = 0; d < rank; ++d)
      i64(dim(memref, d));
    strides(s, rank);
  }

  /// Emits the call, declaring `name` in `module` on first use. `declared`
  /// is the kernel's type by its description; the arguments marshalled must
  /// have exactly those types.
  LogicalResult call(ModuleOp module, StringRef name, FunctionType declared) {
    auto fnTy = b.getFunctionType(types, {});
    if (fnTy != declared)
      return op->emitOpError()
             << "marshals " << fnTy << " for '" << name
             << "', but its description (Kernels.td) declares " << declared;
    if (auto fn = module.lookupSymbol<func::FuncOp>(name)) {
      if (fn.getFunctionType() != fnTy)
        return fn.emitError() << "'" << name
                              << "' is declared with a different type";
    } else {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(module.getBody());
      auto decl = func::FuncOp::create(b, loc, name, fnTy);
      decl.setPrivate();
    }
    func::CallOp::create(b, loc, name, TypeRange{}, args);
    return success();
  }
};

/// A dense copy of `memref` allocated before `op` and freed after it:
/// filled from `memref` before `op` (an input), or written back to it
/// after `op` (an output).
Value denseCopy(OpBuilder &b, Operation *op, Value memref, bool isOutput) {
  auto ty = cast<MemRefType>(memref.getType());
  Location loc = op->getLoc();
  SmallVector<Value> dynSizes;
  for (int64_t d = 0; d < ty.getRank(); ++d)
    if (ty.isDynamicDim(d))
      dynSizes.push_back(memref::DimOp::create(b, loc, memref, d));
  auto denseTy = MemRefType::get(ty.getShape(), ty.getElementType());
  Value copy = memref::AllocOp::create(b, loc, denseTy, dynSizes);
  if (!isOutput)
    memref::CopyOp::create(b, loc, memref, copy);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointAfter(op);
  if (isOutput)
    memref::CopyOp::create(b, loc, copy, memref);
  memref::DeallocOp::create(b, loc, copy);
  return copy;
}

/// `memref` itself if the kernel can walk it densely (identity layout),
/// else a dense copy of it (an input).
Value denseOperand(OpBuilder &b, Operation *op, Value memref) {
  if (cast<MemRefType>(memref.getType()).getLayout().isIdentity())
    return memref;
  return denseCopy(b, op, memref, /*isOutput=*/false);
}

/// The stride between the packed weights of batch entries (a `packed` of
/// rank `batchedRank`), or 0 when all entries share one (a rank less).
Value batchStride(KernelCallBuilder &cb, Value packed, int64_t batchedRank) {
  if (cast<MemRefType>(packed.getType()).getRank() != batchedRank)
    return arith::ConstantIndexOp::create(cb.b, cb.loc, 0);
  auto md = memref::ExtractStridedMetadataOp::create(cb.b, cb.loc, packed);
  return md.getStrides()[0];
}

LogicalResult checkPanelWidth(PackedConv2DOp op) {
  if (op.getPanelWidth() == TESSEL_KERNEL_NR)
    return success();
  return op.emitOpError() << "uses panel width " << op.getPanelWidth()
                          << ", but the kernel library's is "
                          << TESSEL_KERNEL_NR;
}

/// A grouped convolution packed in panels runs the dense kernel per group:
/// its panels must be the library's width.
LogicalResult checkPanelWidth(GroupedConv2DOp op) {
  if (op.getPacking() != "panels")
    return success();
  int64_t nr = cast<ShapedType>(op.getPackedFilter().getType()).getDimSize(3);
  if (nr == TESSEL_KERNEL_NR)
    return success();
  return op.emitOpError() << "uses panel width " << nr
                          << ", but the kernel library's is "
                          << TESSEL_KERNEL_NR;
}

/// The epilogue arguments (EpilogueArg in Kernels.td): bias pointer (or
/// null), clamp bounds (-inf/+inf: none) and flags.
template <typename OpT>
void epilogueArgs(KernelCallBuilder &cb, OpT op) {
  if (Value bias = op.getBias())
    cb.buffer(denseOperand(cb.b, op, bias));
  else
    cb.nullPtr();
  float inf = std::numeric_limits<float>::infinity();
  cb.f32(op.getClampMin() ? op.getClampMin()->convertToFloat() : -inf);
  cb.f32(op.getClampMax() ? op.getClampMax()->convertToFloat() : inf);
  int32_t flags = op.getAccumulate() ? TESSEL_KERNEL_ACCUMULATE : 0;
  if constexpr (std::is_same_v<OpT, DepthwiseConv2DOp>)
    if (op.getSilu())
      flags |= TESSEL_KERNEL_SILU;
  if constexpr (std::is_same_v<OpT, SparseMatmulOp> ||
                std::is_same_v<OpT, SparseConv2DOp>) {
    if (op.getKAscending())
      flags |= TESSEL_KERNEL_K_ASCENDING;
    // The verifier bounds n and m (n | m << 8 fits the flags' top bits).
    if (std::optional<ArrayRef<int64_t>> nm = op.getNOfM())
      flags |= int32_t(((*nm)[0] | (*nm)[1] << 8) << TESSEL_KERNEL_NM_SHIFT);
  }
  if constexpr (std::is_same_v<OpT, SparseMatmulOp>)
    if (op.getLanes())
      flags |= TESSEL_KERNEL_LANES;
  cb.i32(flags);
}

/// The requantizing epilogue's arguments (RequantEpilogueArg in
/// Kernels.td): scale and bias pointers, the clamp, the quantization, the
/// table, the dequantization and the flags. Without a scale, null pointers
/// and neutral values: the kernel writes int32.
template <typename OpT>
void requantEpilogueArgs(KernelCallBuilder &cb, OpT op) {
  int32_t flags = op.getASigned() ? TESSEL_KERNEL_A_SIGNED : 0;
  float inf = std::numeric_limits<float>::infinity();
  if (!op.getScale()) {
    cb.nullPtr(); // scale
    cb.nullPtr(); // bias
    for (float v : {-inf, inf, 1.0f, 0.0f, 0.0f, 255.0f})
      cb.f32(v);
    cb.nullPtr(); // table
    for (float v : {1.0f, 0.0f, -inf, inf})
      cb.f32(v);
    cb.i32(flags);
    return;
  }
  auto dense = [&](Value v) {
    return v ? denseOperand(cb.b, op, v) : Value();
  };
  cb.buffer(dense(op.getScale()));
  cb.optionalBuffer(dense(op.getBias()));
  bool quantize = op.getOutScale().has_value();
  float lo = op.getClampMin().convertToFloat();
  float hi = op.getClampMax().convertToFloat();
  if (quantize) {
    QuantizeDivisionPlan plan = planQuantizeDivision(
        op.getOutScale()->convertToFloat(), op.getOutZp().convertToFloat(),
        op.getQmin().convertToFloat(), op.getQmax().convertToFloat(), lo, hi);
    lo = plan.lo;
    hi = plan.hi;
    if (plan.division == QuantizeDivision::Reciprocal)
      flags |= TESSEL_KERNEL_RECIPROCAL;
    else if (plan.division == QuantizeDivision::CorrectedReciprocal)
      flags |= TESSEL_KERNEL_RECIPROCAL_FMA;
    flags |= TESSEL_KERNEL_QUANTIZE;
  }
  cb.f32(lo);
  cb.f32(hi);
  cb.f32(quantize ? op.getOutScale()->convertToFloat() : 1.0f);
  cb.f32(op.getOutZp().convertToFloat());
  cb.f32(op.getQmin().convertToFloat());
  cb.f32(op.getQmax().convertToFloat());
  cb.optionalBuffer(dense(op.getTable()));
  cb.f32(op.getDequantScale() ? op.getDequantScale()->convertToFloat() : 1.0f);
  cb.f32(op.getDequantZp().convertToFloat());
  cb.f32(op.getDequantMin().convertToFloat());
  cb.f32(op.getDequantMax().convertToFloat());
  if (cast<ShapedType>(op.getInit().getType()).getElementType().isF32())
    flags |= TESSEL_KERNEL_OUT_F32;
  if (op.getDequantScale())
    flags |= TESSEL_KERNEL_DEQUANTIZE;
  if (op.getDequantSigned())
    flags |= TESSEL_KERNEL_DQ_SIGNED;
  cb.i32(flags);
}

/// The residual arguments (ResidualArg in Kernels.td): `res` (the op's
/// residual as the kernel reads it) with its `rank` strides, or null and
/// zeros, then the clamp after the add.
void residualArgs(KernelCallBuilder &cb, PackedMatmulI8RequantOp op, Value res,
                  unsigned rank) {
  if (res) {
    cb.strides(cb.buffer(res), rank);
  } else {
    cb.nullPtr();
    for (unsigned i = 0; i < rank; ++i)
      cb.i64(int64_t(0));
  }
  cb.f32(op.getResidualMin().convertToFloat());
  cb.f32(op.getResidualMax().convertToFloat());
}

/// `memref` itself if its innermost stride is statically 1 (a kernel that
/// takes the other strides only), else a dense copy (denseCopy).
Value unitInnerStride(OpBuilder &b, Operation *op, Value memref,
                      bool isOutput = false) {
  auto ty = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (succeeded(ty.getStridesAndOffset(strides, offset)) &&
      (strides.empty() || strides.back() == 1))
    return memref;
  return denseCopy(b, op, memref, isOutput);
}

/// A convolution's N x OH x OW x F output `memref` as N x (OH*OW) x F (the
/// matmul rows of the int8 convolution kernels): a view when OH and OW
/// collapse, else a view of a dense copy (filled first when the kernel
/// `reads` it, written back after when it `writes` it).
Value pixelRows(OpBuilder &b, Operation *op, Value memref, bool reads,
                bool writes = true) {
  SmallVector<ReassociationIndices> rows = {{0}, {1, 2}, {3}};
  auto ty = cast<MemRefType>(memref.getType());
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(ty, rows)) {
    // An input copy is filled by denseCopy itself.
    Value dense = denseCopy(b, op, memref, /*isOutput=*/writes);
    if (reads && writes) // b still inserts before op, after the allocation
      memref::CopyOp::create(b, op->getLoc(), memref, dense);
    memref = dense;
  }
  return memref::CollapseShapeOp::create(b, op->getLoc(), memref, rows);
}

/// A dense f32 linalg.transpose whose permutation, once adjacent dims that
/// stay together are merged, swaps two groups of input dims, `rows` and
/// `cols` (rows first in the input), between a leading `batch` group that
/// stays first and a trailing `inner` group that stays last (either may be
/// empty): [B][R][C][E] -> [B][C][R][E]. Other transposes stay loops.
struct TransposeGroups {
  SmallVector<int64_t> batch, rows, cols, inner; // input dims
};

std::optional<TransposeGroups> transposeGroups(linalg::TransposeOp op) {
  auto inTy = dyn_cast<MemRefType>(op.getInput().getType());
  auto outTy = dyn_cast<MemRefType>(op.getInit().getType());
  if (!inTy || !outTy || !inTy.getElementType().isF32() ||
      !inTy.getLayout().isIdentity() || !outTy.getLayout().isIdentity())
    return std::nullopt;
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = perm.size();
  // Runs of input dims that stay adjacent and in order, in output order.
  SmallVector<SmallVector<int64_t>> runs;
  for (int64_t p : perm) {
    if (!runs.empty() && runs.back().back() + 1 == p)
      runs.back().push_back(p);
    else
      runs.push_back({p});
  }
  TransposeGroups g;
  size_t i = 0;
  if (runs.size() >= 3 && runs.front().front() == 0)
    g.batch = runs[i++];
  if (runs.size() - i == 3 && runs.back().back() == rank - 1) {
    g.inner = runs.back();
    runs.pop_back();
  }
  if (runs.size() - i != 2 || runs[i].front() < runs[i + 1].front())
    return std::nullopt;
  g.cols = runs[i];
  g.rows = runs[i + 1];
  ArrayRef<int64_t> shape = inTy.getShape();
  auto staticSize = [&](ArrayRef<int64_t> dims) -> std::optional<int64_t> {
    SmallVector<int64_t> sizes(llvm::map_range(dims, [&](int64_t d) {
      return shape[d];
    }));
    if (ShapedType::isDynamicShape(sizes))
      return std::nullopt;
    return ShapedType::getNumElements(sizes);
  };
  // A side of 1 is a reshape, copied fast enough by the loops; so are rows
  // of a few elements moved whole.
  std::optional<int64_t> rows = staticSize(g.rows), cols = staticSize(g.cols);
  if ((rows && *rows == 1) || (cols && *cols == 1))
    return std::nullopt;
  if (std::optional<int64_t> inner = staticSize(g.inner);
      !g.inner.empty() && inner && *inner < 8)
    return std::nullopt;
  return g;
}

/// The groups' sizes, products of the input's dims (constants where
/// static).
struct BatchedTranspose {
  OpFoldResult batch, rows, cols, inner;
};

BatchedTranspose transposeSizes(KernelCallBuilder &cb, linalg::TransposeOp op,
                                const TransposeGroups &g) {
  auto product = [&](ArrayRef<int64_t> dims) -> OpFoldResult {
    int64_t known = 1;
    SmallVector<Value> factors; // the run-time sizes
    for (int64_t d : dims) {
      OpFoldResult size =
          memref::getMixedSize(cb.b, cb.loc, op.getInput(), d);
      if (std::optional<int64_t> c = getConstantIntValue(size))
        known *= *c;
      else
        factors.push_back(cast<Value>(size));
    }
    if (factors.empty())
      return cb.b.getIndexAttr(known);
    if (known != 1)
      factors.push_back(arith::ConstantIndexOp::create(cb.b, cb.loc, known));
    Value n = factors.front();
    for (Value f : ArrayRef<Value>(factors).drop_front())
      n = arith::MulIOp::create(cb.b, cb.loc, n, f);
    return n;
  };
  return {product(g.batch), product(g.rows), product(g.cols),
          product(g.inner)};
}

/// A remaining f32 linalg depthwise convolution (multiplier 1) as the
/// equivalent tessel.depthwise_conv2d on its buffers (accumulating into its
/// output, as every linalg convolution does), so one description lowers
/// both.
template <typename LinalgOpT>
void depthwiseAsKernelOp(LinalgOpT op, bool hasMultiplier) {
  Value in = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
  Value out = op.getDpsInits()[0];
  auto inTy = dyn_cast<MemRefType>(in.getType());
  auto wTy = dyn_cast<MemRefType>(w.getType());
  auto outTy = dyn_cast<MemRefType>(out.getType());
  if (!inTy || !wTy || !outTy || !inTy.getElementType().isF32() ||
      !wTy.getElementType().isF32() || !outTy.getElementType().isF32())
    return; // not ours: lowered to loops later
  if (hasMultiplier && wTy.getDimSize(3) != 1)
    return;
  OpBuilder b(op);
  if (hasMultiplier) { // the unit multiplier dim of filter and output
    w = memref::CollapseShapeOp::create(
        b, op.getLoc(), w, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    out = memref::CollapseShapeOp::create(
        b, op.getLoc(), out,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
  }
  SmallVector<int64_t> strides(op.getStrides().template getValues<int64_t>());
  SmallVector<int64_t> dilations(
      op.getDilations().template getValues<int64_t>());
  DepthwiseConv2DOp::create(
      b, op.getLoc(), TypeRange{}, in, w, /*bias=*/Value(), out,
      b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(dilations),
      b.getDenseI64ArrayAttr({0, 0, 0, 0}), /*accumulate=*/b.getUnitAttr(),
      /*clamp_min=*/nullptr, /*clamp_max=*/nullptr, /*silu=*/nullptr);
  op->erase();
}

#include "tessel/Kernels/KernelCalls.cpp.inc"

struct KernelsToCallsPass
    : tessel::impl::TesselKernelsToCallsBase<KernelsToCallsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (panelWidth != TESSEL_KERNEL_NR) {
      module.emitError() << "panel-width " << static_cast<int64_t>(panelWidth)
                         << " does not match the kernel library's "
                         << TESSEL_KERNEL_NR;
      return signalPassFailure();
    }
    // Linalg depthwise convolutions the kernel ops did not take first.
    SmallVector<Operation *> linalgDepthwise;
    module.walk([&](Operation *op) {
      if (isa<linalg::DepthwiseConv2DNhwcHwcOp,
              linalg::DepthwiseConv2DNhwcHwcmOp>(op))
        linalgDepthwise.push_back(op);
    });
    for (Operation *op : linalgDepthwise) {
      if (auto dw = dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(op))
        depthwiseAsKernelOp(dw, /*hasMultiplier=*/false);
      else
        depthwiseAsKernelOp(cast<linalg::DepthwiseConv2DNhwcHwcmOp>(op),
                            /*hasMultiplier=*/true);
    }

    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (hasKernelLowering(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      if (dps && !dps.hasPureBufferSemantics()) {
        op->emitOpError() << "must be bufferized before "
                             "tessel-kernels-to-calls";
        return signalPassFailure();
      }
      if (failed(lowerToKernelCall(module, op)))
        return signalPassFailure();
    }
  }
};

} // namespace
