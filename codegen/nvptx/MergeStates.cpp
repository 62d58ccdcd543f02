//===- MergeStates.cpp - attn.merge_states's kernel -----------------------===//
//
// A memory-bound merge: each row (t, h) reads its N parts' LSEs and value
// rows once and writes O (and the LSE) once.
//
//   grid (ceildiv(T * H, R)), `threads` per block, R rows a block: a row's
//     Dv values are cut into pieces of `vec` elements (16 bytes of the
//     wider of the parts' and O's element types), one or two pieces a
//     thread, so R = threads / (its threads a row) rows share a block;
//   thread: M = max_n L_n, then acc = sum_n w_n o_n[piece] and S = sum_n
//     w_n with w_n = 2^((L_n - M) log2 e), 0 for an empty part (whose O
//     is not used, NaN or not); o[piece] = acc / S (0 for an empty row);
//     the row's first thread writes the LSE M + ln 2 log2 S (-inf).
//   A static N of at most kUnrollParts is unrolled, every load issued
//   before the arithmetic; a larger or dynamic N loops, kLoopParts parts
//   a trip (loads first), rescaling its running (M, S, acc) as M grows.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/RegisterMath.h"
#include "codegen/nvptx/MergeStates.h"

#include "codegen/nvptx/KernelCommon.h"
#include "codegen/nvptx/LaunchContract.h"
#include "dialect/AttnSemantics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

/// Threads a block: 128 rather than 256 gives a merge of few rows (a
/// cascade decode's 2048) blocks on twice the multiprocessors.
constexpr int64_t kThreads = 128;
/// Parts unrolled when N is static: vLLM's merge of prefix and suffix has
/// two, a cascade a few more.
constexpr int64_t kUnrollParts = 8;
/// Parts a trip of the loop over a dynamic N (each part's pieces two
/// 16-byte loads): more parts a trip cost registers, and so occupancy,
/// faster than they add bytes in flight.
constexpr int64_t kLoopParts = 2;

class MergeKernel {
public:
  explicit MergeKernel(MergeStatesOp op) : op(op) {
    partElt = cast<MemRefType>(op.getOParts().getType()).getElementType();
    outElt = cast<MemRefType>(op.getO().getType()).getElementType();
    dv = op.getValueHeadDim();
    int64_t widest = std::max(partElt.getIntOrFloatBitWidth(),
                              outElt.getIntOrFloatBitWidth()) /
                     8;
    vec = 16 / widest;
    while (vec > 1 && dv % vec)
      vec /= 2;
    // Two pieces a thread where a row has at least 8: twice the bytes in
    // flight for the same LSE loads and index arithmetic.
    const int64_t pieces = dv / vec;
    perThread = pieces % 2 == 0 && pieces >= 8 ? 2 : 1;
    perRow = pieces / perThread;
    threads = std::max<int64_t>(kThreads, llvm::alignTo(perRow, 32));
    rowsPerBlock = threads / perRow;
    int64_t n = cast<MemRefType>(op.getOParts().getType()).getDimSize(0);
    unrolled = ShapedType::isDynamic(n) || n > kUnrollParts ? 0 : n;
  }

  LogicalResult build(gpu::GPUModuleOp module, StringRef name);

private:
  /// The thread's row of (t, h) and its pieces from column `col` on.
  void buildRow(ImplicitLocOpBuilder &b, Value t, Value h, Value col);
  llvm::Align alignOf(Type elt) const {
    return llvm::Align(vec * (elt.getIntOrFloatBitWidth() / 8));
  }

  MergeStatesOp op;
  Type partElt, outElt;
  /// perRow threads a row, each taking perThread pieces of vec elements,
  /// `perRow * vec` elements apart (a warp's loads stay contiguous).
  int64_t dv = 0, vec = 1, perThread = 1, perRow = 1, threads = kThreads,
          rowsPerBlock = 1, unrolled = 0;
  Value oParts, lseParts, o, lse; // the kernel's arguments
};

LogicalResult MergeKernel::build(gpu::GPUModuleOp module, StringRef name) {
  MLIRContext *ctx = module.getContext();
  Location loc = op.getLoc();
  // The kernel's operands, in the contract's order (mergeLaunch).
  SmallVector<Value> operands{op.getOParts(), op.getLseParts(), op.getO()};
  if (Value l = op.getLse())
    operands.push_back(l);

  auto kernel = nvptx::createKernel(module, loc, name,
                                    ValueRange(operands).getTypes(), threads);
  oParts = kernel.getArgument(0);
  lseParts = kernel.getArgument(1);
  o = kernel.getArgument(2);
  lse = op.getLse() ? kernel.getArgument(3) : Value();

  ImplicitLocOpBuilder b(loc, ctx);
  b.setInsertionPointToStart(&kernel.front());
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  Value block = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value rowInBlock = arith::DivUIOp::create(b, tid, idx(perRow));
  Value piece = arith::RemUIOp::create(b, tid, idx(perRow));
  Value row = arith::AddIOp::create(
      b, arith::MulIOp::create(b, block, idx(rowsPerBlock)), rowInBlock);
  Value heads = idx(op.getNumHeads());
  Value rows = arith::MulIOp::create(b, memref::DimOp::create(b, oParts, 1),
                                     heads);
  Value inBlock = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                        rowInBlock, idx(rowsPerBlock));
  Value inRows =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, rows);
  auto guard =
      scf::IfOp::create(b, arith::AndIOp::create(b, inBlock, inRows));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(guard.thenBlock());
    Value t = arith::DivUIOp::create(b, row, heads);
    Value h = arith::RemUIOp::create(b, row, heads);
    Value col = arith::MulIOp::create(b, piece, idx(vec));
    buildRow(b, t, h, col);
  }
  gpu::ReturnOp::create(b);

  // Host: the launch replaces the op.
  ImplicitLocOpBuilder hb(loc, op);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(hb, v);
  };
  Value hostTokens = memref::DimOp::create(hb, op.getOParts(), 1);
  Value hostRows =
      arith::MulIOp::create(hb, hostTokens, cst(op.getNumHeads()));
  Value blocks = arith::CeilDivUIOp::create(hb, hostRows, cst(rowsPerBlock));
  Value one = cst(1);
  nvptx::replaceWithLaunch(op, hb, kernel, {blocks, one, one}, threads,
                           operands, mergeLaunch(op, threads, rowsPerBlock));
  return success();
}

void MergeKernel::buildRow(ImplicitLocOpBuilder &b, Value t, Value h,
                           Value col) {
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  auto f32Vec = VectorType::get({vec}, b.getF32Type());
  auto partVec = VectorType::get({vec}, partElt);
  auto outVec = VectorType::get({vec}, outElt);
  Value negInf = f32Constant(b, -INFINITY), zero = f32Constant(b, 0.0);
  Value zeroVec = arith::ConstantOp::create(
      b, f32Vec, DenseElementsAttr::get(f32Vec, b.getF32FloatAttr(0.0)));
  SmallVector<Value> cols{col};
  for (int64_t k = 1; k < perThread; ++k)
    cols.push_back(arith::AddIOp::create(b, col, idx(k * perRow * vec)));
  using Pieces = SmallVector<Value, 2>;

  auto loadLse = [&](Value n) -> Value {
    return memref::LoadOp::create(b, lseParts, ValueRange{n, t, h});
  };
  // The pieces as loaded: widened to f32 only where they are used, so
  // that 16-bit pieces in flight take half the registers.
  auto loadPieces = [&](Value n) {
    Pieces xs;
    for (Value c : cols)
      xs.push_back(vector::LoadOp::create(b, partVec, oParts,
                                          ValueRange{n, t, h, c},
                                          /*nontemporal=*/false,
                                          alignOf(partElt)));
    return xs;
  };
  auto widen = [&](Value x) -> Value {
    return partElt.isF32() ? x : Value(arith::ExtFOp::create(b, f32Vec, x));
  };
  // Part n, if it exists (n < N): its LSE and pieces, else -inf and zeros,
  // with no load issued.
  auto loadIfPart = [&](Value n, Value parts) {
    Value inRange =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, n, parts);
    SmallVector<Type> types{b.getF32Type()};
    types.append(perThread, partVec);
    auto guard = scf::IfOp::create(b, types, inRange, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(guard.thenBlock());
      SmallVector<Value> got{loadLse(n)};
      got.append(loadPieces(n));
      scf::YieldOp::create(b, got);
      b.setInsertionPointToStart(guard.elseBlock());
      Value zeroPart = arith::ConstantOp::create(
          b, partVec, DenseElementsAttr::get(partVec, b.getZeroAttr(partElt)));
      SmallVector<Value> none{negInf};
      none.append(perThread, zeroPart);
      scf::YieldOp::create(b, none);
    }
    return std::pair<Value, Pieces>{
        guard.getResult(0), Pieces(guard.getResults().drop_front())};
  };
  // Part n's (weight, weighted pieces) added to (sum, acc): an empty part
  // (L = -inf) adds nothing, not even its O's NaNs.
  auto accumulate = [&](Value l, const Pieces &xs, Value m, Value &sum,
                        Pieces &acc) {
    Value shifted = arith::SubFOp::create(b, l, m);
    Value d = arith::MulFOp::create(b, shifted, f32Constant(b, kLog2E));
    Value empty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, negInf);
    Value w = arith::SelectOp::create(b, empty, zero, fastExp2(b, d));
    Value wv = vector::BroadcastOp::create(b, f32Vec, w);
    sum = arith::AddFOp::create(b, sum, w);
    for (auto [a, x] : llvm::zip(acc, xs)) {
      Value wx = arith::MulFOp::create(b, wv, widen(x));
      a = arith::AddFOp::create(b, a,
                                arith::SelectOp::create(b, empty, zeroVec, wx));
    }
  };
  // M with -inf (no part seen yet) as 0, so that no -inf - -inf is formed.
  auto safeMax = [&](Value m) -> Value {
    return arith::SelectOp::create(
        b, arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, m, negInf),
        zero, m);
  };

  Value m, sum = zero;
  Pieces acc(perThread, zeroVec);
  if (unrolled) {
    // Every load first: N LSEs and N pieces in flight together.
    SmallVector<Value> ls;
    SmallVector<Pieces> xs;
    for (int64_t n = 0; n < unrolled; ++n)
      ls.push_back(loadLse(idx(n)));
    for (int64_t n = 0; n < unrolled; ++n)
      xs.push_back(loadPieces(idx(n)));
    m = negInf;
    for (Value l : ls)
      m = arith::MaximumFOp::create(b, m, l);
    Value safe = safeMax(m);
    for (int64_t n = 0; n < unrolled; ++n)
      accumulate(ls[n], xs[n], safe, sum, acc);
  } else {
    // One pass, kLoopParts parts a trip with every load first, the state
    // (M, S, acc) rescaled as M grows (online softmax); parts past N
    // load nothing and count as empty.
    Value parts = memref::DimOp::create(b, oParts, 0);
    SmallVector<Value> init{negInf, zero};
    init.append(acc.begin(), acc.end());
    Value firstPart = idx(0);
    Value partStep = idx(kLoopParts);
    auto loop = scf::ForOp::create(b, firstPart, parts, partStep, init);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value first = loop.getInductionVar();
      SmallVector<Value> ls;
      SmallVector<Pieces> xs;
      for (int64_t i = 0; i < kLoopParts; ++i) {
        auto [l, x] =
            loadIfPart(arith::AddIOp::create(b, first, idx(i)), parts);
        ls.push_back(l);
        xs.push_back(x);
      }
      Value mOld = loop.getRegionIterArg(0);
      Value mNew = mOld;
      for (Value l : ls)
        mNew = arith::MaximumFOp::create(b, mNew, l);
      Value safe = safeMax(mNew);
      // 2^((M_old - M_new) log2 e): 0 while nothing was seen (M_old =
      // -inf), 1 while M stays.
      Value drop = arith::SubFOp::create(b, mOld, safe);
      Value rescale =
          fastExp2(b, arith::MulFOp::create(b, drop, f32Constant(b, kLog2E)));
      Value rescaleVec = vector::BroadcastOp::create(b, f32Vec, rescale);
      Value s = arith::MulFOp::create(b, loop.getRegionIterArg(1), rescale);
      Pieces a;
      for (int64_t k = 0; k < perThread; ++k)
        a.push_back(arith::MulFOp::create(b, loop.getRegionIterArg(2 + k),
                                          rescaleVec));
      for (int64_t i = 0; i < kLoopParts; ++i)
        accumulate(ls[i], xs[i], safe, s, a);
      SmallVector<Value> next{mNew, s};
      next.append(a.begin(), a.end());
      scf::YieldOp::create(b, next);
    }
    m = loop.getResult(0);
    sum = loop.getResult(1);
    for (int64_t k = 0; k < perThread; ++k)
      acc[k] = loop.getResult(2 + k);
  }
  // An empty row: S = 0, so 1 / S is inf; the select makes O exactly 0.
  Value seen = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, sum, zero);
  Value inv = arith::DivFOp::create(b, f32Constant(b, 1.0), sum);
  inv = arith::SelectOp::create(b, seen, inv, zero);
  Value invVec = vector::BroadcastOp::create(b, f32Vec, inv);
  for (auto [a, c] : llvm::zip(acc, cols)) {
    Value out = arith::MulFOp::create(b, a, invVec);
    if (!outElt.isF32())
      out = arith::TruncFOp::create(b, outVec, out);
    vector::StoreOp::create(b, out, o, ValueRange{t, h, c},
                            /*nontemporal=*/false, alignOf(outElt));
  }
  if (lse) {
    auto first = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, col, idx(0)));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(first.thenBlock());
    F32Exprs e{b};
    Value total = SoftmaxRules<F32Exprs>(e).mergedLogSumExp(m, sum, seen);
    memref::StoreOp::create(b, total, lse, ValueRange{t, h});
  }
}

} // namespace

LogicalResult mlir::attn::nvptx::buildMergeStatesKernel(gpu::GPUModuleOp module,
                                                        MergeStatesOp op,
                                                        StringRef name) {
  return MergeKernel(op).build(module, name);
}
