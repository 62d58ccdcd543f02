//===- SplitCombine.cpp - the merge of split-K partial states -------------===//
//
// One block per output row: the threads share the splits for m and l and
// take one column each for the accumulator, so the loads over the splits
// are independent and coalesced:
//   o = sum_s acc_s 2^(m_s - m) / sum_s l_s 2^(m_s - m), and the LSE.
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
  Value blockReduce(Value x, Value tid, Value scratch, bool max);
  Value subf(Value x, Value y) { return arith::SubFOp::create(*b, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(*b, x, y); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(*b, x, y); }

  int64_t dv;
  Type outElt;
};

} // namespace

/// Block-wide max or sum of one f32 per thread: shuffles within each warp,
/// then the warps' results through `scratch` (one slot per warp).
Value CombineKernel::blockReduce(Value x, Value tid, Value scratch,
                                 bool max) {
  ImplicitLocOpBuilder &kb = *b;
  auto combine = [&](Value a, Value c) -> Value {
    return max ? arith::MaxNumFOp::create(kb, a, c).getResult() : addf(a, c);
  };
  for (int64_t off = kWarp / 2; off >= 1; off /= 2)
    x = combine(x, gpu::ShuffleOp::create(kb, x, off, kWarp,
                                          gpu::ShuffleMode::XOR)
                       .getShuffleResult());
  Value warp = arith::DivUIOp::create(kb, tid, idx(kWarp));
  Value lane = arith::RemUIOp::create(kb, tid, idx(kWarp));
  Value firstLane =
      arith::CmpIOp::create(kb, arith::CmpIPredicate::eq, lane, idx(0));
  auto first = scf::IfOp::create(kb, firstLane);
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(first.thenBlock());
    memref::StoreOp::create(kb, x, scratch, ValueRange{warp});
  }
  gpu::BarrierOp::create(kb);
  Value result = memref::LoadOp::create(kb, scratch, ValueRange{idx(0)});
  for (int64_t w = 1; w < kCombineThreads / kWarp; ++w)
    result = combine(result,
                     memref::LoadOp::create(kb, scratch, ValueRange{idx(w)}));
  // Every thread has read the slots before they are written again.
  gpu::BarrierOp::create(kb);
  return result;
}

void CombineKernel::build(gpu::GPUFuncOp kernel) {
  // One block per output row: the threads share the splits for m and l
  // and take one column each for the accumulator, so the loads over the
  // splits are independent and coalesced.
  ImplicitLocOpBuilder &kb = *b;
  MLIRContext *ctx = kb.getContext();
  Value ws = kernel.getArgument(0), o = kernel.getArgument(1);
  Value lse = n.storeLse ? kernel.getArgument(2) : Value();
  Value tid = gpu::ThreadIdOp::create(kb, gpu::Dimension::x);
  Value row = gpu::BlockIdOp::create(kb, gpu::Dimension::x);
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      kb, MemRefType::get({ShapedType::kDynamic}, kb.getI8Type(),
                          MemRefLayoutAttrInterface{}, wg));
  Value scratch = memref::ViewOp::create(
      kb,
      MemRefType::get({kCombineThreads / kWarp}, kb.getF32Type(),
                      MemRefLayoutAttrInterface{}, wg),
      smem, idx(0), ValueRange{});
  Value splits = memref::DimOp::create(kb, ws, 1);
  Value stride = idx(kCombineThreads);
  Value noMax = f32(-INFINITY);
  auto maxLoop =
      scf::ForOp::create(kb, tid, splits, stride, ValueRange{noMax});
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(maxLoop.getBody());
    Value ms = memref::LoadOp::create(
        kb, ws, ValueRange{row, maxLoop.getInductionVar(), idx(dv)});
    scf::YieldOp::create(kb, ValueRange{arith::MaxNumFOp::create(
                                 kb, maxLoop.getRegionIterArg(0), ms)});
  }
  Value m = blockReduce(maxLoop.getResult(0), tid, scratch, /*max=*/true);
  Value shift = safeMax(m);
  // Split s's weight in the merge, 2^(m_s - m) (m_s is the same address for
  // every thread: one broadcast load).
  auto splitWeight = [&](Value s) {
    return exp2(subf(
        memref::LoadOp::create(kb, ws, ValueRange{row, s, idx(dv)}), shift));
  };
  Value sumStride = idx(kCombineThreads);
  Value noSum = f32(0);
  auto sumLoop =
      scf::ForOp::create(kb, tid, splits, sumStride, ValueRange{noSum});
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(sumLoop.getBody());
    Value s = sumLoop.getInductionVar();
    Value w = splitWeight(s);
    Value ls = memref::LoadOp::create(kb, ws, ValueRange{row, s, idx(dv + 1)});
    scf::YieldOp::create(kb,
                         ValueRange{addf(sumLoop.getRegionIterArg(0), mulf(ls, w))});
  }
  Value l = blockReduce(sumLoop.getResult(0), tid, scratch, /*max=*/false);
  Value seen = arith::CmpFOp::create(kb, arith::CmpFPredicate::OGT, l, f32(0));
  Value inverse = arith::DivFOp::create(kb, f32(1), l);
  Value inv = arith::SelectOp::create(kb, seen, inverse, f32(0));
  // row = (b * Hq + head) * Sq + query, or packed token * Hq + head: the
  // indices of O's row and of its LSE.
  const int64_t heads = cast<MemRefType>(o.getType()).getDimSize(1);
  SmallVector<Value> at;
  if (cast<MemRefType>(o.getType()).getRank() == 3) {
    Value hq = idx(heads);
    at = {arith::DivUIOp::create(kb, row, hq),
          arith::RemUIOp::create(kb, row, hq)};
  } else {
    Value qLen = memref::DimOp::create(kb, o, 2);
    Value hq = idx(heads);
    Value query = arith::RemUIOp::create(kb, row, qLen);
    Value bh = arith::DivUIOp::create(kb, row, qLen);
    Value head = arith::RemUIOp::create(kb, bh, hq);
    Value batch = arith::DivUIOp::create(kb, bh, hq);
    at = {batch, head, query};
  }
  // Each thread sums its column over the splits kCombineUnroll at a time:
  // the loads of a round are independent, so they are in flight together
  // (a loop of one load per trip waits a whole L2 latency per split). A
  // slot past the last split loads nothing and weighs 0, so few splits
  // (one, at large batches) cost no extra traffic; the sum still runs in
  // split order, so the result does not depend on the unroll.
  Value columns = idx(dv), colStride = idx(kCombineThreads);
  auto loadIf = [&](Value inside, Value split, Value col, Value none) {
    auto load = scf::IfOp::create(kb, TypeRange{kb.getF32Type()}, inside,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(load.thenBlock());
    scf::YieldOp::create(kb, ValueRange{memref::LoadOp::create(
                                 kb, ws, ValueRange{row, split, col})});
    kb.setInsertionPointToStart(load.elseBlock());
    scf::YieldOp::create(kb, ValueRange{none});
    return load.getResult(0);
  };
  auto cols = scf::ForOp::create(kb, tid, columns, colStride);
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(cols.getBody());
    Value c = cols.getInductionVar();
    Value accFrom = idx(0), accBy = idx(kCombineUnroll);
    Value noAcc = f32(0);
    auto accLoop =
        scf::ForOp::create(kb, accFrom, splits, accBy, ValueRange{noAcc});
    {
      OpBuilder::InsertionGuard g2(kb);
      kb.setInsertionPointToStart(accLoop.getBody());
      Value s0 = accLoop.getInductionVar();
      SmallVector<Value> inRange, accs, maxes;
      for (int64_t u = 0; u < kCombineUnroll; ++u) {
        Value s = arith::AddIOp::create(kb, s0, idx(u));
        inRange.push_back(
            arith::CmpIOp::create(kb, arith::CmpIPredicate::ult, s, splits));
        accs.push_back(loadIf(inRange.back(), s, c, f32(0)));
        maxes.push_back(loadIf(inRange.back(), s, idx(dv), f32(-INFINITY)));
      }
      Value acc = accLoop.getRegionIterArg(0);
      for (int64_t u = 0; u < kCombineUnroll; ++u) {
        Value w = arith::SelectOp::create(
            kb, inRange[u], exp2(subf(maxes[u], shift)), f32(0));
        acc = addf(acc, mulf(accs[u], w));
      }
      scf::YieldOp::create(kb, ValueRange{acc});
    }
    Value x = mulf(accLoop.getResult(0), inv);
    if (!outElt.isF32())
      x = arith::TruncFOp::create(kb, outElt, x);
    SmallVector<Value> oAt(at);
    oAt.push_back(c);
    memref::StoreOp::create(kb, x, o, oAt);
  }
  if (lse) {
    auto first = scf::IfOp::create(
        kb, arith::CmpIOp::create(kb, arith::CmpIPredicate::eq, tid, idx(0)));
    kb.setInsertionPointToStart(first.thenBlock());
    Value log2Sum = addf(m, math::Log2Op::create(kb, l));
    Value x = mulf(log2Sum, f32(kLn2));
    x = arith::SelectOp::create(kb, seen, x, f32(-INFINITY));
    memref::StoreOp::create(kb, x, lse, at);
  }
  kb.setInsertionPointToEnd(&kernel.front());
  gpu::ReturnOp::create(kb);
}


FailureOr<Value> nvptx::appendWorkspace(func::FuncOp func, int64_t dv) {
  auto type = MemRefType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic, dv + 2},
      Float32Type::get(func.getContext()));
  if (failed(func.insertArgument(func.getNumArguments(), type, {},
                                 func.getLoc())))
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
  SmallVector<Value> operands{ws, n.storeO.getO()};
  if (n.storeLse)
    operands.push_back(n.storeLse.getLse());
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto type = FunctionType::get(ctx, ValueRange(operands).getTypes(), {});
  auto kernel = gpu::GPUFuncOp::create(mb, loc, (name + "_combine").str(),
                                       type);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  kernel.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {int32_t(kCombineThreads), 1, 1}));
  SymbolTable(module).insert(kernel);

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
  Value blocks = arith::CeilDivSIOp::create(hb, rowsTotal,
                                            cst(kCombineRowsPerBlock));
  gpu::KernelDim3 grid{blocks, cst(1), cst(1)};
  gpu::KernelDim3 block{cst(kCombineThreads), cst(1), cst(1)};
  // Its shared memory: one f32 per warp (the reductions' scratch).
  const int64_t smemBytes = kCombineThreads / kWarp * 4;
  Value smem = arith::ConstantOp::create(hb, hb.getI32IntegerAttr(smemBytes));
  auto launch =
      gpu::LaunchFuncOp::create(hb, kernel, grid, block, smem, operands);
  setLaunchContract(launch, decodeCombineLaunch(n, kCombineThreads, smemBytes,
                                                kCombineRowsPerBlock, wsType,
                                                programmatic));
  return success();
}
