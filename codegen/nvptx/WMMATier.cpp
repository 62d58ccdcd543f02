//===- WMMATier.cpp - attn-to-wmma: L1 loop nest -> WMMA GPU kernel -------===//
//
// The first NVIDIA tier (sm_75+). Each L1 op of the loop nest made by
// attn-tile becomes a piece of the kernel:
//
//   attn.load_q / load_kv  16-byte cp.async copies into padded (mma tier:
//                          swizzled) shared memory (zero fill past the
//                          end), K/V double-buffered
//   attn.qk                WMMA: warp w computes rows 16w..16w+15 of S, with
//                          its Q fragments loaded once; S goes to shared
//   attn.mask +            two threads per row read S, scale, mask, reduce
//   online_softmax         with a shuffle, write P (f16) and the rescale
//                          factor broadcast to a 16x16 tile per warp
//   attn.pv                acc *= rescale (elementwise on fragments), then
//                          acc += P.V on WMMA; acc lives in registers
//   attn.finalize +        acc -> shared -> divide by l, cast, store; LSE
//   store_o / store_lse
//
// The index arithmetic of the nest (row offsets, K/V range, lengths) is
// cloned from L1 into the kernel, so masks and paging mean the same thing
// here as on the CPU.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "codegen/nvptx/KernelCommon.h"
#include "codegen/nvptx/LaunchContract.h"
#include "codegen/nvptx/TileMMA.h"
#include "dialect/AttnDialect.h"
#include "lib/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <algorithm>
#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOWMMA
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

FailureOr<int> mlir::attn::parseChip(StringRef chip) {
  int sm = 0;
  if (!chip.consume_front("sm_"))
    return failure();
  chip.consume_back("a");
  if (chip.getAsInteger(10, sm) || sm < 70 || sm > 120)
    return failure();
  return sm;
}

int64_t mlir::attn::maxSharedMemoryBytes(int sm) {
  switch (sm) {
  case 75: return 64 * 1024;
  case 80: return 163 * 1024;
  case 86:
  case 89: return 99 * 1024;
  case 90: return 227 * 1024;
  // sm_120 (consumer Blackwell) has the 99 KiB of sm_86, sm_100 Hopper's.
  default: return sm >= 120 ? 99 * 1024 : sm > 90 ? 227 * 1024 : 96 * 1024;
  }
}

StringRef mlir::attn::defaultPrefillTier(int sm) {
  return sm >= 80 ? "mma" : "wmma";
}

namespace {

/// Row padding of shared tiles, in elements: 16 bytes for f16 rows and for
/// f32 rows, which breaks the power-of-two row stride behind bank conflicts
/// and keeps 16-byte copies and 32-byte WMMA pointers aligned.
constexpr int64_t kPadHalf = 8, kPadFloat = 4;
// The mma tier stores Q, K and V rows of a multiple of 64 elements unpadded
// and swizzled instead (TileMMA.h, swizzleColumn): padding leaves
// ldmatrix conflict-free but not the cp.async writes (ncu: 2.6x the ideal
// shared wavefronts at D128), the swizzle both.
int64_t inputRowOf(int64_t width, bool registers) {
  return registers && isSwizzledWidth(width) ? width : width + kPadHalf;
}

/// Shared tiles start at 128-byte boundaries.
int64_t rounded(int64_t bytes) { return (bytes + 127) / 128 * 128; }

/// Builds the kernel of one nest.
class WMMAKernel : public KernelEmitter {
public:
  WMMAKernel(L1Nest nest, int sm, bool registers)
      : KernelEmitter(nest), sm(sm), registers(registers) {}

  /// Checks what this tier can do; computes the shared-memory plan.
  LogicalResult plan() {
    auto qTile = cast<RankedTensorType>(n.loadQ.getTile().getType());
    auto kTile = cast<RankedTensorType>(n.loadK.getTile().getType());
    auto vTile = cast<RankedTensorType>(n.loadV.getTile().getType());
    br = qTile.getDimSize(0);
    d = qTile.getDimSize(1);
    bc = kTile.getDimSize(0);
    dv = vTile.getDimSize(1);
    group = n.loadQ.getGroup();
    elt = qTile.getElementType();
    outElt = cast<MemRefType>(n.storeO.getO().getType()).getElementType();
    Operation *op = n.forall;
    if (!elt.isF16() && !elt.isBF16())
      return op->emitError() << "the wmma tier takes f16 or bf16 inputs; got "
                             << elt;
    // gpu.subgroup_mma (WMMA) has no bf16: bf16 tiles use mma.sync, whose
    // bf16 form needs sm_80.
    if (elt.isBF16() && sm < 80)
      return op->emitError() << "bf16 inputs need sm_80 or newer (mma.sync "
                                "bf16); got sm_"
                             << sm;
    if (br % 16 || bc % 16 || br > 128 || bc > 128)
      return op->emitError() << "the wmma tier needs tile sizes that are "
                                "multiples of 16 up to 128; got block_q = "
                             << br << ", block_kv = " << bc;
    if (d % 16 || dv % 16)
      return op->emitError() << "the wmma tier needs head dims that are "
                                "multiples of 16; got D = "
                             << d << ", Dv = " << dv;
    if (failed(planWarps(op)))
      return failure();
    // Byte offsets of the shared tiles, each 128-byte aligned.
    int64_t at = 0;
    auto take = [&](int64_t bytes) {
      int64_t off = at;
      at += rounded(bytes);
      return off;
    };
    // Q is read into registers before the loop, so the loop's score,
    // probability and rescale tiles reuse its space (the barrier at the top
    // of the first iteration orders them); K/V follow.
    const int64_t qBytes = rounded(br * inputRow(d) * 2);
    const int64_t sBytes = rounded(br * (bc + kPadFloat) * 4);
    const int64_t pBytes = rounded(br * (bc + kPadHalf) * 2);
    const int64_t aBytes = rounded(warps * 16 * 16 * 4);
    qOff = 0;
    sOff = 0;
    pOff = sBytes;
    aOff = sBytes + pBytes;
    // The mma tier keeps S, P and the rescale in registers.
    at = registers ? qBytes : std::max(qBytes, sBytes + pBytes + aBytes);
    kStage = rounded(bc * inputRow(d) * 2);
    vStage = rounded(bc * inputRow(dv) * 2);
    kOff = take(stages * kStage);
    vOff = take(stages * vStage);
    oOff = 0;
    if (registers) {
      // Each warp stages its rows of O, already in the output type, over
      // its own rows of Q when they fit there: no other warp reads those,
      // so no block barrier is needed. Otherwise over everything, after
      // one.
      const int64_t outBytes = outElt.getIntOrFloatBitWidth() / 8;
      overQ = dv * outBytes <= inputRow(d) * 2;
      oRow = overQ ? inputRow(d) * 2 / outBytes : dv + 16 / outBytes;
      smemBytes = std::max(at, overQ ? 0 : br * oRow * outBytes);
      if (kvGroups > 1) {
        // Groups past the first hand their states to it through shared
        // memory, after every warp is done with K/V and before O is
        // staged (beside it, not over it).
        xOff = rounded(std::max(qBytes, overQ ? 0 : br * oRow * outBytes));
        smemBytes = std::max(smemBytes, xOff + (kvGroups - 1) * rowWarps *
                                                   exchangeChunks() * kWarp *
                                                   16);
      }
    } else {
      // The f32 staging tile reuses all of it once the loop is done (Q
      // lives in registers by then); each row's m and l follow.
      smemBytes = std::max(at, br * (dv + kPadFloat) * 4);
      mlOff = rounded(smemBytes);
      smemBytes = mlOff + br * 2 * 4;
    }
    if (smemBytes > maxSharedMemoryBytes(sm))
      return op->emitError()
             << "the wmma tier needs " << smemBytes
             << " bytes of shared memory for D = " << d << ", Dv = " << dv
             << ", tiles " << br << "x" << bc << ", " << stages
             << " K/V stage(s); sm_" << sm << " allows "
             << maxSharedMemoryBytes(sm);
    return success();
  }

  /// Emits the kernel into `module` and replaces the nest by a launch.
  LogicalResult build(gpu::GPUModuleOp module, StringRef name);

private:
  /// Warps, m-tiles, K/V groups and stages from the schedule (or the
  /// defaults), checked against what the tier can run.
  LogicalResult planWarps(Operation *op);
  /// 16-byte chunks of a thread's softmax state and accumulators.
  int64_t exchangeChunks() const { return mTiles + mTiles * (dv / 16) * 2; }

  // Helpers on the kernel builder `b`.
  Value view(Value byteOffset, ArrayRef<int64_t> shape, Type type) {
    auto memrefType = MemRefType::get(
        shape, type, MemRefLayoutAttrInterface{},
        gpu::AddressSpaceAttr::get(b->getContext(),
                                   gpu::AddressSpace::Workgroup));
    return memref::ViewOp::create(*b, memrefType, smem, byteOffset,
                                  ValueRange{});
  }
  /// Byte offset `base + stage * stride` of a ring stage.
  Value stageOffset(int64_t base, Value stage, int64_t stride) {
    Value first = idx(base);
    Value step = mul(stage, idx(stride));
    return add(first, step);
  }
  /// Copies a [rows, width] f16 tile from global memory to `dst`; `source`
  /// gives, for tile row r, whether it exists and the global indices of its
  /// first element (the innermost index is the column).
  void copyTile(Value dst, int64_t rows, int64_t width, Value src,
                function_ref<std::pair<Value, SmallVector<Value>>(Value)>
                    source);
  void copyKV(Value start, Value stage, bool commit = true);
  void copyKVRows(Value start, Value stage, bool inside);
  Value kvIndices(LoadKVOp load, Value row, SmallVector<Value> &indices,
                  Value start, bool inside = false);

  /// What one K/V tile's step of the loop works on.
  struct Step {
    ArrayRef<Value> qFrags; // Q's A operands, one per 16 of D
    Value qs, ks, vs;       // Q, and this tile's K and V, in shared memory
    Value j;                // its first key
    Value qLen, row0, warpRow;
    ValueRange state;       // the loop's: softmax state, then acc tiles
  };
  /// The first and last query of `rows` rows from `firstRow`: the warp's
  /// or the block's.
  std::pair<Value, Value> queryRange(Value firstRow, int64_t rows);
  std::pair<Value, Value> warpQueries(const Step &step) {
    return queryRange(add(step.row0, step.warpRow), 16 * mTiles);
  }
  std::pair<Value, Value> blockQueries(const Step &step) {
    return queryRange(step.row0, br);
  }
  /// Whether a warp skips K/V tiles its rows cannot see (mma tier, masks).
  /// Measured on an H100: 5-7% faster for causal D64 at S1k-4k, 9-13% for
  /// causal D128 on one m-tile per warp (B1 H8 S1024, 64x64 and 8-warp
  /// tiles); at D128 with two m-tiles, which fill the registers, the state
  /// kept live across the branch raised spills from 12 to 96 bytes and
  /// cost 1-3%.
  bool warpSkips() {
    return registers && !n.mask.getMask().isNone() &&
           (mTiles == 1 || std::max(d, dv) <= 64);
  }
  SmallVector<Value> sharedSoftmaxStep(TileMMA &tiles, const Step &step);
  /// What the epilogue writes to: rows of the block from row0, of `rows`
  /// (group * Sq), in batch `batch` and K/V head `kvHead`.
  struct Output {
    Value batch, kvHead, row0, rows;
  };
  /// The (batch, head, query) indices of Q, O and LSE for flat row `flat`
  /// of the K/V head's group * Sq rows.
  SmallVector<Value> rowIndices(const Output &out, Value flat);
  /// The same for the block's row `row`.
  SmallVector<Value> outputIndices(const Output &out, Value row) {
    return rowIndices(out, add(out.row0, row));
  }
  /// 1 / l, or 0 for a row that saw no key (l = 0).
  Value inverseOrZero(Value l);
  /// The LSE of a row, in natural-log units, from its m and l.
  Value logSumExp(Value m, Value l);
  /// Calls `body(row, col)` inside a guard for each chunk of `perChunk`
  /// output columns of the block's `rows` rows from `firstRow` that exist
  /// in the sequence, the chunks dealt to `count` threads (this one
  /// `thread`), consecutive threads taking consecutive chunks.
  void forEachOutputChunk(Value thread, int64_t count, Value firstRow,
                          int64_t rows, int64_t perChunk, const Output &out,
                          function_ref<void(Value row, Value col)> body);
  /// attn.finalize + store_o + store_lse.
  void storeThroughShared(TileMMA &tiles, scf::ForOp loop, Value warpRow,
                          const Output &out);
  void storeFromRegisters(MmaSyncTileMMA &tiles, ValueRange state,
                          Value warpRow, const Output &out, bool kvDone);
  /// The exchange tile and the indices of 16-byte chunk `chunk` of this
  /// thread's slot (row warp and lane) in K/V group `kvGroup`'s part.
  std::pair<Value, SmallVector<Value>> exchangeSlot(Value kvGroup,
                                                    Value rowWarp,
                                                    int64_t chunk);
  /// Writes this thread's `state` (softmax state, then accumulators) to
  /// its slot of K/V group `kvGroup` (not the first).
  void shareState(ValueRange state, Value kvGroup, Value rowWarp);
  /// The state group `kvGroup`'s thread in this thread's place wrote.
  SmallVector<Value> sharedState(int64_t kvGroup, Value rowWarp);
  /// The state of the union of two groups' keys.
  SmallVector<Value> mergeState(MmaSyncTileMMA &tiles, ValueRange mine,
                                ValueRange theirs);
  SmallVector<Value> registerSoftmaxStep(MmaSyncTileMMA &tiles,
                                         const Step &step);

  /// Whether Q/K/V rows of `width` elements are swizzled, not padded.
  bool swizzles(int64_t width) const {
    return registers && isSwizzledWidth(width);
  }
  /// The shared row length of a Q/K/V tile `width` elements wide.
  int64_t inputRow(int64_t width) const {
    return inputRowOf(width, registers);
  }

  int sm;
  bool registers; // the mma tier: scores and softmax in registers
  int64_t mTiles = 1; // 16-row m-tiles per warp
  int64_t br = 0, bc = 0, d = 0, dv = 0, group = 1, warps = 0, threads = 0;
  Type elt, outElt;
  int64_t qOff = 0, kOff = 0, vOff = 0, sOff = 0, pOff = 0, aOff = 0,
          oOff = 0, mlOff = 0, kStage = 0, vStage = 0, stages = 0,
          smemBytes = 0;
  bool overQ = false; // mma tier: O staged over the warp's own Q rows
  // Warps split the rows (rowWarps, mTiles 16-row m-tiles each), then the
  // keys of each K/V tile (kvGroups groups of bcw keys).
  int64_t rowWarps = 0, kvGroups = 1, bcw = 0, xOff = 0;
  int64_t oRow = 0;   // mma tier: the staging tile's row, in output elements

  Value smem, tid, kvLen;
  Value ss, ps, as; // score, probability and rescale tiles (wmma tier)
};

LogicalResult WMMAKernel::planWarps(Operation *op) {
  auto schedule = op->getAttrOfType<ScheduleAttr>("attn.schedule");
  int64_t asked = schedule ? schedule.getWarps() : 0;
  // By default the mma tier gives a warp up to two 16-row m-tiles (at most
  // 4 warps), so K/V fragments feed more mma.sync; the wmma tier one.
  warps = asked ? asked : registers ? std::min<int64_t>(4, br / 16) : br / 16;
  rowWarps = std::min(warps, br / 16);
  kvGroups = warps / rowWarps;
  mTiles = br / 16 / rowWarps;
  bcw = bc / kvGroups;
  threads = warps * kWarp;
  if (!registers && warps != br / 16)
    return op->emitError() << "the wmma tier runs one warp per 16 query rows: "
                              "schedule 'warps' must be block_q / 16 = "
                           << br / 16 << "; got " << warps;
  if (mTiles > 2)
    return op->emitError()
           << "the mma tier gives a warp at most two 16-row m-tiles: "
              "schedule 'warps' must be at least block_q / 32 = "
           << br / 32 << "; got " << warps;
  if (bcw % 16 || bcw == 0)
    return op->emitError()
           << "schedule 'warps' = " << warps << " splits each K/V tile's "
           << bc << " keys among " << kvGroups
           << " groups of warps, which need a multiple of 16 keys each";
  // cp.async keeps `stages` K/V tiles in flight (two by default); without
  // it (sm_75) one is loaded synchronously, which also keeps D = 128 inside
  // Turing's 64 KiB.
  stages = schedule && schedule.getStages() ? schedule.getStages()
           : sm >= 80                        ? 2
                                             : 1;
  if (sm < 80 && stages > 1)
    return op->emitError() << "more than one K/V stage needs cp.async "
                              "(sm_80 or newer); got stages = "
                           << stages << " on sm_" << sm;
  return success();
}

void WMMAKernel::copyTile(
    Value dst, int64_t rows, int64_t width, Value src,
    function_ref<std::pair<Value, SmallVector<Value>>(Value)> source) {
  const int64_t chunksPerRow = width / 8, total = rows * chunksPerRow;
  auto vecType = VectorType::get({8}, elt);
  for (int64_t i = 0; i * threads < total; ++i) {
    Value c = add(tid, idx(i * threads));
    auto emit = [&] {
      Value row = arith::DivUIOp::create(*b, c, idx(chunksPerRow));
      Value chunk = arith::RemUIOp::create(*b, c, idx(chunksPerRow));
      Value col = mul(chunk, idx(8));
      auto [valid, indices] = source(row);
      indices.push_back(col);
      Value dstCol = swizzles(width) ? swizzleColumn(*b, row, col) : col;
      if (sm >= 80) {
        // Rows past the end copy 0 source bytes: cp.async zero-fills them.
        Value all = idx(8), none = idx(0);
        Value srcElements = arith::SelectOp::create(*b, valid, all, none);
        nvgpu::DeviceAsyncCopyOp::create(
            *b, dst, ValueRange{row, dstCol}, src, indices,
            b->getIndexAttr(8), srcElements, b->getUnitAttr());
      } else {
        // 16-byte rows: the host guarantees 16-byte aligned K/V/Q rows.
        Value x = vector::LoadOp::create(*b, vecType, src, indices,
                                         /*nontemporal=*/false,
                                         llvm::Align(16));
        Value zero = arith::ConstantOp::create(
            *b, vecType, DenseElementsAttr::get(vecType, b->getZeroAttr(elt)));
        x = arith::SelectOp::create(*b, valid, x, zero);
        vector::StoreOp::create(*b, x, dst, ValueRange{row, dstCol},
                                /*nontemporal=*/false, llvm::Align(16));
      }
    };
    if ((i + 1) * threads <= total) {
      emit();
      continue;
    }
    auto guard = scf::IfOp::create(*b, lt(c, idx(total)));
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(guard.thenBlock());
    emit();
  }
}

/// Global indices (all but the column) of K/V row `start + row`, clamped
/// into the sequence; returns whether the row exists. `inside` says the
/// caller knows it does (a tile wholly inside K/V): no test, no clamp.
Value WMMAKernel::kvIndices(LoadKVOp load, Value row,
                            SmallVector<Value> &indices, Value start,
                            bool inside) {
  Value j = add(start, row);
  Value valid = inside ? Value(arith::ConstantIntOp::create(*b, 1, 1))
                       : lt(j, kvLen);
  // Inside the K/V loop kvLen >= 1, so the clamped row exists.
  Value jc = inside ? j
                    : Value(arith::MinSIOp::create(
                          *b, j, arith::SubIOp::create(*b, kvLen, idx(1))));
  Value batch = map.lookup(load.getBatch());
  Value head = map.lookup(load.getKvHead());
  if (Value table = load.getBlockTable()) {
    int64_t bs = cast<MemRefType>(load.getSrc().getType()).getDimSize(2);
    Value entry = memref::LoadOp::create(
        *b, map.lookup(table),
        ValueRange{batch, arith::DivUIOp::create(*b, jc, idx(bs))});
    Value block = arith::IndexCastOp::create(*b, b->getIndexType(), entry);
    indices = {block, head, arith::RemUIOp::create(*b, jc, idx(bs))};
  } else {
    indices = {batch, head, jc};
  }
  return valid;
}

std::pair<Value, Value> WMMAKernel::queryRange(Value firstRow,
                                               int64_t rows) {
  Value first = arith::DivUIOp::create(*b, firstRow, idx(group));
  Value lastRow = add(firstRow, idx(rows - 1));
  Value last = arith::DivUIOp::create(*b, lastRow, idx(group));
  return {first, last};
}

void WMMAKernel::copyKV(Value start, Value stage, bool commit) {
  // A tile wholly inside K/V (all but the last) skips the per-row bounds
  // test and clamp: the branch is uniform, and the plain rows' addresses
  // are one tile base plus per-thread constants.
  if (!n.loadK.getBlockTable()) {
    Value inside = arith::CmpIOp::create(*b, arith::CmpIPredicate::sle,
                                         add(start, idx(bc)), kvLen);
    auto split = scf::IfOp::create(*b, inside, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(split.thenBlock());
    copyKVRows(start, stage, /*inside=*/true);
    b->setInsertionPointToStart(split.elseBlock());
    copyKVRows(start, stage, /*inside=*/false);
  } else {
    copyKVRows(start, stage, /*inside=*/false);
  }
  if (sm >= 80 && commit)
    NVVM::CpAsyncCommitGroupOp::create(*b);
}

void WMMAKernel::copyKVRows(Value start, Value stage, bool inside) {
  Value kDst = view(stageOffset(kOff, stage, kStage), {bc, inputRow(d)}, elt);
  Value vDst = view(stageOffset(vOff, stage, vStage), {bc, inputRow(dv)}, elt);
  for (auto [load, dst, width] :
       {std::tuple<LoadKVOp, Value, int64_t>{n.loadK, kDst, d},
        {n.loadV, vDst, dv}}) {
    LoadKVOp l = load;
    copyTile(dst, bc, width, map.lookup(l.getSrc()), [&](Value row) {
      SmallVector<Value> indices;
      Value valid = kvIndices(l, row, indices, start, inside);
      return std::make_pair(valid, indices);
    });
  }
}

/// One K/V tile of the wmma tier: S goes through shared memory, where two
/// threads per row apply the mask and the online softmax; P and the
/// rescale factors come back as fragments. Returns the next loop state.
SmallVector<Value> WMMAKernel::sharedSoftmaxStep(TileMMA &tiles,
                                                 const Step &step) {
  // attn.qk: S[16w.., :] = Q K^T on WMMA, stored to shared memory.
  for (int64_t nb = 0; nb < bc / 16; ++nb) {
    Value c = tiles.zeroC();
    for (int64_t k = 0; k < d / 16; ++k) {
      Value kRow = idx(16 * nb), kCol = idx(16 * k);
      Value kf = tiles.loadB(step.ks, kRow, kCol, inputRow(d),
                             /*transpose=*/true);
      c = tiles.mma(step.qFrags[k], kf, c);
    }
    tiles.storeC(c, ss, step.warpRow, idx(16 * nb), bc + kPadFloat);
  }
  syncWarp();

  // attn.mask + attn.online_softmax: two threads per row, taking
  // alternate columns (fewer shared-memory bank conflicts than halves).
  Value r = arith::DivUIOp::create(*b, tid, idx(2));
  Value half = arith::RemUIOp::create(*b, tid, idx(2));
  auto column = [&](Value t) { return add(mul(t, idx(2)), half); };
  Value rowInTile = add(step.row0, r);
  Value query = arith::DivUIOp::create(*b, rowInTile, idx(group));
  // The row's scores stay in registers between the two passes (the
  // loops are unrolled here, so each value has its own register).
  SmallVector<Value> scores;
  Value rowMax = f32(-INFINITY);
  for (int64_t t = 0; t < bc / 2; ++t) {
    Value c = column(idx(t));
    Value s = scoreFromDot(memref::LoadOp::create(*b, ss, ValueRange{r, c}));
    Value key = add(step.j, c);
    Value visible = this->visible(key, query, step.qLen, kvLen);
    scores.push_back(arith::SelectOp::create(*b, visible, s, f32(-INFINITY)));
    rowMax = arith::MaxNumFOp::create(*b, rowMax, scores.back());
  }
  auto shuffle = [&](Value x) -> Value {
    return gpu::ShuffleOp::create(*b, x, 1, kWarp, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  rowMax = arith::MaxNumFOp::create(*b, rowMax, shuffle(rowMax));
  Value m = step.state[0], l = step.state[1];
  Value newMax = arith::MaxNumFOp::create(*b, m, rowMax);
  Value shift = safeMax(newMax);
  Value rescale =
      exp2(arith::SubFOp::create(*b, m, shift));
  Value rowSum = f32(0);
  for (int64_t t = 0; t < bc / 2; ++t) {
    Value p = exp2(arith::SubFOp::create(*b, scores[t], shift));
    Value rounded = arith::TruncFOp::create(*b, elt, p);
    Value col = column(idx(t));
    memref::StoreOp::create(*b, rounded, ps, ValueRange{r, col});
    rowSum = arith::AddFOp::create(*b, rowSum, p);
  }
  rowSum = arith::AddFOp::create(*b, rowSum, shuffle(rowSum));
  Value newSum = arith::AddFOp::create(
      *b, arith::MulFOp::create(*b, l, rescale), rowSum);
  // The rescale factor, broadcast along its row of the warp's 16x16 tile.
  Value aRow = add(step.warpRow, arith::RemUIOp::create(*b, r, idx(16)));
  for (int64_t e = 0; e < 8; ++e) {
    Value halfCol = mul(half, idx(8));
    memref::StoreOp::create(*b, rescale, as,
                            ValueRange{aRow, add(halfCol, idx(e))});
  }
  syncWarp();

  // attn.pv: acc = acc * rescale + P V.
  Value alpha = tiles.loadC(as, step.warpRow, idx(0), 16);
  SmallVector<Value> pFrags;
  for (int64_t k = 0; k < bc / 16; ++k)
    pFrags.push_back(tiles.loadA(ps, step.warpRow, idx(16 * k), bc + kPadHalf));
  SmallVector<Value> results{newMax, newSum};
  for (int64_t nb = 0; nb < dv / 16; ++nb) {
    Value acc = tiles.mulC(step.state[2 + nb], alpha);
    for (int64_t k = 0; k < bc / 16; ++k) {
      Value vRow = idx(16 * k), vCol = idx(16 * nb);
      Value vf = tiles.loadB(step.vs, vRow, vCol, inputRow(dv),
                             /*transpose=*/false);
      acc = tiles.mma(pFrags[k], vf, acc);
    }
    results.push_back(acc);
  }
  return results;
}

/// Combines `values` pairwise, so a row's max or sum takes log2(n)
/// dependent steps rather than n.
static Value pairwise(SmallVector<Value> values,
                      function_ref<Value(Value, Value)> combine) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(combine(values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

/// One K/V tile of the mma tier: S = Q K^T stays in mma.sync accumulators;
/// each thread scales, masks and exponentiates its own elements (rows g and
/// g + 8 of its warp's 16, two columns per 8 keys), the row maxima take two
/// quad shuffles, and P goes straight into the A operands of P V. l stays a
/// per-thread partial sum over the thread's columns until the loop ends.
SmallVector<Value> WMMAKernel::registerSoftmaxStep(MmaSyncTileMMA &tiles,
                                                   const Step &step) {
  using Layout = MmaSyncTileMMA;
  const int64_t nb16 = bcw / 16, dv16 = dv / 16;
  // The warp's m-tiles (16 rows each): Q fragments in registers for one,
  // re-read from shared memory per tile for more (registers go to the
  // accumulators), so each K/V fragment feeds every m-tile.
  SmallVector<SmallVector<Value>> raw(mTiles, SmallVector<Value>(nb16));
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t nb = 0; nb < nb16; ++nb)
      raw[mt][nb] = tiles.zeroC();
  // The fragments of 16 columns of D, Q per m-tile then K per 16 keys, all
  // loaded before their mma.sync (measured: loading the next columns'
  // before this column's products as well was no faster, 337 against 346
  // TFLOP/s at D128 S4096).
  auto qkFragments = [&](int64_t k) {
    SmallVector<Value> f;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      if (mTiles == 1) {
        f.push_back(step.qFrags[k]);
        continue;
      }
      Value qRow = add(step.warpRow, idx(16 * mt));
      Value qCol = idx(16 * k);
      f.push_back(tiles.loadA(step.qs, qRow, qCol, inputRow(d)));
    }
    for (int64_t nb = 0; nb < nb16; ++nb) {
      Value kRow = idx(16 * nb), kCol = idx(16 * k);
      f.push_back(
          tiles.loadB(step.ks, kRow, kCol, inputRow(d), /*transpose=*/true));
    }
    return f;
  };
  for (int64_t k = 0; k < d / 16; ++k) {
    SmallVector<Value> f = qkFragments(k);
    for (int64_t nb = 0; nb < nb16; ++nb)
      for (int64_t mt = 0; mt < mTiles; ++mt)
        raw[mt][nb] = tiles.mma(f[mt], f[mTiles + nb], raw[mt][nb]);
  }
  // Without a soft-cap the score is c * dot with c > 0 (the verifier's
  // scale > 0), so the mask and the row max work on raw dots and c folds
  // into p = 2^(c * dot - m), one FMA before the ex2.
  std::optional<double> c = linearScoreScale();
  SmallVector<Value> flat;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t nb = 0; nb < nb16; ++nb) {
      SmallVector<Value> e;
      for (int64_t i = 0; i < 8; ++i) {
        Value dot = vector::ExtractOp::create(*b, raw[mt][nb],
                                              ArrayRef<int64_t>{i});
        e.push_back(c ? dot : scoreFromDot(dot));
      }
      flat.push_back(
          vector::FromElementsOp::create(*b, raw[mt][nb].getType(), e));
    }
  // attn.mask only where the tile crosses a mask edge or the end of K/V
  // for the rows of the warp (where warps skip tiles, below) or block:
  // decided once (the branch is uniform), interior tiles skip it.
  auto [firstQuery, lastQuery] = warpSkips() ? warpQueries(step)
                                             : blockQueries(step);
  Value interior = allVisible(step.j, add(step.j, idx(bcw - 1)), firstQuery,
                              lastQuery, step.qLen, kvLen);
  auto masked = scf::IfOp::create(*b, ValueRange(flat).getTypes(), interior,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(masked.thenBlock());
    scf::YieldOp::create(*b, flat);
    b->setInsertionPointToStart(masked.elseBlock());
    SmallVector<Value> maskedTiles;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      Value rowTop = add(step.row0, add(step.warpRow,
                                        add(tiles.laneRow(), idx(16 * mt))));
      Value queries[2];
      queries[0] = arith::DivUIOp::create(*b, rowTop, idx(group));
      Value rowBottom = add(rowTop, idx(8));
      queries[1] = arith::DivUIOp::create(*b, rowBottom, idx(group));
      for (int64_t nb = 0; nb < nb16; ++nb) {
        Value tile = flat[mt * nb16 + nb];
        SmallVector<Value> e;
        for (int64_t i = 0; i < 8; ++i) {
          Value key =
              add(step.j, add(tiles.laneColumn(),
                              idx(16 * nb + Layout::columnOffset(i))));
          Value seen =
              visible(key, queries[Layout::rowHalf(i)], step.qLen, kvLen);
          Value score =
              vector::ExtractOp::create(*b, tile, ArrayRef<int64_t>{i});
          Value hidden = f32(-INFINITY);
          e.push_back(arith::SelectOp::create(*b, seen, score, hidden));
        }
        maskedTiles.push_back(
            vector::FromElementsOp::create(*b, tile.getType(), e));
      }
    }
    scf::YieldOp::create(*b, maskedTiles);
  }
  // Lazy rescale: a row's reference m moves (and its l and acc are
  // rescaled) only when the tile's maximum passes it by more than
  // kRescaleSlack; otherwise p = 2^(s - m) <= 2^kRescaleSlack, which f16,
  // bf16 and the f32 sums hold. Past the first tiles most skip the
  // rescale's Dv/2 multiplies per row.
  SmallVector<Value> results, alphas;
  SmallVector<SmallVector<Value>> pFrags(mTiles);
  Value anyMoves;
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    ValueRange state = step.state.slice(4 * mt, 4);
    SmallVector<SmallVector<Value>> scores;
    SmallVector<Value> rowValues[2];
    for (int64_t nb = 0; nb < nb16; ++nb) {
      SmallVector<Value> tile;
      for (int64_t i = 0; i < 8; ++i) {
        tile.push_back(vector::ExtractOp::create(
            *b, masked.getResult(mt * nb16 + nb), ArrayRef<int64_t>{i}));
        rowValues[Layout::rowHalf(i)].push_back(tile.back());
      }
      scores.push_back(std::move(tile));
    }
    Value rowMax[2] = {
        pairwise(rowValues[0], [&](Value x, Value y) -> Value {
          return arith::MaxNumFOp::create(*b, x, y);
        }),
        pairwise(rowValues[1], [&](Value x, Value y) -> Value {
          return arith::MaxNumFOp::create(*b, x, y);
        })};
    Value newMax[2], shift[2], alpha[2];
    for (int64_t h = 0; h < 2; ++h) {
      // The four threads of a quad hold a row's columns.
      Value tileMax = xorReduce(rowMax[h], {1, 2}, /*isMax=*/true);
      if (c)
        tileMax = arith::MulFOp::create(*b, tileMax, f32(*c));
      Value moves = referenceMoves(tileMax, state[h]);
      anyMoves = anyMoves ? Value(arith::OrIOp::create(*b, anyMoves, moves))
                          : moves;
      newMax[h] = arith::SelectOp::create(*b, moves, tileMax, state[h]);
      shift[h] = safeMax(newMax[h]);
      // 0 when m was -inf; exactly 1 when the reference stays.
      Value rescaled = exp2(arith::SubFOp::create(*b, state[h], shift[h]));
      Value kept = f32(1);
      alpha[h] = arith::SelectOp::create(*b, moves, rescaled, kept);
    }
    rowValues[0].clear();
    rowValues[1].clear();
    Value negShift[2] = {arith::NegFOp::create(*b, shift[0]),
                         arith::NegFOp::create(*b, shift[1])};
    for (SmallVector<Value> &tile : scores) {
      SmallVector<Value> p;
      for (int64_t e = 0; e < 8; ++e) {
        int64_t h = Layout::rowHalf(e);
        p.push_back(exp2(
            c ? Value(math::FmaOp::create(*b, tile[e], f32(*c), negShift[h]))
              : Value(arith::SubFOp::create(*b, tile[e], shift[h]))));
        rowValues[h].push_back(p.back());
      }
      pFrags[mt].push_back(tiles.accumulatorToA(p));
    }
    results.append({newMax[0], newMax[1]});
    for (int64_t h = 0; h < 2; ++h) {
      Value sum = pairwise(rowValues[h], [&](Value x, Value y) -> Value {
        return arith::AddFOp::create(*b, x, y);
      });
      results.push_back(arith::AddFOp::create(
          *b, arith::MulFOp::create(*b, state[2 + h], alpha[h]), sum));
    }
    alphas.push_back(tiles.rowBroadcast(alpha[0], alpha[1]));
  }
  // attn.pv: acc = acc * rescale + P V, the rescale per row in registers
  // and only in threads whose rows moved.
  SmallVector<Value> accs(step.state.drop_front(4 * mTiles));
  auto rescaling = scf::IfOp::create(*b, ValueRange(accs).getTypes(),
                                     anyMoves, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(rescaling.thenBlock());
    SmallVector<Value> scaled;
    for (auto [i, acc] : llvm::enumerate(accs))
      scaled.push_back(tiles.mulC(acc, alphas[i / dv16]));
    scf::YieldOp::create(*b, scaled);
    b->setInsertionPointToStart(rescaling.elseBlock());
    scf::YieldOp::create(*b, accs);
  }
  SmallVector<Value> out(rescaling.getResults());
  for (int64_t nb = 0; nb < dv16; ++nb)
    for (int64_t k = 0; k < nb16; ++k) {
      Value vRow = idx(16 * k), vCol = idx(16 * nb);
      Value vf = tiles.loadB(step.vs, vRow, vCol, inputRow(dv),
                             /*transpose=*/false);
      for (int64_t mt = 0; mt < mTiles; ++mt)
        out[mt * dv16 + nb] = tiles.mma(pFrags[mt][k], vf, out[mt * dv16 + nb]);
    }
  results.append(out);
  return results;
}

SmallVector<Value> WMMAKernel::rowIndices(const Output &out, Value flat) {
  Value firstHead = mul(out.kvHead, idx(group));
  Value headInGroup = arith::RemUIOp::create(*b, flat, idx(group));
  Value head = add(firstHead, headInGroup);
  Value query = arith::DivUIOp::create(*b, flat, idx(group));
  return {out.batch, head, query};
}

Value WMMAKernel::inverseOrZero(Value l) {
  Value seen = arith::CmpFOp::create(*b, arith::CmpFPredicate::OGT, l, f32(0));
  Value inverse = arith::DivFOp::create(*b, f32(1), l);
  Value zero = f32(0);
  return arith::SelectOp::create(*b, seen, inverse, zero);
}

Value WMMAKernel::logSumExp(Value m, Value l) {
  // m is in log2 units; an empty row (l = 0) has LSE -inf.
  Value seen = arith::CmpFOp::create(*b, arith::CmpFPredicate::OGT, l, f32(0));
  Value log2Sum = arith::AddFOp::create(*b, m, math::Log2Op::create(*b, l));
  Value lse = arith::MulFOp::create(*b, log2Sum, f32(kLn2));
  Value empty = f32(-INFINITY);
  return arith::SelectOp::create(*b, seen, lse, empty);
}

void WMMAKernel::forEachOutputChunk(
    Value thread, int64_t count, Value firstRow, int64_t rows,
    int64_t perChunk, const Output &out,
    function_ref<void(Value row, Value col)> body) {
  const int64_t chunksPerRow = dv / perChunk, chunks = rows * chunksPerRow;
  for (int64_t i = 0; i * count < chunks; ++i) {
    Value c = add(thread, idx(i * count));
    Value row =
        add(firstRow, arith::DivUIOp::create(*b, c, idx(chunksPerRow)));
    Value chunk = arith::RemUIOp::create(*b, c, idx(chunksPerRow));
    Value col = mul(chunk, idx(perChunk));
    Value ok = lt(add(out.row0, row), out.rows);
    if ((i + 1) * count > chunks)
      ok = arith::AndIOp::create(*b, ok, lt(c, idx(chunks)));
    auto inside = scf::IfOp::create(*b, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(inside.thenBlock());
    body(row, col);
  }
}

/// The wmma tier's epilogue: every row's m and l and the accumulators go
/// to shared memory; then each thread normalizes 16-byte chunks of rows,
/// consecutive threads taking consecutive chunks (coalesced stores), and
/// the thread of a row's first chunk writes its LSE.
void WMMAKernel::storeThroughShared(TileMMA &tiles, scf::ForOp loop,
                                    Value warpRow, const Output &out) {
  Value ml = view(idx(mlOff), {br, 2}, b->getF32Type());
  {
    // Threads 2r and 2r + 1 share row r's m and l.
    Value lane2 = arith::RemUIOp::create(*b, tid, idx(2));
    Value even = arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, lane2,
                                       idx(0));
    auto writer = scf::IfOp::create(*b, even, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(*b);
    b->setInsertionPointToStart(writer.thenBlock());
    Value row = arith::DivUIOp::create(*b, tid, idx(2));
    memref::StoreOp::create(*b, loop.getResult(0), ml, ValueRange{row, idx(0)});
    memref::StoreOp::create(*b, loop.getResult(1), ml, ValueRange{row, idx(1)});
  }
  gpu::BarrierOp::create(*b); // the staging tile reuses every shared tile
  Value os = view(idx(oOff), {br, dv + kPadFloat}, b->getF32Type());
  for (int64_t nb = 0; nb < dv / 16; ++nb)
    tiles.storeC(loop.getResult(2 + nb), os, warpRow, idx(16 * nb),
                 dv + kPadFloat);
  gpu::BarrierOp::create(*b); // a row's chunks span warps
  Value o = map.lookup(n.storeO.getO());
  auto f32x8 = VectorType::get({8}, b->getF32Type());
  forEachOutputChunk(tid, threads, idx(0), br, 8, out, [&](Value r, Value col) {
    SmallVector<Value> at = outputIndices(out, r);
    Value m = memref::LoadOp::create(*b, ml, ValueRange{r, idx(0)});
    Value l = memref::LoadOp::create(*b, ml, ValueRange{r, idx(1)});
    Value inv = inverseOrZero(l);
    Value x = vector::LoadOp::create(*b, f32x8, os, ValueRange{r, col});
    x = arith::MulFOp::create(*b, x,
                              vector::BroadcastOp::create(*b, f32x8, inv));
    if (!outElt.isF32())
      x = arith::TruncFOp::create(*b, VectorType::get({8}, outElt), x);
    at.push_back(col);
    // O rows are 16-byte aligned (the runtime checks it).
    vector::StoreOp::create(*b, x, o, at, /*nontemporal=*/false,
                            llvm::Align(16));
    if (n.storeLse) {
      auto first = scf::IfOp::create(
          *b, arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, col, idx(0)),
          /*withElseRegion=*/false);
      b->setInsertionPointToStart(first.thenBlock());
      at.pop_back();
      memref::StoreOp::create(*b, logSumExp(m, l),
                              map.lookup(n.storeLse.getLse()), at);
    }
  });
}

std::pair<Value, SmallVector<Value>>
WMMAKernel::exchangeSlot(Value kvGroup, Value rowWarp, int64_t chunk) {
  // [group - 1][row warp][chunk][lane][4]: a warp's 16-byte chunks are 512
  // consecutive bytes (no bank conflicts).
  Value xs = view(idx(xOff),
                  {kvGroups - 1, rowWarps, exchangeChunks(), kWarp, 4},
                  b->getF32Type());
  SmallVector<Value> at{arith::SubIOp::create(*b, kvGroup, idx(1)), rowWarp,
                        idx(chunk),
                        arith::RemUIOp::create(*b, tid, idx(kWarp)), idx(0)};
  return {xs, at};
}

// A state's chunks: m, m, l, l of each m-tile, then each accumulator in two.
void WMMAKernel::shareState(ValueRange state, Value kvGroup, Value rowWarp) {
  auto f32x4 = VectorType::get({4}, b->getF32Type());
  auto put = [&](int64_t chunk, ValueRange four) {
    auto [xs, at] = exchangeSlot(kvGroup, rowWarp, chunk);
    vector::StoreOp::create(*b, vector::FromElementsOp::create(*b, f32x4, four),
                            xs, at, /*nontemporal=*/false, llvm::Align(16));
  };
  for (int64_t mt = 0; mt < mTiles; ++mt)
    put(mt, state.slice(4 * mt, 4));
  for (int64_t a = 0; a < mTiles * (dv / 16); ++a)
    for (int64_t half = 0; half < 2; ++half) {
      SmallVector<Value> four;
      for (int64_t e = 0; e < 4; ++e)
        four.push_back(vector::ExtractOp::create(
            *b, state[4 * mTiles + a], ArrayRef<int64_t>{4 * half + e}));
      put(mTiles + 2 * a + half, four);
    }
}

SmallVector<Value> WMMAKernel::sharedState(int64_t kvGroup, Value rowWarp) {
  auto load = [&](int64_t c) {
    auto [xs, at] = exchangeSlot(idx(kvGroup), rowWarp, c);
    Value v = vector::LoadOp::create(*b, VectorType::get({4}, b->getF32Type()),
                                     xs, at, /*nontemporal=*/false,
                                     llvm::Align(16));
    SmallVector<Value> e;
    for (int64_t i = 0; i < 4; ++i)
      e.push_back(vector::ExtractOp::create(*b, v, ArrayRef<int64_t>{i}));
    return e;
  };
  SmallVector<Value> state;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    state.append(load(mt));
  for (int64_t a = 0; a < mTiles * (dv / 16); ++a) {
    SmallVector<Value> e = load(mTiles + 2 * a);
    e.append(load(mTiles + 2 * a + 1));
    state.push_back(vector::FromElementsOp::create(
        *b, VectorType::get({8}, b->getF32Type()), e));
  }
  return state;
}

SmallVector<Value> WMMAKernel::mergeState(MmaSyncTileMMA &tiles,
                                          ValueRange mine,
                                          ValueRange theirs) {
  // Per row: m = max of both (the shift of an empty pair is 0, and its
  // factors 0), l and acc rescaled to it and summed. A thread's l is a
  // partial sum over its own columns either way.
  SmallVector<Value> merged(mine.size());
  const int64_t dv16 = dv / 16;
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    Value mineScale[2], theirScale[2];
    for (int64_t h = 0; h < 2; ++h) {
      Value m0 = mine[4 * mt + h], m1 = theirs[4 * mt + h];
      Value m = arith::MaxNumFOp::create(*b, m0, m1);
      Value shift = safeMax(m);
      mineScale[h] = exp2(arith::SubFOp::create(*b, m0, shift));
      theirScale[h] = exp2(arith::SubFOp::create(*b, m1, shift));
      merged[4 * mt + h] = m;
      Value lMine =
          arith::MulFOp::create(*b, mine[4 * mt + 2 + h], mineScale[h]);
      Value lTheirs =
          arith::MulFOp::create(*b, theirs[4 * mt + 2 + h], theirScale[h]);
      merged[4 * mt + 2 + h] = arith::AddFOp::create(*b, lMine, lTheirs);
    }
    Value a = tiles.rowBroadcast(mineScale[0], mineScale[1]);
    Value t = tiles.rowBroadcast(theirScale[0], theirScale[1]);
    for (int64_t nb = 0; nb < dv16; ++nb) {
      int64_t i = 4 * mTiles + mt * dv16 + nb;
      Value accMine = tiles.mulC(mine[i], a);
      Value accTheirs = tiles.mulC(theirs[i], t);
      merged[i] = arith::AddFOp::create(*b, accMine, accTheirs);
    }
  }
  return merged;
}

/// The mma tier's epilogue, warp by warp with no block barrier when O fits
/// over the warp's Q rows: each thread normalizes its two rows per m-tile
/// in registers and writes them, rounded to the output type, into the
/// staging tile (swizzled like Q, no bank conflicts); the warp then copies
/// its rows out in 16-byte chunks, consecutive lanes taking consecutive
/// chunks (coalesced stores). The lane of a row's first column writes its
/// LSE.
void WMMAKernel::storeFromRegisters(MmaSyncTileMMA &tiles, ValueRange state,
                                    Value warpRow, const Output &out,
                                    bool kvDone) {
  const int64_t nState = 4 * mTiles, dv16 = dv / 16;
  Value lse = n.storeLse ? map.lookup(n.storeLse.getLse()) : Value();
  SmallVector<Value> inverse; // 1 / l of the thread's rows, 0 for empty
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      // l summed over the quad that holds the row's columns.
      Value l = xorReduce(state[4 * mt + 2 + h], {1, 2},
                          /*isMax=*/false);
      inverse.push_back(inverseOrZero(l));
      if (!lse)
        continue;
      Value row = add(warpRow, add(tiles.laneRow(), idx(16 * mt + 8 * h)));
      Value firstColumn = arith::CmpIOp::create(
          *b, arith::CmpIPredicate::eq, tiles.laneColumn(), idx(0));
      Value inside = lt(add(out.row0, row), out.rows);
      Value writes = arith::AndIOp::create(*b, firstColumn, inside);
      auto writer = scf::IfOp::create(*b, writes, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(*b);
      b->setInsertionPointToStart(writer.thenBlock());
      Value value = logSumExp(state[4 * mt + h], l);
      SmallVector<Value> at = outputIndices(out, row);
      memref::StoreOp::create(*b, value, lse, at);
    }

  // Stage: the warp's last reads of Q (and, without overQ, every warp's of
  // K/V, unless a barrier said so already) come before the first write.
  if (overQ || kvDone)
    syncWarp();
  else
    gpu::BarrierOp::create(*b);
  const bool swizzled =
      outElt.getIntOrFloatBitWidth() == 16 && isSwizzledWidth(oRow);
  Value os = view(idx(oOff), {br, oRow}, outElt);
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    Value scale = tiles.rowBroadcast(inverse[2 * mt], inverse[2 * mt + 1]);
    for (int64_t nb = 0; nb < dv16; ++nb) {
      Value normalized = tiles.mulC(state[nState + mt * dv16 + nb], scale);
      Value row = add(warpRow, idx(16 * mt));
      Value col = idx(16 * nb);
      tiles.storeRounded(normalized, os, row, col, swizzled);
    }
  }
  syncWarp();

  // Copy out: the warp's 16 mTiles rows of chunks of 16 bytes.
  Value o = map.lookup(n.storeO.getO());
  Value lane = arith::RemUIOp::create(*b, tid, idx(kWarp));
  const int64_t perChunk = 128 / outElt.getIntOrFloatBitWidth();
  auto chunkType = VectorType::get({perChunk}, outElt);
  forEachOutputChunk(lane, kWarp, warpRow, 16 * mTiles, perChunk, out,
                     [&](Value row, Value col) {
    Value x = vector::LoadOp::create(
        *b, chunkType, os,
        ValueRange{row, swizzled ? swizzleColumn(*b, row, col) : col},
        /*nontemporal=*/false, llvm::Align(16));
    SmallVector<Value> at = outputIndices(out, row);
    at.push_back(col);
    // O rows are 16-byte aligned (the runtime checks it).
    vector::StoreOp::create(*b, x, o, at, /*nontemporal=*/false,
                            llvm::Align(16));
  });
}

LogicalResult WMMAKernel::build(gpu::GPUModuleOp module, StringRef name) {
  MLIRContext *ctx = module.getContext();
  Location loc = n.forall.getLoc();

  // Kernel arguments: the attention operands, in a fixed order.
  SmallVector<Value> operands = inputOperands(n);
  operands.push_back(n.storeO.getO());
  if (n.storeLse)
    operands.push_back(n.storeLse.getLse());

  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
  auto funcType =
      FunctionType::get(ctx, ValueRange(operands).getTypes(), TypeRange{});
  auto kernel = gpu::GPUFuncOp::create(moduleBuilder, loc, name, funcType);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  UnitAttr::get(ctx));
  kernel.setKnownBlockSizeAttr(
      DenseI32ArrayAttr::get(ctx, {int32_t(threads), 1, 1}));
  ImplicitLocOpBuilder kb(loc, ctx);
  b = &kb; // KernelEmitter's helpers build here
  kb.setInsertionPointToStart(&kernel.front());
  for (auto [host, arg] : llvm::zip(operands, kernel.getArguments()))
    map.map(host, arg);

  // Block (x, y, z) = (Q tile, K/V head, batch): the forall's (t, h, b).
  map.map(n.forall.getInductionVar(0),
          gpu::BlockIdOp::create(kb, gpu::Dimension::z));
  map.map(n.forall.getInductionVar(1),
          gpu::BlockIdOp::create(kb, gpu::Dimension::y));
  map.map(n.forall.getInductionVar(2),
          gpu::BlockIdOp::create(kb, gpu::Dimension::x));
  tid = gpu::ThreadIdOp::create(kb, gpu::Dimension::x);
  smem = gpu::DynamicSharedMemoryOp::create(
      kb, MemRefType::get({ShapedType::kDynamic}, kb.getI8Type(),
                          MemRefLayoutAttrInterface{},
                          gpu::AddressSpaceAttr::get(
                              ctx, gpu::AddressSpace::Workgroup)));

  // The nest's index arithmetic, cloned from L1.
  FailureOr<Value> row0 = materialize(n.loadQ.getRow());
  FailureOr<Value> qLen = materialize(n.mask.getQLen());
  FailureOr<Value> len = materialize(n.mask.getKvLen());
  FailureOr<Value> lo = materialize(n.kvLoop.getLowerBound());
  FailureOr<Value> hi = materialize(n.kvLoop.getUpperBound());
  if (failed(row0) || failed(qLen) || failed(len) || failed(lo) ||
      failed(hi) || failed(materialize(n.loadK.getBatch())) ||
      failed(materialize(n.loadK.getKvHead())))
    return failure();
  kvLen = *len;
  Value batch = map.lookup(n.loadQ.getBatch());
  Value kvHead = map.lookup(n.loadQ.getKvHead());
  Value rows = mul(*qLen, idx(group));
  Output out{batch, kvHead, *row0, rows};

  // Warp w takes rows of m-tiles (w % rowWarps) and keys (w / rowWarps)
  // of each K/V tile.
  Value warp = arith::DivUIOp::create(kb, tid, idx(kWarp));
  Value rowWarp = warp, kvGroup = idx(0);
  if (kvGroups > 1) {
    rowWarp = arith::RemUIOp::create(kb, warp, idx(rowWarps));
    kvGroup = arith::DivUIOp::create(kb, warp, idx(rowWarps));
  }
  Value warpRow = mul(rowWarp, idx(16 * mTiles));
  Value qs = view(idx(qOff), {br, inputRow(d)}, elt);
  ss = view(idx(sOff), {br, bc + kPadFloat}, kb.getF32Type());
  ps = view(idx(pOff), {br, bc + kPadHalf}, elt);
  as = view(idx(aOff), {warps * 16, 16}, kb.getF32Type());

  // Prologue: Q tile, first K/V tile; Q fragments once.
  Value q = map.lookup(n.loadQ.getQ());
  copyTile(qs, br, d, q, [&](Value r) {
    Value f = add(*row0, r);
    Value valid = lt(f, rows);
    Value fc = arith::SelectOp::create(kb, valid, f, idx(0));
    return std::make_pair(valid, rowIndices(out, fc));
  });
  // The first stages - 1 K/V tiles follow, one cp.async group each,
  // committed even when there is no tile (an empty group): waiting for all
  // but stages - 1 groups then always covers Q, and in the loop all but
  // stages - 2 the current tile. With one stage (or no cp.async) the loop
  // loads each tile itself.
  if (sm >= 80) {
    NVVM::CpAsyncCommitGroupOp::create(kb);
    for (int64_t s = 0; s + 1 < stages; ++s) {
      Value start = add(*lo, idx(s * bc));
      auto any = scf::IfOp::create(kb, lt(start, *hi));
      {
        OpBuilder::InsertionGuard g(kb);
        kb.setInsertionPointToStart(any.thenBlock());
        copyKV(start, idx(s), /*commit=*/false);
      }
      NVVM::CpAsyncCommitGroupOp::create(kb);
    }
    NVVM::CpAsyncWaitGroupOp::create(kb, stages - 1);
  }
  gpu::BarrierOp::create(kb);
  // The mma tier and bf16 (which WMMA lacks) on mma.sync; f16 on WMMA in
  // the wmma tier. (f16 on mma.sync with the scores through shared memory
  // measured 145.8 against WMMA's 170.1 TFLOP/s at D128 S4096, H100.)
  MmaSyncTileMMA *mmaSync = nullptr;
  std::unique_ptr<TileMMA> tiles;
  if (registers || elt.isBF16()) {
    auto owned = std::make_unique<MmaSyncTileMMA>(
        kb, elt, arith::RemUIOp::create(kb, tid, idx(kWarp)),
        /*swizzled=*/registers);
    mmaSync = owned.get();
    tiles = std::move(owned);
  } else {
    tiles = createWMMATileMMA(kb, elt);
  }
  SmallVector<Value> qFrags;
  for (int64_t k = 0; mTiles == 1 && k < d / 16; ++k)
    qFrags.push_back(tiles->loadA(qs, warpRow, idx(16 * k), inputRow(d)));

  // The K/V loop carries the softmax state - m and l of the thread's row
  // (wmma tier), or m, m, l, l of its two rows (mma tier) - and the acc
  // tiles.
  const double negInf = -INFINITY;
  Value zeroC = tiles->zeroC();
  SmallVector<Value> inits{f32(negInf), f32(0)};
  if (registers) {
    inits.clear();
    for (int64_t mt = 0; mt < mTiles; ++mt)
      inits.append({f32(negInf), f32(negInf), f32(0), f32(0)});
  }
  for (int64_t i = 0; i < dv / 16 * mTiles; ++i)
    inits.push_back(zeroC);
  auto loop = scf::ForOp::create(kb, *lo, *hi, idx(bc), inits);
  {
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value fromFirst = arith::SubIOp::create(kb, j, *lo);
    Value iter = arith::DivUIOp::create(kb, fromFirst, idx(bc));
    Value stage = arith::RemUIOp::create(kb, iter, idx(stages));
    if (stages > 1) {
      NVVM::CpAsyncWaitGroupOp::create(kb, stages - 2);
      gpu::BarrierOp::create(kb);
      // Prefetch tile iter + stages - 1 into the stage the last iteration
      // read (the barrier above says every warp is done with it).
      Value next = add(j, idx((stages - 1) * bc));
      auto more = scf::IfOp::create(kb, lt(next, *hi));
      {
        OpBuilder::InsertionGuard g2(kb);
        kb.setInsertionPointToStart(more.thenBlock());
        Value ahead = add(iter, idx(stages - 1));
        Value nextStage = arith::RemUIOp::create(kb, ahead, idx(stages));
        copyKV(next, nextStage, /*commit=*/false);
      }
      NVVM::CpAsyncCommitGroupOp::create(kb);
    } else {
      // One stage: load this tile between two barriers (synchronously
      // without cp.async).
      gpu::BarrierOp::create(kb);
      copyKV(j, stage);
      if (sm >= 80)
        NVVM::CpAsyncWaitGroupOp::create(kb, 0);
      gpu::BarrierOp::create(kb);
    }
    kb.setInsertionPointToEnd(loop.getBody());
    // This warp's keys of the tile: all of them, or its group's bcw.
    Value jw = j;
    Value kBase = stageOffset(kOff, stage, kStage);
    Value vBase = stageOffset(vOff, stage, vStage);
    if (kvGroups > 1) {
      Value firstKey = mul(kvGroup, idx(bcw));
      jw = add(j, firstKey);
      kBase = add(kBase, mul(firstKey, idx(inputRow(d) * 2)));
      vBase = add(vBase, mul(firstKey, idx(inputRow(dv) * 2)));
    }
    Value ks = view(kBase, {bcw, inputRow(d)}, elt);
    Value vs = view(vBase, {bcw, inputRow(dv)}, elt);

    // With two m-tiles Q is re-read every tile; a view through an opaque
    // offset keeps its 2 d/16 addresses from becoming as many registers
    // held across the loop (four plus immediates instead).
    Value qsStep = mTiles > 1 ? view(opaqueIndex(idx(qOff)), {br, inputRow(d)}, elt) : qs;
    Step step{qFrags, qsStep, ks, vs, jw, *qLen, *row0, warpRow,
              loop.getRegionIterArgs()};
    if (!registers) {
      scf::YieldOp::create(kb, sharedSoftmaxStep(*tiles, step));
    } else if (!warpSkips()) {
      scf::YieldOp::create(kb, registerSoftmaxStep(*mmaSync, step));
    } else {
      // A warp whose rows see no key of the tile (past the causal
      // diagonal, before a window) keeps its state: the step would add
      // nothing. The warps of the block's last rows still run it.
      auto [firstQuery, lastQuery] = warpQueries(step);
      Value some = anyVisible(jw, add(jw, idx(bcw - 1)), firstQuery,
                              lastQuery, *qLen, kvLen);
      ValueRange state = loop.getRegionIterArgs();
      auto run = scf::IfOp::create(kb, state.getTypes(), some,
                                   /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard g2(kb);
        kb.setInsertionPointToStart(run.thenBlock());
        scf::YieldOp::create(kb, registerSoftmaxStep(*mmaSync, step));
        kb.setInsertionPointToStart(run.elseBlock());
        scf::YieldOp::create(kb, state);
      }
      scf::YieldOp::create(kb, run.getResults());
    }
  }

  if (!registers) {
    storeThroughShared(*tiles, loop, warpRow, out);
  } else if (kvGroups == 1) {
    storeFromRegisters(*mmaSync, loop.getResults(), warpRow, out,
                       /*kvDone=*/false);
  } else {
    // The first group merges the others' states into its own and stores.
    gpu::BarrierOp::create(kb); // every warp is done with K/V and Q
    auto give = scf::IfOp::create(
        kb,
        arith::CmpIOp::create(kb, arith::CmpIPredicate::ne, kvGroup, idx(0)),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard g(kb);
      kb.setInsertionPointToStart(give.thenBlock());
      shareState(loop.getResults(), kvGroup, rowWarp);
    }
    gpu::BarrierOp::create(kb);
    auto first = scf::IfOp::create(
        kb,
        arith::CmpIOp::create(kb, arith::CmpIPredicate::eq, kvGroup, idx(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(kb);
    kb.setInsertionPointToStart(first.thenBlock());
    SmallVector<Value> state(loop.getResults());
    for (int64_t from = 1; from < kvGroups; ++from)
      state = mergeState(*mmaSync, state, sharedState(from, rowWarp));
    storeFromRegisters(*mmaSync, state, warpRow, out, /*kvDone=*/true);
  }
  kb.setInsertionPointToEnd(&kernel.front());
  gpu::ReturnOp::create(kb);

  // Host: launch one block per (Q tile, K/V head, batch).
  ImplicitLocOpBuilder hb(loc, n.forall);
  SmallVector<OpFoldResult> ubs = n.forall.getMixedUpperBound();
  auto asIndex = [&](OpFoldResult ofr) -> Value {
    if (auto v = dyn_cast<Value>(ofr))
      return v;
    return arith::ConstantIndexOp::create(
        hb, cast<IntegerAttr>(cast<Attribute>(ofr)).getInt());
  };
  gpu::KernelDim3 grid{asIndex(ubs[2]), asIndex(ubs[1]), asIndex(ubs[0])};
  Value one = arith::ConstantIndexOp::create(hb, 1);
  gpu::KernelDim3 block{arith::ConstantIndexOp::create(hb, threads), one, one};
  Value smemSize = arith::ConstantOp::create(
      hb, hb.getI32IntegerAttr(static_cast<int32_t>(smemBytes)));
  auto launch = gpu::LaunchFuncOp::create(hb, kernel, grid, block, smemSize,
                                          operands);
  // Launch facts for hosts that do not read this IR (attn-translate
  // prints them beside the PTX): grid = (ceil(group * Sq / block_q), Hkv, B).
  setLaunchContract(launch, prefillLaunch(n, registers ? "mma" : "wmma",
                                          threads, smemBytes, br, group));
  n.forall.erase();
  return success();
}

struct AttnToWMMAPass : mlir::attn::impl::AttnToWMMABase<AttnToWMMAPass> {
  using AttnToWMMABase::AttnToWMMABase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<int> sm = parseChip(chip);
    if (failed(sm)) {
      module.emitError() << "option 'chip' must be sm_XY with XY in "
                            "[70, 120] (e.g. sm_80, sm_90a), got '"
                         << chip << "'";
      return signalPassFailure();
    }
    if (*sm < 75) {
      module.emitError() << "the wmma tier needs sm_75 or newer (f16 WMMA "
                            "with f32 accumulation); got "
                         << chip;
      return signalPassFailure();
    }
    if (softmax != "shared" && softmax != "registers") {
      module.emitError() << "option 'softmax' must be 'shared' (wmma tier) "
                            "or 'registers' (mma tier), got '"
                         << softmax << "'";
      return signalPassFailure();
    }
    bool registers = softmax == "registers";
    if (registers && *sm < 80) {
      module.emitError() << "the mma tier (softmax=registers) needs sm_80 "
                            "or newer (mma.sync, ldmatrix); got "
                         << chip;
      return signalPassFailure();
    }
    SmallVector<std::pair<func::FuncOp, scf::ForallOp>> nests;
    for (auto nest : findNests(module)) {
      auto tier = nest.second->getAttrOfType<StringAttr>("attn.tier");
      if (!tier || tier.getValue() == "wmma")
        nests.push_back(nest);
    }
    if (nests.empty())
      return;
    gpu::GPUModuleOp kernels = getKernelModule(module);
    SymbolTable symbols(kernels);
    for (auto [func, forall] : nests) {
      FailureOr<L1Nest> nest = matchNest(forall, "attn-to-wmma");
      if (failed(nest))
        return signalPassFailure();
      WMMAKernel kernel(*nest, *sm, registers);
      std::string name = (func.getSymName() + "_wmma").str();
      if (symbols.lookup(name))
        name += "_" + std::to_string(std::distance(
                          kernels.getBody()->begin(),
                          kernels.getBody()->end()));
      if (failed(kernel.plan()) || failed(kernel.build(kernels, name)))
        return signalPassFailure();
    }
  }
};

} // namespace

int64_t mlir::attn::mmaTileSharedBytes(int64_t blockQ, int64_t blockKv,
                                       int64_t d, int64_t dv, int64_t stages) {
  // As WMMAKernel::plan lays out Q, then `stages` K tiles, then V tiles.
  auto tile = [](int64_t rows, int64_t width) {
    return rounded(rows * inputRowOf(width, /*registers=*/true) * 2);
  };
  return tile(blockQ, d) + rounded(stages * tile(blockKv, d)) +
         rounded(stages * tile(blockKv, dv));
}
