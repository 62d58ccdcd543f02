//===- MergeRun.cpp - attn.merge_states: run and check --------------------===//
//
// attn.merge_states through the CPU pipeline: fresh random parts, some of
// them empty (LSE -inf, with NaN in their O, which the merge must not
// read) and some rows empty in every part, NaN-poisoned outputs, and
// every element compared with the float64 reference merge.
//
//===----------------------------------------------------------------------===//

#include "tools/attn-run/Run.h"

#include "llvm/Support/Format.h"

#include <cmath>

namespace attn_run {

FailureOr<SmallVector<MergeRole>> mergeRoles(func::FuncOp func,
                                             mlir::attn::MergeStatesOp op) {
  DenseMap<unsigned, MergeRole> roles;
  auto bind = [&](Value v, MergeRole role, StringRef name) -> LogicalResult {
    if (!v)
      return success();
    FailureOr<unsigned> arg = argumentOf(func, v, name);
    if (failed(arg))
      return failure();
    roles[*arg] = role;
    return success();
  };
  if (failed(bind(op.getOParts(), MergeRole::OParts, "o_parts")) ||
      failed(bind(op.getLseParts(), MergeRole::LseParts, "lse_parts")) ||
      failed(bind(op.getO(), MergeRole::O, "o")) ||
      failed(bind(op.getLse(), MergeRole::Lse, "lse")))
    return failure();
  if (roles.size() != func.getNumArguments())
    return fail("every argument of @" + func.getSymName() +
                " must be an operand of its attn.merge_states"),
           failure();
  SmallVector<MergeRole> byArgument;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    byArgument.push_back(roles[i]);
  return byArgument;
}

SmallVector<int64_t> mergeShape(mlir::attn::MergeStatesOp op, MergeRole role,
                                int64_t N, int64_t T) {
  const int64_t H = op.getNumHeads(), dv = op.getValueHeadDim();
  switch (role) {
  case MergeRole::OParts:
    return {N, T, H, dv};
  case MergeRole::LseParts:
    return {N, T, H};
  case MergeRole::O:
    return {T, H, dv};
  case MergeRole::Lse:
    return {T, H};
  }
  llvm_unreachable("every role has a shape");
}

int runMerge(MLIRContext &context, ModuleOp module, func::FuncOp func,
             mlir::attn::MergeStatesOp op) {
  FailureOr<SmallVector<MergeRole>> roles = mergeRoles(func, op);
  if (failed(roles))
    return 1;

  // N from --batch, T from --q-len where dynamic.
  auto partsType = cast<MemRefType>(op.getOParts().getType());
  // --batch's default (1) is no request: a static N stands unless given.
  auto numParts = resolve(partsType, 0,
                          batchOpt.getNumOccurrences() ? int64_t(batchOpt) : -1,
                          "part count (--batch)");
  auto numRows = resolve(partsType, 1, qLenOpt, "row count (--q-len)");
  if (failed(numParts) || failed(numRows))
    return 1;
  const int64_t N = *numParts, T = *numRows, H = op.getNumHeads(),
                dv = op.getValueHeadDim();
  if (N < 1 || T < 1 || N > 4096 || T > 1 << 20)
    return fail("--batch (parts) and --q-len (rows) must be in [1, 4096] "
                "and [1, 2^20]");
  SmallVector<SmallVector<int64_t>> shapes;
  for (MergeRole role : *roles)
    shapes.push_back(mergeShape(op, role, N, T));
  SmallVector<Extent> extents;
  if (failed(measureWithinLimit(func, shapes, extents)))
    return 1;
  SmallVector<Buffer> buffers = allocateArguments(func, shapes, extents);

  uint64_t seed = runSeed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_real_distribution<double> logits(-6.0, 6.0);
  const int64_t rows = T * H;
  // Which (part, row) is empty: about one in five, and every part of the
  // rows r % 11 == 5, so rows with one, some and no non-empty part occur.
  auto empty = [&](int64_t n, int64_t r) {
    return r % 11 == 5 || (r * N + n) % 5 == 3;
  };
  Buffer *oParts = nullptr, *lseParts = nullptr, *o = nullptr, *lse = nullptr;
  for (unsigned i = 0; i < buffers.size(); ++i) {
    Buffer &buf = buffers[i];
    switch ((*roles)[i]) {
    case MergeRole::OParts:
      oParts = &buf;
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, empty(x / (rows * dv), x / dv % rows) ? kNaN : uniform(rng));
      break;
    case MergeRole::LseParts:
      lseParts = &buf;
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, empty(x / rows, x % rows) ? -kInf : logits(rng));
      break;
    case MergeRole::O:
      o = &buf;
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, kNaN);
      break;
    case MergeRole::Lse:
      lse = &buf;
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, kNaN);
      break;
    }
  }
  // The inputs as the kernel sees them (rounded to their element types).
  std::vector<double> partsIn = oParts->toDense(), lseIn = lseParts->toDense();

  const std::string kernelName = func.getSymName().str();
  Type partElt = partsType.getElementType();
  Type outElt = cast<MemRefType>(op.getO().getType()).getElementType();
  if (failed(compileAndCall(context, module, func, buffers)))
    return 1;

  std::vector<double> refO, refLse;
  ref::mergeStates(N, rows, dv, partsIn, lseIn, refO, refLse);
  std::vector<double> gotO = o->toDense();
  int64_t unwritten = 0, emptyRows = 0, emptyWrong = 0;
  double relErr = relativeError(gotO, refO, unwritten);
  for (int64_t r = 0; r < rows; ++r) {
    if (refLse[r] != -kInf)
      continue;
    ++emptyRows;
    for (int64_t x = 0; x < dv; ++x)
      emptyWrong += gotO[r * dv + x] != 0.0;
  }
  double lseErr = 0;
  if (lse) {
    std::vector<double> gotLse = lse->toDense();
    for (int64_t r = 0; r < rows; ++r) {
      if (std::isnan(gotLse[r]))
        ++unwritten;
      else if (refLse[r] == -kInf)
        emptyWrong += gotLse[r] != -kInf;
      else
        lseErr = std::max(lseErr, std::abs(gotLse[r] - refLse[r]) /
                                      std::max(1.0, std::abs(refLse[r])));
    }
  }
  const bool lowPrecision = !partElt.isF32() || !outElt.isF32();
  double tol = tolerance > 0 ? double(tolerance) : lowPrecision ? 1e-2 : 1e-5;
  bool pass = relErr <= tol && unwritten == 0 && emptyWrong == 0 &&
              lseErr <= 1e-5 && (emptyRows > 0 || rows <= 5);
  llvm::outs() << "@" << kernelName << " merge N=" << N << " T=" << T
               << " H=" << H << " Dv=" << dv << " " << partElt << " -> "
               << outElt << " seed=" << seed << ": empty_rows=" << emptyRows
               << " rel_err=" << llvm::format("%.3e", relErr) << " (tol " << tol
               << ")";
  if (lse)
    llvm::outs() << " lse_err=" << llvm::format("%.3e", lseErr);
  llvm::outs() << " empty_wrong=" << emptyWrong << " unwritten=" << unwritten
               << (pass ? " PASS" : " FAIL") << "\n";
  return pass ? 0 : 1;
}

} // namespace attn_run
