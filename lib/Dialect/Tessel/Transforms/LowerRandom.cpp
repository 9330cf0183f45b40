//===- LowerRandom.cpp - tessel.random_* -> counter-based generators ------===//
//
// Every element is a function of its row-major position and the op's key,
// SplitMix64 (Steele, Lea, Flood 2014) read as a counter-based generator:
// no state is carried between elements, so the generic vectorizes and
// splits over threads like any elementwise loop, and a seeded op draws the
// same values on every call and every target.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELLOWERRANDOM
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMix1 = 0xBF58476D1CE4E5B9ull;
constexpr uint64_t kMix2 = 0x94D049BB133111EBull;
constexpr StringLiteral kCounter = "__tessel_random_calls";

/// SplitMix64's finalizer, at compile time (the seeded keys).
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * kMix1;
  z = (z ^ (z >> 27)) * kMix2;
  return z ^ (z >> 31);
}

Value i64Const(OpBuilder &b, Location loc, uint64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                      static_cast<int64_t>(v));
}

/// The same finalizer on an i64 value.
Value mix(OpBuilder &b, Location loc, Value z) {
  auto shiftXor = [&](Value v, uint64_t s) -> Value {
    return arith::XOrIOp::create(
        b, loc, v, arith::ShRUIOp::create(b, loc, v, i64Const(b, loc, s)));
  };
  z = arith::MulIOp::create(b, loc, shiftXor(z, 30), i64Const(b, loc, kMix1));
  z = arith::MulIOp::create(b, loc, shiftXor(z, 27), i64Const(b, loc, kMix2));
  return shiftXor(z, 31);
}

/// The draw at stream position `pos` (i64) under `key`, as a float of
/// type `ft` (f32: 24 random bits, f64: 53) in [0, 1), or in (0, 1] with
/// `nonzero` (the logarithm's argument in Box-Muller).
Value unitDraw(OpBuilder &b, Location loc, Value key, Value pos, FloatType ft,
               bool nonzero) {
  Value z = arith::AddIOp::create(
      b, loc, key,
      arith::MulIOp::create(
          b, loc, arith::AddIOp::create(b, loc, pos, i64Const(b, loc, 1)),
          i64Const(b, loc, kGamma)));
  z = mix(b, loc, z);
  unsigned bits = ft.isF64() ? 53 : 24;
  Value top = arith::ShRUIOp::create(b, loc, z, i64Const(b, loc, 64 - bits));
  if (nonzero)
    top = arith::AddIOp::create(b, loc, top, i64Const(b, loc, 1));
  Value f = arith::UIToFPOp::create(b, loc, ft, top);
  return arith::MulFOp::create(
      b, loc, f,
      arith::ConstantOp::create(
          b, loc, ft, b.getFloatAttr(ft, std::ldexp(1.0, -int(bits)))));
}

/// `@__tessel_random_calls`, added to the module on first use.
memref::GlobalOp counterGlobal(ModuleOp module) {
  SymbolTable symbols(module);
  if (auto g = symbols.lookup<memref::GlobalOp>(kCounter))
    return g;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto type = MemRefType::get({}, b.getI64Type());
  auto init = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                     b.getI64IntegerAttr(0));
  auto g = memref::GlobalOp::create(b, module.getLoc(), kCounter,
                                    b.getStringAttr("private"), type, init,
                                    /*constant=*/false, /*alignment=*/nullptr);
  symbols.insert(g);
  return g;
}

/// The op's key: constant with a seed, else mixed from the counter's old
/// value (advanced atomically).
Value keyOf(OpBuilder &b, Location loc, std::optional<uint64_t> seed,
            ModuleOp module) {
  if (seed)
    return i64Const(b, loc, mix(*seed));
  memref::GlobalOp g = counterGlobal(module);
  Value counter = memref::GetGlobalOp::create(b, loc, g.getType(), g.getName());
  Value old =
      memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi,
                                  i64Const(b, loc, 1), counter, ValueRange{});
  return mix(b, loc, old);
}

/// A generic over `type` whose body makes each element from the key and
/// the element's row-major position (`body(b, loc, key, pos)` returns it in
/// the compute type, f64 for f64 results and f32 otherwise).
Value generate(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicSizes,
    Value key,
    function_ref<Value(OpBuilder &, Location, Value, Value, FloatType)> body) {
  Value empty = tensor::EmptyOp::create(b, loc, type, dynamicSizes);
  int64_t rank = type.getRank();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(tensor::DimOp::create(b, loc, empty, d));
  auto elem = cast<FloatType>(type.getElementType());
  FloatType compute = elem.isF64() ? cast<FloatType>(b.getF64Type())
                                   : cast<FloatType>(b.getF32Type());
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{empty}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange) {
        // Row-major position: ((i0 * d1 + i1) * d2 + i2) ...
        Value pos = arith::ConstantIndexOp::create(nb, l, 0);
        for (int64_t d = 0; d < rank; ++d) {
          pos = arith::MulIOp::create(nb, l, pos, sizes[d]);
          pos = arith::AddIOp::create(nb, l, pos,
                                      linalg::IndexOp::create(nb, l, d));
        }
        Value p64 = arith::IndexCastUIOp::create(nb, l, nb.getI64Type(), pos);
        Value v = body(nb, l, key, p64, compute);
        if (v.getType() != elem)
          v = arith::TruncFOp::create(nb, l, elem, v);
        linalg::YieldOp::create(nb, l, v);
      });
  return generic.getResult(0);
}

Value floatConst(OpBuilder &b, Location loc, FloatType ft, double v) {
  return arith::ConstantOp::create(b, loc, ft, b.getFloatAttr(ft, v));
}

std::optional<uint64_t> seedOf(std::optional<int64_t> seed) {
  if (!seed)
    return std::nullopt;
  return static_cast<uint64_t>(*seed);
}

void lower(RandomUniformOp op, ModuleOp module) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value key = keyOf(b, loc, seedOf(op.getSeed()), module);
  double low = op.getLow().convertToDouble();
  double width = op.getHigh().convertToDouble() - low;
  Value result = generate(
      b, loc, op.getType(), op.getDynamicSizes(), key,
      [&](OpBuilder &nb, Location l, Value k, Value pos, FloatType ft) {
        Value u = unitDraw(nb, l, k, pos, ft, /*nonzero=*/false);
        return arith::AddFOp::create(
            nb, l, floatConst(nb, l, ft, low),
            arith::MulFOp::create(nb, l, floatConst(nb, l, ft, width), u));
      });
  op.replaceAllUsesWith(result);
  op.erase();
}

void lower(RandomNormalOp op, ModuleOp module) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value key = keyOf(b, loc, seedOf(op.getSeed()), module);
  double mean = op.getMean().convertToDouble();
  double scale = op.getScale().convertToDouble();
  Value result = generate(
      b, loc, op.getType(), op.getDynamicSizes(), key,
      [&](OpBuilder &nb, Location l, Value k, Value pos, FloatType ft) {
        // Box-Muller on the draws at 2i and 2i + 1:
        // sqrt(-2 ln u1) cos(2 pi u2), u1 in (0, 1].
        Value twice = arith::ShLIOp::create(nb, l, pos, i64Const(nb, l, 1));
        Value u1 = unitDraw(nb, l, k, twice, ft, /*nonzero=*/true);
        Value u2 = unitDraw(
            nb, l, k, arith::AddIOp::create(nb, l, twice, i64Const(nb, l, 1)),
            ft, /*nonzero=*/false);
        Value radius = math::SqrtOp::create(
            nb, l,
            arith::MulFOp::create(nb, l, floatConst(nb, l, ft, -2.0),
                                  math::LogOp::create(nb, l, u1)));
        Value angle = arith::MulFOp::create(
            nb, l, floatConst(nb, l, ft, 2.0 * llvm::numbers::pi), u2);
        Value n = arith::MulFOp::create(nb, l, radius,
                                        math::CosOp::create(nb, l, angle));
        return arith::AddFOp::create(
            nb, l, floatConst(nb, l, ft, mean),
            arith::MulFOp::create(nb, l, floatConst(nb, l, ft, scale), n));
      });
  // The angle lies in [0, 2 pi): there upstream's polynomial cosine (which
  // tessel-approximate-math leaves alone, as it loses accuracy on large
  // arguments) is within a few ulp, and it vectorizes where libm's cosf is
  // a scalar call (81% of a 512K-element draw's time).
  if (auto generic = result.getDefiningOp<linalg::GenericOp>();
      generic && !op.getType().getElementType().isF64()) {
    RewritePatternSet patterns(op.getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return name == "math.cos"; });
    (void)applyOpPatternsGreedily(
        llvm::to_vector(llvm::map_range(generic.getBody()->getOperations(),
                                        [](Operation &o) { return &o; })),
        std::move(patterns));
  }
  op.replaceAllUsesWith(result);
  op.erase();
}

struct LowerRandomPass : tessel::impl::TesselLowerRandomBase<LowerRandomPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<RandomUniformOp, RandomNormalOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (!unseeded && !op->hasAttr("seed")) {
        op->emitError() << "an unseeded random draw needs a call counter "
                           "in host memory, which this target does not "
                           "keep; give the node a seed";
        return signalPassFailure();
      }
    for (Operation *op : ops) {
      if (auto u = dyn_cast<RandomUniformOp>(op))
        lower(u, module);
      else
        lower(cast<RandomNormalOp>(op), module);
    }
  }
};

} // namespace
