//===- ComposeOps.cpp - compose op verifiers and assembly ------------------===//
#include "tessel/Dialect/Compose/IR/ComposeDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace mlir::tessel::compose;

/// Sizes agree unless both are static and differ.
static bool sameSize(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

bool mlir::tessel::compose::isInterfaceCompatible(Type actual,
                                                  Type declared) {
  if (actual == declared)
    return true;
  auto a = dyn_cast<RankedTensorType>(actual);
  auto d = dyn_cast<RankedTensorType>(declared);
  if (!a || !d || a.getElementType() != d.getElementType() ||
      a.getRank() != d.getRank())
    return false;
  for (auto [x, y] : llvm::zip(a.getShape(), d.getShape()))
    if (!sameSize(x, y))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// ComponentOp
//===----------------------------------------------------------------------===//

ParseResult ComponentOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType = [](Builder &builder, ArrayRef<Type> argTypes,
                          ArrayRef<Type> results,
                          function_interface_impl::VariadicFlag,
                          std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void ComponentOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult ComponentOp::verify() {
  if (std::optional<Type> precision = getPrecision()) {
    Type t = *precision;
    if (!t.isF16() && !t.isBF16() && !t.isF32() && !t.isInteger(8))
      return emitOpError() << "attribute 'precision' must be f16, bf16, f32 "
                              "or i8, got "
                           << t;
  }
  if (std::optional<StringRef> sparsity = getSparsity())
    if (sparsity->empty())
      return emitOpError() << "attribute 'sparsity' must not be empty";
  return success();
}

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  auto component = (*this)->getParentOfType<ComponentOp>();
  ArrayRef<Type> results = component.getResultTypes();
  if (getNumOperands() != results.size())
    return emitOpError() << "returns " << getNumOperands()
                         << " values, but component '"
                         << component.getSymName() << "' declares "
                         << results.size();
  for (auto [i, v] : llvm::enumerate(getOperands()))
    if (v.getType() != results[i])
      return emitOpError() << "result #" << i << " has type " << v.getType()
                           << ", but component '" << component.getSymName()
                           << "' declares " << results[i];
  return success();
}

//===----------------------------------------------------------------------===//
// InstanceOp / CallOp
//===----------------------------------------------------------------------===//

/// The component `name` refers to from `user`, directly or through an
/// instance; null when it does not resolve to one.
static ComponentOp lookupComponent(Operation *user, FlatSymbolRefAttr name,
                                   SymbolTableCollection &symbols) {
  Operation *target = symbols.lookupNearestSymbolFrom(user, name);
  if (auto instance = dyn_cast_or_null<InstanceOp>(target))
    target = symbols.lookupNearestSymbolFrom(instance, instance.getComponentAttr());
  return dyn_cast_or_null<ComponentOp>(target);
}

/// lookupComponent, emitting the error on `user` when it fails.
static ComponentOp resolve(Operation *user, FlatSymbolRefAttr name,
                           SymbolTableCollection &symbols, StringRef what) {
  if (ComponentOp component = lookupComponent(user, name, symbols))
    return component;
  user->emitOpError() << what << " " << name
                      << " is not a compose.component or compose.instance";
  return nullptr;
}

LogicalResult InstanceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Operation *target =
      symbols.lookupNearestSymbolFrom(*this, getComponentAttr());
  if (!isa_and_nonnull<ComponentOp>(target))
    return emitOpError() << "component " << getComponentAttr()
                         << " is not a compose.component";
  return success();
}

ComponentOp CallOp::resolveComponent(SymbolTableCollection &symbols) {
  return lookupComponent(*this, getCalleeAttr(), symbols);
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbols) {
  ComponentOp component = resolve(*this, getCalleeAttr(), symbols, "callee");
  if (!component)
    return failure();
  ArrayRef<Type> args = component.getArgumentTypes();
  ArrayRef<Type> results = component.getResultTypes();
  if (args.size() != getNumOperands() || results.size() != getNumResults())
    return emitOpError() << "passes " << getNumOperands() << " operands and "
                         << "expects " << getNumResults()
                         << " results, but the interface of component '"
                         << component.getSymName() << "' has " << args.size()
                         << " and " << results.size();
  for (auto [i, v] : llvm::enumerate(getOperands()))
    if (!isInterfaceCompatible(v.getType(), args[i]))
      return emitOpError() << "operand #" << i << " of type " << v.getType()
                           << " does not match the interface of component '"
                           << component.getSymName() << "': " << args[i];
  for (auto [i, t] : llvm::enumerate(getResultTypes()))
    if (!isInterfaceCompatible(t, results[i]))
      return emitOpError() << "result #" << i << " of type " << t
                           << " does not match the interface of component '"
                           << component.getSymName() << "': " << results[i];
  return success();
}

//===----------------------------------------------------------------------===//
// RouteOp
//===----------------------------------------------------------------------===//

LogicalResult RouteOp::verify() {
  auto tokens = getTokens().getType(), scores = getScores().getType();
  auto out = getOutput().getType();
  int64_t numExperts = getExperts().size();
  if (numExperts == 0)
    return emitOpError() << "attribute 'experts' must name at least one expert";
  if (!sameSize(tokens.getDimSize(0), scores.getDimSize(0)))
    return emitOpError() << "has " << tokens.getDimSize(0)
                         << " tokens but scores for "
                         << scores.getDimSize(0);
  if (!sameSize(scores.getDimSize(1), numExperts))
    return emitOpError() << "scores have " << scores.getDimSize(1)
                         << " columns, but attribute 'experts' names "
                         << numExperts << " experts";
  if (static_cast<int64_t>(getK()) > numExperts)
    return emitOpError() << "attribute 'k' = " << getK()
                         << " exceeds the number of experts (" << numExperts
                         << ")";
  if (!sameSize(out.getDimSize(0), tokens.getDimSize(0)))
    return emitOpError() << "result has " << dimStr(out.getDimSize(0))
                         << " rows, expected one per token ("
                         << dimStr(tokens.getDimSize(0)) << ")";
  if (out.getElementType() != tokens.getElementType() ||
      scores.getElementType() != tokens.getElementType())
    return emitOpError() << "tokens, scores and result must have one element "
                            "type";
  return success();
}

LogicalResult RouteOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto tokens = getTokens().getType();
  auto out = getOutput().getType();
  Type elem = tokens.getElementType();
  for (auto [i, ref] : llvm::enumerate(getExperts())) {
    auto name = cast<FlatSymbolRefAttr>(ref);
    ComponentOp expert = resolve(*this, name, symbols, "expert");
    if (!expert)
      return failure();
    FunctionType fn = expert.getFunctionType();
    auto arg = fn.getNumInputs() == 1
                   ? dyn_cast<RankedTensorType>(fn.getInput(0))
                   : nullptr;
    auto res = fn.getNumResults() == 1
                   ? dyn_cast<RankedTensorType>(fn.getResult(0))
                   : nullptr;
    if (!arg || !res || arg.getRank() != 2 || res.getRank() != 2)
      return emitOpError() << "expert " << name
                           << " must take one rank-2 tensor and return one "
                              "(tokens x features), got "
                           << fn;
    if (!arg.isDynamicDim(0) || !res.isDynamicDim(0))
      return emitOpError() << "expert " << name
                           << " must have a dynamic token dimension (it runs "
                              "on the tokens routed to it), got "
                           << fn;
    if (arg.getElementType() != elem || res.getElementType() != elem ||
        !sameSize(arg.getDimSize(1), tokens.getDimSize(1)) ||
        !sameSize(res.getDimSize(1), out.getDimSize(1)))
      return emitOpError() << "expert " << name << " has interface " << fn
                           << ", which does not take the tokens ("
                           << tokens << ") or produce the result (" << out
                           << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Memory ops
//===----------------------------------------------------------------------===//

LogicalResult MemoryReadOp::verify() {
  auto mem = getMemory().getType(), out = getOutput().getType();
  auto loc = getLocations().getType();
  if (out.getElementType() != mem.getElementType())
    return emitOpError() << "result element type " << out.getElementType()
                         << " differs from the memory's "
                         << mem.getElementType();
  if (!sameSize(out.getDimSize(0), loc.getDimSize(0)) ||
      !sameSize(out.getDimSize(1), mem.getDimSize(1)))
    return emitOpError() << "result " << out
                         << " must have one row per location ("
                         << dimStr(loc.getDimSize(0))
                         << ") of the memory's width ("
                         << dimStr(mem.getDimSize(1)) << ")";
  return success();
}

LogicalResult MemoryWriteOp::verify() {
  auto mem = getMemory().getType(), vals = getValues().getType();
  auto loc = getLocations().getType();
  if (vals.getElementType() != mem.getElementType())
    return emitOpError() << "values element type " << vals.getElementType()
                         << " differs from the memory's "
                         << mem.getElementType();
  if (!sameSize(vals.getDimSize(0), loc.getDimSize(0)))
    return emitOpError() << "writes " << dimStr(vals.getDimSize(0))
                         << " rows at " << dimStr(loc.getDimSize(0))
                         << " locations";
  if (!sameSize(vals.getDimSize(1), mem.getDimSize(1)))
    return emitOpError() << "values have width " << dimStr(vals.getDimSize(1))
                         << ", the memory " << dimStr(mem.getDimSize(1));
  return success();
}

LogicalResult MemoryLookupOp::verify() {
  auto q = getQueries().getType(), k = getKeys().getType();
  auto v = getValues().getType(), out = getOutput().getType();
  Type elem = q.getElementType();
  if (k.getElementType() != elem || v.getElementType() != elem ||
      out.getElementType() != elem)
    return emitOpError() << "queries, keys, values and result must have one "
                            "element type";
  if (!sameSize(q.getDimSize(1), k.getDimSize(1)))
    return emitOpError() << "queries have width " << dimStr(q.getDimSize(1))
                         << ", keys " << dimStr(k.getDimSize(1));
  if (!sameSize(k.getDimSize(0), v.getDimSize(0)))
    return emitOpError() << "has " << dimStr(k.getDimSize(0)) << " keys but "
                         << dimStr(v.getDimSize(0)) << " values";
  if (!sameSize(out.getDimSize(0), q.getDimSize(0)) ||
      !sameSize(out.getDimSize(1), v.getDimSize(1)))
    return emitOpError() << "result " << out
                         << " must have one row per query of the values' "
                            "width";
  return success();
}

#define GET_OP_CLASSES
#include "tessel/Dialect/Compose/IR/ComposeOps.cpp.inc"
