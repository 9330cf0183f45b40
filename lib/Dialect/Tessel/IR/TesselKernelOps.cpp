//===- TesselKernelOps.cpp - verifiers of the kernel-call ops --------------===//
//
// The kernel library trusts these shapes (it does no bounds checks), so the
// verifier checks every size relation the lowering to a call relies on.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Kernels/tessel_kernels.h"

#include "mlir/IR/Matchers.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::tessel;

static bool known(int64_t d) { return !ShapedType::isDynamic(d); }

/// Every operand a ranked tensor or every one a memref, of f32 unless
/// `anyElement`; one result equal to `init` on tensors, none on memrefs.
static LogicalResult verifyOperandKinds(Operation *op, ArrayRef<Value> operands,
                                        Value init, bool anyElement = false) {
  bool tensors = isa<RankedTensorType>(operands.front().getType());
  for (Value v : operands) {
    auto t = dyn_cast<ShapedType>(v.getType());
    if (!t || !t.hasRank() || isa<RankedTensorType>(t) != tensors)
      return op->emitOpError() << "operands must be all ranked tensors or all "
                                  "memrefs, got "
                               << v.getType();
    if (!anyElement && !t.getElementType().isF32())
      return op->emitOpError() << "only f32 is supported, got " << v.getType();
  }
  if (tensors != (op->getNumResults() == 1))
    return op->emitOpError() << "has one result on tensors and none on memrefs";
  if (tensors && op->getResult(0).getType() != init.getType())
    return op->emitOpError() << "result type must match 'init' type "
                             << init.getType();
  return success();
}

/// What both kernel ops require: all-tensor or all-memref f32 operands
/// (the weights may be bf16 where `bf16Weights`), one result equal to init
/// on tensors, rank-4 input and init, a 1-D bias of one value per output
/// channel, an ordered clamp.
template <typename OpT>
static LogicalResult verifyKernelOpCommon(OpT op, Value weights,
                                          bool bf16Weights = false) {
  auto inTy = cast<ShapedType>(op.getInput().getType());
  auto outTy = cast<ShapedType>(op.getInit().getType());
  SmallVector<Value> operands = {op.getInput(), op.getInit()};
  if (op.getBias())
    operands.push_back(op.getBias());
  auto wTy = dyn_cast<ShapedType>(weights.getType());
  bool weightsBF16 = bf16Weights && wTy && wTy.getElementType().isBF16();
  if (!weightsBF16)
    operands.push_back(weights);
  if (failed(verifyOperandKinds(op, operands, op.getInit())) ||
      (weightsBF16 && failed(verifyOperandKinds(op, {op.getInit(), weights},
                                                op.getInit(),
                                                /*anyElement=*/true))))
    return failure();
  if (inTy.getRank() != 4 || outTy.getRank() != 4)
    return op.emitOpError() << "input and init must be rank 4 (NHWC)";
  int64_t f = outTy.getDimSize(3);
  if (Value bias = op.getBias()) {
    auto bTy = cast<ShapedType>(bias.getType());
    if (bTy.getRank() != 1 ||
        (known(f) && known(bTy.getDimSize(0)) && bTy.getDimSize(0) != f))
      return op.emitOpError() << "bias must be 1-D with one value per output "
                                 "channel";
  }
  if (op.getClampMin() && op.getClampMax() &&
      op.getClampMin()->convertToFloat() > op.getClampMax()->convertToFloat())
    return op.emitOpError() << "clamp_min is greater than clamp_max";
  if (op.getStrides().size() != 2 || op.getDilations().size() != 2)
    return op.emitOpError() << "strides and dilations must have 2 values each";
  if (llvm::any_of(op.getStrides(), [](int64_t v) { return v < 1; }) ||
      llvm::any_of(op.getDilations(), [](int64_t v) { return v < 1; }))
    return op.emitOpError() << "strides and dilations must be positive";
  if (known(inTy.getDimSize(0)) && known(outTy.getDimSize(0)) &&
      inTy.getDimSize(0) != outTy.getDimSize(0))
    return op.emitOpError() << "input and init batch sizes differ";
  return success();
}

/// A convolution's output spatial sizes against its input padded by `pad`
/// [top, bottom, left, right] and its windows (`kernel` sizes, dynamic
/// ones skipped).
static LogicalResult verifyPaddedOutput(Operation *op, ShapedType inTy,
                                        ShapedType outTy,
                                        ArrayRef<int64_t> kernel,
                                        ArrayRef<int64_t> pad,
                                        ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> dilations) {
  for (int i = 0; i < 2; ++i) {
    int64_t in = inTy.getDimSize(1 + i), out = outTy.getDimSize(1 + i);
    if (!known(in) || !known(out) || !known(kernel[i]))
      continue;
    int64_t padded = in + pad[2 * i] + pad[2 * i + 1];
    int64_t span = (kernel[i] - 1) * dilations[i] + 1;
    int64_t expect = padded < span ? 0 : (padded - span) / strides[i] + 1;
    if (out != expect)
      return op->emitOpError() << "output spatial dim " << i << " is " << out
                               << ", expected " << expect;
  }
  return success();
}

/// kernel_size and the optional pad of a kernel op that pads implicitly
/// (tessel.sparse_conv2d, tessel.grouped_conv2d).
template <typename OpT>
static LogicalResult verifyWindowAttrs(OpT op) {
  if (op.getKernelSize().size() != 2 ||
      llvm::any_of(op.getKernelSize(), [](int64_t v) { return v < 1; }))
    return op.emitOpError() << "kernel_size must have 2 positive values";
  if (op.getPad() &&
      (op.getPad()->size() != 4 ||
       llvm::any_of(*op.getPad(), [](int64_t v) { return v < 0; })))
    return op.emitOpError() << "pad must have 4 non-negative values [top, "
                               "bottom, left, right]";
  return success();
}

/// On memrefs: reads every input buffer, writes the init buffer (and reads
/// it when accumulating). On tensors the ops are pure.
template <typename OpT>
static void kernelOpEffects(
    OpT op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    bool isInit = &operand == &op.getInitMutable();
    if (!isInit || op.getAccumulate())
      effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
    if (isInit)
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           /*stage=*/0, /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
  }
}

/// The Winograd form: a 3x3, stride-1 convolution (any dilation: the kernel
/// runs its sub-grids) whose filter is 16 x P x C x NR (F(2x2, 3x3)) or
/// 36 x P x C x NR (F(4x4, 3x3)).
LogicalResult PackedConv2DOp::verifyWinograd(int64_t c, int64_t f) {
  auto wTy = cast<ShapedType>(getPackedFilter().getType());
  if (getKernelSize() != ArrayRef<int64_t>{3, 3} ||
      getStrides() != ArrayRef<int64_t>{1, 1})
    return emitOpError() << "winograd needs a 3x3 kernel with strides 1";
  if (wTy.getRank() != 4 ||
      (wTy.getDimSize(0) != 16 && wTy.getDimSize(0) != 36))
    return emitOpError() << "winograd needs a 16 x P x C x NR (F(2x2, 3x3)) "
                            "or 36 x P x C x NR (F(4x4, 3x3)) packed_filter";
  int64_t p = wTy.getDimSize(1), k = wTy.getDimSize(2);
  int64_t nr = wTy.getDimSize(3);
  if (!known(nr) || nr < 1)
    return emitOpError() << "packed_filter panel width must be static";
  if (known(c) && known(k) && k != c)
    return emitOpError() << "winograd packed_filter reduction size is " << k
                         << ", expected C = " << c;
  if (known(f) && known(p) && p != (f + nr - 1) / nr)
    return emitOpError() << "packed_filter has " << p << " panels, but " << f
                         << " output channels need " << (f + nr - 1) / nr;
  return success();
}

LogicalResult PackedConv2DOp::verify() {
  if (failed(verifyKernelOpCommon(*this, getPackedFilter(),
                                  /*bf16Weights=*/true)))
    return failure();
  auto inTy = cast<ShapedType>(getInput().getType());
  auto wTy = cast<ShapedType>(getPackedFilter().getType());
  auto outTy = cast<ShapedType>(getInit().getType());
  bool bf16 = isBF16();
  int64_t rank = wTy.getRank();
  if (rank != 3 && rank != 4)
    return emitOpError() << "packed_filter must be rank 3 (P x K x NR) or 4 "
                            "(N x P x K x NR)"
                         << (bf16 ? ", K and NR as ceil(K/2) and 2*NR for bf16"
                                  : "")
                         << ", got rank " << rank;
  if (getKernelSize().size() != 2)
    return emitOpError() << "kernel_size must have 2 values";
  if (llvm::any_of(getKernelSize(), [](int64_t v) { return v < 1; }))
    return emitOpError() << "kernel_size must be positive";
  int64_t n = inTy.getDimSize(0), c = inTy.getDimSize(3);
  int64_t f = outTy.getDimSize(3);
  if (getPad() && (getPad()->size() != 4 ||
                   llvm::any_of(*getPad(), [](int64_t v) { return v < 0; })))
    return emitOpError() << "pad must have 4 non-negative values [top, "
                            "bottom, left, right]";
  SmallVector<int64_t> pad = getPadOrZero();
  for (int i = 0; i < 2; ++i) {
    int64_t in = inTy.getDimSize(1 + i), out = outTy.getDimSize(1 + i);
    if (known(in))
      in += pad[2 * i] + pad[2 * i + 1];
    if (!known(in) || !known(out) || out <= 0)
      continue; // (a dynamic size is no number to compute with)
    int64_t need = (out - 1) * getStrides()[i] +
                   (getKernelSize()[i] - 1) * getDilations()[i] + 1;
    if (in < need)
      return emitOpError() << "input spatial dim " << i << " is " << in
                           << ", but the output needs at least " << need;
  }
  if (getWinograd() && bf16)
    return emitOpError() << "winograd takes an f32 packed_filter, not bf16";
  if (getWinograd())
    return verifyWinograd(c, f);
  if (rank == 4 && known(n) && known(wTy.getDimSize(0)) &&
      wTy.getDimSize(0) != n)
    return emitOpError() << "a rank-4 packed_filter needs one filter per "
                            "batch image";
  int64_t p = wTy.getDimSize(rank - 3), k = wTy.getDimSize(rank - 2);
  int64_t nr = wTy.getDimSize(rank - 1);
  if (!known(nr) || nr < 1)
    return emitOpError() << "packed_filter panel width must be static";
  if (bf16 && nr % 2)
    return emitOpError() << "a bf16 packed_filter's last dimension holds "
                            "pairs (2*NR), got "
                         << nr;
  if (bf16)
    nr /= 2;
  int64_t taps = getKernelSize()[0] * getKernelSize()[1];
  if (bf16 && known(c) && known(k) && k != (taps * c + 1) / 2)
    return emitOpError() << "bf16 packed_filter has " << k
                         << " pairs of reduction elements, expected "
                            "ceil(KH*KW*C/2) = "
                         << (taps * c + 1) / 2;
  if (!bf16 && known(c) && known(k) && k != c * taps)
    return emitOpError() << "packed_filter reduction size is " << k
                         << ", expected KH*KW*C = " << c * taps;
  if (known(f) && known(p) && p != (f + nr - 1) / nr)
    return emitOpError() << "packed_filter has " << p << " panels, but "
                         << f << " output channels need " << (f + nr - 1) / nr;
  return success();
}

LogicalResult DepthwiseConv2DOp::verify() {
  if (failed(verifyKernelOpCommon(*this, getFilter())))
    return failure();
  auto inTy = cast<ShapedType>(getInput().getType());
  auto wTy = cast<ShapedType>(getFilter().getType());
  auto outTy = cast<ShapedType>(getInit().getType());
  if (wTy.getRank() != 3)
    return emitOpError() << "filter must be rank 3 (KH x KW x C)";
  if (getPad().size() != 4)
    return emitOpError() << "pad must have 4 values [top, bottom, left, right]";
  if (llvm::any_of(getPad(), [](int64_t v) { return v < 0; }))
    return emitOpError() << "pad must be non-negative";
  int64_t c = inTy.getDimSize(3);
  for (int64_t d : {wTy.getDimSize(2), outTy.getDimSize(3)})
    if (known(c) && known(d) && c != d)
      return emitOpError() << "input, filter and init must have the same "
                              "channel count";
  return verifyPaddedOutput(*this, inTy, outTy,
                            {wTy.getDimSize(0), wTy.getDimSize(1)}, getPad(),
                            getStrides(), getDilations());
}

void PackedConv2DOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}

void DepthwiseConv2DOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}

/// A constant integer array's values (block_ptr, block_k), sign-extended.
static SmallVector<int64_t> int64Values(DenseIntElementsAttr attr) {
  SmallVector<int64_t> out;
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

/// n_of_m's n and m: 0 < n < m, m dividing TESSEL_KERNEL_NM_CHUNK_K.
template <typename OpT>
static LogicalResult verifyNOfMValues(OpT op, ArrayRef<int64_t> nm) {
  if (nm.size() != 2)
    return op.emitOpError() << "n_of_m must have two values (n, m)";
  if (nm[0] <= 0 || nm[1] <= nm[0] || TESSEL_KERNEL_NM_CHUNK_K % nm[1] != 0)
    return op.emitOpError()
           << "n_of_m must have 0 < n < m and m dividing "
           << TESSEL_KERNEL_NM_CHUNK_K << ", got " << nm[0] << ":" << nm[1];
  return success();
}

/// n_of_m (tessel.sparse_matmul's description): its shape, the block
/// counts, and where the arrays are constants, the chunk-major order the
/// N:M kernel reads (chunks of TESSEL_KERNEL_NM_CHUNK_K k's).
template <typename OpT>
static LogicalResult verifyNOfM(OpT op, ArrayRef<int64_t> nm, int64_t k,
                                int64_t n, DenseIntElementsAttr ptr,
                                DenseIntElementsAttr ks) {
  if (failed(verifyNOfMValues(op, nm)))
    return failure();
  int64_t nn = nm[0], mm = nm[1];
  if (op.getBlockSize() != 1 || !op.getKAscending())
    return op.emitOpError() << "n_of_m needs block_size 1 and k_ascending";
  if (k % mm != 0)
    return op.emitOpError() << "n_of_m: m (" << mm
                            << ") must divide K (" << k << ")";
  int64_t perColumn = k / mm * nn;
  if (cast<ShapedType>(op.getBlockK().getType()).getDimSize(0) !=
      n * perColumn)
    return op.emitOpError() << "n_of_m " << nn << ":" << mm
                            << " needs N * K / m * n = " << n * perColumn
                            << " blocks";
  if (ptr) {
    int64_t b = 0;
    for (const APInt &v : ptr.getValues<APInt>()) {
      if (v.getSExtValue() != b * perColumn)
        return op.emitOpError() << "n_of_m: block_ptr entry " << b
                                << " must be " << b * perColumn;
      ++b;
    }
  }
  if (!ks)
    return success();
  SmallVector<int64_t> kv = int64Values(ks);
  const int64_t chunkK = TESSEL_KERNEL_NM_CHUNK_K;
  for (int64_t q = 0, base = 0; q * chunkK < k; ++q) {
    int64_t k0 = q * chunkK, k1 = std::min(k, k0 + chunkK);
    int64_t nz = (k1 - k0) / mm * nn;
    for (int64_t c = 0; c < n; ++c)
      for (int64_t i = 0; i < nz; ++i) {
        int64_t e = base + c * nz + i, g = k0 / mm + i / nn;
        if (kv[e] < g * mm || kv[e] >= g * mm + mm ||
            (i % nn && kv[e] <= kv[e - 1]))
          return op.emitOpError()
                 << "n_of_m: block_k entry " << e << " (k " << kv[e]
                 << ") is not column " << c << "'s nonzero " << i % nn
                 << " of group " << g << " in chunk-major order";
      }
    base += n * nz;
  }
  return success();
}

/// tessel.sparse_matmul's lane order (`lanes`): the units' slot offsets in
/// block_ptr, and where the arrays are constants, every k in its unit's
/// quad and with n_of_m, every column's n a group in each quad.
static LogicalResult verifyLanes(SparseMatmulOp op, int64_t k, int64_t n) {
  const int64_t lanes = TESSEL_KERNEL_LANE_COLUMNS;
  std::optional<ArrayRef<int64_t>> nm = op.getNOfM();
  if (nm && failed(verifyNOfMValues(op, *nm)))
    return failure();
  int64_t nn = nm ? (*nm)[0] : 0, mm = nm ? (*nm)[1] : 0;
  if (op.getBlockSize() != 1 || ShapedType::isDynamic(n) || n % lanes != 0 ||
      (nm && (lanes % mm != 0 || k % mm != 0)))
    return op.emitOpError()
           << "lanes needs block_size 1, N a multiple of " << lanes
           << " and with n_of_m, m dividing " << lanes << " and K, got N " << n;
  const int64_t quads = (k + lanes - 1) / lanes, units = n / lanes * quads;
  int64_t entries = cast<ShapedType>(op.getBlockK().getType()).getDimSize(0);
  if (cast<ShapedType>(op.getBlockPtr().getType()).getDimSize(0) != units + 1 ||
      entries % lanes != 0 ||
      cast<ShapedType>(op.getValues().getType()).getDimSize(0) != entries)
    return op.emitOpError()
           << "lanes needs block_ptr of N / " << lanes << " * ceil(K / "
           << lanes << ") + 1 = " << units + 1
           << " entries and block_k and values of " << lanes
           << " entries a slot";
  DenseIntElementsAttr ptrAttr, ksAttr;
  if (!matchPattern(op.getBlockPtr(), m_Constant(&ptrAttr)))
    return success();
  SmallVector<int64_t> ptr = int64Values(ptrAttr);
  if (ptr[0] != 0)
    return op.emitOpError() << "lanes: block_ptr must start at 0";
  for (int64_t u = 0; u < units; ++u) {
    const int64_t q = u % quads, width = std::min(lanes, k - q * lanes);
    const int64_t want = width / std::max<int64_t>(mm, 1) * nn;
    if (ptr[u + 1] < ptr[u] || ptr[u + 1] * lanes > entries ||
        (nm && ptr[u + 1] - ptr[u] != want))
      return op.emitOpError()
             << "lanes: block_ptr entry " << u + 1 << " (" << ptr[u + 1]
             << ") does not " << (nm ? "add the quad's slots" : "rise")
             << " from entry " << u << " (" << ptr[u] << ")";
  }
  if (ptr[units] * lanes != entries)
    return op.emitOpError()
           << "lanes: block_ptr must end at the slot count " << entries / lanes;
  if (!matchPattern(op.getBlockK(), m_Constant(&ksAttr)))
    return success();
  SmallVector<int64_t> kv = int64Values(ksAttr);
  for (int64_t u = 0; u < units; ++u) {
    const int64_t q = u % quads, k0 = q * lanes;
    for (int64_t s = 0; s < ptr[u + 1] - ptr[u]; ++s)
      for (int64_t l = 0; l < lanes; ++l) {
        const int64_t e = (ptr[u] + s) * lanes + l;
        // The slot's k range: the quad, or with n_of_m its group s / n.
        const int64_t lo = nm ? k0 + s / nn * mm : k0;
        const int64_t hi = nm ? lo + mm : std::min(k, k0 + lanes);
        if (kv[e] < lo || kv[e] >= hi ||
            (nm && s % nn && kv[e] <= kv[e - lanes]))
          return op.emitOpError()
                 << "lanes: block_k entry " << e << " (k " << kv[e]
                 << ") is not column " << u / quads * lanes + l << "'s slot "
                 << s << " of quad " << q
                 << (nm ? " in its group, ascending" : "");
      }
  }
  return success();
}

/// The blocks of a sparse op's constant `K x N` weights (block_ptr,
/// block_k, values, block_size; tessel.sparse_matmul's description): i32
/// static 1-D arrays of consistent sizes and, where constant (what the
/// pass makes), in range: the kernels index with them.
template <typename OpT>
static LogicalResult verifySparseBlocks(OpT op, int64_t k, int64_t n) {
  if (failed(verifyOperandKinds(op, {op.getBlockPtr(), op.getBlockK(),
                                     op.getInit()},
                                op.getInit(), /*anyElement=*/true)))
    return failure();
  for (Value v : {op.getBlockPtr(), op.getBlockK()})
    if (!cast<ShapedType>(v.getType()).getElementType().isInteger(32))
      return op.emitOpError() << "block_ptr and block_k must be i32, got "
                              << v.getType();
  for (Value v : {op.getBlockPtr(), op.getBlockK(), op.getValues()}) {
    auto t = cast<ShapedType>(v.getType());
    if (t.getRank() != 1 || !t.hasStaticShape())
      return op.emitOpError() << "block_ptr, block_k and values must be "
                                 "static 1-D, got "
                              << v.getType();
  }
  int64_t r = op.getBlockSize();
  if (r != 1 && r != 2 && r != 4 && r != 8 && r != 16)
    return op.emitOpError() << "block_size must be 1, 2, 4, 8 or 16, got "
                            << r;
  if constexpr (std::is_same_v<OpT, SparseMatmulOp>)
    if (op.getLanes())
      return verifyLanes(op, k, n);
  int64_t blocks = cast<ShapedType>(op.getBlockK().getType()).getDimSize(0);
  if (cast<ShapedType>(op.getBlockPtr().getType()).getDimSize(0) !=
      (n + r - 1) / r + 1)
    return op.emitOpError() << "block_ptr must have ceil(N / block_size) + 1 "
                               "= "
                            << (n + r - 1) / r + 1 << " entries";
  if (cast<ShapedType>(op.getValues().getType()).getDimSize(0) != blocks * r)
    return op.emitOpError() << "values must have block_size values per "
                               "block ("
                            << blocks * r << ")";
  DenseIntElementsAttr ptr, ks;
  if (matchPattern(op.getBlockPtr(), m_Constant(&ptr))) {
    int64_t prev = 0, i = 0;
    for (const APInt &v : ptr.getValues<APInt>()) {
      int64_t x = v.getSExtValue();
      if ((i == 0 && x != 0) || x < prev || x > blocks)
        return op.emitOpError() << "block_ptr must rise from 0 to the block "
                                   "count, entry "
                                << i << " is " << x;
      prev = x;
      ++i;
    }
    if (prev != blocks)
      return op.emitOpError() << "block_ptr must end at the block count "
                              << blocks;
  }
  if (matchPattern(op.getBlockK(), m_Constant(&ks)))
    for (const APInt &v : ks.getValues<APInt>())
      if (v.getSExtValue() < 0 || v.getSExtValue() >= k)
        return op.emitOpError() << "block_k entry " << v.getSExtValue()
                                << " is outside [0, K)";
  if (std::optional<ArrayRef<int64_t>> nm = op.getNOfM()) {
    if (failed(verifyNOfM(op, *nm, k, n, ptr, ks)))
      return failure();
    return success(); // chunk-major: the column order below does not apply
  }
  // What k_ascending promises the kernel, where it can be seen.
  if (op.getKAscending() && ptr && ks) {
    SmallVector<int64_t> p = int64Values(ptr), kv = int64Values(ks);
    for (size_t b = 0; b + 1 < p.size(); ++b)
      for (int64_t e = p[b] + 1; e < p[b + 1]; ++e)
        if (kv[e] <= kv[e - 1])
          return op.emitOpError()
                 << "k_ascending, but block column " << b << " has k "
                 << kv[e] << " after " << kv[e - 1];
  }
  return success();
}

LogicalResult SparseMatmulOp::verify() {
  SmallVector<Value> f32 = {getInput(), getValues(), getInit()};
  if (getBias())
    f32.push_back(getBias());
  if (failed(verifyOperandKinds(*this, f32, getInit())))
    return failure();
  auto inTy = cast<ShapedType>(getInput().getType());
  auto outTy = cast<ShapedType>(getInit().getType());
  if (inTy.getRank() != 2 || outTy.getRank() != 2)
    return emitOpError() << "input and init must be rank 2 (M x K, M x N)";
  int64_t m = inTy.getDimSize(0), n = outTy.getDimSize(1);
  if (known(m) && known(outTy.getDimSize(0)) && m != outTy.getDimSize(0))
    return emitOpError() << "input and init row counts differ";
  if (!known(n) || !known(inTy.getDimSize(1)))
    return emitOpError() << "K and N must be static";
  if (Value bias = getBias()) {
    auto bTy = cast<ShapedType>(bias.getType());
    if (bTy.getRank() != 1 || (known(bTy.getDimSize(0)) &&
                               bTy.getDimSize(0) != n))
      return emitOpError() << "bias must be 1-D with one value per column";
  }
  if (getClampMin() && getClampMax() &&
      getClampMin()->convertToFloat() > getClampMax()->convertToFloat())
    return emitOpError() << "clamp_min is greater than clamp_max";
  return verifySparseBlocks(*this, inTy.getDimSize(1), n);
}

LogicalResult SparseConv2DOp::verify() {
  if (failed(verifyKernelOpCommon(*this, getValues())))
    return failure();
  auto inTy = cast<ShapedType>(getInput().getType());
  auto outTy = cast<ShapedType>(getInit().getType());
  if (failed(verifyWindowAttrs(*this)))
    return failure();
  int64_t c = inTy.getDimSize(3), f = outTy.getDimSize(3);
  if (!known(c) || !known(f))
    return emitOpError() << "input and output channel counts must be static";
  if (failed(verifyPaddedOutput(*this, inTy, outTy, getKernelSize(),
                                getPadOrZero(), getStrides(),
                                getDilations())))
    return failure();
  return verifySparseBlocks(*this,
                            getKernelSize()[0] * getKernelSize()[1] * c, f);
}

void SparseConv2DOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}

void SparseMatmulOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}

/// Channels per group and lanes of the packed filter's vectors: fg must
/// divide them (Kernels.td, GROUP_LANES).
static constexpr int64_t kGroupLanes = 16;

int64_t GroupedConv2DOp::getPackingCode() {
  StringRef p = getPacking();
  return p == "rotated" ? 0 : p == "cmajor" ? 1 : 2;
}

LogicalResult GroupedConv2DOp::verify() {
  if (failed(verifyKernelOpCommon(*this, getPackedFilter())))
    return failure();
  auto inTy = cast<ShapedType>(getInput().getType());
  auto outTy = cast<ShapedType>(getInit().getType());
  auto wTy = cast<ShapedType>(getPackedFilter().getType());
  if (failed(verifyWindowAttrs(*this)))
    return failure();
  int64_t c = inTy.getDimSize(3), f = outTy.getDimSize(3), g = getGroups();
  if (!known(c) || !known(f))
    return emitOpError() << "input and output channel counts must be static";
  if (g < 1 || c % g || f % g)
    return emitOpError() << "groups = " << g << " must divide the " << c
                         << " input and " << f << " output channels";
  int64_t cg = c / g, fg = f / g, taps = getKernelSize()[0] * getKernelSize()[1];
  StringRef packing = getPacking();
  SmallVector<int64_t> packed;
  if (packing == "rotated") {
    if (cg != fg || kGroupLanes % fg)
      return emitOpError() << "rotated packing needs square groups of a "
                              "divisor of "
                           << kGroupLanes << " channels, got " << cg
                           << " in, " << fg << " out";
    packed = {taps, (f + kGroupLanes - 1) / kGroupLanes, fg, kGroupLanes};
  } else if (packing == "cmajor") {
    if (cg != fg || fg < kGroupLanes || fg % 8)
      return emitOpError() << "cmajor packing needs square groups of a "
                              "multiple of 8 channels from "
                           << kGroupLanes << ", got " << cg << " in, " << fg
                           << " out";
    packed = {taps, g, fg, (fg + kGroupLanes - 1) / kGroupLanes * kGroupLanes};
  } else if (packing == "panels") {
    int64_t nr = wTy.getRank() == 4 ? wTy.getDimSize(3) : 0;
    if (nr < 1)
      return emitOpError() << "panels packing needs a rank-4 filter with a "
                              "positive panel width";
    packed = {g, (fg + nr - 1) / nr, taps * cg, nr};
  } else {
    return emitOpError() << "packing must be rotated, cmajor or panels, got '"
                         << packing << "'";
  }
  if (wTy.getShape() != ArrayRef<int64_t>(packed))
    return emitOpError() << "packed_filter must be " << packed[0] << "x"
                         << packed[1] << "x" << packed[2] << "x" << packed[3]
                         << " for " << packing << " packing";
  if (failed(verifyPaddedOutput(*this, inTy, outTy, getKernelSize(),
                                getPadOrZero(), getStrides(),
                                getDilations())))
    return failure();
  return success();
}

void GroupedConv2DOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}

LogicalResult AttentionOp::verify() {
  SmallVector<Value> operands = {getQuery(), getKey(), getValue(), getInit()};
  if (getMask())
    operands.push_back(getMask());
  if (failed(verifyOperandKinds(*this, operands, getInit())))
    return failure();
  for (Value v : operands)
    if (cast<ShapedType>(v.getType()).getRank() != 3)
      return emitOpError() << "operands must be rank 3, got " << v.getType();
  auto dim = [](Value v, unsigned d) {
    return cast<ShapedType>(v.getType()).getDimSize(d);
  };
  // Each relation: two dims that must agree when both are static.
  struct Rel {
    Value a;
    unsigned da;
    Value b;
    unsigned db;
    const char *what;
  };
  Rel rels[] = {
      {getQuery(), 0, getKey(), 0, "query and key batch"},
      {getQuery(), 0, getValue(), 0, "query and value batch"},
      {getQuery(), 0, getInit(), 0, "query and init batch"},
      {getQuery(), 2, getKey(), 2, "query and key head dim (D)"},
      {getKey(), 1, getValue(), 1, "key and value length (N)"},
      {getQuery(), 1, getInit(), 1, "query and init length (M)"},
      {getValue(), 2, getInit(), 2, "value and init head dim (Dv)"},
  };
  for (const Rel &r : rels) {
    int64_t x = dim(r.a, r.da), y = dim(r.b, r.db);
    if (known(x) && known(y) && x != y)
      return emitOpError() << r.what << " sizes differ: " << x << " vs " << y;
  }
  if (Value mask = getMask()) {
    int64_t full[3] = {dim(getQuery(), 0), dim(getQuery(), 1),
                       dim(getKey(), 1)};
    for (unsigned d = 0; d < 3; ++d) {
      int64_t m = dim(mask, d);
      if (known(m) && m != 1 && known(full[d]) && m != full[d])
        return emitOpError() << "mask dim " << d << " is " << m
                             << ", expected 1 or " << full[d];
    }
  }
  return success();
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}

/// The convolution form of the int8 matmul ops: rank-4 input and init,
/// two positive values each of kernel_size, strides and dilations, and an
/// output whose windows lie inside the (already padded) input.
template <typename OpT>
static LogicalResult verifyConvolutionWindow(OpT op, ShapedType inTy,
                                             ShapedType outTy) {
  if (!op.getStrides() || !op.getDilations())
    return op.emitOpError() << "kernel_size needs strides and dilations";
  ArrayRef<int64_t> ks = *op.getKernelSize(), st = *op.getStrides(),
                    dl = *op.getDilations();
  if (ks.size() != 2 || st.size() != 2 || dl.size() != 2)
    return op.emitOpError() << "kernel_size, strides and dilations need 2 "
                               "values";
  auto positive = [](ArrayRef<int64_t> v) {
    return llvm::all_of(v, [](int64_t x) { return x >= 1; });
  };
  if (!positive(ks) || !positive(st) || !positive(dl))
    return op.emitOpError() << "kernel_size, strides and dilations must be "
                               "positive";
  if (inTy.getRank() != 4 || outTy.getRank() != 4)
    return op.emitOpError() << "a convolution's input and init must be rank 4 "
                               "(N x H x W x C, N x OH x OW x F)";
  for (int i = 0; i < 2; ++i) {
    int64_t in = inTy.getDimSize(1 + i), out = outTy.getDimSize(1 + i);
    if (known(in) && known(out) && out > 0 &&
        (out - 1) * st[i] + (ks[i] - 1) * dl[i] + 1 > in)
      return op.emitOpError() << "output spatial dim " << i << " is " << out
                              << ", but the input's " << in
                              << " holds fewer windows (pad the input first)";
  }
  return success();
}

/// Sparse int8 weights (tessel.packed_matmul_i8 and its requantizing form
/// with `sparse`): quad blocks of `block_size` columns, packed_b `nnz x R x
/// 4`, the block arrays i32 1-D of consistent sizes and, where constant, in
/// range and ascending per column (the kernel indexes with them).
template <typename OpT>
static LogicalResult verifySparseI8Blocks(OpT op, ShapedType bTy, int64_t n,
                                          int64_t k) {
  if (!op.getBlockK() || !op.getBlockSize())
    return op.emitOpError() << "sparse weights need block_ptr, block_k and "
                               "block_size";
  int64_t r = *op.getBlockSize();
  if (r != 1 && r != 4)
    return op.emitOpError() << "block_size must be 1 or 4, got " << r;
  for (Value v : {op.getBlockPtr(), op.getBlockK()}) {
    auto t = cast<ShapedType>(v.getType());
    if (!t.getElementType().isInteger(32) || t.getRank() != 1 ||
        !t.hasStaticShape())
      return op.emitOpError() << "block_ptr and block_k must be static 1-D "
                                 "i32, got "
                              << v.getType();
  }
  int64_t blocks = cast<ShapedType>(op.getBlockK().getType()).getDimSize(0);
  if (bTy.getRank() != 3 || !bTy.hasStaticShape() ||
      bTy.getDimSize(0) != blocks || bTy.getDimSize(1) != r ||
      bTy.getDimSize(2) != 4)
    return op.emitOpError() << "sparse packed_b must be " << blocks << " x "
                            << r << " x 4 (blocks x block_size x 4), got "
                            << bTy;
  if (!known(n) || !known(k))
    return op.emitOpError() << "sparse weights need static N and K";
  if (cast<ShapedType>(op.getBlockPtr().getType()).getDimSize(0) !=
      (n + r - 1) / r + 1)
    return op.emitOpError() << "block_ptr must have ceil(N / block_size) + 1 "
                               "= "
                            << (n + r - 1) / r + 1 << " entries";
  DenseIntElementsAttr ptr, ks;
  if (!matchPattern(op.getBlockPtr(), m_Constant(&ptr)) ||
      !matchPattern(op.getBlockK(), m_Constant(&ks)))
    return success();
  SmallVector<int64_t> p = int64Values(ptr), kv = int64Values(ks);
  if (p.front() != 0 || p.back() != blocks)
    return op.emitOpError() << "block_ptr must rise from 0 to the block "
                               "count "
                            << blocks;
  int64_t quads = (k + 3) / 4;
  for (size_t c = 0; c + 1 < p.size(); ++c) {
    if (p[c + 1] < p[c])
      return op.emitOpError() << "block_ptr falls at entry " << c + 1;
    for (int64_t e = p[c]; e < p[c + 1]; ++e)
      if (kv[e] < 0 || kv[e] >= quads || (e > p[c] && kv[e] <= kv[e - 1]))
        return op.emitOpError() << "block_k entry " << e << " (" << kv[e]
                                << ") is outside [0, " << quads
                                << ") or not ascending in its column";
  }
  return success();
}

/// The checks tessel.packed_matmul_i8 and its requantizing form share:
/// operand kinds, ranks, the packing and the column sums. `extra` are the
/// other operands; `outElem` says whether init's element type is allowed.
template <typename OpT>
static LogicalResult
verifyPackedMatmulI8(OpT op, ArrayRef<Value> extra,
                     llvm::function_ref<bool(Type)> outElem,
                     StringRef outElemText) {
  SmallVector<Value> operands = {op.getInput(), op.getPackedB(), op.getInit()};
  if (op.getColumnSums())
    operands.push_back(op.getColumnSums());
  llvm::append_range(operands, extra);
  for (Value v : {op.getBlockPtr(), op.getBlockK()})
    if (v)
      operands.push_back(v);
  if (failed(verifyOperandKinds(op, operands, op.getInit(),
                                /*anyElement=*/true)))
    return failure();
  auto aTy = cast<ShapedType>(op.getInput().getType());
  auto bTy = cast<ShapedType>(op.getPackedB().getType());
  auto cTy = cast<ShapedType>(op.getInit().getType());
  if (!aTy.getElementType().isInteger(8) || !bTy.getElementType().isInteger(8))
    return op.emitOpError() << "input and packed_b must be 8-bit integers";
  if (!outElem(cTy.getElementType()))
    return op.emitOpError() << "init must be " << outElemText << ", got "
                            << cTy.getElementType();
  auto differ = [](int64_t x, int64_t y) { return known(x) && known(y) && x != y; };
  int64_t batch, n, k;
  if (op.isConvolution()) {
    if (failed(verifyConvolutionWindow(op, aTy, cTy)))
      return failure();
    if (bTy.getRank() != 4 && !op.isSparse())
      return op.emitOpError() << "a convolution's packed_b must be P x G x NR "
                                 "x 4 (one filter for every image)";
    ArrayRef<int64_t> ks = *op.getKernelSize();
    int64_t c = aTy.getDimSize(3);
    batch = cTy.getDimSize(0);
    n = cTy.getDimSize(3);
    k = known(c) ? ks[0] * ks[1] * c : ShapedType::kDynamic;
    if (differ(aTy.getDimSize(0), batch))
      return op.emitOpError() << "input and init disagree on the batch size";
  } else {
    if (op.getStrides() || op.getDilations())
      return op.emitOpError() << "strides and dilations need kernel_size";
    if (aTy.getRank() != 3 || cTy.getRank() != 3)
      return op.emitOpError() << "input and init must be rank 3 (batch x M x "
                                 "K, batch x M x N)";
    batch = cTy.getDimSize(0), n = cTy.getDimSize(2), k = aTy.getDimSize(2);
    if (differ(aTy.getDimSize(0), batch) ||
        differ(aTy.getDimSize(1), cTy.getDimSize(1)))
      return op.emitOpError() << "input and init disagree on batch or M";
  }
  if ((op.getBlockK() || op.getBlockSize()) && !op.isSparse())
    return op.emitOpError() << "block_k and block_size need block_ptr";
  if (op.isSparse()) {
    if (failed(verifySparseI8Blocks(op, bTy, n, k)))
      return failure();
    if (Value sums = op.getColumnSums()) {
      auto sTy = cast<ShapedType>(sums.getType());
      if (!sTy.getElementType().isInteger(32) || sTy.getRank() != 1 ||
          differ(sTy.getDimSize(0), n))
        return op.emitOpError() << "column_sums must be i32 with one value "
                                   "per column";
    }
    return success();
  }
  if (bTy.getRank() != 4 && bTy.getRank() != 5)
    return op.emitOpError() << "packed_b must be P x G x NR x 4, or rank 5 with "
                            "a leading batch dim";
  ArrayRef<int64_t> bs = bTy.getShape().take_back(4);
  if (bTy.getRank() == 5 && differ(bTy.getDimSize(0), batch))
    return op.emitOpError() << "packed_b has " << bTy.getDimSize(0)
                         << " batch entries, init " << batch;
  if (bs[3] != 4)
    return op.emitOpError() << "packed_b's last dim must be 4 (k per group), got "
                         << bs[3];
  if (known(bs[2]) && known(n) && known(bs[0]) &&
      bs[0] != (n + bs[2] - 1) / bs[2])
    return op.emitOpError() << "packed_b has " << bs[0] << " panels of "
                         << bs[2] << " columns, but N is " << n;
  if (known(k) && known(bs[1]) && bs[1] != (k + 3) / 4)
    return op.emitOpError() << "packed_b has " << bs[1]
                         << " groups of 4 k, but K is " << k;
  if (Value sums = op.getColumnSums()) {
    auto sTy = cast<ShapedType>(sums.getType());
    if (!sTy.getElementType().isInteger(32) ||
        sTy.getRank() != bTy.getRank() - 3 ||
        differ(sTy.getDimSize(sTy.getRank() - 1), n))
      return op.emitOpError() << "column_sums must be i32 with one value per "
                              "column (per batch entry for rank-5 packed_b)";
  }
  return success();
}

LogicalResult PackedMatmulI8Op::verify() {
  return verifyPackedMatmulI8(
      *this, {}, [](Type t) { return t.isInteger(32); }, "i32");
}

/// The checks of the requantizing epilogue (Tessel_RequantOutputArgs and
/// its scale, bias and table operands) for an output of `n` channels.
template <typename OpT>
static LogicalResult verifyRequantEpilogue(OpT op, int64_t n) {
  auto cTy = cast<ShapedType>(op.getInit().getType());
  bool quantize = op.getOutScale().has_value();
  for (Value v : {op.getScale(), op.getBias()}) {
    if (!v)
      continue;
    auto t = cast<ShapedType>(v.getType());
    if (!t.getElementType().isF32() || t.getRank() != 1 ||
        (known(n) && known(t.getDimSize(0)) && t.getDimSize(0) != n))
      return op.emitOpError() << "scale and bias must be " << n
                              << " f32 values, got " << v.getType();
  }
  if (Value table = op.getTable()) {
    auto t = cast<ShapedType>(table.getType());
    if (!quantize)
      return op.emitOpError() << "a table needs out_scale (it maps quantized "
                                 "values)";
    Type elem = op.getDequantScale() ? IntegerType::get(op.getContext(), 8)
                                     : cTy.getElementType();
    if (t.getRank() != 1 || t.getDimSize(0) != 256 ||
        t.getElementType() != elem)
      return op.emitOpError() << "table must be 256 values of type " << elem
                              << " (the output's, or i8 before dequant_scale), "
                                 "got "
                              << table.getType();
  }
  if (op.getDequantScale()) {
    if (!quantize || !cTy.getElementType().isF32())
      return op.emitOpError() << "dequant_scale needs out_scale and an f32 "
                                 "output";
  } else if (!op.getTable() && quantize && !cTy.getElementType().isInteger(8)) {
    return op.emitOpError() << "a quantized f32 output needs a table or "
                               "dequant_scale";
  }
  if (!(op.getClampMin().convertToFloat() <= op.getClampMax().convertToFloat()))
    return op.emitOpError() << "clamp_min is greater than clamp_max";
  if (quantize) {
    float lo = op.getQmin().convertToFloat(), hi = op.getQmax().convertToFloat();
    if (lo != std::floor(lo) || hi != std::floor(hi) || lo < -128.0f ||
        hi > 255.0f || lo > hi || hi - lo > 255.0f)
      return op.emitOpError() << "qmin and qmax must be integers of an 8-bit "
                                 "range within [-128, 255], got ["
                              << lo << ", " << hi << "]";
    float s = op.getOutScale()->convertToFloat();
    if (!(s > 0.0f) || !std::isfinite(s))
      return op.emitOpError() << "out_scale must be positive and finite, got "
                              << s;
  }
  return success();
}

LogicalResult PackedMatmulI8RequantOp::verify() {
  SmallVector<Value> extra = {getScale()};
  for (Value v : {getBias(), getTable(), getResidual()})
    if (v)
      extra.push_back(v);
  bool quantize = getOutScale().has_value();
  auto outOk = [&](Type t) {
    return t.isF32() || (quantize && t.isInteger(8));
  };
  if (failed(verifyPackedMatmulI8(*this, extra, outOk,
                                  quantize ? "i8 or f32" : "f32")))
    return failure();
  auto cTy = cast<ShapedType>(getInit().getType());
  if (Value residual = getResidual()) {
    auto rTy = cast<ShapedType>(residual.getType());
    bool shapesDiffer =
        rTy.getRank() != cTy.getRank() ||
        llvm::any_of(llvm::zip(rTy.getShape(), cTy.getShape()), [](auto p) {
          auto [r, c] = p;
          return known(r) && known(c) && r != c;
        });
    if (!rTy.getElementType().isF32() || !cTy.getElementType().isF32() ||
        shapesDiffer)
      return emitOpError() << "residual must be f32 and shaped as an f32 "
                              "init, got "
                           << residual.getType() << " for " << cTy;
  }
  if (!(getResidualMin().convertToFloat() <= getResidualMax().convertToFloat()))
    return emitOpError() << "residual_min is greater than residual_max";
  return verifyRequantEpilogue(*this, cTy.getDimSize(cTy.getRank() - 1));
}

LogicalResult DepthwiseConv2DI8Op::verify() {
  SmallVector<Value> operands = {getInput(), getPackedFilter(),
                                 getColumnSums(), getInit()};
  for (Value v : {getScale(), getBias(), getTable()})
    if (v)
      operands.push_back(v);
  if (failed(verifyOperandKinds(*this, operands, getInit(),
                                /*anyElement=*/true)))
    return failure();
  auto inTy = cast<ShapedType>(getInput().getType());
  auto wTy = cast<ShapedType>(getPackedFilter().getType());
  auto sTy = cast<ShapedType>(getColumnSums().getType());
  auto outTy = cast<ShapedType>(getInit().getType());
  Type outElem = outTy.getElementType();
  if (!inTy.getElementType().isInteger(8) || !wTy.getElementType().isInteger(8))
    return emitOpError() << "input and packed_filter must be 8-bit integers";
  if (inTy.getRank() != 4 || outTy.getRank() != 4 || wTy.getRank() != 4)
    return emitOpError() << "input, packed_filter and init must be rank 4";
  if (getKernelSize().size() != 2 || getStrides().size() != 2 ||
      getDilations().size() != 2 || getPad().size() != 4)
    return emitOpError() << "kernel_size, strides and dilations need 2 "
                            "values, pad 4";
  if (llvm::any_of(getKernelSize(), [](int64_t v) { return v < 1; }) ||
      llvm::any_of(getStrides(), [](int64_t v) { return v < 1; }) ||
      llvm::any_of(getDilations(), [](int64_t v) { return v < 1; }) ||
      llvm::any_of(getPad(), [](int64_t v) { return v < 0; }))
    return emitOpError() << "kernel_size, strides and dilations must be "
                            "positive, pad non-negative";
  bool unsignedIn = !getASigned();
  int32_t zp = getAZp();
  if (zp < (unsignedIn ? 0 : -128) || zp > (unsignedIn ? 255 : 127))
    return emitOpError() << "a_zp " << zp << " is not a value of the "
                         << (unsignedIn ? "unsigned" : "signed")
                         << " 8-bit input (padding reads as it)";
  int64_t kh = getKernelSize()[0], kw = getKernelSize()[1];
  int64_t c = inTy.getDimSize(3);
  if (known(c) && known(outTy.getDimSize(3)) && outTy.getDimSize(3) != c)
    return emitOpError() << "input and init must have the same channel count";
  if (known(inTy.getDimSize(0)) && known(outTy.getDimSize(0)) &&
      inTy.getDimSize(0) != outTy.getDimSize(0))
    return emitOpError() << "input and init batch sizes differ";
  ArrayRef<int64_t> ws = wTy.getShape();
  if (ws[0] != (kh + 3) / 4 || ws[1] != kw || ws[3] != 4 ||
      (known(c) && ws[2] != (c + 15) / 16 * 16))
    return emitOpError() << "packed_filter must be ceil(KH/4) x KW x Cp x 4 ("
                         << (kh + 3) / 4 << " x " << kw << " x "
                         << (known(c) ? (c + 15) / 16 * 16 : c)
                         << " x 4), got " << wTy;
  if (!sTy.getElementType().isInteger(32) || sTy.getRank() != 1 ||
      (known(c) && known(sTy.getDimSize(0)) && sTy.getDimSize(0) != c))
    return emitOpError() << "column_sums must be one i32 per channel, got "
                         << sTy;
  for (int i = 0; i < 2; ++i) {
    int64_t in = inTy.getDimSize(1 + i), out = outTy.getDimSize(1 + i);
    if (!known(in) || !known(out))
      continue;
    int64_t padded = in + getPad()[2 * i] + getPad()[2 * i + 1];
    int64_t span = (getKernelSize()[i] - 1) * getDilations()[i] + 1;
    int64_t expect = padded < span ? 0 : (padded - span) / getStrides()[i] + 1;
    if (out != expect)
      return emitOpError() << "output spatial dim " << i << " is " << out
                           << ", expected " << expect;
  }
  if (!getScale()) {
    if (getBias() || getTable() || getOutScale() || getDequantScale() ||
        !outElem.isInteger(32))
      return emitOpError() << "without scale the output is the int32 sum "
                              "(no bias, table, out_scale or dequant_scale)";
    return success();
  }
  bool quantize = getOutScale().has_value();
  if (!(outElem.isF32() || (quantize && outElem.isInteger(8))))
    return emitOpError() << "init must be "
                         << (quantize ? "i8 or f32" : "f32") << ", got "
                         << outElem;
  return verifyRequantEpilogue(*this, c);
}

void PackedMatmulI8Op::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}

void PackedMatmulI8RequantOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}

void DepthwiseConv2DI8Op::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  kernelOpEffects(*this, effects);
}
