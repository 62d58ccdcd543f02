//===- MSLEmitter.cpp - attn-to-msl: L1 loop nest -> Metal kernels --------===//
//
// The msl tier. Each spec function is tiled by attn-tile (and split by
// attn-split-kv for split-K); the L1 nest is matched and every L1 op is
// printed as a piece of one Metal kernel:
//
//   attn.load_q       cooperative copy into threadgroup memory (zero rows
//                     past the end), then Q fragments into registers
//   attn.init_state   m = ATTN_NO_SCORE, l = 0 per lane; acc as
//                     simdgroup_float8x8
//   attn.load_kv      cooperative copy of a K and a V tile (contiguous or
//                     through the block table), zero past the length
//   attn.qk           simdgroup_multiply_accumulate on 8x8 fragments
//   attn.mask         scale (or soft-cap) and mask on thread_elements();
//                     a score_mod / mask_mod region is a call of its
//                     inline function, printed through EmitC
//                     (ModsToEmitC.h), the mask_mod behind the mask's
//                     test with && and the score_mod only for visible keys
//   attn.online_softmax  row max / sum across the 4 lanes of a row
//                     (simd_shuffle_xor 1 and 8), P as a fragment
//   attn.pv           acc *= rescale on thread_elements(), acc += P.V
//   attn.merge        key-parallel simdgroups (decode) merge in threadgroup
//                     memory; split-K partials merge in a second kernel
//
// Metal compiles with fast math by default (no infinities or NaNs), so the
// kernels use none: a masked score and the running max of a row that has
// seen no key are the finite ATTN_NO_SCORE (-FLT_MAX / 2, as llama.cpp);
// masked keys and empty states get weight 0 by select, never through exp2;
// the LSE of an empty row, -inf, is stored from its bits. The soft-cap calls
// precise::tanh (Metal's fast tanh is NaN past |x| ~ 45), exp2 is fast::.
//   attn.finalize +   acc / l, LSE, stored straight from the fragments
//   store_o/store_lse
//
// Simdgroup s owns tile rows 8 * (s % row_blocks) .. + 7 and the keys
// bc * (s / row_blocks) .. + bc - 1 of each K/V tile: prefill has one key
// block (4 simdgroups x 8 rows = block_q 32), decode has one row block and
// 4 key blocks that merge at the end. The index arithmetic of the nest (Q
// row, K/V range, lengths, split ranges) is printed from the L1 IR itself,
// so masks and paging mean here what they mean on the CPU.
//
// The vector decode (emitVectorKernel, the default for decode shapes) is
// MLX's sdpa_vector in this scheme: block_q = 1, 32 simdgroups stride the
// nest's K/V range key by key (no threadgroup tiles), each key's q . k a
// shuffle-reduced dot product over a power of two of lanes, the states
// merged by shuffles and then through threadgroup memory. Its first pass
// also serves split-K, with the merge kernel of the matrix kernels.
//
// Q, K, V and O are addressed through their strides (strideOf), so
// strided views (token-major [B, S, H, D]) need no copy.
//
// The packed (varlen) forms are addressing: cu_seqlens_q / cu_seqlens_k are
// int buffers, the nest's loads of them (a sequence's first row and length)
// are printed like the rest of its index arithmetic, and Q/O/LSE rows are
// q_first + query, K/V rows kv_first + key (qRowOffset, kvSeqOffset). A
// packed Q runs the nest's grid, (B, Hkv, ceil(G * max_q_len / block_q)),
// max_q_len a bound the host gives: at least the longest sequence's q_len,
// at most the spec's max_q_len where it has one (a promise, not a size: a
// spec may promise 2^31-1). A tile past its sequence's rows has an empty
// K/V loop and stores nothing (the vector decode returns at once).
// Split-K's workspace is indexed by the launch's tile count
// (threadgroups_per_grid), so it takes the host's bound too.
//
//===----------------------------------------------------------------------===//

#include "codegen/msl/MSLEmitter.h"

#include "codegen/msl/MSLKernel.h"

#include "codegen/msl/MSLTypes.h"
#include "codegen/msl/MergeStatesMSL.h"
#include "codegen/msl/ModsToEmitC.h"
#include "dialect/AttnDialect.h"
#include "dialect/AttnSemantics.h"
#include "lib/Transforms/CheckKernels.h"
#include "lib/Transforms/FoldMods.h"
#include "lib/Transforms/L1Nest.h"
#include "lib/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::msl;
using namespace mlir::attn::msl::detail;

namespace mlir::attn::msl::detail {

/// Threadgroup memory of a plan: the Q staging tile, the K/V tiles and the
/// merge area are used one after the other, so they share one block.
Plan makePlan(int64_t br, int64_t bct, bool decode, int64_t d, int64_t dv,
              int64_t eltBytes, bool padded) {
  Plan p;
  // Threadgroup rows padded by 16 bytes, as MLX's steel attention: the
  // transposed K fragment loads walk a column, and unpadded power-of-two
  // rows put its elements in one bank.
  const int64_t pad = padded ? 16 / eltBytes : 0;
  p.ldq = d + pad;
  p.ldk = d + pad;
  p.ldv = dv + pad;
  p.br = br;
  p.bct = bct;
  p.d = d;
  p.dv = dv;
  p.eltBytes = eltBytes;
  p.rowBlocks = std::max<int64_t>(br / 8, 1);
  p.keyBlocks = 1;
  if (decode)
    p.keyBlocks = std::max<int64_t>(
        1, std::min(bct / 8,
                    std::max<int64_t>(kDecodeKeyBlocks / p.rowBlocks, 1)));
  p.bc = bct / p.keyBlocks;
  p.simdgroups = p.rowBlocks * p.keyBlocks;
  p.threads = 32 * p.simdgroups;
  p.qBytes = br * p.ldq * eltBytes;
  p.kBytes = bct * p.ldk * eltBytes;
  p.vBytes = bct * p.ldv * eltBytes;
  if (p.keyBlocks > 1)
    p.mergeBytes = p.keyBlocks * br * (dv + 2) * 4;
  int64_t bytes = std::max({p.qBytes, p.kBytes + p.vBytes, p.mergeBytes});
  p.smemBytes = (bytes + 15) / 16 * 16;
  return p;
}

/// The vector decode kernel: one flat row (query, head) per threadgroup, 32
/// simdgroups striding its keys. Lanes per key: 16 bytes of K a lane
/// (8 halves or 4 floats) when that gives a power of two of lanes that
/// also divides Dv, else the largest power of two up to 32 dividing D and
/// Dv (scalar pieces, then vector pieces where 4 elements divide them).
Plan makeVectorPlan(int64_t d, int64_t dv, int64_t eltBytes,
                    bool alignedStrides) {
  Plan p;
  p.vector = true;
  p.br = 1;
  p.d = d;
  p.dv = dv;
  p.eltBytes = eltBytes;
  p.rowBlocks = 1;
  p.simdgroups = kVectorSimdgroups;
  p.threads = 32 * kVectorSimdgroups;
  const int64_t vec16 = 16 / eltBytes;
  if (d % vec16 == 0 && llvm::isPowerOf2_64(d / vec16) && d / vec16 <= 32 &&
      dv % (d / vec16) == 0) {
    p.lanes = d / vec16;
  } else {
    p.lanes = 32;
    while (d % p.lanes || dv % p.lanes)
      p.lanes /= 2;
  }
  p.ek = d / p.lanes;
  p.ev = dv / p.lanes;
  p.vecLoads = alignedStrides && p.ek % 4 == 0 && p.ev % 4 == 0;
  // Merge area: m and l of each simdgroup, then a 32 x 33 float block (one
  // padded row per output element of a round, one column per simdgroup).
  p.mergeBytes = (2 * kVectorSimdgroups + 32 * 33) * 4;
  p.smemBytes = (p.mergeBytes + 15) / 16 * 16;
  return p;
}

/// Every present operand of `op` is a kernel buffer: a function argument in
/// the default memory space, contiguous row-major, or, for the operands
/// named in `strided` (rank-4 Q/K/V/O), any strides with unit innermost
/// stride and offset 0: token-major [B, S, H, D] views, as the NVIDIA tiers
/// take them. The kernels address them through their strides.
LogicalResult checkBuffers(Operation *op,
                           ArrayRef<std::pair<StringRef, Value>> operands,
                           ArrayRef<StringRef> strided) {
  for (auto [name, value] : operands) {
    if (!value)
      continue;
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      return op->emitError() << "the msl tier binds each operand to a kernel "
                                "buffer; operand '"
                             << name << "' must be an argument of the function";
    auto type = cast<MemRefType>(value.getType());
    if (type.getMemorySpace())
      return op->emitError() << "the msl tier takes buffers in the default "
                                "memory space; operand '"
                             << name << "' is in " << type.getMemorySpace();
    if (type.getLayout().isIdentity())
      continue;
    if (!llvm::is_contained(strided, name))
      return op->emitError()
             << "the msl tier takes contiguous row-major buffers; operand '"
             << name << "' has layout " << type.getLayout()
             << " (view it as a contiguous memref)";
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1 || offset != 0)
      return op->emitError()
             << "the msl tier takes strided buffers with unit innermost "
                "stride and offset 0 (bind the buffer at the view's start); "
                "operand '"
             << name << "' has layout " << type.getLayout();
  }
  return success();
}

/// Refuses what this tier cannot do, naming the rule.
LogicalResult checkSupported(AttentionOp op) {
  if (op.getVFromK())
    return op.emitError()
           << "the msl tier does not read V from K's leading columns "
              "(v_from_k, MLA's latent cache) yet; the CPU pipeline "
              "(attn-to-cpu) and the NVIDIA tiers run it";
  if (op.isQuantizedKV())
    return op.emitError()
           << "the msl tier does not lower a quantized K/V cache ("
           << cast<MemRefType>(op.getK().getType()).getElementType()
           << ") yet; the CPU pipeline (attn-to-cpu) runs it";
  const int64_t d = op.getHeadDim(), dv = op.getValueHeadDim();
  if (d % 8 || dv % 8 || d > kMaxHeadDim || dv > kMaxHeadDim)
    return op.emitError() << "the msl tier needs head dims that are "
                             "multiples of 8 up to "
                          << kMaxHeadDim
                          << " (simdgroup_matrix 8x8); got D = " << d
                          << ", Dv = " << dv;
  std::pair<StringRef, Value> operands[] = {
      {"q", op.getQ()},
      {"k", op.getK()},
      {"v", op.getV()},
      {"o", op.getO()},
      {"lse", op.getLse()},
      {"block_table", op.getBlockTable()},
      {"kv_lens", op.getKvLens()},
      {"cu_seqlens_q", op.getCuSeqlensQ()},
      {"cu_seqlens_k", op.getCuSeqlensK()},
      {"sinks", op.getSinks()}};
  if (failed(checkBuffers(op, operands, {"q", "k", "v", "o"})))
    return failure();
  for (auto [i, capture] : llvm::enumerate(op.getCaptures())) {
    std::string name = "capture" + std::to_string(i);
    if (failed(checkBuffers(op, {{name, capture}})))
      return failure();
  }
  // AttnStrides holds the dynamic strides of rank-4 [B, H, S, D] views; a
  // packed [total, H, D] operand may be strided only statically.
  for (auto [name, value, packed] :
       {std::tuple<StringRef, Value, bool>{"q", op.getQ(), op.isPackedQ()},
        {"o", op.getO(), op.isPackedQ()},
        {"k", op.getK(), op.isPackedKV()},
        {"v", op.getV(), op.isPackedKV()}}) {
    auto type = cast<MemRefType>(value.getType());
    if (!packed || type.getLayout().isIdentity())
      continue;
    auto [strides, offset] = type.getStridesAndOffset();
    if (llvm::any_of(strides, ShapedType::isDynamic))
      return op.emitError()
             << "the msl tier takes a packed (varlen) operand with static "
                "strides only; operand '"
             << name << "' has layout " << type.getLayout();
  }
  return success();
}

/// Whether some Q/K/V/O stride is dynamic: the kernels then take an
/// AttnStrides buffer.
bool hasDynamicStrides(AttentionOp op) {
  for (Value v : {op.getQ(), op.getK(), op.getV(), op.getO()}) {
    auto type = cast<MemRefType>(v.getType());
    if (type.getLayout().isIdentity())
      continue;
    auto [strides, offset] = type.getStridesAndOffset();
    if (llvm::any_of(strides, ShapedType::isDynamic))
      return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// The translation
//===----------------------------------------------------------------------===//

std::string describeMask(MaskAttr mask) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Attribute(mask).print(os);
  return text;
}

/// Runs attn-tile (and attn-split-kv) on a copy of `func` in `scratch`.
FailureOr<func::FuncOp> tileCopy(func::FuncOp func, ModuleOp scratch,
                                 int64_t blockQ, int64_t blockKV,
                                 int64_t splits) {
  OpBuilder b(scratch.getBodyRegion());
  auto copy = cast<func::FuncOp>(b.clone(*func));
  PassManager pm(scratch.getContext(), ModuleOp::getOperationName());
  // Mod regions that are built-in attributes in disguise become them.
  pm.addNestedPass<func::FuncOp>(createAttnFoldMods());
  AttnTileOptions tile;
  tile.blockQ = blockQ;
  tile.blockKV = blockKV;
  pm.addNestedPass<func::FuncOp>(createAttnTile(tile));
  if (splits > 0) {
    // Through the option string: the options struct would also set
    // 'kv-chunk', and the pass takes exactly one of the two.
    std::unique_ptr<Pass> split = createAttnSplitKV();
    if (failed(split->initializeOptions(
            "num-splits=" + std::to_string(splits),
            [&](const Twine &message) { return func.emitError() << message; })))
      return failure();
    pm.addNestedPass<func::FuncOp>(std::move(split));
  }
  if (failed(pm.run(scratch)))
    return failure();
  return copy;
}

/// Prints the mod regions of `nest` (once per spec function: its variants
/// share them) as inline MSL functions through EmitC, after the typedefs
/// of their capture pointers, and names them in `s`.
LogicalResult emitModFunctions(const L1Nest &nest, Spec &s, raw_ostream &os) {
  if (s.modsPrinted)
    return success();
  s.modsPrinted = true;
  QKOp qk = nest.qk;
  MaskOp mask = nest.mask;
  if (!qk.hasScoreMod() && !mask.hasMaskMod())
    return success();
  const std::string func = s.func.getSymName().str();
  os << "// " << func << "'s mod regions (attn.attention's score_mod / "
     << "mask_mod after attn-fold-mods), printed through EmitC.\n";
  llvm::SmallSetVector<Type, 4> elements;
  for (MemRefType type : s.captureTypes)
    elements.insert(type.getElementType());
  for (Type elt : elements)
    if (!mslCaptureElementType(elt).empty())
      os << mslCaptureTypedef(elt) << "\n";
  for (auto [region, kind, name] :
       {std::tuple<Region *, ModKind, std::string *>{
            &qk.getScoreMod(), ModKind::Score, &s.scoreMod},
        {&mask.getMaskMod(), ModKind::Mask, &s.maskMod}}) {
    if (region->empty())
      continue;
    std::string fn = func + "_" + modName(kind).str();
    FailureOr<std::string> text =
        printModAsMSL(s.op, *region, kind, fn, s.captureTypes);
    if (failed(text))
      return failure();
    os << *text << "\n";
    *name = fn;
  }
  return success();
}

MetalNeeds needsOf(const Spec &s) {
  MetalNeeds needs;
  if (s.elt.isBF16() || s.outElt.isBF16())
    needs.version = 310;
  return needs;
}

/// The file compiles once, so it needs the most any of its kernels needs.
MetalNeeds needsOf(ArrayRef<FunctionFacts> functions) {
  MetalNeeds needs;
  for (const FunctionFacts &f : functions)
    needs.version = std::max(needs.version, needsOf(f.spec).version);
  return needs;
}

LogicalResult translateFunction(func::FuncOp func, AttentionOp op,
                                const MSLOptions &options, raw_ostream &os,
                                FunctionFacts &out) {
  if (failed(checkSupported(op)))
    return failure();
  Spec &s = out.spec;
  s.func = func;
  s.op = op;
  s.group = op.getGroupSize();
  s.hq = op.getNumQueryHeads();
  s.hkv = op.getNumKVHeads();
  s.d = op.getHeadDim();
  s.dv = op.getValueHeadDim();
  s.blockSize = op.getBlockSize();
  s.elt = cast<MemRefType>(op.getQ().getType()).getElementType();
  s.outElt = cast<MemRefType>(op.getO().getType()).getElementType();
  s.hasLse = op.getLse() != nullptr;
  s.hasKvLens = op.getKvLens() != nullptr;
  s.packedQ = op.isPackedQ();
  s.packedKV = op.isPackedKV();
  s.maxQLen = op.getMaxQLen().value_or(0);
  int next = 3;
  if (s.packedQ)
    s.cuQ = next++;
  if (s.packedKV)
    s.cuK = next++;
  if (op.isPaged())
    s.blockTable = next++;
  if (s.hasKvLens)
    s.kvLens = next++;
  s.o = next++;
  if (s.hasLse)
    s.lse = next++;
  s.sizes = next++;

  // The most queries a sequence has: a padded Q's static Sq, a packed Q's
  // max_q_len.
  std::optional<int64_t> qLen = op.getStaticQueryLength();
  if (options.kernel == "auto")
    s.decode = qLen && s.group * *qLen <= kDecodeRows;
  else
    s.decode = options.kernel == "decode" || options.kernel == "vector";
  // Decode shapes get the vector kernel unless --msl-kernel=decode asks for
  // the simdgroup_matrix one (8 rows, 4 simdgroups).
  const bool vector = s.decode && options.kernel != "decode";

  // Split-K: as asked, else (-1, auto) for the vector kernel by Sk, as MLX
  // picks sdpa_vector_2pass: two passes of kTwoPassSplits splits from
  // kTwoPassMinKeys keys; a dynamic Sk gets both variants and the launch
  // facts' "dispatch" rule says which one a host runs.
  SmallVector<int64_t, 2> variants;
  int64_t kvLenStatic = cast<MemRefType>(op.getK().getType()).getDimSize(2);
  if (op.isPaged() || op.isPackedKV())
    kvLenStatic = ShapedType::kDynamic; // the block table's reach, offsets
  if (options.splits >= 0)
    variants.push_back(options.splits);
  else if (!vector)
    variants.push_back(0);
  else if (!ShapedType::isDynamic(kvLenStatic))
    variants.push_back(kvLenStatic >= kTwoPassMinKeys ? kTwoPassSplits : 0);
  else
    variants.append({0, kTwoPassSplits});
  out.dispatch = variants.size() > 1;
  s.splits = variants.back();
  if (s.splits > 0)
    s.partials = s.sizes + 1;
  if (hasDynamicStrides(op))
    s.strides = (s.partials >= 0 ? s.partials : s.sizes) + 1;
  int lastBuffer = std::max({s.sizes, s.partials, s.strides});
  for (Value capture : op.getCaptures())
    s.captureTypes.push_back(cast<MemRefType>(capture.getType()));
  if (!s.captureTypes.empty()) {
    s.captures = lastBuffer + 1;
    lastBuffer += s.captureTypes.size();
    if (llvm::any_of(s.captureTypes,
                     [](MemRefType t) { return !t.hasStaticShape(); }))
      s.captureSizes = ++lastBuffer;
  }
  if (Value sinks = op.getSinks()) {
    s.sinks = ++lastBuffer;
    s.sinkElt = cast<MemRefType>(sinks.getType()).getElementType();
  }

  // Tile sizes: the largest K/V tile whose threadgroup memory fits; row
  // strides of the threadgroup tiles padded by 16 bytes where that fits too.
  const int64_t eltBytes = s.elt.isF32() ? 4 : 2;
  const int64_t br = vector ? 1 : s.decode ? kDecodeRows : kPrefillRows;
  int64_t bct = vector ? 32 : 0;
  bool pad = false;
  Plan smallest;
  for (int64_t candidate : {32, 16, 8}) {
    if (vector)
      break;
    for (bool padded : {true, false}) {
      Plan plan =
          makePlan(br, candidate, s.decode, s.d, s.dv, eltBytes, padded);
      smallest = plan;
      if (plan.smemBytes <= kMaxThreadgroupBytes) {
        bct = candidate;
        pad = padded;
        break;
      }
    }
    if (bct)
      break;
  }
  if (!bct)
    return op.emitError() << "the msl tier needs " << smallest.smemBytes
                          << " bytes of threadgroup memory for D = " << s.d
                          << ", Dv = " << s.dv << ", " << dtypeName(s.elt)
                          << ", tiles " << br << "x" << smallest.bct
                          << "; Metal allows " << kMaxThreadgroupBytes;

  // Vector pieces need aligned rows: static strides that are multiples of
  // 4 elements (16 bytes for 16-byte loads of 2-byte elements); dynamic
  // strides must be multiples of 16 bytes, which the launch facts state.
  bool alignedStrides = true, aligned16 = true;
  for (Value v : {op.getQ(), op.getK(), op.getV()}) {
    auto [strides, offset] =
        cast<MemRefType>(v.getType()).getStridesAndOffset();
    for (int64_t stride : ArrayRef<int64_t>(strides).drop_back()) {
      if (!ShapedType::isDynamic(stride) && stride % 4)
        alignedStrides = false;
      if (!ShapedType::isDynamic(stride) && stride * eltBytes % 16)
        aligned16 = false;
    }
  }

  std::string base = (func.getSymName() + "_" +
                      (vector     ? "vector"
                       : s.decode ? "decode"
                                  : "prefill"))
                         .str();
  for (int64_t splits : variants) {
    Spec vs = s;
    vs.splits = splits;
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
    FailureOr<func::FuncOp> tiled = tileCopy(func, *scratch, br, bct, splits);
    if (failed(tiled))
      return failure();
    scf::ForallOp forall;
    tiled->walk([&](scf::ForallOp f) {
      if (!forall && !f->getParentOfType<scf::ForallOp>())
        forall = f;
    });
    if (!forall)
      return op.emitError("attn-to-msl: attn-tile built no loop nest"),
             failure();
    FailureOr<L1Nest> nest = matchL1Nest(forall, "attn-to-msl");
    if (failed(nest))
      return failure();
    if (failed(emitModFunctions(*nest, s, os)))
      return failure();
    vs.scoreMod = s.scoreMod;
    vs.maskMod = s.maskMod;

    // The tile sizes the nest has: the op's schedule may override ours.
    auto qTile = cast<RankedTensorType>(nest->loadQ.getTile().getType());
    auto kTile = cast<RankedTensorType>(nest->loadK.getTile().getType());
    const int64_t tileQ = qTile.getDimSize(0), tileKV = kTile.getDimSize(0);
    if (vector && tileQ != 1)
      return op.emitError() << "the msl tier's vector decode takes one row "
                               "per threadgroup (block_q = 1); got block_q = "
                            << tileQ;
    if (!vector && (tileQ % 8 || tileKV % 8 || tileQ > 64 || tileKV > 64 ||
                    (s.decode && tileQ != kDecodeRows)))
      return op.emitError()
             << "the msl tier needs block_q "
             << (s.decode ? "= 8 (decode)" : "in {8, 16, 32, 64}")
             << " and block_kv in {8, 16, 32, 64}; got block_q = " << tileQ
             << ", block_kv = " << tileKV;
    Plan plan;
    if (vector) {
      plan = makeVectorPlan(s.d, s.dv, eltBytes, alignedStrides);
      plan.aligned16 = aligned16;
      plan.bct = tileKV;
    } else {
      plan = makePlan(tileQ, tileKV, s.decode, s.d, s.dv, eltBytes, pad);
      if (plan.smemBytes > kMaxThreadgroupBytes && pad)
        plan = makePlan(tileQ, tileKV, s.decode, s.d, s.dv, eltBytes, false);
      // 16-byte copies need 16-byte aligned rows in device memory (the
      // strides) and in threadgroup memory (the padded row strides).
      const int64_t ve = 16 / eltBytes;
      if (aligned16 && s.d % ve == 0 && s.dv % ve == 0 && plan.ldq % ve == 0 &&
          plan.ldk % ve == 0 && plan.ldv % ve == 0)
        plan.copyVec = ve;
    }
    if (plan.smemBytes > kMaxThreadgroupBytes)
      return op.emitError() << "the msl tier needs " << plan.smemBytes
                            << " bytes of threadgroup memory for D = " << s.d
                            << ", Dv = " << s.dv << ", " << dtypeName(s.elt)
                            << ", tiles " << tileQ << "x" << tileKV
                            << "; Metal allows " << kMaxThreadgroupBytes;
    out.plan = plan;

    auto setRoles = [&](IndexPrinter &index) {
      Block &entry = tiled->getBody().front();
      auto arg = [&](Value original) -> Value {
        for (auto [i, a] : llvm::enumerate(func.getArguments()))
          if (a == original)
            return entry.getArgument(i);
        return nullptr;
      };
      std::pair<StringRef, Value> roles[] = {
          {"q", op.getQ()},
          {"k", op.getK()},
          {"v", op.getV()},
          {"o", op.getO()},
          {"lse", op.getLse()},
          {"block_table", op.getBlockTable()},
          {"kv_lens", op.getKvLens()},
          {"cu_seqlens_q", op.getCuSeqlensQ()},
          {"cu_seqlens_k", op.getCuSeqlensK()}};
      for (auto [role, value] : roles)
        if (value)
          if (Value a = arg(value))
            index.setRole(a, role);
    };

    const std::string variant = !out.dispatch ? ""
                                : splits      ? "two_pass"
                                              : "one_pass";
    for (int pass = 0; pass < (splits > 0 ? 2 : 1); ++pass) {
      MSLKernelEmitter emitter(vs, *nest, plan, os);
      setRoles(emitter.indexPrinter());
      FailureOr<LaunchFacts> facts;
      if (pass == 1)
        facts = emitter.emitMergeKernel(base + "_merge");
      else if (vector)
        facts = splits ? emitter.emitVectorKernel(base + "_partial",
                                                  KernelKind::VectorPartial)
                       : emitter.emitVectorKernel(base, KernelKind::Vector);
      else if (splits)
        facts = emitter.emitTileKernel(base + "_partial", KernelKind::Partial);
      else
        facts = emitter.emitTileKernel(base, s.decode ? KernelKind::Decode
                                                      : KernelKind::Prefill);
      if (failed(facts))
        return failure();
      facts->variant = variant;
      os << "\n";
      out.kernels.push_back(*facts);
    }
  }
  return success();
}

const char *kPrelude = R"(#include <metal_stdlib>
using namespace metal;

// Run-time sizes; a static dim's field is ignored.
struct AttnSizes {
  int B;
  int Sq;
  int Sk;         // contiguous K/V only
  int max_blocks; // paged K/V only: block_table row length
};

// Run-time strides, in elements, of strided Q, K, V and O operands whose
// layout has dynamic strides: dims [B (or page), H, S] (the innermost
// stride is 1). Present only when some stride is dynamic; each must be a
// multiple of 16 bytes (vector loads).
struct AttnStrides {
  int q[3];
  int k[3];
  int v[3];
  int o[3];
};

// Run-time sizes of a cache-append kernel; a static dim's field is ignored.
struct AttnAppendSizes {
  int B;
  int S_new;
  int capacity;   // contiguous caches only (slot mapping: rows per block)
  int max_blocks; // paged caches only: block_table row length
  int num_blocks; // paged caches, and the slot-mapping form
};

// arith.ceildivsi.
inline int attn_ceil_div(int a, int b) {
  const int q = a / b;
  return q * b != a && (a < 0) == (b < 0) ? q + 1 : q;
}

// Metal compiles with fast math by default, which assumes no infinities:
// a masked score, and the running max m of a row that has seen no key, is
// this finite sentinel. Scores are far above it; a state with m equal to it
// has l = 0 and acc = 0 and gets weight 0.
#define ATTN_NO_SCORE (-FLT_MAX / 2.0f)

// attn.merge on one element: folds the partial state (m1, l1, a1) into
// (m, l, a); an empty partial (m1 = ATTN_NO_SCORE, l1 = 0, a1 = 0) is the
// identity.
inline void attn_merge(thread float &m, thread float &l, thread float &a,
                       float m1, float l1, float a1) {
  const float m_new = max(m, m1);
  const float s0 = m > ATTN_NO_SCORE ? fast::exp2(m - m_new) : 0.0f;
  const float s1 = m1 > ATTN_NO_SCORE ? fast::exp2(m1 - m_new) : 0.0f;
  l = l * s0 + l1 * s1;
  a = a * s0 + a1 * s1;
  m = m_new;
}

// attn.finalize's LSE, ln(sum of exp(scores)), from base-2 (m, l); -inf for
// a row that saw no key (l = 0). The -inf is made from its bits and only
// stored: no floating-point operation sees it, so fast math cannot fold it.
inline float attn_lse(float m, float l) {
  return as_type<float>(l > 0.0f ? as_type<uint>(M_LN2_F * (m + log2(l)))
                                 : 0xff800000u);
}

)";

} // namespace mlir::attn::msl::detail

LogicalResult mlir::attn::translateToMSL(ModuleOp module, raw_ostream &os,
                                         const MSLOptions &options,
                                         raw_ostream *launchFacts) {
  if (options.kernel != "auto" && options.kernel != "prefill" &&
      options.kernel != "decode" && options.kernel != "vector")
    return emitError(module.getLoc())
           << "option 'msl-kernel' must be auto, prefill, decode or vector, "
              "got '"
           << options.kernel << "'";
  if (options.splits < -1 || options.splits > 64)
    return emitError(module.getLoc())
           << "option 'msl-splits' must be in [-1, 64] (-1: by Sk, 0: no "
              "split-K), got "
           << options.splits;
  if (failed(checkKernelFunctions(module)))
    return failure();
  SmallVector<std::pair<func::FuncOp, AttentionOp>> specs;
  SmallVector<std::pair<func::FuncOp, CacheAppendOp>> appendSpecs;
  // checkKernelFunctions let through one of each a function at most.
  for (auto func : module.getOps<func::FuncOp>()) {
    func.walk([&](AttentionOp op) { specs.push_back({func, op}); });
    func.walk([&](CacheAppendOp op) { appendSpecs.push_back({func, op}); });
  }
  SmallVector<std::pair<func::FuncOp, MergeStatesOp>> mergeSpecs;
  for (auto func : module.getOps<func::FuncOp>())
    func.walk([&](MergeStatesOp op) { mergeSpecs.push_back({func, op}); });
  if (specs.empty() && appendSpecs.empty() && mergeSpecs.empty())
    return emitError(module.getLoc(),
                     "--attn-to-msl found no attn.attention, "
                     "attn.cache_append or attn.merge_states: it takes an L0 "
                     "spec (func.func holding one of them)");
  bool ok = true;
  std::string kernels;
  llvm::raw_string_ostream kernelOs(kernels);
  std::vector<AppendFacts> appends;
  for (auto [func, op] : appendSpecs) {
    FailureOr<AppendFacts> facts = emitAppend(func, op, kernelOs);
    if (failed(facts))
      ok = false;
    else
      appends.push_back(std::move(*facts));
  }
  std::vector<MergeFacts> merges;
  for (auto [func, op] : mergeSpecs) {
    FailureOr<MergeFacts> facts = emitMergeStates(func, op, kernelOs);
    if (failed(facts))
      ok = false;
    else
      merges.push_back(std::move(*facts));
  }
  std::vector<FunctionFacts> functions;
  for (auto [func, op] : specs) {
    FunctionFacts facts;
    if (failed(translateFunction(func, op, options, kernelOs, facts)))
      ok = false;
    else
      functions.push_back(std::move(facts));
  }
  if (!ok)
    return failure();
  writeCommentFacts(os, functions, appends, merges);
  os << kPrelude;
  if (!merges.empty())
    os << kMergeSizesDecl << "\n";
  if (llvm::any_of(merges,
                   [](const MergeFacts &m) { return m.dynamicStrides; }))
    os << kMergeStridesDecl << "\n";
  os << kernels;
  if (launchFacts)
    writeJsonFacts(*launchFacts, functions, appends, merges);
  return success();
}
