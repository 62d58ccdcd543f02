//===- AttnMods.cpp - score_mod / mask_mod regions ------------------------===//

#include "dialect/AttnMods.h"

#include "dialect/AttnDialect.h"
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

LogicalResult mlir::attn::verifyCaptureTypes(Operation *op,
                                             ValueRange captures) {
  for (auto [i, capture] : llvm::enumerate(captures)) {
    auto type = cast<MemRefType>(capture.getType());
    Type elt = type.getElementType();
    if (!isa<IntegerType, FloatType>(elt))
      return op->emitOpError()
             << "capture #" << i
             << " must be a memref of integers or floats, got " << type;
    if (!type.getLayout().isIdentity())
      return op->emitOpError() << "capture #" << i
                               << " must have the identity layout "
                                  "(contiguous, row-major), got "
                               << type;
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
  for (Operation &inner : block.without_terminator()) {
    bool allowed;
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      auto arg = dyn_cast<BlockArgument>(load.getMemref());
      allowed =
          arg && arg.getOwner() == &block && arg.getArgNumber() >= positions;
    } else {
      StringRef dialect = inner.getName().getDialectNamespace();
      allowed = (dialect == "arith" || dialect == "math") &&
                inner.getNumRegions() == 0 && isMemoryEffectFree(&inner);
    }
    if (!allowed)
      return error() << "may hold only pure arith and math ops, "
                        "memref.load of a capture argument and attn.yield; "
                        "got '"
                     << inner.getName() << "'";
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
  solver.load<dataflow::DeadCodeAnalysis>();
  solver.load<dataflow::SparseConstantPropagation>();
  solver.load<dataflow::IntegerRangeAnalysis>();
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
