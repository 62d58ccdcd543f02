//===- AttnNVToNVVM.cpp - attn-nv-to-nvvm: expand the tile instructions ---===//
//
// One pattern per attn_nv op, applied in one walk (no folding, no DCE), so
// each op becomes, in its place, the instructions the tiers used to build
// inline: nvvm.mma.sync pairs on unpacked registers, nvgpu.ldmatrix with
// its halves packed into i32, wgmma.mma_async as inline PTX on a struct of
// f32 (LLVM 22's nvvm.wgmma.mma_async takes A only through a descriptor,
// and P V needs it in registers), and the empty asm that pins registers.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/AttnNVDialect.h"
#include "codegen/nvptx/KernelCommon.h"
#include "codegen/nvptx/Passes.h"
#include "codegen/nvptx/RegisterMath.h"
#include "codegen/nvptx/TileMMA.h"
#include "codegen/nvptx/WarpgroupMMA.h"
#include "dialect/AttnMods.h"
#include "dialect/AttnSemantics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>
#include <string>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNNVTONVVM
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

/// Descriptor bits 62-63: the 128-byte swizzle.
constexpr uint64_t kSwizzle128 = uint64_t(1) << 62;

Value idx(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

VectorType i32Vec(ImplicitLocOpBuilder &b, int64_t n) {
  return VectorType::get({n}, b.getI32Type());
}

Value lessThan(ImplicitLocOpBuilder &b, Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
}

SmallVector<Value> elements(ImplicitLocOpBuilder &b, Value v, int64_t n) {
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{i}));
  return out;
}

/// One attn_nv op's expansion: `expand` builds its instructions at the op
/// and returns what replaces its results (nothing for an op without).
template <typename Op>
struct Expansion : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  virtual SmallVector<Value> expand(Op op, ImplicitLocOpBuilder &b) const = 0;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const final {
    rewriter.setInsertionPoint(op);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    SmallVector<Value> replacement = expand(op, b);
    rewriter.replaceOp(op, replacement);
    return success();
  }
};

/// The m16n8k16 layout (PTX ISA, "Matrix Fragments for mma.m16n8k16"):
/// with g = lane / 4 and t = lane % 4,
///   A (16x16): register i holds A[g + 8 (i & 1)][2t + 8 (i >> 1) + {0, 1}]
///   B (16x8):  register j holds B[2t + 8j + {0, 1}][g]
///   C (16x8):  c0, c1 = C[g][2t + {0, 1}], c2, c3 = C[g + 8][2t + {0, 1}]
/// A 16x16 tile is two 16x8 halves side by side: B half h in registers
/// 2h, 2h + 1, C half h in elements 4h..4h+3.
struct MmaTileLowering : Expansion<nv::MmaTileOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::MmaTileOp op,
                            ImplicitLocOpBuilder &b) const override {
    Type elt = op.getInputs();
    SmallVector<Value> aRegs = elements(b, op.getA(), 4);
    SmallVector<Value> bRegs = elements(b, op.getB(), 4);
    SmallVector<Value> cRegs = elements(b, op.getC(), 8), out;
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    NVVM::MMATypes type =
        elt.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    // nvvm.mma.sync takes f16 pairs as vector<2xf16>, bf16 pairs as i32.
    if (elt.isF16()) {
      auto asPair = [&](Value reg) -> Value {
        Value one = vector::FromElementsOp::create(b, i32Vec(b, 1), reg);
        return vector::BitCastOp::create(b, VectorType::get({2}, elt), one);
      };
      for (Value &reg : aRegs)
        reg = asPair(reg);
      for (Value &reg : bRegs)
        reg = asPair(reg);
    }
    for (int64_t h = 0; h < 2; ++h) {
      auto mma = NVVM::MmaOp::create(
          b, resultType, aRegs, ArrayRef<Value>(bRegs).slice(2 * h, 2),
          ArrayRef<Value>(cRegs).slice(4 * h, 4), ArrayRef<int64_t>{16, 8, 16},
          std::nullopt, std::nullopt,
          std::array<NVVM::MMATypes, 2>{type, type},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      for (int64_t e = 0; e < 4; ++e)
        out.push_back(LLVM::ExtractValueOp::create(b, mma, e));
    }
    return {vector::FromElementsOp::create(b, VectorType::get({8}, f32), out)};
  }
};

/// nvgpu.ldmatrix gives vector<4x2xT>: matrix i's two elements, packed
/// into register i.
struct LdMatrixLowering : Expansion<nv::LdMatrixOp> {
  using Expansion::Expansion;
  /// The lane's row and column: the tile's plus the lane's offsets, the
  /// column swizzled. Tiles start at multiples of 8 rows, so the swizzle
  /// is an XOR with the lane's mask; a constant column 16 j splits into
  /// its 64-element group (an address immediate) and 16 (j % 4) + the
  /// lane's column < 64, whose XOR takes four values per lane and
  /// operand: a few loop-invariant registers, not one per column.
  static SmallVector<Value> laneAddress(nv::LdMatrixOp op,
                                        ImplicitLocOpBuilder &b) {
    Value row = op.getIndices()[0], col = op.getIndices()[1];
    if (op.getLane().empty())
      return {row, col};
    Value laneRow = op.getLane()[0], laneCol = op.getLane()[1];
    Value r = arith::AddIOp::create(b, row, laneRow);
    Value mask = op.getSwizzle();
    if (!mask)
      return {r, arith::AddIOp::create(b, col, laneCol)};
    if (std::optional<int64_t> c0 = getConstantIntValue(col)) {
      Value inChunk = arith::AddIOp::create(b, idx(b, *c0 % 64), laneCol);
      Value permuted = arith::XOrIOp::create(b, inChunk, mask);
      return {r, arith::AddIOp::create(b, permuted, idx(b, *c0 - *c0 % 64))};
    }
    Value c = arith::AddIOp::create(b, col, laneCol);
    return {r, arith::XOrIOp::create(b, c, mask)};
  }
  SmallVector<Value> expand(nv::LdMatrixOp op,
                            ImplicitLocOpBuilder &b) const override {
    Type elt = op.getSrc().getType().getElementType();
    Value tiles = nvgpu::LdMatrixOp::create(b, VectorType::get({4, 2}, elt),
                                            op.getSrc(), laneAddress(op, b),
                                            op.getTranspose(), 4);
    SmallVector<Value> regs;
    for (int64_t i = 0; i < 4; ++i)
      regs.push_back(
          packPair(b, vector::ExtractOp::create(b, tiles, ArrayRef<int64_t>{i})));
    return {vector::FromElementsOp::create(b, i32Vec(b, 4), regs)};
  }
};

/// Element i of score tile t of a register tile op: its key,
/// key_base + (lane_column + (16 t + column offset)), in mma.sync's C layout.
Value elementKey(ImplicitLocOpBuilder &b, Value keyBase, Value laneColumn,
                 int64_t t, int64_t i) {
  Value offset = idx(b, 16 * t + MmaSyncTileMMA::columnOffset(i));
  Value column = arith::AddIOp::create(b, laneColumn, offset);
  return arith::AddIOp::create(b, keyBase, column);
}

/// A mod region of a register tile op inlined at flat row `row` and key
/// `key`: its arguments `leading` (a score_mod's score), the positions
/// (modPositionArgs) and the op's captures.
Value inlineModAt(ImplicitLocOpBuilder &b, Region &mod, ValueRange leading,
                  int64_t group, std::pair<bool, bool> guards, Value batch,
                  Value kvHead, Value row, Value key, Value qLen, Value kvLen,
                  ValueRange captures) {
  SmallVector<Value> args(leading);
  args.append(modPositionArgs(b, group, guards, batch, kvHead, row, key, qLen,
                              kvLen));
  args.append(captures.begin(), captures.end());
  return inlineMod(b, mod, args);
}

/// Each element's query and key from mma.sync's C layout, its visibility
/// from MaskRules (AttnSemantics.h), -inf where hidden.
struct MaskTileLowering : Expansion<nv::MaskTileOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::MaskTileOp op,
                            ImplicitLocOpBuilder &b) const override {
    using Layout = MmaSyncTileMMA;
    const int64_t group = op.getGroup();
    Value rows[2], queries[2];
    rows[0] = op.getRow();
    queries[0] = arith::DivUIOp::create(b, rows[0], idx(b, group));
    rows[1] = arith::AddIOp::create(b, rows[0], idx(b, 8));
    queries[1] = arith::DivUIOp::create(b, rows[1], idx(b, group));
    IndexExprs exprs{b};
    MaskRules<IndexExprs> rules(exprs, op.getMask());
    Region &mod = op.getMaskMod();
    std::pair<bool, bool> guards;
    if (!mod.empty())
      guards = modPositionGuards(mod, op.getCaptures().size());
    SmallVector<Value> masked;
    for (auto [t, tile] : llvm::enumerate(op.getScores())) {
      SmallVector<Value> e;
      for (int64_t i = 0; i < 8; ++i) {
        Value key =
            elementKey(b, op.getKeyBase(), op.getLaneColumn(), t, i);
        Value seen = rules.visible(key, queries[Layout::rowHalf(i)],
                                   op.getQLen(), op.getKvLen());
        if (!mod.empty()) {
          Value modSeen = inlineModAt(
              b, mod, {}, group, guards, op.getBatch(), op.getKvHead(),
              rows[Layout::rowHalf(i)], key, op.getQLen(), op.getKvLen(),
              op.getCaptures());
          seen = arith::AndIOp::create(b, seen, modSeen);
        }
        Value score =
            vector::ExtractOp::create(b, tile, ArrayRef<int64_t>{i});
        Value hidden = f32Constant(b, -INFINITY);
        e.push_back(arith::SelectOp::create(b, seen, score, hidden));
      }
      masked.push_back(vector::FromElementsOp::create(b, tile.getType(), e));
    }
    return masked;
  }
};

/// Each element's flat row and key from mma.sync's C layout, its dot
/// transformed (scale, soft-cap) and given to the score_mod region, the
/// result in base-2 units.
struct ScoreTileLowering : Expansion<nv::ScoreTileOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::ScoreTileOp op,
                            ImplicitLocOpBuilder &b) const override {
    using Layout = MmaSyncTileMMA;
    ScoreTransform transform{op.getScale().convertToDouble(), std::nullopt};
    if (std::optional<APFloat> cap = op.getSoftcap())
      transform.softcap = cap->convertToDouble();
    Region &mod = op.getScoreMod();
    std::pair<bool, bool> guards =
        modPositionGuards(mod, op.getCaptures().size());
    SmallVector<Value> scores;
    for (auto [t, tile] : llvm::enumerate(op.getDots())) {
      SmallVector<Value> e;
      for (int64_t i = 0; i < 8; ++i) {
        Value dot = vector::ExtractOp::create(b, tile, ArrayRef<int64_t>{i});
        // Each op in a statement of its own, innermost sum first.
        Value rowOffset =
            idx(b, op.getMOffset() + 8 * Layout::rowHalf(i));
        Value inWarp = arith::AddIOp::create(b, op.getLaneRow(), rowOffset);
        Value inBlock = arith::AddIOp::create(b, op.getWarpRow(), inWarp);
        Value row = arith::AddIOp::create(b, op.getRow0(), inBlock);
        Value key =
            elementKey(b, op.getKeyBase(), op.getLaneColumn(), t, i);
        Value natural = transformDot(b, transform, dot, 1.0);
        Value s = inlineModAt(b, mod, natural, op.getGroup(), guards,
                              op.getBatch(), op.getKvHead(), row, key,
                              op.getQLen(), op.getKvLen(), op.getCaptures());
        Value unit = f32Constant(b, kLog2E);
        e.push_back(arith::MulFOp::create(b, s, unit));
      }
      scores.push_back(vector::FromElementsOp::create(b, tile.getType(), e));
    }
    return scores;
  }
};

/// The step in mma.sync's accumulator layout: element e of a tile is in
/// row half rowHalf(e) (top or bottom); the row's maximum and, at the end,
/// its sum span the quad's four lanes.
struct OnlineSoftmaxLowering : Expansion<nv::OnlineSoftmaxOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::OnlineSoftmaxOp op,
                            ImplicitLocOpBuilder &b) const override {
    using Layout = MmaSyncTileMMA;
    std::optional<double> c;
    if (FloatAttr scale = op.getScaleAttr())
      c = scale.getValueAsDouble();
    KernelF32Exprs exprs{{b}};
    KernelSoftmaxRules rules(exprs);
    Value state[4] = {op.getMTop(), op.getMBottom(), op.getLTop(),
                      op.getLBottom()};
    SmallVector<SmallVector<Value>> scores;
    SmallVector<Value> rowValues[2];
    for (Value tile : op.getScores()) {
      SmallVector<Value> elements;
      for (int64_t i = 0; i < 8; ++i) {
        elements.push_back(
            vector::ExtractOp::create(b, tile, ArrayRef<int64_t>{i}));
        rowValues[Layout::rowHalf(i)].push_back(elements.back());
      }
      scores.push_back(std::move(elements));
    }
    auto max = [&](Value x, Value y) -> Value {
      return arith::MaxNumFOp::create(b, x, y);
    };
    Value rowMax[2] = {pairwise(rowValues[0], max),
                       pairwise(rowValues[1], max)};
    Value moved = op.getMovedBefore();
    Value newMax[2], shift[2], alpha[2];
    for (int64_t h = 0; h < 2; ++h) {
      // The four threads of a quad hold a row's columns.
      Value tileMax = xorReduce(b, rowMax[h], {1, 2}, /*isMax=*/true);
      if (c)
        tileMax = arith::MulFOp::create(b, tileMax, f32Constant(b, *c));
      Value moves = referenceMoves(b, tileMax, state[h]);
      moved = moved ? Value(arith::OrIOp::create(b, moved, moves)) : moves;
      newMax[h] = arith::SelectOp::create(b, moves, tileMax, state[h]);
      shift[h] = rules.shift(newMax[h]);
      // 0 when m was -inf; exactly 1 when the reference stays.
      Value rescaled = rules.weight(state[h], shift[h]);
      Value kept = f32Constant(b, 1);
      alpha[h] = arith::SelectOp::create(b, moves, rescaled, kept);
    }
    rowValues[0].clear();
    rowValues[1].clear();
    Value negShift[2] = {arith::NegFOp::create(b, shift[0]),
                         arith::NegFOp::create(b, shift[1])};
    // p = 2^(c * dot - m) is one FMA before the ex2.
    SmallVector<Value> results;
    for (SmallVector<Value> &tile : scores) {
      SmallVector<Value> probs;
      for (int64_t e = 0; e < 8; ++e) {
        int64_t h = Layout::rowHalf(e);
        Value exponent =
            c ? Value(math::FmaOp::create(b, tile[e], f32Constant(b, *c),
                                          negShift[h]))
              : Value(arith::SubFOp::create(b, tile[e], shift[h]));
        probs.push_back(fastExp2(b, exponent));
        rowValues[h].push_back(probs.back());
      }
      if (!op.getWeights().empty()) {
        // P V's weights (a V scale a key), after l's sum took p.
        Value weights = op.getWeights()[results.size()];
        for (int64_t e = 0; e < 8; ++e) {
          Value w = vector::ExtractOp::create(b, weights, ArrayRef<int64_t>{e});
          probs[e] = arith::MulFOp::create(b, probs[e], w);
        }
      }
      results.push_back(accumulatorToA(b, op.getInputs(), probs));
    }
    results.append({newMax[0], newMax[1]});
    for (int64_t h = 0; h < 2; ++h) {
      Value sum = pairwise(rowValues[h], [&](Value x, Value y) -> Value {
        return arith::AddFOp::create(b, x, y);
      });
      Value kept = arith::MulFOp::create(b, state[2 + h], alpha[h]);
      results.push_back(arith::AddFOp::create(b, kept, sum));
    }
    results.push_back(rowBroadcast(b, alpha[0], alpha[1]));
    results.push_back(moved);
    return results;
  }
};

/// The chunks of each thread, unrolled: chunk thread + i * threads for
/// each i that some thread has, under a guard where not every thread does;
/// the source region inlined for each chunk's row.
struct CopyTileLowering : Expansion<nv::CopyTileOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::CopyTileOp op,
                            ImplicitLocOpBuilder &b) const override {
    const int64_t threads = op.getThreads(), rows = op.getRows(),
                  width = op.getWidth(), srcWidth = op.getSrcWidth();
    const int64_t perChunk = op.chunkElements();
    const int64_t chunksPerRow = width / perChunk, total = rows * chunksPerRow;
    Value src = op.getSrc(), dst = op.getDst(), tid = op.getThread();
    Type elt = op.getDst().getType().getElementType();
    auto vecType = VectorType::get({perChunk}, elt);
    Block &source = op.getSource().front();
    for (int64_t i = 0; i * threads < total; ++i) {
      Value c = arith::AddIOp::create(b, tid, idx(b, i * threads));
      auto emit = [&] {
        Value row = arith::DivUIOp::create(b, c, idx(b, chunksPerRow));
        Value chunk = arith::RemUIOp::create(b, c, idx(b, chunksPerRow));
        Value col = arith::MulIOp::create(b, chunk, idx(b, perChunk));
        IRMapping rowSource;
        rowSource.map(source.getArgument(0), row);
        for (Operation &o : source.without_terminator())
          b.clone(o, rowSource);
        auto yield = cast<nv::YieldOp>(source.getTerminator());
        Value valid = rowSource.lookupOrDefault(yield.getValues().front());
        SmallVector<Value> indices = llvm::map_to_vector(
            yield.getValues().drop_front(),
            [&](Value v) { return rowSource.lookupOrDefault(v); });
        Value srcCol = col;
        if (srcWidth < width) {
          // The padding columns past the source row read nothing (chunk
          // 0's address) and are written as zeros.
          Value inRow = lessThan(b, col, idx(b, srcWidth));
          valid = arith::AndIOp::create(b, valid, inRow);
          srcCol = arith::SelectOp::create(b, inRow, col, idx(b, 0));
        }
        indices.push_back(srcCol);
        Value dstRow = row, dstCol = col;
        if (op.getLayout() == nv::TileLayout::Blocked) {
          // Block col / 64, then the swizzle on the row within it (blocks
          // are multiples of 8 rows, so r % 8 is the same).
          Value block = arith::DivUIOp::create(b, col, idx(b, 64));
          Value blockRow = arith::MulIOp::create(b, block, idx(b, rows));
          dstRow = arith::AddIOp::create(b, blockRow, row);
          Value inBlock = arith::RemUIOp::create(b, col, idx(b, 64));
          dstCol = swizzleColumn(b, row, inBlock);
        } else if (op.getLayout() == nv::TileLayout::Swizzled) {
          dstCol = swizzleColumn(b, row, col);
        } else if (op.getLayout() == nv::TileLayout::Bytes) {
          Value at = arith::XOrIOp::create(
              b, chunk, byteChunkSwizzle(b, row, chunksPerRow));
          dstCol = arith::MulIOp::create(b, at, idx(b, perChunk));
        }
        if (op.getAsync()) {
          // Rows past the end copy 0 source bytes: cp.async zero-fills
          // them.
          Value all = idx(b, perChunk);
          Value none = idx(b, 0);
          Value srcElements = arith::SelectOp::create(b, valid, all, none);
          nvgpu::DeviceAsyncCopyOp::create(
              b, dst, ValueRange{dstRow, dstCol}, src, indices,
              b.getIndexAttr(perChunk), srcElements, b.getUnitAttr());
        } else {
          // 16-byte rows: the host guarantees 16-byte aligned rows.
          Value x = vector::LoadOp::create(b, vecType, src, indices,
                                           /*nontemporal=*/false,
                                           llvm::Align(16));
          Value zero = arith::ConstantOp::create(
              b, vecType, DenseElementsAttr::get(vecType, b.getZeroAttr(elt)));
          x = arith::SelectOp::create(b, valid, x, zero);
          vector::StoreOp::create(b, x, dst, ValueRange{dstRow, dstCol},
                                  /*nontemporal=*/false, llvm::Align(16));
        }
      };
      if ((i + 1) * threads <= total) {
        emit();
        continue;
      }
      Value some = lessThan(b, c, idx(b, total));
      auto guard = scf::IfOp::create(b, some);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(guard.thenBlock());
      emit();
    }
    return {};
  }
};

/// Four pairs, each rounded and stored by one 2-element vector store.
struct StoreAccumulatorLowering : Expansion<nv::StoreAccumulatorOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::StoreAccumulatorOp op,
                            ImplicitLocOpBuilder &b) const override {
    SmallVector<Value> e = elements(b, op.getAcc(), 8);
    Type to = op.getDst().getType().getElementType();
    auto two = VectorType::get({2}, to);
    // x + y (+ c): the row or column of this lane's element.
    auto place = [&](Value x, Value y, int64_t c) -> Value {
      Value sum = arith::AddIOp::create(b, x, y);
      return c ? arith::AddIOp::create(b, sum, idx(b, c)) : sum;
    };
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t half = 0; half < 2; ++half) {
        int64_t at = 4 * h + 2 * half;
        SmallVector<Value> pair{e[at], e[at + 1]};
        if (!to.isF32())
          for (Value &x : pair)
            x = arith::TruncFOp::create(b, to, x);
        Value r = place(op.getRow(), op.getLaneRow(), 8 * half);
        Value c = place(op.getCol(), op.getLaneColumn(), 8 * h);
        if (op.getSwizzled())
          c = swizzleColumn(b, r, c);
        Value stored = vector::FromElementsOp::create(b, two, pair);
        vector::StoreOp::create(b, stored, op.getDst(), ValueRange{r, c});
      }
    return {};
  }
};

/// The rounds unrolled, each chunk's guard an scf.if holding the body
/// inlined.
struct ForEachChunkLowering : Expansion<nv::ForEachChunkOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::ForEachChunkOp op,
                            ImplicitLocOpBuilder &b) const override {
    const int64_t count = op.getThreads(),
                  chunksPerRow = op.getWidth() / op.getChunk(),
                  chunks = op.getRows() * chunksPerRow;
    Block &body = op.getBody().front();
    for (int64_t i = 0; i * count < chunks; ++i) {
      Value c = arith::AddIOp::create(b, op.getThread(), idx(b, i * count));
      Value rowInTile = arith::DivUIOp::create(b, c, idx(b, chunksPerRow));
      Value row = arith::AddIOp::create(b, op.getFirstRow(), rowInTile);
      Value chunk = arith::RemUIOp::create(b, c, idx(b, chunksPerRow));
      Value col = arith::MulIOp::create(b, chunk, idx(b, op.getChunk()));
      Value at = arith::AddIOp::create(b, op.getRowBase(), row);
      Value ok = lessThan(b, at, op.getRowLimit());
      if ((i + 1) * count > chunks) {
        Value some = lessThan(b, c, idx(b, chunks));
        ok = arith::AndIOp::create(b, ok, some);
      }
      auto inside = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(inside.thenBlock());
      IRMapping chunkAt;
      chunkAt.map(body.getArgument(0), row);
      chunkAt.map(body.getArgument(1), col);
      for (Operation &o : body.without_terminator())
        b.clone(o, chunkAt);
    }
    return {};
  }
};

/// The empty asm with side effects that reads and writes every element
/// ("=f" for f32, "=r" for i32, each tied to its input).
struct FenceRegistersLowering : Expansion<nv::FenceRegistersOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::FenceRegistersOp op,
                            ImplicitLocOpBuilder &b) const override {
    ValueRange vectors = op.getValues();
    auto vectorType = cast<VectorType>(vectors.front().getType());
    const int64_t width = vectorType.getNumElements();
    Type element = vectorType.getElementType();
    const int64_t regs = width * vectors.size();
    std::string constraints;
    for (int64_t i = 0; i < regs; ++i)
      constraints += element.isF32() ? "=f," : "=r,";
    for (int64_t i = 0; i < regs; ++i)
      constraints += std::to_string(i) + (i + 1 < regs ? "," : "");
    SmallVector<Value> in;
    for (Value v : vectors)
      llvm::append_range(in, elements(b, v, width));
    auto type = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(regs, element));
    Value s =
        LLVM::InlineAsmOp::create(
            b, type, in, b.getStringAttr(""), b.getStringAttr(constraints),
            /*has_side_effects=*/b.getUnitAttr(), /*is_align_stack=*/nullptr,
            LLVM::TailCallKindAttr{}, LLVM::AsmDialectAttr{}, ArrayAttr{})
            .getResult(0);
    SmallVector<Value> out;
    for (int64_t v = 0; v < static_cast<int64_t>(vectors.size()); ++v) {
      SmallVector<Value> e;
      for (int64_t i = 0; i < width; ++i)
        e.push_back(LLVM::ExtractValueOp::create(b, s, width * v + i));
      out.push_back(vector::FromElementsOp::create(b, vectorType, e));
    }
    return out;
  }
};

/// A descriptor of the swizzled tile at byte offset `offset` of the shared
/// window at address `base`. Bits 0-13: the address / 16; 16-29: the
/// leading byte offset / 16; 32-45: the stride byte offset / 16 (the
/// 8-row atom); 49-51: the base offset (0: blocks start on 1024-byte
/// boundaries); 62-63: the swizzle.
Value descriptor(ImplicitLocOpBuilder &b, Value base, Value offset,
                 int64_t leadingBytes) {
  Type i64 = b.getI64Type();
  Value at = arith::AddIOp::create(
      b, base, arith::IndexCastUIOp::create(b, i64, offset));
  Value sixteens =
      arith::ShRUIOp::create(b, at, arith::ConstantIntOp::create(b, i64, 4));
  Value field = arith::AndIOp::create(
      b, sixteens, arith::ConstantIntOp::create(b, i64, 0x3FFF));
  uint64_t fixed = (uint64_t(leadingBytes / 16) << 16) |
                   (uint64_t(kSwizzleAtom / 16) << 32) | kSwizzle128;
  return arith::OrIOp::create(
      b, field,
      arith::ConstantIntOp::create(b, i64, static_cast<int64_t>(fixed)));
}

/// One wgmma.mma_async: `regs` f32 accumulators (tied to `acc` when
/// given, else scale-d = 0), then `operands` with `operandConstraints`
/// and the text of the operands after D (`$N` placeholders numbered from
/// `regs`, or from 2 regs with `acc`).
Value wgmmaAsm(ImplicitLocOpBuilder &b, StringRef shapeAndTypes, int64_t regs,
               Value acc, ArrayRef<Value> operands,
               ArrayRef<StringRef> operandConstraints,
               function_ref<std::string(int64_t first)> operandText) {
  std::string constraints;
  SmallVector<Value> in;
  for (int64_t i = 0; i < regs; ++i)
    constraints += "=f,";
  if (acc)
    for (int64_t i = 0; i < regs; ++i) {
      constraints += std::to_string(i) + ",";
      in.push_back(LLVM::ExtractValueOp::create(b, acc, i));
    }
  for (StringRef c : operandConstraints)
    constraints += c.str() + ",";
  constraints += "r";
  in.append(operands.begin(), operands.end());
  in.push_back(arith::ConstantIntOp::create(b, b.getI32Type(), acc ? 1 : 0));
  int64_t first = acc ? 2 * regs : regs;
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                     std::to_string(first + operands.size()) +
                     ", 0;\nwgmma.mma_async.sync.aligned." +
                     shapeAndTypes.str() + " {";
  for (int64_t i = 0; i < regs; ++i)
    text += "$" + std::to_string(i) + (i + 1 < regs ? ", " : "");
  text += "}, " + operandText(first) + ";\n}";
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(regs, b.getF32Type()));
  return LLVM::InlineAsmOp::create(
             b, type, in, b.getStringAttr(text),
             b.getStringAttr(constraints),
             /*has_side_effects=*/b.getUnitAttr(), /*is_align_stack=*/nullptr,
             LLVM::TailCallKindAttr{}, LLVM::AsmDialectAttr{}, ArrayAttr{})
      .getResult(0);
}

/// wgmma's f32 accumulators as a struct (the asm's operand and result)
/// and back as 16-column tiles.
Value toStruct(ImplicitLocOpBuilder &b, ValueRange tiles) {
  Type f32 = b.getF32Type();
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(8 * tiles.size(), f32));
  Value s = LLVM::UndefOp::create(b, type);
  for (auto [t, tile] : llvm::enumerate(tiles))
    for (int64_t e = 0; e < 8; ++e)
      s = LLVM::InsertValueOp::create(
          b, s, vector::ExtractOp::create(b, tile, ArrayRef<int64_t>{e}),
          ArrayRef<int64_t>{static_cast<int64_t>(8 * t + e)});
  return s;
}

SmallVector<Value> fromStruct(ImplicitLocOpBuilder &b, Value s,
                              int64_t tiles) {
  SmallVector<Value> out;
  for (int64_t t = 0; t < tiles; ++t) {
    SmallVector<Value> e;
    for (int64_t i = 0; i < 8; ++i)
      e.push_back(LLVM::ExtractValueOp::create(b, s, 8 * t + i));
    out.push_back(vector::FromElementsOp::create(
        b, VectorType::get({8}, b.getF32Type()), e));
  }
  return out;
}

/// The K step of both forms: 16 elements. A K-major descriptor moves 32
/// bytes inside its 64-column block (the swizzle applies to the address,
/// so the step is a plain add) and to the next block every 4 steps; an
/// MN-major one moves 16 rows.
struct WgmmaLowering : Expansion<nv::WgmmaOp> {
  using Expansion::Expansion;
  SmallVector<Value> expand(nv::WgmmaOp op,
                            ImplicitLocOpBuilder &b) const override {
    Type elt = op.getInputs();
    const int64_t tiles = op.getD().size(), n = 16 * tiles, k = op.getK();
    std::string t = elt.isBF16() ? "bf16" : "f16";
    std::string shape =
        "m64n" + std::to_string(n) + "k16.f32." + t + "." + t;
    Value base = op.getBase(), bTile = op.getBTile();
    NVVM::WgmmaFenceAlignedOp::create(b);
    Value acc;
    if (op.getA().empty()) {
      // Block c of A starts at a_tile + c * a_rows * 128.
      Value aStart = op.getATile();
      const int64_t aRows = *op.getARows();
      for (int64_t kk = 0; kk < k / 16; ++kk) {
        int64_t block = kk / 4, within = (kk % 4) * 32;
        Value aAt = arith::AddIOp::create(
            b, aStart, idx(b, block * aRows * kBlockRow + within));
        Value bAt = arith::AddIOp::create(
            b, bTile, idx(b, block * n * kBlockRow + within));
        Value descA = descriptor(b, base, aAt, 16);
        Value descB = descriptor(b, base, bAt, 16);
        acc = wgmmaAsm(b, shape, n / 2, acc, {descA, descB}, {"l", "l"},
                       [](int64_t first) {
                         // scale-a, scale-b 1; neither transposed (K-major).
                         return "$" + std::to_string(first) + ", $" +
                                std::to_string(first + 1) + ", p, 1, 1, 0, 0";
                       });
      }
    } else {
      acc = toStruct(b, op.getAcc());
      // B's 64-column blocks are k rows each: the leading byte offset.
      const int64_t blockBytes = k * kBlockRow;
      for (auto [kk, a] : llvm::enumerate(op.getA())) {
        SmallVector<Value> ops = elements(b, a, 4);
        ops.push_back(descriptor(
            b, base,
            arith::AddIOp::create(b, bTile,
                                  idx(b, int64_t(kk) * 16 * kBlockRow)),
            blockBytes));
        acc = wgmmaAsm(b, shape, n / 2, acc, ops, {"r", "r", "r", "r", "l"},
                       [](int64_t first) {
                         std::string s = "{";
                         for (int64_t r = 0; r < 4; ++r)
                           s += "$" + std::to_string(first + r) +
                                (r < 3 ? ", " : "");
                         // scale-a, scale-b 1; B transposed (MN-major).
                         return s + "}, $" + std::to_string(first + 4) +
                                ", p, 1, 1, 1";
                       });
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
    return fromStruct(b, acc, tiles);
  }
};

struct AttnNVToNVVMPass : attn::impl::AttnNVToNVVMBase<AttnNVToNVVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateAttnNVToNVVMPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::attn::populateAttnNVToNVVMPatterns(RewritePatternSet &patterns) {
  patterns.add<CopyTileLowering, ForEachChunkLowering, MmaTileLowering, LdMatrixLowering,
               MaskTileLowering, ScoreTileLowering, OnlineSoftmaxLowering, StoreAccumulatorLowering, FenceRegistersLowering, WgmmaLowering>(
      patterns.getContext());
}
