//===- AttnMods.cpp - score_mod / mask_mod regions ------------------------===//

#include "dialect/AttnMods.h"

#include "dialect/AttnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;

StringRef mlir::attn::modName(ModKind kind) {
  return kind == ModKind::Score ? "score_mod" : "mask_mod";
}

unsigned mlir::attn::numPositionArgs(ModKind kind) {
  return kind == ModKind::Score ? 5 : 4;
}

bool mlir::attn::isModType(Type type) {
  if (isa<IndexType>(type))
    return true;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.isSignless() && integer.getWidth() <= 64;
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64();
}

ArrayRef<StringLiteral> mlir::attn::modOpNames() {
  // Each of these lowers on the CPU, on NVIDIA and (as its types allow) to
  // MSL, and attn-run's float64 reference evaluates it (ModEval.cpp).
  static const StringLiteral names[] = {
      "arith.constant",   "arith.addf",       "arith.subf",
      "arith.mulf",       "arith.divf",       "arith.remf",
      "arith.negf",       "arith.maximumf",   "arith.minimumf",
      "arith.maxnumf",    "arith.minnumf",    "arith.extf",
      "arith.truncf",     "arith.sitofp",     "arith.uitofp",
      "arith.fptosi",     "arith.fptoui",     "arith.select",
      "arith.bitcast",    "arith.cmpf",       "arith.addi",
      "arith.subi",       "arith.muli",       "arith.andi",
      "arith.ori",        "arith.xori",       "arith.maxsi",
      "arith.minsi",      "arith.maxui",      "arith.minui",
      "arith.divsi",      "arith.remsi",      "arith.divui",
      "arith.remui",      "arith.floordivsi", "arith.ceildivsi",
      "arith.shli",       "arith.shrui",      "arith.shrsi",
      "arith.extsi",      "arith.extui",      "arith.trunci",
      "arith.index_cast", "arith.index_castui", "arith.cmpi",
      "math.absi",        "math.absf",        "math.exp",
      "math.exp2",        "math.expm1",       "math.log",
      "math.log2",        "math.log10",       "math.log1p",
      "math.tanh",        "math.sqrt",        "math.rsqrt",
      "math.floor",       "math.ceil",        "math.round",
      "math.roundeven",   "math.trunc",       "math.sin",
      "math.cos",         "math.tan",         "math.atan",
      "math.erf",         "math.atan2",       "math.powf",
      "math.copysign",    "math.fma"};
  return names;
}

LogicalResult mlir::attn::verifyCaptureTypes(Operation *op,
                                             ValueRange captures) {
  for (auto [i, capture] : llvm::enumerate(captures)) {
    auto type = cast<MemRefType>(capture.getType());
    Type elt = type.getElementType();
    // Element widths every backend loads as they are stored.
    auto integer = dyn_cast<IntegerType>(elt);
    bool loadable = integer ? llvm::is_contained({1u, 8u, 16u, 32u, 64u},
                                                 integer.getWidth()) &&
                                  integer.isSignless()
                            : isa<FloatType>(elt) && isModType(elt);
    if (!loadable)
      return op->emitOpError()
             << "capture #" << i
             << " must be a memref of integers (i1, i8, i16, i32, i64) or "
                "floats (f16, bf16, f32, f64), got "
             << type;
    if (!type.getLayout().isIdentity())
      return op->emitOpError() << "capture #" << i
                               << " must have the identity layout "
                                  "(contiguous, row-major), got "
                               << type;
    // The operands' limits (AttnOps.cpp): dims in [1, 2^31-1], and the
    // elements the static dims address below 2^48.
    double elements = 1;
    for (auto [d, size] : llvm::enumerate(type.getShape())) {
      if (ShapedType::isDynamic(size))
        continue;
      if (size < 1 || size > kMaxModCaptureDim)
        return op->emitOpError()
               << "capture #" << i << " dim " << d << " is " << size
               << "; a static dim must be in [1, 2^31-1]";
      elements *= double(size);
    }
    if (elements > double(kMaxModCaptureElements))
      return op->emitOpError()
             << "capture #" << i << " holds " << elements
             << " elements through its static dims; the limit is 2^48";
  }
  return success();
}

LogicalResult mlir::attn::verifyModRegion(Operation *op, Region &region,
                                          ModKind kind, ValueRange captures) {
  StringRef name = modName(kind);
  auto error = [&]() {
    InFlightDiagnostic diag = op->emitOpError();
    diag << "region '" << name << "' ";
    return diag;
  };
  if (!region.hasOneBlock())
    return error() << "must have one block, got " << region.getBlocks().size();
  Block &block = region.front();
  Builder b(op->getContext());
  const unsigned positions = numPositionArgs(kind);
  static const char *const scoreNames[] = {"score", "b", "h", "q_idx",
                                           "kv_idx"};
  static const char *const maskNames[] = {"b", "h", "q_idx", "kv_idx"};
  if (block.getNumArguments() != positions + captures.size())
    return error() << "must take " << positions << " arguments ("
                   << (kind == ModKind::Score
                           ? "score: f32, b, h, q_idx, kv_idx: index"
                           : "b, h, q_idx, kv_idx: index")
                   << ") and one per capture (" << captures.size() << "), got "
                   << block.getNumArguments();
  for (BlockArgument arg : block.getArguments()) {
    unsigned i = arg.getArgNumber();
    Type want;
    std::string what;
    if (i >= positions) {
      want = captures[i - positions].getType();
      what = "capture #" + std::to_string(i - positions);
    } else {
      bool isScore = kind == ModKind::Score && i == 0;
      want = isScore ? Type(b.getF32Type()) : Type(b.getIndexType());
      what = kind == ModKind::Score ? scoreNames[i] : maskNames[i];
    }
    if (arg.getType() != want)
      return error() << "argument #" << i << " (" << what << ") must be "
                     << want << ", got " << arg.getType();
  }
  // The region's blocks have terminators by now (MLIR verifies them
  // before the regions' op).
  auto yield = block.empty() ? nullptr : dyn_cast<YieldOp>(block.back());
  Type result =
      kind == ModKind::Score ? Type(b.getF32Type()) : Type(b.getI1Type());
  if (!yield)
    return error() << "must end with attn.yield";
  if (yield.getValue().getType() != result)
    return error() << "must yield " << result << ", got "
                   << yield.getValue().getType();
  unsigned numOps = 0;
  for (Operation &inner : block.without_terminator()) {
    bool allowed;
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      auto arg = dyn_cast<BlockArgument>(load.getMemref());
      allowed =
          arg && arg.getOwner() == &block && arg.getArgNumber() >= positions;
    } else {
      allowed = llvm::is_contained(modOpNames(),
                                   inner.getName().getStringRef()) &&
                inner.getNumRegions() == 0;
    }
    // A rounding mode other than the default: the CPU and the NVPTX
    // backend (sm_80 and below) cannot lower the constrained truncation.
    if (allowed && inner.hasAttr("roundingmode"))
      return error() << "takes the default rounding mode only; '"
                     << inner.getName() << "' has one of its own";
    if (!allowed)
      return error() << "may hold only the arith and math ops of attn's "
                        "list (AttnMods.cpp), memref.load of a capture "
                        "argument and attn.yield; got '"
                     << inner.getName() << "'";
    // A capture is read through memref.load alone: no other op may take
    // or make a memref (arith.select of two captures, say).
    SmallVector<Type> types(inner.getOperandTypes());
    llvm::append_range(types, inner.getResultTypes());
    if (!isa<memref::LoadOp>(inner) &&
        llvm::any_of(types, [](Type t) { return isa<MemRefType>(t); }))
      return error() << "reads captures through memref.load only; '"
                     << inner.getName() << "' takes or makes a memref";
    for (Type type : types)
      if (!isa<MemRefType>(type) && !isModType(type))
        return error() << "computes in index, i1 to i64, f16, bf16, f32 "
                          "and f64 only; '"
                       << inner.getName() << "' uses " << type;
    ++numOps;
  }
  if (numOps > kMaxModOps)
    return error() << "holds " << numOps << " ops; the limit is "
                   << kMaxModOps
                   << " (a kernel inlines the region at every score)";
  return verifyModValues(op, region, kind);
}

/// The range integer range analysis gives `value`, if it knows one.
static std::optional<ConstantIntRanges>
rangeOf(DataFlowSolver &solver, Value value) {
  auto *lattice =
      solver.lookupState<dataflow::IntegerValueRangeLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  return lattice->getValue().getValue();
}

static void loadIntegerRanges(DataFlowSolver &solver) {
  solver.load<dataflow::DeadCodeAnalysis>();
  solver.load<dataflow::SparseConstantPropagation>();
  solver.load<dataflow::IntegerRangeAnalysis>();
}

LogicalResult mlir::attn::verifyModValues(Operation *op, Region &region,
                                          ModKind kind) {
  Block &block = region.front();
  auto isDivision = [](Operation &inner) {
    return isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
               arith::CeilDivSIOp, arith::FloorDivSIOp>(inner);
  };
  if (llvm::none_of(block, [&](Operation &inner) {
        return isDivision(inner) || isa<memref::LoadOp>(inner);
      }))
    return success();
  DataFlowSolver solver;
  loadIntegerRanges(solver);
  if (failed(solver.initializeAndRun(op)))
    return op->emitOpError() << "region '" << modName(kind)
                             << "': integer range analysis failed";
  for (Operation &inner : block) {
    if (isDivision(inner)) {
      // An integer division traps (x86, CUDA: undefined) on a zero divisor
      // and on the signed minimum over -1: the divisor must provably be
      // neither, whatever the positions and the captures hold.
      std::optional<ConstantIntRanges> divisor =
          rangeOf(solver, inner.getOperand(1));
      std::optional<ConstantIntRanges> dividend =
          rangeOf(solver, inner.getOperand(0));
      const bool isSigned = !isa<arith::DivUIOp, arith::RemUIOp>(inner);
      const bool nonZero = divisor && !divisor->umin().isZero();
      const bool noOverflow =
          !isSigned ||
          (divisor && (!divisor->umax().isAllOnes() ||
                       divisor->smax().slt(-1) || divisor->smin().sgt(-1))) ||
          (dividend && !dividend->smin().isMinSignedValue());
      if (!nonZero || !noOverflow)
        return inner.emitOpError()
               << "in region '" << modName(kind)
               << "': the divisor must provably be "
               << (isSigned ? "nonzero and not -1 (or the dividend never "
                              "the signed minimum)"
                            : "nonzero")
               << " at every position; clamp it first (e.g. arith.maxsi "
                  "with a constant 1)";
    }
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      MemRefType type = load.getMemRefType();
      for (auto [dim, index] : llvm::enumerate(load.getIndices())) {
        std::optional<ConstantIntRanges> range = rangeOf(solver, index);
        if (!range || type.isDynamicDim(dim))
          continue;
        int64_t size = type.getDimSize(dim);
        if (range->smax().isNegative() || range->smin().sge(size))
          return inner.emitOpError()
                 << "in region '" << modName(kind) << "': index " << dim
                 << " is always outside dim " << dim << " (size " << size
                 << ") of the capture, in ["
                 << range->smin().getSExtValue() << ", "
                 << range->smax().getSExtValue() << "]";
      }
    }
  }
  return success();
}

// Whether integer range analysis proves each index of `load` that depends
// on `arg` (itself or an op of its forward `slice`) inside its static
// dimension, whatever the region's arguments are.
static bool provablyInBounds(DataFlowSolver &solver, memref::LoadOp load,
                             Value arg, const SetVector<Operation *> &slice) {
  MemRefType type = load.getMemRefType();
  for (auto [dim, index] : llvm::enumerate(load.getIndices())) {
    Operation *def = index.getDefiningOp();
    if (index != arg && !(def && slice.contains(def)))
      continue;
    if (type.isDynamicDim(dim))
      return false;
    auto *range = solver.lookupState<dataflow::IntegerValueRangeLattice>(index);
    if (!range || range->getValue().isUninitialized())
      return false;
    const ConstantIntRanges &r = range->getValue().getValue();
    if (r.smin().isNegative() ||
        r.smax().getSExtValue() >= type.getDimSize(dim))
      return false;
  }
  return true;
}

bool mlir::attn::addressesMemory(Region &region, unsigned arg) {
  SetVector<Operation *> slice;
  Value position = region.front().getArgument(arg);
  getForwardSlice(position, &slice);
  auto loads = llvm::to_vector(llvm::make_filter_range(
      slice, [](Operation *op) { return isa<memref::LoadOp>(op); }));
  if (loads.empty())
    return false;
  // A load whose indices the region bounds itself (a clamped bucket) is in
  // bounds at any position.
  DataFlowSolver solver;
  loadIntegerRanges(solver);
  if (failed(solver.initializeAndRun(region.getParentOp())))
    return true;
  return llvm::any_of(loads, [&](Operation *op) {
    return !provablyInBounds(solver, cast<memref::LoadOp>(op), position,
                             slice);
  });
}

Value mlir::attn::inlineMod(OpBuilder &b, Region &region, ValueRange args) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &inner : block.without_terminator())
    b.clone(inner, mapping);
  return mapping.lookupOrDefault(
      cast<YieldOp>(block.getTerminator()).getValue());
}
