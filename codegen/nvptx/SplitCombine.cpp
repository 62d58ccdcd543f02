//===- SplitCombine.cpp - the merge of split-K partial states -------------===//
//
// One block per output row, one pass over the splits: each thread takes a
// column (two past Dv 128) and walks the splits kCombineUnroll at a time,
// loading each split's m_s, l_s (one broadcast load per warp) and its
// column of acc_s together, and merges them into a running (m, l, acc) in
// split order:
//   o = sum_s acc_s 2^(m_s - m) / sum_s l_s 2^(m_s - m), and the LSE.
// Every thread computes m and l itself, so the row costs one round of
// loads (per kCombineUnroll splits), with no block reduction between.
// With attention sinks the row's head's sink joins the merged state once,
// here (KernelEmitter::foldSink), before O and the LSE are written.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/SplitCombine.h"

#include "codegen/nvptx/LaunchContract.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

constexpr int64_t kCombineRowsPerBlock = 1;
/// Splits whose loads one combine thread has in flight at once: 16 took
/// speculative decode at B1 (64 splits) from 25 to 19-20 us and GQA-4 B1
/// Sk4k from 16.9 to 16.3 on an H100 against 8 (32 was no better), where
/// each round waits a whole L2 latency (bench/RESULTS.md).
constexpr int64_t kCombineUnroll = 16;

class CombineKernel : public KernelEmitter {
public:
  CombineKernel(L1Nest nest, int64_t dv, Type outElt)
      : KernelEmitter(nest), dv(dv), outElt(outElt) {}
  void build(gpu::GPUFuncOp kernel);

private:
  Value subf(Value x, Value y) { return arith::SubFOp::create(*b, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(*b, x, y); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(*b, x, y); }

  int64_t dv;
  Type outElt;
};

} // namespace

void CombineKernel::build(gpu::GPUFuncOp kernel) {
  ImplicitLocOpBuilder &kb = *b;
  // Params: workspace, [sinks], o, [lse].
  const unsigned oArg = n.loadSink ? 2 : 1;
  Value ws = kernel.getArgument(0), o = kernel.getArgument(oArg);
  Value sinks = n.loadSink ? kernel.getArgument(1) : Value();
  Value lse = n.storeLse ? kernel.getArgument(oArg + 1) : Value();
  Value tid = gpu::ThreadIdOp::create(kb, gpu::Dimension::x);
  Value row = gpu::BlockIdOp::create(kb, gpu::Dimension::x);
  Value splits = memref::DimOp::create(kb, ws, 1);
  // This thread's columns: tid, tid + kCombineThreads, ... below Dv.
  const int64_t perThread = llvm::divideCeil(dv, kCombineThreads);
  SmallVector<Value> columns, inside;
  for (int64_t k = 0; k < perThread; ++k) {
    columns.push_back(arith::AddIOp::create(kb, tid, idx(k * kCombineThreads)));
    inside.push_back((k + 1) * kCombineThreads <= dv
                         ? Value()
                         : arith::CmpIOp::create(kb, arith::CmpIPredicate::ult,
                                                 columns.back(), idx(dv)));
  }
  auto both = [&](Value a, Value c) -> Value {
    return !a ? c : !c ? a : arith::AndIOp::create(kb, a, c);
  };
  // A load of the workspace where `when` holds (always, if null), else
  // `none`: a slot past the last split, or a column past Dv, loads nothing.
  auto loadIf = [&](Value when, Value split, Value col, Value none) -> Value {
    if (!when)
      return memref::LoadOp::create(kb, ws, ValueRange{row, split, col});
    auto load = scf::IfOp::create(kb, TypeRange{kb.getF32Type()}, when,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(load.thenBlock());
    scf::YieldOp::create(kb, ValueRange{memref::LoadOp::create(
                                 kb, ws, ValueRange{row, split, col})});
    kb.setInsertionPointToStart(load.elseBlock());
    scf::YieldOp::create(kb, ValueRange{none});
    return load.getResult(0);
  };
  // The running state (m, l, acc per column) over rounds of
  // kCombineUnroll splits: a round's loads are independent, so they are
  // in flight together; the merge runs in split order, so the result does
  // not depend on the unroll, the batch or the other rows.
  SmallVector<Value> init{f32(-INFINITY), f32(0)};
  init.append(perThread, f32(0));
  Value firstSplit = idx(0);
  Value roundStep = idx(kCombineUnroll);
  auto rounds = scf::ForOp::create(kb, firstSplit, splits, roundStep, init);
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(rounds.getBody());
    Value s0 = rounds.getInductionVar();
    SmallVector<Value> ms, ls;
    SmallVector<SmallVector<Value>> accs(perThread);
    for (int64_t u = 0; u < kCombineUnroll; ++u) {
      Value s = arith::AddIOp::create(kb, s0, idx(u));
      Value split =
          arith::CmpIOp::create(kb, arith::CmpIPredicate::ult, s, splits);
      Value mColumn = idx(dv);
      ms.push_back(loadIf(split, s, mColumn, f32(-INFINITY)));
      Value lColumn = idx(dv + 1);
      ls.push_back(loadIf(split, s, lColumn, f32(0)));
      for (int64_t k = 0; k < perThread; ++k) {
        Value read = both(split, inside[k]);
        accs[k].push_back(loadIf(read, s, columns[k], f32(0)));
      }
    }
    Value mRun = rounds.getRegionIterArg(0);
    Value m = mRun;
    for (Value splitMax : ms)
      m = arith::MaxNumFOp::create(kb, m, splitMax);
    // 2^(m_s - m) with an empty row's m = -inf taken as 0: weights 0, not
    // NaN (a slot past the last split has m_s = -inf too).
    KernelF32Exprs exprs{{kb}};
    KernelSoftmaxRules rules(exprs);
    Value shift = rules.shift(m);
    Value scale = rules.weight(mRun, shift);
    Value l = mulf(rounds.getRegionIterArg(1), scale);
    SmallVector<Value> acc;
    for (int64_t k = 0; k < perThread; ++k)
      acc.push_back(mulf(rounds.getRegionIterArg(2 + k), scale));
    for (int64_t u = 0; u < kCombineUnroll; ++u) {
      Value w = rules.weight(ms[u], shift);
      l = addf(l, mulf(ls[u], w));
      for (int64_t k = 0; k < perThread; ++k)
        acc[k] = addf(acc[k], mulf(accs[k][u], w));
    }
    SmallVector<Value> next{m, l};
    next.append(acc);
    scf::YieldOp::create(kb, next);
  }
  Value m = rounds.getResult(0), l = rounds.getResult(1);
  // row = (b * Hq + head) * Sq + query, or packed token * Hq + head: the
  // indices of O's row and of its LSE.
  auto rowIndices = [&]() -> SmallVector<Value> {
    const int64_t heads = cast<MemRefType>(o.getType()).getDimSize(1);
    if (cast<MemRefType>(o.getType()).getRank() == 3) {
      Value hq = idx(heads);
      Value token = arith::DivUIOp::create(kb, row, hq);
      Value head = arith::RemUIOp::create(kb, row, hq);
      return {token, head};
    }
    Value qLen = memref::DimOp::create(kb, o, 2);
    Value hq = idx(heads);
    Value query = arith::RemUIOp::create(kb, row, qLen);
    Value bh = arith::DivUIOp::create(kb, row, qLen);
    Value head = arith::RemUIOp::create(kb, bh, hq);
    Value batch = arith::DivUIOp::create(kb, bh, hq);
    return {batch, head, query};
  };
  // The sink joins once, here, after every split's state (attn.finalize).
  SmallVector<Value> at;
  Value accScale;
  if (sinks) {
    at = rowIndices();
    SinkFold folded = foldSink(m, l, loadSink(sinks, at[1]));
    m = folded.max;
    l = folded.sum;
    accScale = folded.accScale;
  }
  Value seen = arith::CmpFOp::create(kb, arith::CmpFPredicate::OGT, l, f32(0));
  Value inverse = arith::DivFOp::create(kb, f32(1), l);
  Value inv = arith::SelectOp::create(kb, seen, inverse, f32(0));
  if (accScale)
    inv = mulf(inv, accScale);
  if (!sinks)
    at = rowIndices();
  for (int64_t k = 0; k < perThread; ++k) {
    OpBuilder::InsertionGuard g(kb);
    if (inside[k]) {
      auto write = scf::IfOp::create(kb, inside[k]);
      kb.setInsertionPointToStart(write.thenBlock());
    }
    Value x = mulf(rounds.getResult(2 + k), inv);
    if (!outElt.isF32())
      x = arith::TruncFOp::create(kb, outElt, x);
    SmallVector<Value> oAt(at);
    oAt.push_back(columns[k]);
    memref::StoreOp::create(kb, x, o, oAt);
  }
  if (lse) {
    auto first = scf::IfOp::create(
        kb, arith::CmpIOp::create(kb, arith::CmpIPredicate::eq, tid, idx(0)));
    kb.setInsertionPointToStart(first.thenBlock());
    F32Exprs e{kb};
    Value x = SoftmaxRules<F32Exprs>(e).logSumExp(m, l, seen);
    memref::StoreOp::create(kb, x, lse, at);
  }
  kb.setInsertionPointToEnd(&kernel.front());
  gpu::ReturnOp::create(kb);
}

FailureOr<Value> nvptx::appendWorkspace(func::FuncOp func, int64_t dv) {
  auto type =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic, dv + 2},
                      Float32Type::get(func.getContext()));
  if (failed(
          func.insertArgument(func.getNumArguments(), type, {}, func.getLoc())))
    return func.emitError("cannot append the workspace argument");
  return func.getArgument(func.getNumArguments() - 1);
}

void nvptx::letCombineStart(ImplicitLocOpBuilder &b) {
  NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents);
}

LogicalResult nvptx::buildCombine(const L1Nest &nest, gpu::GPUModuleOp module,
                                  StringRef name, Value ws, int sm) {
  const bool programmatic = combineOverlapsSplit(sm);
  L1Nest n = nest; // the op accessors are not const
  MLIRContext *ctx = module.getContext();
  Location loc = n.forall.getLoc();
  auto wsType = cast<MemRefType>(ws.getType());
  SmallVector<Value> operands{ws};
  if (n.loadSink)
    operands.push_back(n.loadSink.getSinks());
  operands.push_back(n.storeO.getO());
  if (n.storeLse)
    operands.push_back(n.storeLse.getLse());
  auto kernel = createKernel(module, loc, (name + "_combine").str(),
                             ValueRange(operands).getTypes(), kCombineThreads);

  CombineKernel combine(
      n, wsType.getDimSize(2) - 2,
      cast<MemRefType>(n.storeO.getO().getType()).getElementType());
  ImplicitLocOpBuilder kb(loc, ctx);
  combine.b = &kb;
  kb.setInsertionPointToStart(&kernel.front());
  // Launched while the split kernel may still run: its writes first.
  if (programmatic)
    NVVM::GriddepcontrolOp::create(kb, NVVM::GridDepActionKind::wait);
  combine.build(kernel);

  // One block per row of the workspace.
  ImplicitLocOpBuilder hb(loc, n.forall);
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(hb, v); };
  Value rowsTotal = memref::DimOp::create(hb, ws, 0);
  Value blocks =
      arith::CeilDivSIOp::create(hb, rowsTotal, cst(kCombineRowsPerBlock));
  gpu::KernelDim3 grid{blocks, cst(1), cst(1)};
  gpu::KernelDim3 block{cst(kCombineThreads), cst(1), cst(1)};
  // No shared memory: every thread merges the splits itself.
  const int64_t smemBytes = 0;
  Value smem = arith::ConstantOp::create(hb, hb.getI32IntegerAttr(smemBytes));
  auto launch =
      gpu::LaunchFuncOp::create(hb, kernel, grid, block, smem, operands);
  return setLaunchContract(launch,
                           decodeCombineLaunch(n, kCombineThreads, smemBytes,
                                               kCombineRowsPerBlock, wsType,
                                               programmatic),
                           n, ws);
}
