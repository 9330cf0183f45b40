//===- KernelsToCalls.cpp - kernel ops -> calls into the kernel library ----===//
//
// The ABI is the C one of include/tessel/Kernels/tessel_kernels.h: every
// buffer is passed as a pointer to its first element (aligned base + offset)
// and its strides in elements; sizes, flags and the epilogue follow.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Kernels/tessel_kernels.h"

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

/// Builds call arguments in the kernel ABI's types.
struct CallBuilder {
  OpBuilder &b;
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
  void strides(ArrayRef<Value> s) {
    for (Value v : s)
      i64(v);
  }
  void dims(Value memref, ArrayRef<unsigned> which) {
    for (unsigned d : which)
      i64(memref::DimOp::create(b, loc, memref, d).getResult());
  }

  /// Emits the call, declaring `name` in `module` on first use.
  LogicalResult call(ModuleOp module, StringRef name) {
    auto fnTy = b.getFunctionType(types, {});
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

/// `memref` itself if the kernel can walk it densely (identity layout),
/// else a dense copy allocated before and freed after `op`.
Value denseOperand(OpBuilder &b, Operation *op, Value memref) {
  auto ty = cast<MemRefType>(memref.getType());
  if (ty.getLayout().isIdentity())
    return memref;
  Location loc = op->getLoc();
  SmallVector<Value> dynSizes;
  for (int64_t d = 0; d < ty.getRank(); ++d)
    if (ty.isDynamicDim(d))
      dynSizes.push_back(memref::DimOp::create(b, loc, memref, d));
  auto denseTy = MemRefType::get(ty.getShape(), ty.getElementType());
  Value copy = memref::AllocOp::create(b, loc, denseTy, dynSizes);
  memref::CopyOp::create(b, loc, memref, copy);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointAfter(op);
  memref::DeallocOp::create(b, loc, copy);
  return copy;
}

/// The trailing epilogue arguments every kernel op passes: bias pointer (or
/// null), clamp bounds (-inf/+inf: none) and flags.
template <typename OpT>
void epilogueArgs(CallBuilder &cb, OpT op) {
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
  cb.i32(flags);
}

LogicalResult lowerPackedConv(ModuleOp module, PackedConv2DOp op,
                              int64_t panelWidth) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError() << "must be bufferized before "
                               "tessel-kernels-to-calls";
  if (op.getPanelWidth() != panelWidth)
    return op.emitOpError() << "uses panel width " << op.getPanelWidth()
                            << ", but the kernel library's is " << panelWidth;
  OpBuilder b(op);
  CallBuilder cb{b, op.getLoc(), {}, {}};
  Value in = op.getInput(), out = op.getInit();
  // Within one packed filter the kernel walks the dense P x K x NR layout.
  Value wp = denseOperand(b, op, op.getPackedFilter());
  SmallVector<int64_t> pad = op.getPadOrZero();
  if (op.getWinograd()) {
    // N, OH, OW, F, C, H, W, pad_top, pad_left; 3x3, strides 1, dilations 1
    cb.dims(out, {0, 1, 2, 3});
    cb.dims(in, {3, 1, 2});
    cb.i64(pad[0]);
    cb.i64(pad[2]);
    cb.strides(cb.buffer(in));
    cb.buffer(wp);
    cb.strides(cb.buffer(out));
    epilogueArgs(cb, op);
    if (failed(cb.call(module, "tessel_kernel_conv2d_winograd_nhwc_f32")))
      return failure();
    op.erase();
    return success();
  }
  // N, OH, OW, F, KH, KW, C, H, W, pad_top, pad_left
  cb.dims(out, {0, 1, 2, 3});
  cb.i64(op.getKernelSize()[0]);
  cb.i64(op.getKernelSize()[1]);
  cb.dims(in, {3, 1, 2});
  cb.i64(pad[0]);
  cb.i64(pad[2]);
  cb.strides(cb.buffer(in));
  cb.i64(op.getStrides()[0]);
  cb.i64(op.getStrides()[1]);
  cb.i64(op.getDilations()[0]);
  cb.i64(op.getDilations()[1]);
  SmallVector<Value> wStrides = cb.buffer(wp);
  if (wStrides.size() == 4)
    cb.i64(wStrides[0]);
  else
    cb.i64(int64_t(0));
  cb.strides(cb.buffer(out));
  epilogueArgs(cb, op);
  if (failed(cb.call(module, "tessel_kernel_conv2d_nhwc_f32")))
    return failure();
  op.erase();
  return success();
}

/// linalg depthwise conv (accumulating into its output, like every linalg
/// convolution) with a channel multiplier of 1.
LogicalResult lowerDepthwise(ModuleOp module, linalg::LinalgOp op,
                             bool hasMultiplier,
                             DenseIntElementsAttr stridesAttr,
                             DenseIntElementsAttr dilationsAttr) {
  Value in = op.getDpsInputs()[0], w = op.getDpsInputs()[1];
  Value out = op.getDpsInits()[0];
  auto inTy = dyn_cast<MemRefType>(in.getType());
  auto wTy = dyn_cast<MemRefType>(w.getType());
  auto outTy = dyn_cast<MemRefType>(out.getType());
  if (!inTy || !wTy || !outTy || !inTy.getElementType().isF32() ||
      !wTy.getElementType().isF32() || !outTy.getElementType().isF32())
    return success(); // not ours: lowered to loops later
  if (hasMultiplier && wTy.getDimSize(3) != 1)
    return success();
  SmallVector<int64_t> strides(stridesAttr.getValues<int64_t>());
  SmallVector<int64_t> dilations(dilationsAttr.getValues<int64_t>());
  OpBuilder b(op);
  CallBuilder cb{b, op.getLoc(), {}, {}};
  // N, OH, OW, C, KH, KW, H, W, pad_top, pad_left (linalg: already padded)
  cb.dims(out, {0, 1, 2, 3});
  cb.dims(w, {0, 1});
  cb.dims(in, {1, 2});
  cb.i64(int64_t(0));
  cb.i64(int64_t(0));
  cb.strides(cb.buffer(in));
  cb.i64(strides[0]);
  cb.i64(strides[1]);
  cb.i64(dilations[0]);
  cb.i64(dilations[1]);
  SmallVector<Value> ws = cb.buffer(w);
  cb.strides(ArrayRef<Value>(ws).take_front(3));
  SmallVector<Value> os = cb.buffer(out);
  cb.strides(ArrayRef<Value>(os).take_front(4));
  cb.nullPtr();
  float inf = std::numeric_limits<float>::infinity();
  cb.f32(-inf);
  cb.f32(inf);
  cb.i32(TESSEL_KERNEL_ACCUMULATE);
  if (failed(cb.call(module, "tessel_kernel_depthwise_conv2d_nhwc_f32")))
    return failure();
  op->erase();
  return success();
}

/// tessel.depthwise_conv2d: implicit padding, bias and clamp epilogue.
LogicalResult lowerDepthwiseOp(ModuleOp module, DepthwiseConv2DOp op) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError() << "must be bufferized before "
                               "tessel-kernels-to-calls";
  OpBuilder b(op);
  CallBuilder cb{b, op.getLoc(), {}, {}};
  Value in = op.getInput(), w = op.getFilter(), out = op.getInit();
  cb.dims(out, {0, 1, 2, 3});
  cb.dims(w, {0, 1});
  cb.dims(in, {1, 2});
  cb.i64(op.getPad()[0]);
  cb.i64(op.getPad()[2]);
  cb.strides(cb.buffer(in));
  cb.i64(op.getStrides()[0]);
  cb.i64(op.getStrides()[1]);
  cb.i64(op.getDilations()[0]);
  cb.i64(op.getDilations()[1]);
  cb.strides(cb.buffer(w));
  cb.strides(cb.buffer(out));
  epilogueArgs(cb, op);
  if (failed(cb.call(module, "tessel_kernel_depthwise_conv2d_nhwc_f32")))
    return failure();
  op.erase();
  return success();
}

/// tessel.attention: every operand with its own strides (head-split views
/// need no copy); the mask with its sizes, so the kernel can broadcast it.
LogicalResult lowerAttention(ModuleOp module, AttentionOp op) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError() << "must be bufferized before "
                               "tessel-kernels-to-calls";
  OpBuilder b(op);
  CallBuilder cb{b, op.getLoc(), {}, {}};
  // B, M, N, D, Dv
  cb.dims(op.getQuery(), {0, 1});
  cb.dims(op.getKey(), {1, 2});
  cb.dims(op.getValue(), {2});
  cb.strides(cb.buffer(op.getQuery()));
  cb.strides(cb.buffer(op.getKey()));
  cb.strides(cb.buffer(op.getValue()));
  if (Value mask = op.getMask()) {
    SmallVector<Value> ms = cb.buffer(mask);
    cb.dims(mask, {0, 1, 2});
    cb.strides(ms);
  } else {
    cb.nullPtr();
    for (int i = 0; i < 6; ++i)
      cb.i64(int64_t(0));
  }
  cb.f32(op.getScale().convertToFloat());
  cb.strides(cb.buffer(op.getInit()));
  if (failed(cb.call(module, "tessel_kernel_attention_f32")))
    return failure();
  op.erase();
  return success();
}

/// A dense f32 linalg.transpose whose permutation, once adjacent dims that
/// stay together are merged, is a batched 2-D transpose ([B][R][C] ->
/// [B][C][R], or [R][C] -> [C][R]). Other transposes stay loops.
LogicalResult lowerTranspose(ModuleOp module, linalg::TransposeOp op) {
  auto inTy = dyn_cast<MemRefType>(op.getInput().getType());
  auto outTy = dyn_cast<MemRefType>(op.getInit().getType());
  if (!inTy || !outTy || !inTy.getElementType().isF32() ||
      !inTy.hasStaticShape() || !inTy.getLayout().isIdentity() ||
      !outTy.getLayout().isIdentity())
    return success();
  ArrayRef<int64_t> perm = op.getPermutation();
  ArrayRef<int64_t> shape = inTy.getShape();
  // Groups of input dims that stay adjacent and in order, in output order.
  SmallVector<std::pair<int64_t, int64_t>> groups; // [first, last] input dim
  for (int64_t p : perm) {
    if (!groups.empty() && groups.back().second + 1 == p)
      groups.back().second = p;
    else
      groups.push_back({p, p});
  }
  auto size = [&](std::pair<int64_t, int64_t> g) {
    int64_t n = 1;
    for (int64_t d = g.first; d <= g.second; ++d)
      n *= shape[d];
    return n;
  };
  int64_t batch, rows, cols;
  if (groups.size() == 2 && groups[0].first > groups[1].first) {
    batch = 1; // [R][C] -> [C][R]
    rows = size(groups[1]);
    cols = size(groups[0]);
  } else if (groups.size() == 3 && groups[0].first == 0 &&
             groups[1].first > groups[2].first) {
    batch = size(groups[0]); // [B][R][C] -> [B][C][R]
    rows = size(groups[2]);
    cols = size(groups[1]);
  } else {
    return success();
  }
  if (rows == 1 || cols == 1)
    return success(); // a reshape, copied fast enough by the loops
  OpBuilder b(op);
  CallBuilder cb{b, op.getLoc(), {}, {}};
  cb.i64(batch);
  cb.i64(rows);
  cb.i64(cols);
  cb.buffer(op.getInput());
  cb.buffer(op.getInit());
  if (failed(cb.call(module, "tessel_kernel_transpose_f32")))
    return failure();
  op->erase();
  return success();
}

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
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<PackedConv2DOp, DepthwiseConv2DOp, AttentionOp,
              linalg::TransposeOp,
              linalg::DepthwiseConv2DNhwcHwcOp,
              linalg::DepthwiseConv2DNhwcHwcmOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult r = success();
      if (auto conv = dyn_cast<PackedConv2DOp>(op))
        r = lowerPackedConv(module, conv, panelWidth);
      else if (auto dw = dyn_cast<DepthwiseConv2DOp>(op))
        r = lowerDepthwiseOp(module, dw);
      else if (auto att = dyn_cast<AttentionOp>(op))
        r = lowerAttention(module, att);
      else if (auto tr = dyn_cast<linalg::TransposeOp>(op))
        r = lowerTranspose(module, tr);
      else if (auto dw = dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(op))
        r = lowerDepthwise(module, dw, false, dw.getStrides(),
                           dw.getDilations());
      else if (auto dw = dyn_cast<linalg::DepthwiseConv2DNhwcHwcmOp>(op))
        r = lowerDepthwise(module, dw, true, dw.getStrides(),
                           dw.getDilations());
      if (failed(r))
        return signalPassFailure();
    }
  }
};

} // namespace
