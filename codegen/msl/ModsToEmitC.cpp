//===- ModsToEmitC.cpp - score_mod / mask_mod regions as MSL functions ---===//
//
// region -> func.func (scratch module) -> arith-expand (max/min, ceil/floor
// divisions) -> one conversion to EmitC (upstream arith and func patterns;
// attn's capture loads and Metal math calls) -> emitc::translateToCpp.
//
//===----------------------------------------------------------------------===//

#include "codegen/msl/ModsToEmitC.h"

#include "dialect/AttnDialect.h"
#include "mlir/Conversion/ArithToEmitC/ArithToEmitC.h"
#include "mlir/Conversion/FuncToEmitC/FuncToEmitC.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Target/Cpp/CppEmitter.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::attn;

std::string mlir::attn::mslCaptureElementType(Type elt) {
  if (elt.isF32())
    return "float";
  if (elt.isInteger(1))
    return "bool";
  for (unsigned width : {8, 16, 32, 64})
    if (elt.isInteger(width))
      return "int" + std::to_string(width) + "_t";
  return "";
}

std::string mlir::attn::mslCaptureTypedef(Type elt) {
  std::string t = mslCaptureElementType(elt);
  return "typedef device const " + t + " *attn_capture_" + t + ";";
}

SmallVector<std::pair<unsigned, unsigned>>
mlir::attn::captureDynamicDims(ArrayRef<MemRefType> captureTypes) {
  SmallVector<std::pair<unsigned, unsigned>> dims;
  for (auto [c, type] : llvm::enumerate(captureTypes))
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (type.isDynamicDim(dim))
        dims.push_back({unsigned(c), unsigned(dim)});
  return dims;
}

namespace {

/// Whether the msl tier can hold a value of type `t` in a printed region:
/// Metal has no double, and the 16-bit floats would need their MSL names.
bool printable(Type t) {
  if (isa<IndexType>(t) || t.isF32())
    return true;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth() == 1 || i.getWidth() == 8 || i.getWidth() == 16 ||
           i.getWidth() == 32 || i.getWidth() == 64;
  return false;
}

/// Metal's function for each math op the msl tier prints (and arith.remf,
/// which arith-to-emitc leaves). tanh and pow are precise:: (Metal's fast
/// tanh is NaN past |x| ~ 45, fast pow undefined for x < 0); the others
/// follow the kernel's math mode.
StringRef mslMathFunction(StringRef op) {
  static const std::pair<StringRef, StringRef> table[] = {
      {"arith.remf", "fmod"},
      {"math.absf", "fabs"},       {"math.absi", "abs"},
      {"math.atan", "atan"},       {"math.atan2", "atan2"},
      {"math.ceil", "ceil"},       {"math.copysign", "copysign"},
      {"math.cos", "cos"},         {"math.cosh", "cosh"},
      {"math.ctlz", "clz"},        {"math.cttz", "ctz"},
      {"math.ctpop", "popcount"},  {"math.exp", "exp"},
      {"math.exp2", "exp2"},       {"math.floor", "floor"},
      {"math.fma", "fma"},         {"math.log", "log"},
      {"math.log10", "log10"},     {"math.log2", "log2"},
      {"math.powf", "precise::pow"}, {"math.round", "round"},
      {"math.roundeven", "rint"},  {"math.rsqrt", "rsqrt"},
      {"math.sin", "sin"},         {"math.sinh", "sinh"},
      {"math.sqrt", "sqrt"},       {"math.tan", "tan"},
      {"math.tanh", "precise::tanh"}, {"math.trunc", "trunc"},
      {"math.asin", "asin"},       {"math.acos", "acos"}};
  for (auto [name, callee] : table)
    if (name == op)
      return callee;
  return "";
}

/// A math op as a call of its Metal function.
struct MathToMetalCall : ConversionPattern {
  MathToMetalCall(const TypeConverter &converter, MLIRContext *context,
                  StringRef opName, StringRef callee)
      : ConversionPattern(converter, opName, /*benefit=*/1, context),
        callee(callee.str()) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> types;
    if (failed(typeConverter->convertTypes(op->getResultTypes(), types)))
      return failure();
    rewriter.replaceOpWithNewOp<emitc::CallOpaqueOp>(op, types, callee,
                                                     operands);
    return success();
  }

  std::string callee;
};

/// arith.bitcast, which arith-to-emitc leaves: MSL's as_type<T>(x).
struct BitcastToAsType : OpConversionPattern<arith::BitcastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::BitcastOp cast, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type to = typeConverter->convertType(cast.getType());
    if (!to)
      return failure();
    rewriter.replaceOpWithNewOp<emitc::CallOpaqueOp>(
        cast, TypeRange{to}, "as_type", adaptor.getOperands(), ArrayAttr(),
        rewriter.getArrayAttr({TypeAttr::get(to)}));
    return success();
  }
};

/// memref.load of a capture: the row-major offset of its indices (static
/// sizes as constants, dynamic ones the function's size arguments), then a
/// subscript of the `device const T *`.
struct CaptureLoad : OpConversionPattern<memref::LoadOp> {
  CaptureLoad(const TypeConverter &converter, MLIRContext *context,
              const DenseMap<Value, SmallVector<Value>> &sizes)
      : OpConversionPattern(converter, context), sizes(sizes) {}

  LogicalResult
  matchAndRewrite(memref::LoadOp load, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MemRefType type = load.getMemRefType();
    auto found = sizes.find(load.getMemref());
    if (found == sizes.end())
      return rewriter.notifyMatchFailure(load, "not a capture argument");
    Location loc = load.getLoc();
    Type i32 = rewriter.getI32Type();
    Value offset;
    for (auto [dim, index] : llvm::enumerate(adaptor.getIndices())) {
      if (!offset) {
        offset = index;
        continue;
      }
      Value size = found->second[dim];
      if (size)
        size = rewriter.getRemappedValue(size);
      else
        size = emitc::ConstantOp::create(
            rewriter, loc, i32, rewriter.getI32IntegerAttr(type.getDimSize(dim)));
      offset = emitc::MulOp::create(rewriter, loc, i32, offset, size);
      offset = emitc::AddOp::create(rewriter, loc, i32, offset, index);
    }
    if (!offset) // a rank-0 capture
      offset = emitc::ConstantOp::create(rewriter, loc, i32,
                                         rewriter.getI32IntegerAttr(0));
    Type elt = typeConverter->convertType(type.getElementType());
    Value element = emitc::SubscriptOp::create(
        rewriter, loc, emitc::LValueType::get(elt), adaptor.getMemref(),
        ValueRange{offset});
    rewriter.replaceOpWithNewOp<emitc::LoadOp>(load, elt, element);
    return success();
  }

  const DenseMap<Value, SmallVector<Value>> &sizes;
};

/// Metal compiles with fast math, which assumes no infinities: a region's
/// +-inf constant becomes +-FLT_MAX (the kernels clamp a score_mod's
/// result at their finite "no score", so -FLT_MAX still hides a key).
LogicalResult finiteConstants(Operation *anchor, func::FuncOp func) {
  WalkResult walk = func.walk([&](arith::ConstantOp constant) {
    auto value = dyn_cast<FloatAttr>(constant.getValue());
    if (!value || value.getValue().isFinite())
      return WalkResult::advance();
    if (value.getValue().isNaN()) {
      anchor->emitError() << "the msl tier cannot print a NaN constant in a "
                             "mod region (Metal's fast math assumes none)";
      return WalkResult::interrupt();
    }
    APFloat finite = APFloat::getLargest(value.getValue().getSemantics(),
                                         value.getValue().isNegative());
    constant.setValueAttr(FloatAttr::get(value.getType(), finite));
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Makes every index value of `func` an i32 in place (the kernels' own
/// positions and offsets are 32-bit): index constants become i32 ones and
/// index casts become extensions, truncations or nothing. Memref indices
/// are i32 from here on, which only CaptureLoad reads.
void narrowIndices(func::FuncOp func) {
  Type i32 = IntegerType::get(func.getContext(), 32);
  auto narrow = [&](Value v) {
    if (isa<IndexType>(v.getType()))
      v.setType(i32);
  };
  for (BlockArgument arg : func.getArguments())
    narrow(arg);
  func.setFunctionType(FunctionType::get(
      func.getContext(), func.front().getArgumentTypes(),
      func.getResultTypes()));
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      narrow(result);
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (auto value = dyn_cast<IntegerAttr>(constant.getValue());
          value && value.getType() != constant.getType())
        constant.setValueAttr(IntegerAttr::get(
            i32, value.getValue().sextOrTrunc(32)));
  });
  SmallVector<Operation *> casts;
  func.walk([&](Operation *op) {
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
      casts.push_back(op);
  });
  for (Operation *cast : casts) {
    OpBuilder b(cast);
    Value from = cast->getOperand(0);
    Type to = cast->getResult(0).getType();
    const unsigned fromWidth = from.getType().getIntOrFloatBitWidth(),
                   toWidth = to.getIntOrFloatBitWidth();
    const bool isSigned = isa<arith::IndexCastOp>(cast);
    Value replacement = from;
    if (toWidth > fromWidth)
      replacement = isSigned ? arith::ExtSIOp::create(b, cast->getLoc(), to,
                                                      from)
                                   .getResult()
                             : arith::ExtUIOp::create(b, cast->getLoc(), to,
                                                      from)
                                   .getResult();
    else if (toWidth < fromWidth)
      replacement = arith::TruncIOp::create(b, cast->getLoc(), to, from);
    cast->getResult(0).replaceAllUsesWith(replacement);
    cast->erase();
  }
}

} // namespace

FailureOr<std::string>
mlir::attn::printModAsMSL(Operation *anchor, Region &region, ModKind kind,
                          StringRef name, ArrayRef<MemRefType> captureTypes) {
  MLIRContext *context = anchor->getContext();
  context->loadDialect<emitc::EmitCDialect, func::FuncDialect,
                       arith::ArithDialect, math::MathDialect,
                       memref::MemRefDialect>();
  Block &body = region.front();
  const unsigned positions = numPositionArgs(kind);

  // What Metal cannot hold, named before anything is converted.
  for (MemRefType type : captureTypes)
    if (mslCaptureElementType(type.getElementType()).empty())
      return anchor->emitError()
             << "the msl tier loads captures of f32 or integer elements; "
                "a capture of "
             << modName(kind) << " has type " << type;
  for (Operation &op : body.without_terminator()) {
    for (Type t : op.getResultTypes())
      if (!printable(t))
        return op.emitError()
               << "the msl tier prints " << modName(kind)
               << " regions with f32, integer and index values only (Metal "
                  "has no f64, and f16/bf16 values are not printed yet); '"
               << op.getName() << "' yields " << t;
    if (op.getDialect() && op.getDialect()->getNamespace() == "math" &&
        mslMathFunction(op.getName().getStringRef()).empty())
      return op.emitError() << "the msl tier has no Metal function for '"
                            << op.getName() << "' in " << modName(kind);
  }

  // The region as a function: its arguments, then one index per dynamic
  // dim of each capture.
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(anchor->getLoc());
  OpBuilder b(scratch->getBodyRegion());
  SmallVector<Type> argTypes(body.getArgumentTypes());
  const auto dynamicDims = captureDynamicDims(captureTypes);
  argTypes.append(dynamicDims.size(), b.getIndexType());
  Type result = kind == ModKind::Score ? Type(b.getF32Type())
                                       : Type(b.getI1Type());
  auto func = func::FuncOp::create(b, region.getLoc(), name,
                                   b.getFunctionType(argTypes, result));
  Block *entry = func.addEntryBlock();
  IRMapping mapping;
  for (auto [from, to] :
       llvm::zip(body.getArguments(), entry->getArguments()))
    mapping.map(from, to);
  b.setInsertionPointToStart(entry);
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  auto yield = cast<YieldOp>(body.getTerminator());
  func::ReturnOp::create(b, yield.getLoc(),
                         mapping.lookup(yield.getValue()));

  // The size arguments of each capture's dims (null: static).
  DenseMap<Value, SmallVector<Value>> sizes;
  for (auto [c, type] : llvm::enumerate(captureTypes))
    sizes[entry->getArgument(positions + c)].resize(type.getRank());
  for (auto [at, cd] : llvm::enumerate(dynamicDims))
    sizes[entry->getArgument(positions + cd.first)][cd.second] =
        entry->getArgument(body.getNumArguments() + at);

  if (failed(finiteConstants(anchor, func)))
    return failure();
  RewritePatternSet expand(context);
  arith::populateArithExpandOpsPatterns(expand);
  if (failed(applyPatternsGreedily(func, std::move(expand))))
    return anchor->emitError("attn-to-msl: arith-expand did not converge");
  narrowIndices(func);

  TypeConverter converter;
  converter.addConversion([](Type t) -> std::optional<Type> {
    if (isa<FloatType, IntegerType>(t))
      return t;
    return std::nullopt;
  });
  RewritePatternSet patterns(context);
  populateArithToEmitCPatterns(converter, patterns);
  populateFuncToEmitCPatterns(converter, patterns);
  converter.addConversion([](MemRefType t) -> Type {
    return emitc::OpaqueType::get(
        t.getContext(),
        "attn_capture_" + mslCaptureElementType(t.getElementType()));
  });
  patterns.add<CaptureLoad>(converter, context, sizes);
  patterns.add<BitcastToAsType>(converter, context);
  llvm::StringSet<> mathOps;
  func.walk([&](Operation *op) {
    StringRef opName = op->getName().getStringRef();
    StringRef callee = mslMathFunction(opName);
    if (!callee.empty() && mathOps.insert(opName).second)
      patterns.add<MathToMetalCall>(converter, context, opName, callee);
  });
  ConversionTarget target(*context);
  target.addLegalDialect<emitc::EmitCDialect>();
  target.addLegalOp<ModuleOp>();
  if (failed(applyFullConversion(*scratch, target, std::move(patterns))))
    return anchor->emitError()
           << "attn-to-msl: EmitC has no conversion for an op of the "
           << modName(kind) << " region (named in the error before)";

  auto emitcFunc = *scratch->getOps<emitc::FuncOp>().begin();
  emitcFunc.setSpecifiersAttr(b.getStrArrayAttr({"inline"}));
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(emitc::translateToCpp(emitcFunc, os)))
    return anchor->emitError()
           << "attn-to-msl: EmitC cannot print the " << modName(kind)
           << " region";
  return text;
}
