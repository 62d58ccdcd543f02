//===- AttnToCopy.cpp - attn-to-copy: the memory-bound kernels -----------===//
//
// attn.cache_append's kernel here; attn.merge_states's in MergeStates.cpp.
//
// A memory-bound copy: new K/V rows [B, Hkv, S_new, D] to their cache rows.
//
//   grid (ceildiv(S_new, T), Hkv, B), `threads` per block, T tokens a block:
//     the block's T rows of K (then of V) are cut into 16-byte pieces
//     (vec elements; D / vec pieces a row); thread `tid` takes pieces
//     tid, tid + threads, ... (U of them, unrolled), for K and for V, and
//     issues every load before its first store, so each thread has up to
//     2 U 16-byte loads in flight.
//     A piece of token t is written when t < count, the tokens of this
//     sequence that fit (kv_lens, new_lens, the capacity or the block
//     table; see attn.cache_append), and, paged, its block is one of the
//     cache's.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "codegen/nvptx/KernelCommon.h"
#include "codegen/nvptx/LaunchContract.h"
#include "codegen/nvptx/MergeStates.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTOCOPY
#include "codegen/nvptx/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvptx;

namespace {

constexpr int64_t kMaxThreads = 128;
/// New tokens per block: 32 rows of K and V of D128 f16 are 16 KiB, 8
/// 16-byte pieces per thread of 128.
constexpr int64_t kTokensPerBlock = 32;

class AppendKernel {
public:
  explicit AppendKernel(CacheAppendOp op) : op(op) {}

  LogicalResult plan() {
    auto type = cast<MemRefType>(op.getKNew().getType());
    elt = type.getElementType();
    int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
    d = op.getHeadDim();
    dv = op.getValueHeadDim();
    // The widest piece of at most 16 bytes that tiles both rows.
    vec = 16 / bytes;
    while (vec > 1 && (d % vec || dv % vec))
      vec /= 2;
    // Fewer tokens for a static S_new below the chunk (decode: one).
    int64_t sNew = type.getDimSize(op.isSlotMapped() ? 0 : 2);
    tokens = kTokensPerBlock;
    if (!ShapedType::isDynamic(sNew))
      tokens = std::min<int64_t>(tokens, llvm::PowerOf2Ceil(sNew));
    int64_t pieces = tokens * std::max(d, dv) / vec;
    threads = std::min<int64_t>(kMaxThreads, llvm::alignTo(pieces, kWarp));
    unrollK = llvm::divideCeil(tokens * (d / vec), threads);
    unrollV = llvm::divideCeil(tokens * (dv / vec), threads);
    return success();
  }

  LogicalResult build(gpu::GPUModuleOp module, StringRef name);

private:
  /// The slot-mapping form's kernel body: packed tokens to their slots.
  void buildSlotMapped(ImplicitLocOpBuilder &b, IRMapping &map);
  /// The batched form's kernel body: each sequence's tokens from kv_lens.
  void buildBatched(gpu::GPUFuncOp kernel, IRMapping &map);

  /// One thread's piece of a new token's row, columns [col, col + vec):
  /// `data`, written to (block, head, row) of the cache when `valid`.
  struct Piece {
    Value block, row, col, valid, data;
  };
  /// `src` at `indices` where `inChunk`, else `zeroVec`.
  Value loadPiece(ImplicitLocOpBuilder &b, Value src, ValueRange indices,
                  Value inChunk, Value zeroVec) const;
  /// Stores each piece to `dst` under its guard.
  void storePieces(ImplicitLocOpBuilder &b, Value dst, Value head,
                   ArrayRef<Piece> pieces) const;
  llvm::Align pieceAlign() const {
    return llvm::Align(vec * (elt.getIntOrFloatBitWidth() / 8));
  }

  CacheAppendOp op;
  Type elt;
  int64_t d = 0, dv = 0, vec = 1, tokens = 1, threads = 32, unrollK = 1,
          unrollV = 1;
};

LogicalResult AppendKernel::build(gpu::GPUModuleOp module, StringRef name) {
  MLIRContext *ctx = module.getContext();
  Location loc = op.getLoc();
  // The kernel's operands, in the contract's order (appendLaunch).
  SmallVector<Value> operands{op.getKNew(), op.getVNew()};
  if (Value table = op.getBlockTable())
    operands.push_back(table);
  if (Value lens = op.getKvLens())
    operands.push_back(lens);
  if (Value newLens = op.getNewLens())
    operands.push_back(newLens);
  if (Value slots = op.getSlotMapping())
    operands.push_back(slots);
  operands.push_back(op.getKCache());
  operands.push_back(op.getVCache());

  auto kernel =
      createKernel(module, loc, name, ValueRange(operands).getTypes(), threads);

  IRMapping map;
  for (auto [host, arg] : llvm::zip(operands, kernel.getArguments()))
    map.map(host, arg);
  if (op.isSlotMapped()) {
    ImplicitLocOpBuilder b(loc, ctx);
    b.setInsertionPointToStart(&kernel.front());
    buildSlotMapped(b, map);
  } else {
    buildBatched(kernel, map);
  }

  // Host: the launch replaces the op.
  ImplicitLocOpBuilder hb(loc, op);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(hb, v);
  };
  const bool slotted = op.isSlotMapped();
  Value hostNew = memref::DimOp::create(hb, op.getKNew(), slotted ? 0 : 2);
  Value chunks = arith::CeilDivSIOp::create(hb, hostNew, cst(tokens));
  Value heads = cst(op.getNumKVHeads());
  Value one = cst(1);
  Value batches =
      slotted ? one : Value(memref::DimOp::create(hb, op.getKNew(), 0));
  replaceWithLaunch(op, hb, kernel, {chunks, heads, batches}, threads, operands,
                    appendLaunch(op, threads, tokens));
  return success();
}

Value AppendKernel::loadPiece(ImplicitLocOpBuilder &b, Value src,
                              ValueRange indices, Value inChunk,
                              Value zeroVec) const {
  auto vecType = VectorType::get({vec}, elt);
  auto guard = scf::IfOp::create(b, vecType, inChunk, /*withElse=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(guard.thenBlock());
  Value x = vector::LoadOp::create(b, vecType, src, indices,
                                   /*nontemporal=*/false, pieceAlign());
  scf::YieldOp::create(b, x);
  b.setInsertionPointToStart(guard.elseBlock());
  scf::YieldOp::create(b, zeroVec);
  return guard.getResult(0);
}

void AppendKernel::storePieces(ImplicitLocOpBuilder &b, Value dst, Value head,
                               ArrayRef<Piece> pieces) const {
  for (const Piece &p : pieces) {
    auto guard = scf::IfOp::create(b, p.valid);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(guard.thenBlock());
    vector::StoreOp::create(b, p.data, dst,
                            ValueRange{p.block, head, p.row, p.col},
                            /*nontemporal=*/false, pieceAlign());
  }
}

void AppendKernel::buildSlotMapped(ImplicitLocOpBuilder &b, IRMapping &map) {
  Value kn = map.lookup(op.getKNew()), vn = map.lookup(op.getVNew());
  Value kc = map.lookup(op.getKCache()), vc = map.lookup(op.getVCache());
  Value slots = map.lookup(op.getSlotMapping());
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  auto lt = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
  };
  Value chunk = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value head = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value zero = idx(0);
  Value firstToken = arith::MulIOp::create(b, chunk, idx(tokens));
  Value numTokens = memref::DimOp::create(b, kn, 0);
  Value rows = memref::DimOp::create(b, kc, 2);
  Value blocks = memref::DimOp::create(b, kc, 0);
  Value cacheSlots = arith::MulIOp::create(b, blocks, rows);
  auto vecType = VectorType::get({vec}, elt);
  Value zeroVec = arith::ConstantOp::create(
      b, vecType, DenseElementsAttr::get(vecType, b.getZeroAttr(elt)));
  // All loads (slots and rows) first, then the stores, as in the batched
  // form; a row below T is in bounds wherever its slot points.
  auto loadPieces = [&](Value src, int64_t width, int64_t unroll) {
    SmallVector<Piece> pieces;
    const int64_t perRow = width / vec, total = tokens * perRow;
    for (int64_t i = 0; i < unroll; ++i) {
      Piece p;
      Value u = arith::AddIOp::create(b, tid, idx(i * threads));
      Value rowInChunk = arith::DivUIOp::create(b, u, idx(perRow));
      Value colPiece = arith::RemUIOp::create(b, u, idx(perRow));
      p.col = arith::MulIOp::create(b, colPiece, idx(vec));
      Value token = arith::AddIOp::create(b, firstToken, rowInChunk);
      Value inChunk = lt(token, numTokens);
      if ((i + 1) * threads > total)
        inChunk = arith::AndIOp::create(b, inChunk, lt(u, idx(total)));
      // Tokens past T read slot_mapping[0] (T >= 1), so no load waits on
      // a branch.
      Value safeToken = arith::SelectOp::create(b, inChunk, token, zero);
      Value raw = memref::LoadOp::create(b, slots, safeToken);
      Value slot = arith::IndexCastOp::create(b, b.getIndexType(), raw);
      Value notNegative =
          arith::CmpIOp::create(b, arith::CmpIPredicate::sge, slot, zero);
      Value inCache = lt(slot, cacheSlots);
      Value known = arith::AndIOp::create(b, notNegative, inCache);
      p.valid = arith::AndIOp::create(b, inChunk, known);
      p.block = arith::DivUIOp::create(b, slot, rows);
      p.row = arith::RemUIOp::create(b, slot, rows);
      p.data =
          loadPiece(b, src, ValueRange{token, head, p.col}, inChunk, zeroVec);
      pieces.push_back(p);
    }
    return pieces;
  };
  SmallVector<Piece> kPieces = loadPieces(kn, d, unrollK);
  SmallVector<Piece> vPieces = loadPieces(vn, dv, unrollV);
  storePieces(b, kc, head, kPieces);
  storePieces(b, vc, head, vPieces);
  gpu::ReturnOp::create(b);
}

void AppendKernel::buildBatched(gpu::GPUFuncOp kernel, IRMapping &map) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  Value kn = map.lookup(op.getKNew()), vn = map.lookup(op.getVNew());
  Value kc = map.lookup(op.getKCache()), vc = map.lookup(op.getVCache());
  Value lens = map.lookup(op.getKvLens());
  Value table = op.getBlockTable() ? map.lookup(op.getBlockTable()) : Value();
  Value newLens = op.getNewLens() ? map.lookup(op.getNewLens()) : Value();

  ImplicitLocOpBuilder b(loc, ctx);
  b.setInsertionPointToStart(&kernel.front());
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, x, y);
  };
  auto lt = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
  };
  auto loadIndex = [&](Value memref, ValueRange indices) -> Value {
    Value x = memref::LoadOp::create(b, memref, indices);
    return arith::IndexCastOp::create(b, b.getIndexType(), x);
  };

  Value chunk = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value head = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value batch = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value zero = idx(0);
  Value firstToken = arith::MulIOp::create(b, chunk, idx(tokens));

  // The tokens of this sequence that are written: [0, count).
  Value sNew = memref::DimOp::create(b, kn, 2);
  Value len = loadIndex(lens, batch);
  Value start = arith::MaxSIOp::create(b, len, zero);
  Value n = sNew;
  if (newLens) {
    Value asked = loadIndex(newLens, batch);
    Value floor = arith::MaxSIOp::create(b, asked, zero);
    n = arith::MinSIOp::create(b, floor, sNew);
  }
  Value limit;
  const int64_t bs = op.getBlockSize();
  if (table) {
    Value maxBlocks = memref::DimOp::create(b, table, 1);
    limit = arith::MulIOp::create(b, maxBlocks, idx(bs));
  } else {
    limit = memref::DimOp::create(b, kc, 2);
  }
  Value end = arith::MinSIOp::create(b, add(start, n), limit);
  Value room = arith::SubIOp::create(b, end, start);
  Value count = arith::MaxSIOp::create(b, room, zero);
  Value numBlocks = table ? Value(memref::DimOp::create(b, kc, 0)) : Value();

  // One piece: token `token` of the sequence, columns [col, col + vec),
  // read from row `token` of the new tokens when it is one of the
  // sequence's n, and written to (slot, row) of the cache when `valid`.
  // The load's guard does not wait for kv_lens or the block table (a row
  // below n is in bounds wherever it goes), so the data, kv_lens and
  // table loads are in flight together.
  auto vecType = VectorType::get({vec}, elt);
  Value zeroVec = arith::ConstantOp::create(
      b, vecType, DenseElementsAttr::get(vecType, b.getZeroAttr(elt)));
  // Every load of a thread, block-table entries included, comes before its
  // first store: the stores may alias nothing the loads read, but the
  // compiler cannot know that.
  auto loadPieces = [&](Value src, int64_t width, int64_t unroll) {
    SmallVector<Piece> pieces;
    const int64_t perRow = width / vec, total = tokens * perRow;
    for (int64_t i = 0; i < unroll; ++i) {
      Piece p;
      Value u = add(tid, idx(i * threads));
      Value rowInChunk = arith::DivUIOp::create(b, u, idx(perRow));
      Value colPiece = arith::RemUIOp::create(b, u, idx(perRow));
      p.col = arith::MulIOp::create(b, colPiece, idx(vec));
      Value token = add(firstToken, rowInChunk);
      Value inChunk = lt(token, n);
      if ((i + 1) * threads > total) // the last trip may pass the chunk
        inChunk = arith::AndIOp::create(b, inChunk, lt(u, idx(total)));
      Value inRange = arith::AndIOp::create(b, inChunk, lt(token, count));
      Value pos = add(start, token);
      p.block = batch;
      p.row = pos;
      p.valid = inRange;
      if (table) {
        // Pieces out of range read the table's first entry (every table
        // has one), so no load waits on a branch.
        Value page = arith::DivUIOp::create(b, pos, idx(bs));
        Value safePage = arith::SelectOp::create(b, inRange, page, zero);
        p.block = loadIndex(table, ValueRange{batch, safePage});
        p.row = arith::RemUIOp::create(b, pos, idx(bs));
        Value notNegative =
            arith::CmpIOp::create(b, arith::CmpIPredicate::sge, p.block, zero);
        Value inCache = lt(p.block, numBlocks);
        Value known = arith::AndIOp::create(b, notNegative, inCache);
        p.valid = arith::AndIOp::create(b, inRange, known);
      }
      p.data = loadPiece(b, src, ValueRange{batch, head, token, p.col}, inChunk,
                         zeroVec);
      pieces.push_back(p);
    }
    return pieces;
  };
  SmallVector<Piece> kPieces = loadPieces(kn, d, unrollK);
  SmallVector<Piece> vPieces = loadPieces(vn, dv, unrollV);
  storePieces(b, kc, head, kPieces);
  storePieces(b, vc, head, vPieces);
  gpu::ReturnOp::create(b);
}

struct AttnToCopyPass : mlir::attn::impl::AttnToCopyBase<AttnToCopyPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, CacheAppendOp>> appends;
    module.walk([&](CacheAppendOp op) {
      appends.push_back({op->getParentOfType<func::FuncOp>(), op});
    });
    SmallVector<std::pair<func::FuncOp, MergeStatesOp>> merges;
    module.walk([&](MergeStatesOp op) {
      merges.push_back({op->getParentOfType<func::FuncOp>(), op});
    });
    if (appends.empty() && merges.empty())
      return;
    gpu::GPUModuleOp kernels = getKernelModule(module);
    for (auto [func, op] : appends) {
      if (!func)
        return op.emitOpError("must be inside a func.func"),
               signalPassFailure();
      if (op.isQuantized())
        return op.emitOpError()
                   << "quantizes into a "
                   << cast<MemRefType>(op.getKCache().getType())
                          .getElementType()
                   << " cache, which the copy tier does not lower yet; the "
                      "CPU pipeline (attn-to-cpu) runs it",
               signalPassFailure();
      AppendKernel kernel(op);
      if (failed(kernel.plan()) ||
          failed(kernel.build(kernels, (func.getSymName() + "_append").str())))
        return signalPassFailure();
    }
    for (auto [func, op] : merges) {
      if (!func)
        return op.emitOpError("must be inside a func.func"),
               signalPassFailure();
      if (failed(buildMergeStatesKernel(kernels, op,
                                        (func.getSymName() + "_merge").str())))
        return signalPassFailure();
    }
    tidyKernels(kernels);
  }
};

} // namespace
