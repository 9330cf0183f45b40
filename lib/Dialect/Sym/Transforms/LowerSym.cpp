//===- LowerSym.cpp - tessel-lower-sym: symbols become i32 ids ------------===//
//
// A dialect conversion whose type converter maps tensors of !sym.symbol<V>
// to tensors of i32. Function signatures, calls, returns and branches use
// the upstream func conversion patterns (the signature pattern is ours, to
// convert non-entry blocks too); any other op that merely carries
// symbols (tensor.cast, scf/tosa control flow, ...) is rebuilt with
// converted types by one generic pattern; the sym ops themselves lower to
// TOSA (LowerSymOps.cpp). Before converting, every function argument and
// result of symbol type is tagged `sym.vocab = V`, so the interface the
// type declared survives in the lowered signature.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Sym/IR/SymDialect.h"
#include "tessel/Dialect/Sym/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tessel::sym {
#define GEN_PASS_DEF_TESSELLOWERSYM
#include "tessel/Dialect/Sym/Transforms/Passes.h.inc"
} // namespace mlir::tessel::sym

using namespace mlir;
using namespace mlir::tessel::sym;

namespace {

/// Symbols become i32 ids, in tensors or alone; everything else stays.
struct SymbolTypeConverter : TypeConverter {
  SymbolTypeConverter(MLIRContext *ctx) {
    // Tried last-added first: the identity is the fallback.
    addConversion([](Type t) { return t; });
    addConversion(
        [ctx](SymbolType) -> Type { return IntegerType::get(ctx, 32); });
    addConversion([this](TensorType t) -> Type {
      if (!isa<SymbolType>(t.getElementType()))
        return t;
      return t.clone(convertType(t.getElementType()));
    });
  }
};

/// Rebuilds an op that is not a sym op with converted operand, result and
/// block-argument types; attributes, properties and successors are kept.
struct ConvertCarrierOp : ConversionPattern {
  ConvertCarrierOp(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    // Functions, calls, returns and branches have their upstream patterns.
    if (isa<SymDialect>(op->getDialect()) ||
        isa<FunctionOpInterface, func::CallOp, func::ReturnOp,
            BranchOpInterface>(op))
      return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return rewriter.notifyMatchFailure(op, "result types not convertible");
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs(), op->getSuccessors());
    for (Region &region : op->getRegions()) {
      Region *moved = state.addRegion();
      rewriter.inlineRegionBefore(region, *moved, moved->begin());
      if (failed(rewriter.convertRegionTypes(moved, *getTypeConverter())))
        return rewriter.notifyMatchFailure(op, "block types not convertible");
    }
    rewriter.replaceOp(op, rewriter.create(state)->getResults());
    return success();
  }
};

/// func.func signature conversion that also converts the non-entry blocks:
/// the upstream FunctionOpInterface pattern converts the entry block only,
/// but branches carry symbols into later blocks too.
struct ConvertFuncSignature : OpConversionPattern<func::FuncOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(func::FuncOp fn, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FunctionType type = fn.getFunctionType();
    TypeConverter::SignatureConversion inputs(type.getNumInputs());
    SmallVector<Type> results;
    if (failed(getTypeConverter()->convertSignatureArgs(type.getInputs(),
                                                        inputs)) ||
        failed(getTypeConverter()->convertTypes(type.getResults(), results)))
      return rewriter.notifyMatchFailure(fn, "signature not convertible");
    if (!fn.isExternal() &&
        failed(rewriter.convertRegionTypes(&fn.getBody(), *getTypeConverter(),
                                           &inputs)))
      return rewriter.notifyMatchFailure(fn, "block types not convertible");
    rewriter.modifyOpInPlace(fn, [&] {
      fn.setType(rewriter.getFunctionType(inputs.getConvertedTypes(),
                                          results));
    });
    return success();
  }
};

/// Tags every function argument and result of symbol type with its
/// vocabulary; the type conversion then forgets the symbol type.
void recordVocabularies(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  auto vocabAttr = [&](Type t) {
    return IntegerAttr::get(IntegerType::get(ctx, 64),
                            getSymbolElementType(t).getVocabSize());
  };
  module.walk([&](FunctionOpInterface fn) {
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes()))
      if (getSymbolElementType(t))
        fn.setArgAttr(i, SymDialect::getVocabAttrName(), vocabAttr(t));
    for (auto [i, t] : llvm::enumerate(fn.getResultTypes()))
      if (getSymbolElementType(t))
        fn.setResultAttr(i, SymDialect::getVocabAttrName(), vocabAttr(t));
  });
}

struct TesselLowerSymPass
    : mlir::tessel::sym::impl::TesselLowerSymBase<TesselLowerSymPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SymbolTypeConverter converter(ctx);

    // Legal: no sym op, and no symbol type in operands, results, block
    // arguments or function signatures.
    auto isLegal = [&](Operation *op) {
      if (isa<SymDialect>(op->getDialect()))
        return false;
      if (auto fn = dyn_cast<FunctionOpInterface>(op))
        if (!converter.isLegal(fn.getArgumentTypes()) ||
            !converter.isLegal(fn.getResultTypes()))
          return false;
      return converter.isLegal(op) &&
             llvm::all_of(op->getRegions(), [&](Region &region) {
               return converter.isLegal(&region);
             });
    };
    // Models without symbols (most of them) pass through untouched.
    if (!module->walk([&](Operation *op) {
                  return isLegal(op) ? WalkResult::advance()
                                     : WalkResult::interrupt();
                })
             .wasInterrupted())
      return;

    recordVocabularies(module);

    ConversionTarget target(*ctx);
    target.addIllegalDialect<SymDialect>();
    target.markUnknownOpDynamicallyLegal(isLegal);

    RewritePatternSet patterns(ctx);
    patterns.add<ConvertFuncSignature>(converter, ctx);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateBranchOpInterfaceTypeConversionPattern(patterns, converter);
    patterns.add<ConvertCarrierOp>(converter, ctx);
    populateLowerSymPatterns(converter, patterns);
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
