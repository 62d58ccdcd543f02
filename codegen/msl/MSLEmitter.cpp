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

namespace {

/// MaskRules' builder for MSL text: each value is a C expression, each
/// compound one parenthesized.
struct TextExprs {
  using Value = std::string;
  Value less(const Value &x, const Value &y) { return x + " < " + y; }
  Value sub(const Value &x, const Value &y) {
    return "(" + x + " - " + y + ")";
  }
  Value add(const Value &x, const Value &y) {
    return y == "0" ? x : "(" + x + " + " + y + ")";
  }
  Value zero() { return "0"; }
  Value atLeast(const Value &x, int64_t bound);
  Value atMost(const Value &x, int64_t bound);
  Value both(const Value &x, const Value &y) {
    return "(" + x + ") && (" + y + ")";
  }
};

/// Metal's limit on threadgroup memory per threadgroup.
constexpr int64_t kMaxThreadgroupBytes = 32 * 1024;
/// Largest head dim: Q and acc fragments live in registers.
constexpr int64_t kMaxHeadDim = 256;
/// Rows of a decode tile: one 8x8 fragment row block.
constexpr int64_t kDecodeRows = 8;
/// Key-parallel simdgroups of the decode kernel.
constexpr int64_t kDecodeKeyBlocks = 4;
constexpr int64_t kPrefillRows = 32;
/// Threads of the split-K merge kernel.
constexpr int64_t kMergeThreads = 128;
/// Fixed-trip fragment loops are unrolled, so that q_frag[kk], s[nb] and
/// acc[dn] stay in registers (MLX's STEEL_PRAGMA_UNROLL is this pragma).
constexpr const char *kUnroll = "#pragma clang loop unroll(full)\n";

/// A float literal MSL and C++ read the same way (always with a 'f').
std::string floatLiteral(double v) {
  if (std::isinf(v))
    return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s + "f";
}

std::string intLiteral(int64_t v) {
  return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
}

TextExprs::Value TextExprs::atLeast(const Value &x, int64_t bound) {
  return x + " >= " + intLiteral(bound);
}

TextExprs::Value TextExprs::atMost(const Value &x, int64_t bound) {
  return x + " <= " + intLiteral(bound);
}

//===----------------------------------------------------------------------===//
// The L1 nest
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The plan: tile shapes, simdgroups, threadgroup memory
//===----------------------------------------------------------------------===//

struct Plan {
  int64_t br = 0;        // Q tile rows (block_q)
  int64_t bct = 0;       // K/V tile rows (block_kv)
  int64_t rowBlocks = 0; // br / 8
  int64_t keyBlocks = 0; // simdgroups sharing a row block, striding keys
  int64_t bc = 0;        // keys per simdgroup per K/V tile
  int64_t simdgroups = 0, threads = 0;
  int64_t d = 0, dv = 0, eltBytes = 0;
  int64_t qBytes = 0, kBytes = 0, vBytes = 0, mergeBytes = 0, smemBytes = 0;
  /// Row strides (elements) of the Q, K and V tiles in threadgroup memory.
  int64_t ldq = 0, ldk = 0, ldv = 0;
  /// Elements per 16-byte piece of the tile copies (0: element by element).
  int64_t copyVec = 0;
  // The vector decode kernel (makeVectorPlan): `lanes` lanes share a key
  // row, each holding `ek` of its D and `ev` of its Dv elements, so a
  // simdgroup takes 32 / lanes keys at a time; `vecLoads`: the pieces are
  // read as 4-element vectors (half4, bfloat4, float4).
  bool vector = false;
  int64_t lanes = 0, ek = 0, ev = 0;
  bool vecLoads = false;
  /// Rows start at multiples of 16 bytes: 2-byte pieces of 8 elements are
  /// read as one 16-byte uint4.
  bool aligned16 = false;
};

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

/// Simdgroups of the vector decode kernel: 1024 threads, as MLX's
/// sdpa_vector.
constexpr int64_t kVectorSimdgroups = 32;
/// From this many keys (static Sk) the vector decode runs two passes
/// (MLX's sdpa_vector_2pass starts at 1024 keys on large GPUs), with this
/// many splits (MLX: 32 blocks).
constexpr int64_t kTwoPassMinKeys = 1024;
constexpr int64_t kTwoPassSplits = 32;

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

//===----------------------------------------------------------------------===//
// The spec's facts (from L0), shared by its kernels
//===----------------------------------------------------------------------===//

struct Spec {
  func::FuncOp func;
  AttentionOp op;
  bool decode = false;
  int64_t splits = 0;
  int64_t group = 1, hq = 1, hkv = 1, d = 0, dv = 0, blockSize = 0;
  Type elt, outElt;
  bool hasLse = false, hasKvLens = false;
  /// The packed (varlen) forms: Q, O, LSE [total_q, H, D] by cu_seqlens_q;
  /// K, V [total_k, Hkv, D] by cu_seqlens_k.
  bool packedQ = false, packedKV = false;
  /// A packed Q's static max_q_len (0: none; the host gives the bound).
  int64_t maxQLen = 0;
  /// Fixed buffer indices of the spec's kernels (-1: absent).
  int q = 0, k = 1, v = 2, cuQ = -1, cuK = -1, blockTable = -1, kvLens = -1,
      o = -1, lse = -1, sizes = -1, partials = -1, strides = -1;
  /// The captures of the mod regions: buffers capture0.. from index
  /// `captures` on, then `capture_sizes` (their dynamic dims, in order)
  /// where some dim is dynamic.
  SmallVector<MemRefType> captureTypes;
  int captures = -1, captureSizes = -1;
  /// The attention sinks' buffer, after every other (-1: none), and its
  /// element type.
  int sinks = -1;
  Type sinkElt;
  /// The inline functions the mod regions became (attn-fold-mods may have
  /// turned a region into attributes): empty when none.
  std::string scoreMod, maskMod;
  bool modsPrinted = false;
};

/// Every present operand of `op` is a kernel buffer: a function argument in
/// the default memory space, contiguous row-major, or, for the operands
/// named in `strided` (rank-4 Q/K/V/O), any strides with unit innermost
/// stride and offset 0: token-major [B, S, H, D] views, as the NVIDIA tiers
/// take them. The kernels address them through their strides.
LogicalResult checkBuffers(Operation *op,
                           ArrayRef<std::pair<StringRef, Value>> operands,
                           ArrayRef<StringRef> strided = {}) {
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
// Index arithmetic: L1 values printed as MSL `int` locals
//===----------------------------------------------------------------------===//

class IndexPrinter {
public:
  IndexPrinter(raw_ostream &os, Operation *anchor) : os(os), anchor(anchor) {}

  /// Names `v` (an induction variable or a value printed by the caller).
  void bind(Value v, std::string name) { names[v] = std::move(name); }
  /// Gives `v` this name when it is printed.
  void prefer(Value v, StringRef name) { preferred[v] = name.str(); }
  /// The role of a memref argument ("q", "k", ...) for dims and loads.
  void setRole(Value memref, StringRef role) { roles[memref] = role.str(); }

  /// The MSL expression of `v`, printing the locals it needs first.
  FailureOr<std::string> get(Value v) {
    if (auto it = names.find(v); it != names.end())
      return it->second;
    APInt constant;
    if (matchPattern(v, m_ConstantInt(&constant)))
      return intLiteral(constant.getSExtValue());
    Operation *def = v.getDefiningOp();
    if (!def)
      return fail(v);
    SmallVector<std::string> args;
    for (Value operand : def->getOperands()) {
      if (isa<MemRefType>(operand.getType()))
        continue;
      FailureOr<std::string> arg = get(operand);
      if (failed(arg))
        return failure();
      args.push_back(*arg);
    }
    std::string expr;
    auto binary = [&](StringRef sign) {
      expr = args[0] + " " + sign.str() + " " + args[1];
    };
    if (isa<arith::AddIOp>(def))
      binary("+");
    else if (isa<arith::SubIOp>(def))
      binary("-");
    else if (isa<arith::MulIOp>(def))
      binary("*");
    else if (isa<arith::DivSIOp, arith::DivUIOp>(def))
      binary("/");
    else if (isa<arith::RemSIOp, arith::RemUIOp>(def))
      binary("%");
    else if (isa<arith::CeilDivSIOp>(def))
      expr = "attn_ceil_div(" + args[0] + ", " + args[1] + ")";
    else if (isa<arith::MinSIOp>(def))
      expr = "min(" + args[0] + ", " + args[1] + ")";
    else if (isa<arith::MaxSIOp>(def))
      expr = "max(" + args[0] + ", " + args[1] + ")";
    else if (isa<arith::IndexCastOp>(def))
      expr = "int(" + args[0] + ")";
    else if (isa<arith::SelectOp>(def))
      expr = args[0] + " ? " + args[1] + " : " + args[2];
    else if (auto cmp = dyn_cast<arith::CmpIOp>(def)) {
      StringRef sign;
      switch (cmp.getPredicate()) {
      case arith::CmpIPredicate::slt:
        sign = "<";
        break;
      case arith::CmpIPredicate::sle:
        sign = "<=";
        break;
      case arith::CmpIPredicate::sgt:
        sign = ">";
        break;
      case arith::CmpIPredicate::sge:
        sign = ">=";
        break;
      case arith::CmpIPredicate::eq:
        sign = "==";
        break;
      case arith::CmpIPredicate::ne:
        sign = "!=";
        break;
      default:
        return fail(v); // unsigned: not in attn-tile's arithmetic
      }
      expr = "int(" + args[0] + " " + sign.str() + " " + args[1] + ")";
    } else if (auto dim = dyn_cast<memref::DimOp>(def)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      auto it = roles.find(dim.getSource());
      if (!index || it == roles.end())
        return fail(v);
      FailureOr<std::string> size = dimOf(it->second, dim.getSource(), *index);
      if (failed(size))
        return fail(v);
      expr = *size;
    } else if (auto load = dyn_cast<memref::LoadOp>(def)) {
      // The lengths and the packed forms' offsets: int buffers.
      auto it = roles.find(load.getMemRef());
      if (it == roles.end() ||
          (it->second != "kv_lens" && it->second != "cu_seqlens_q" &&
           it->second != "cu_seqlens_k"))
        return fail(v);
      expr = it->second + "[" + args[0] + "]";
    } else {
      return fail(v);
    }
    std::string name =
        preferred.count(v) ? preferred[v] : "t" + std::to_string(counter++);
    os << "  const int " << name << " = " << expr << ";\n";
    names[v] = name;
    return name;
  }

  /// The size of dim `index` of the `role` buffer: a literal when static,
  /// else a field of the sizes struct.
  FailureOr<std::string> dimOf(StringRef role, Value memref, int64_t index) {
    auto type = cast<MemRefType>(memref.getType());
    if (!type.isDynamicDim(index))
      return std::to_string(type.getDimSize(index));
    // A packed operand's dim 0 is its total rows, which no kernel needs.
    if (index == 0 &&
        ((packedQ && (role == "q" || role == "o" || role == "lse")) ||
         (packedKV && (role == "k" || role == "v"))))
      return failure();
    if (index == 0 && role != "k" && role != "v")
      return std::string("sizes.B");
    if ((role == "q" || role == "o" || role == "lse") && index == 2)
      return std::string("sizes.Sq");
    if ((role == "k" || role == "v") && index == 2)
      return std::string("sizes.Sk");
    if ((role == "k" || role == "v") && index == 0 && !paged)
      return std::string("sizes.B");
    if (role == "block_table" && index == 1)
      return std::string("sizes.max_blocks");
    return failure();
  }

  bool paged = false, packedQ = false, packedKV = false;

private:
  FailureOr<std::string> fail(Value v) {
    anchor->emitError() << "attn-to-msl: cannot print the index computation "
                        << v << " as MSL";
    return failure();
  }

  raw_ostream &os;
  Operation *anchor;
  DenseMap<Value, std::string> names, preferred, roles;
  int counter = 0;
};

//===----------------------------------------------------------------------===//
// The kernel emitter: one function per L1 op kind
//===----------------------------------------------------------------------===//

enum class KernelKind {
  Prefill,
  Decode,
  Partial,
  Merge,
  Vector,
  VectorPartial
};

StringRef kindName(KernelKind kind) {
  switch (kind) {
  case KernelKind::Vector:
    return "decode_vector";
  case KernelKind::VectorPartial:
    return "partial_vector";
  case KernelKind::Prefill:
    return "prefill";
  case KernelKind::Decode:
    return "decode";
  case KernelKind::Partial:
    return "partial";
  case KernelKind::Merge:
    return "merge";
  }
  return "";
}

/// What a host needs to launch one kernel.
struct LaunchFacts {
  std::string name, function;
  KernelKind kind;
  int64_t threads = 0, blockQ = 0, blockKV = 0, splits = 1, smemBytes = 0;
  SmallVector<std::pair<std::string, int>> buffers;
  /// "one_pass" or "two_pass" when the function has both; else empty.
  std::string variant;
};

class MSLKernelEmitter {
public:
  MSLKernelEmitter(const Spec &spec, const L1Nest &nest, const Plan &plan,
                   raw_ostream &os)
      : s(spec), n(nest), p(plan), os(os), body(bodyText),
        index(body, nest.forall) {}

  IndexPrinter &indexPrinter() { return index; }

  /// The single-pass kernel, or the first pass of split-K.
  FailureOr<LaunchFacts> emitTileKernel(StringRef name, KernelKind kind);
  LaunchFacts finishKernel(StringRef name, KernelKind kind, bool partial,
                           bool withTid);
  /// The second pass of split-K.
  FailureOr<LaunchFacts> emitMergeKernel(StringRef name);
  /// The vector decode kernel (one pass), or the first pass of its split-K.
  FailureOr<LaunchFacts> emitVectorKernel(StringRef name, KernelKind kind);

private:
  std::string elt() const { return mslType(s.elt); }
  std::string outElt() const { return mslType(s.outElt); }
  std::string groupText() const { return std::to_string(s.group); }
  std::string fragType() const { return "simdgroup_" + elt() + "8x8"; }
  std::string lit(int64_t v) const { return intLiteral(v); }
  bool split() const { return s.splits > 0; }

  LogicalResult emitIndexArithmetic(bool inSplit, bool mergeOnly);
  void emitLoadQ();
  void emitInitState();
  void emitLoadKV(LoadKVOp load, StringRef dst, int64_t width, StringRef what);
  void emitQK();
  /// x, the raw dot product, scaled (or soft-capped) into base-2 units, or
  /// into natural units when a score_mod follows (modScore).
  void emitScale(StringRef indent);
  /// With mod regions: `builtin` (the mask's test) and the mask_mod's call;
  /// else `builtin`.
  std::string modVisible(const std::string &builtin, StringRef head,
                         StringRef query) const;
  /// x as the softmax takes it: hidden keys ATTN_NO_SCORE, the score_mod's
  /// result (clamped at ATTN_NO_SCORE) in base-2 units.
  void emitModScore(StringRef indent, StringRef head, StringRef query);
  /// The dynamic dims of the captures, as the mod functions take them.
  void emitCaptureSizes();
  bool hasMods() const { return !s.scoreMod.empty() || !s.maskMod.empty(); }
  void emitMask();
  void emitOnlineSoftmax();
  void emitPV();
  void emitFinalizeFromFragments();
  /// o[row, c] = ar / lr and, for c == 0, lse[row], for the merged state
  /// (mr, lr, ar) of tile element (r, c) with flat row f.
  void emitStoreElement();
  /// Query head `head`'s sink in the state's base-2 units.
  std::string sinkLogit(StringRef head) const {
    return ("float(sinks[" + head + "]) * M_LOG2E_F").str();
  }
  /// The row state (m, l) with the sink merged in, as m_fin and l_fin,
  /// and the factor the accumulator takes, sink_scale: the sink is a
  /// state of one score and no value (attn_merge of (t, 1, 0)).
  void emitSinkMerge(StringRef indent, StringRef m, StringRef l,
                     StringRef head) {
    body << indent << "float m_fin = " << m << ", l_fin = " << l
         << ", sink_scale = 1.0f;\n";
    body << indent << "attn_merge(m_fin, l_fin, sink_scale, " << sinkLogit(head)
         << ", 1.0f, 0.0f);\n";
  }
  void emitMergeKeyBlocks();
  void emitPartialFromFragments();
  /// Element offset of row (query, head) of a [B, H, Sq, width] buffer.
  std::string qRowOffset(StringRef role, Value memref, StringRef query,
                         StringRef head, int64_t heads, int64_t width);
  /// The stride of dim `dim` (0..2) of the rank-4 `role` buffer, in
  /// elements: a literal, a product of sizes (row-major) or a field of
  /// AttnStrides (a dynamic stride).
  std::string strideOf(StringRef role, Value memref, int dim);
  /// The 64-bit element offset of row `row` of head `head` of slice
  /// `outer` (the batch, or the page of a paged cache) of `role`.
  std::string offset64(StringRef role, Value memref, StringRef outer,
                       StringRef head, StringRef row);
  void emitSignature(StringRef name, ArrayRef<std::string> params);
  /// The element offset of this (batch, kv_head)'s K or V rows: a padded
  /// [B, Hkv, Sk, D] slice, or a packed sequence's rows from kv_first
  /// (attn.load_kv's seq(start)).
  std::string kvSeqOffset(StringRef role, Value memref);
  /// The stride between consecutive keys of a (batch, head) K or V slice.
  std::string kvRowStride(StringRef role, Value memref);
  /// The threadgroups of the grid's x dim: a packed Q's split-K takes its
  /// Q tiles from the launch (the host's bound), not from the spec's
  /// max_q_len, which only caps that bound.
  bool gridTiles() const { return s.packedQ && split(); }

  // Copies: op handles are cheap and their accessors are not const.
  Spec s;
  L1Nest n;
  const Plan &p;
  raw_ostream &os;
  std::string bodyText;
  llvm::raw_string_ostream body;
  IndexPrinter index;
  // Names of the nest's key values, printed by emitIndexArithmetic.
  std::string row0, qLen, kvLen, kvBegin, kvEnd, qTiles;
};

std::string MSLKernelEmitter::qRowOffset(StringRef role, Value memref,
                                         StringRef query, StringRef head,
                                         int64_t heads, int64_t width) {
  if (s.packedQ) {
    // [total_q, H, width] (LSE: [total_q, H]): the sequence's rows start at
    // row q_first (attn.load_q / store_o / store_lse's seq(start, len)).
    auto term = [&](const std::string &x, int dim) {
      std::string stride = strideOf(role, memref, dim);
      return "ulong(" + x + ") * " + stride;
    };
    return term("q_first + " + query.str(), 0) + " + " + term(head.str(), 1);
  }
  if (width != 1) // Q and O: through their strides
    return offset64(role, memref, "batch", head, query);
  std::string sq = *index.dimOf(role, memref, 2);
  return "(ulong(batch) * " + std::to_string(heads) + " + " + head.str() +
         ") * " + sq + " + " + query.str();
}

std::string MSLKernelEmitter::strideOf(StringRef role, Value memref, int dim) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.getLayout().isIdentity()) {
    auto [strides, offset] = type.getStridesAndOffset();
    if (!ShapedType::isDynamic(strides[dim]))
      return std::to_string(strides[dim]);
    return "strides." + role.str() + "[" + std::to_string(dim) + "]";
  }
  int64_t constant = 1;
  std::string text;
  for (int i = type.getRank() - 1; i > dim; --i) {
    if (!type.isDynamicDim(i))
      constant *= type.getDimSize(i);
    else
      text += " * " + *index.dimOf(role, memref, i);
  }
  return std::to_string(constant) + text;
}

std::string MSLKernelEmitter::offset64(StringRef role, Value memref,
                                       StringRef outer, StringRef head,
                                       StringRef row) {
  auto term = [&](StringRef x, int dim) {
    std::string stride = strideOf(role, memref, dim);
    if (stride.find(' ') != std::string::npos)
      stride = "(" + stride + ")";
    return "ulong(" + x.str() + ") * " + stride;
  };
  std::string text = term(outer, 0) + " + " + term(head, 1);
  return row == "0" ? text : text + " + " + term(row, 2);
}

std::string MSLKernelEmitter::kvSeqOffset(StringRef role, Value memref) {
  if (!s.packedKV)
    return offset64(role, memref, "batch", "kv_head", "0");
  return "ulong(kv_first) * " + strideOf(role, memref, 0) +
         " + ulong(kv_head) * " + strideOf(role, memref, 1);
}

std::string MSLKernelEmitter::kvRowStride(StringRef role, Value memref) {
  return strideOf(role, memref, s.packedKV ? 0 : 2);
}

void MSLKernelEmitter::emitSignature(StringRef name,
                                     ArrayRef<std::string> params) {
  os << "kernel void " << name << "(";
  std::string indent(name.size() + 13, ' ');
  for (auto [i, param] : llvm::enumerate(params))
    os << (i ? ",\n" + indent : "") << param;
  os << ") {\n";
}

LogicalResult MSLKernelEmitter::emitIndexArithmetic(bool inSplit,
                                                    bool mergeOnly) {
  body << "  // The L1 nest's index arithmetic (attn-tile";
  body << (split() ? ", attn-split-kv" : "") << "), printed from the IR.\n";
  if (inSplit) {
    body << "  const int q_tile = int(group_id.x) / " << s.splits << ";\n";
    body << "  const int split = int(group_id.x) % " << s.splits << ";\n";
    index.bind(n.splitForall.getInductionVar(0), "split");
  } else {
    body << "  const int q_tile = int(group_id.x);\n";
  }
  body << "  const int kv_head = int(group_id.y);\n";
  body << "  const int batch = int(group_id.z);\n";
  index.bind(n.forall.getInductionVar(0), "batch");
  index.bind(n.forall.getInductionVar(1), "kv_head");
  index.bind(n.forall.getInductionVar(2), "q_tile");
  index.paged = s.blockSize != 0;
  index.packedQ = s.packedQ;
  index.packedKV = s.packedKV;
  if (s.packedQ)
    index.prefer(n.loadQ.getSeqStart(), "q_first");
  if (s.packedKV)
    index.prefer(n.loadK.getSeqStart(), "kv_first");
  index.prefer(n.loadQ.getRow(), "row0");
  index.prefer(n.mask.getQLen(), "q_len");
  index.prefer(n.mask.getKvLen(), "kv_len");
  index.prefer(n.kvLoop.getLowerBound(), "kv_begin");
  index.prefer(n.kvLoop.getUpperBound(), "kv_end");
  auto get = [&](Value v, std::string &out) {
    FailureOr<std::string> e = index.get(v);
    if (failed(e))
      return failure();
    out = *e;
    return success();
  };
  std::string first;
  if (failed(get(n.loadQ.getRow(), row0)) ||
      failed(get(n.mask.getQLen(), qLen)) ||
      (s.packedQ && failed(get(n.loadQ.getSeqStart(), first))))
    return failure();
  if (!mergeOnly && s.packedKV && failed(get(n.loadK.getSeqStart(), first)))
    return failure();
  // The merge kernel of split-K reads no K/V.
  if (!mergeOnly && (failed(get(n.mask.getKvLen(), kvLen)) ||
                     failed(get(n.kvLoop.getLowerBound(), kvBegin)) ||
                     failed(get(n.kvLoop.getUpperBound(), kvEnd))))
    return failure();
  if (gridTiles()) {
    // The nest's bound is every packed row; the launch runs the host's
    // bound's tiles (the forall's iterations past the longest sequence
    // have no rows), and the workspace has that many.
    body << "  const int q_tiles = int(grid.x)"
         << (inSplit ? " / " + std::to_string(s.splits) : "")
         << "; // the launch's Q tiles (the host's max_q_len bound)\n";
    qTiles = "q_tiles";
  } else if (split()) {
    OpFoldResult tiles = n.forall.getMixedUpperBound()[2];
    if (auto v = dyn_cast<Value>(tiles)) {
      index.prefer(v, "q_tiles");
      if (failed(get(v, qTiles)))
        return failure();
    } else {
      qTiles = std::to_string(*getConstantIntValue(tiles));
    }
  }
  body << "  const int q_rows = " << qLen << " * " << s.group
       << "; // flat (query, head-in-group) rows\n";
  return success();
}

void MSLKernelEmitter::emitLoadQ() {
  const int64_t ve = p.copyVec ? p.copyVec : 1;
  const std::string piece = p.copyVec ? "uint4" : elt();
  body << "\n  // attn.load_q: tile row r is query (row0 + r) / " << s.group
       << " of head kv_head * " << s.group << " + (row0 + r) % " << s.group
       << "; rows past the end are zero.\n";
  body << "  threadgroup " << elt() << " *q_s = (threadgroup " << elt()
       << " *)smem;\n";
  body << "  for (int i = int(tid); i < " << p.br * p.d / ve
       << "; i += " << p.threads << ") {\n";
  body << "    const int r = i / " << p.d / ve << ", c = i % " << p.d / ve
       << (ve > 1 ? " * " + std::to_string(ve) : "") << ";\n";
  body << "    const int f = " << row0 << " + r;\n";
  body << "    " << piece << " x = " << piece << (p.copyVec ? "(0u)" : "(0.0f)")
       << ";\n";
  body << "    if (f < q_rows)\n";
  std::string at =
      "q + " +
      qRowOffset("q", n.loadQ.getQ(), "f / " + std::to_string(s.group),
                 "kv_head * " + std::to_string(s.group) + " + f % " +
                     std::to_string(s.group),
                 s.hq, p.d) +
      " + c";
  if (p.copyVec) {
    body << "      x = *(device const uint4 *)(" << at << ");\n";
    body << "    *(threadgroup uint4 *)(q_s + r * " << p.ldq << " + c) = x;\n";
  } else {
    body << "      x = *(" << at << ");\n";
    body << "    q_s[r * " << p.ldq << " + c] = x;\n";
  }
  body << "  }\n";
  body << "  threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  body << "  " << fragType() << " q_frag[" << p.d / 8 << "];\n";
  body << "  " << kUnroll << "  for (int kk = 0; kk < " << p.d / 8
       << "; ++kk)\n";
  body << "    simdgroup_load(q_frag[kk], q_s + row_block * " << 8 * p.ldq
       << " + kk * 8, " << p.ldq << ");\n";
  body << "  // K/V tiles reuse Q's threadgroup memory from here on.\n";
  body << "  threadgroup_barrier(mem_flags::mem_threadgroup);\n";
}

void MSLKernelEmitter::emitInitState() {
  body << "\n  // attn.init_state: this lane's row keeps m and l; acc is "
          "8x8 fragments.\n";
  body << "  float m = ATTN_NO_SCORE, l = 0.0f;\n";
  body << "  simdgroup_float8x8 acc[" << p.dv / 8 << "];\n";
  body << "  " << kUnroll << "  for (int dn = 0; dn < " << p.dv / 8
       << "; ++dn)\n";
  body << "    acc[dn] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);\n";
}

void MSLKernelEmitter::emitLoadKV(LoadKVOp load, StringRef dst, int64_t width,
                                  StringRef what) {
  StringRef src = load == n.loadK ? "k" : "v";
  const int64_t ld = dst == "k_s" ? p.ldk : p.ldv;
  // 16-byte pieces (uint4: 8 halves or 4 floats) where rows are 16-byte
  // aligned in both memories, else single elements.
  const int64_t ve = p.copyVec ? p.copyVec : 1;
  const std::string piece = p.copyVec ? "uint4" : elt();
  body << "    // attn.load_kv (" << what << "): rows past kv_len are zero and "
       << "read nothing" << (s.blockSize ? ", not even the block table" : "")
       << "; "
       << (p.copyVec ? "16-byte pieces"
                     : "element pieces (fallback: rows not 16-byte aligned)")
       << ", 32-bit offsets inside a ("
       << (s.blockSize  ? "page"
           : s.packedKV ? "sequence"
                        : "batch")
       << ", head) slice.\n";
  if (!s.blockSize)
    body << "    device const " << elt() << " *" << src << "_seq = " << src
         << " + (" << kvSeqOffset(src, load.getSrc()) << ");\n";
  body << "    for (int i = int(tid); i < " << p.bct * width / ve
       << "; i += " << p.threads << ") {\n";
  body << "      const int j = kv_start + i / " << width / ve << ", c = i % "
       << width / ve << (ve > 1 ? " * " + std::to_string(ve) : "") << ";\n";
  body << "      " << piece << " x = " << piece
       << (p.copyVec ? "(0u)" : "(0.0f)") << ";\n";
  body << "      if (j < " << kvLen << ") {\n";
  std::string row;
  if (s.blockSize) {
    body << "        const int page = block_table[batch * "
         << *index.dimOf("block_table", load.getBlockTable(), 1) << " + j / "
         << s.blockSize << "];\n";
    row = src.str() + " + (" +
          offset64(src, load.getSrc(), "page", "kv_head", "0") +
          ") + uint(j % " + std::to_string(s.blockSize) + ") * " +
          strideOf(src, load.getSrc(), 2);
  } else {
    row = src.str() + "_seq + uint(j) * " + kvRowStride(src, load.getSrc());
  }
  if (p.copyVec)
    body << "        x = *(device const uint4 *)(" << row << " + c);\n";
  else
    body << "        x = (" << row << ")[c];\n";
  body << "      }\n";
  if (p.copyVec)
    body << "      *(threadgroup uint4 *)(" << dst << " + (i / " << width / ve
         << ") * " << ld << " + c) = x;\n    }\n";
  else
    body << "      " << dst << "[(i / " << width << ") * " << ld
         << " + c] = x;\n    }\n";
}

void MSLKernelEmitter::emitQK() {
  body << "\n    // attn.qk: S = Q K^T for this simdgroup's 8 rows x " << p.bc
       << " keys, f32 accumulation.\n";
  body << "    simdgroup_float8x8 s[" << p.bc / 8 << "];\n";
  body << "    " << kUnroll << "    for (int nb = 0; nb < " << p.bc / 8
       << "; ++nb) {\n";
  body << "      s[nb] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);\n";
  body << "      " << kUnroll << "      for (int kk = 0; kk < " << p.d / 8
       << "; ++kk) {\n";
  body << "        " << fragType() << " kt;\n";
  body << "        simdgroup_load(kt, k_s + (key_block * " << p.bc
       << " + nb * 8) * " << p.ldk << " + kk * 8, " << p.ldk
       << ", ulong2(0, 0), true);\n";
  body << "        simdgroup_multiply_accumulate(s[nb], q_frag[kk], kt, "
          "s[nb]);\n";
  body << "      }\n    }\n";
}

void MSLKernelEmitter::emitScale(StringRef indent) {
  ScoreTransform score = ScoreTransform::of(n.qk);
  // A score_mod takes the score in natural units; log2(e) comes after it.
  const bool natural = !s.scoreMod.empty();
  if (std::optional<double> c = score.linearFactor())
    body << indent << "x *= " << floatLiteral(natural ? score.scale : *c)
         << ";\n";
  else
    body << indent << "x = "
         << floatLiteral(natural ? *score.softcap : score.tanhOutputFactor())
         << " * precise::tanh(x * " << floatLiteral(score.tanhInputFactor())
         << ");\n";
}

/// The arguments after (b, h, q_idx, kv_idx) of a mod function: the
/// captures, then their dynamic dims.
static std::string captureArgs(ArrayRef<MemRefType> types) {
  std::string args;
  for (size_t c = 0; c < types.size(); ++c)
    args += ", capture" + std::to_string(c);
  for (auto [c, dim] : captureDynamicDims(types))
    args += ", capture" + std::to_string(c) + "_size" + std::to_string(dim);
  return args;
}

std::string MSLKernelEmitter::modVisible(const std::string &builtin,
                                         StringRef head,
                                         StringRef query) const {
  if (s.maskMod.empty())
    return builtin;
  // && evaluates the mask_mod only for keys and rows inside the sequence.
  return builtin + " && " + s.maskMod + "(batch, " + head.str() + ", " +
         query.str() + ", key" + captureArgs(s.captureTypes) + ")";
}

void MSLKernelEmitter::emitModScore(StringRef indent, StringRef head,
                                    StringRef query) {
  if (s.scoreMod.empty()) {
    body << indent << "x = visible ? x : ATTN_NO_SCORE;\n";
    return;
  }
  // ?: calls the score_mod only for visible keys, whose positions are
  // inside the sequence (and so inside the captures they index).
  body << indent << "x = visible ? max(" << s.scoreMod << "(x, batch, " << head
       << ", " << query << ", key" << captureArgs(s.captureTypes) << ") * "
       << floatLiteral(kLog2E) << ", ATTN_NO_SCORE) : ATTN_NO_SCORE;\n";
}

void MSLKernelEmitter::emitCaptureSizes() {
  if (!hasMods() || s.captureSizes < 0)
    return;
  body << "  // The captures' dynamic dims (capture_sizes, in order).\n";
  for (auto [at, cd] : llvm::enumerate(captureDynamicDims(s.captureTypes)))
    body << "  const int capture" << cd.first << "_size" << cd.second
         << " = capture_sizes[" << at << "];\n";
}

void MSLKernelEmitter::emitMask() {
  MaskAttr mask = n.mask.getMask();
  ScoreTransform score = ScoreTransform::of(n.qk);
  // The mask's rules (AttnSemantics.h), printed as MSL expressions.
  TextExprs text;
  MaskRules<TextExprs> rules(text, mask);
  body << "\n    // attn.mask: scores in base-2 units";
  body << (score.softcap ? " after the soft-cap" : "")
       << "; keys past kv_len or hidden by the mask"
       << (hasMods() ? " (or its mask_mod, or in a row past q_len)" : "")
       << " are ATTN_NO_SCORE.\n";
  if (!mask.isNone() || hasMods())
    body << "    const int query = (" << row0 << " + my_row) / " << s.group
         << ";\n";
  if (hasMods())
    body << "    const int head = kv_head * " << s.group << " + (" << row0
         << " + my_row) % " << s.group << ";\n";
  if (!mask.isNone())
    body << "    const int diagonal = "
         << text.add("query", rules.shift(qLen, kvLen)) << ";\n";
  body << "    float row_max = ATTN_NO_SCORE;\n";
  body << "    " << kUnroll << "    for (int nb = 0; nb < " << p.bc / 8
       << "; ++nb)\n";
  body << "      for (int e = 0; e < 2; ++e) {\n";
  body << "        float x = s[nb].thread_elements()[e];\n";
  emitScale("        ");
  body << "        const int key = kv_start + key_block * " << p.bc
       << " + nb * 8 + frag_col + e;\n";
  std::string builtin = rules.visibleFromDiagonal("key", "diagonal", kvLen);
  if (hasMods())
    builtin = "query < " + qLen + " && (" + builtin + ")";
  body << "        const bool visible = "
       << modVisible(builtin, "head", "query") << ";\n";
  emitModScore("        ", "head", "query");
  body << "        s[nb].thread_elements()[e] = x;\n";
  body << "        row_max = max(row_max, x);\n";
  body << "      }\n";
}

void MSLKernelEmitter::emitOnlineSoftmax() {
  body << "\n    // attn.online_softmax: the 4 lanes of a fragment row differ "
          "in lane bits 0 and 3.\n";
  body << "    row_max = max(row_max, simd_shuffle_xor(row_max, 1));\n";
  body << "    row_max = max(row_max, simd_shuffle_xor(row_max, 8));\n";
  body << "    const float m_new = max(m, row_max);\n";
  body << "    // A row that has seen no key keeps m = ATTN_NO_SCORE, l = 0, "
          "acc = 0;\n";
  body << "    // masked keys and empty states get weight 0 by select, not "
          "through exp2.\n";
  body << "    const float rescale = m > ATTN_NO_SCORE ? fast::exp2(m - m_new) "
          ": 0.0f;\n";
  body << "    float row_sum = 0.0f;\n";
  body << "    " << fragType() << " prob[" << p.bc / 8 << "];\n";
  body << "    " << kUnroll << "    for (int nb = 0; nb < " << p.bc / 8
       << "; ++nb)\n";
  body << "      for (int e = 0; e < 2; ++e) {\n";
  body << "        const float x = s[nb].thread_elements()[e];\n";
  body << "        const float pe = x > ATTN_NO_SCORE ? fast::exp2(x - m_new) "
          ": 0.0f;\n";
  body << "        row_sum += pe;\n";
  body << "        prob[nb].thread_elements()[e] = " << elt() << "(pe);\n";
  body << "      }\n";
  body << "    row_sum += simd_shuffle_xor(row_sum, 1);\n";
  body << "    row_sum += simd_shuffle_xor(row_sum, 8);\n";
  body << "    l = l * rescale + row_sum;\n";
  body << "    m = m_new;\n";
}

void MSLKernelEmitter::emitPV() {
  body << "\n    // attn.pv: acc = acc * rescale + P V.\n";
  body << "    " << kUnroll << "    for (int dn = 0; dn < " << p.dv / 8
       << "; ++dn) {\n";
  body << "      acc[dn].thread_elements() *= rescale;\n";
  body << "      " << kUnroll << "      for (int kk = 0; kk < " << p.bc / 8
       << "; ++kk) {\n";
  body << "        " << fragType() << " vt;\n";
  body << "        simdgroup_load(vt, v_s + (key_block * " << p.bc
       << " + kk * 8) * " << p.ldv << " + dn * 8, " << p.ldv << ");\n";
  body << "        simdgroup_multiply_accumulate(acc[dn], prob[kk], vt, "
          "acc[dn]);\n";
  body << "      }\n    }\n";
}

void MSLKernelEmitter::emitFinalizeFromFragments() {
  body << "\n  // attn.finalize + attn.store_o / attn.store_lse, straight "
          "from the fragments.\n";
  body << "  const int f = " << row0 << " + my_row;\n";
  body << "  if (f < q_rows) {\n";
  std::string head = "kv_head * " + std::to_string(s.group) + " + f % " +
                     std::to_string(s.group);
  std::string m = "m", l = "l";
  if (s.sinks >= 0) {
    emitSinkMerge("    ", "m", "l", head);
    body << "    const float inv_l = l_fin > 0.0f ? sink_scale / l_fin : "
            "0.0f;\n";
    m = "m_fin";
    l = "l_fin";
  } else {
    body << "    const float inv_l = l > 0.0f ? 1.0f / l : 0.0f;\n";
  }
  std::string query = "f / " + std::to_string(s.group);
  body << "    const ulong o_row = "
       << qRowOffset("o", n.storeO.getO(), query, head, s.hq, p.dv) << ";\n";
  body << "    " << kUnroll << "    for (int dn = 0; dn < " << p.dv / 8
       << "; ++dn)\n";
  body << "      for (int e = 0; e < 2; ++e)\n";
  body << "        o[o_row + dn * 8 + frag_col + e] = " << outElt()
       << "(acc[dn].thread_elements()[e] * inv_l);\n";
  if (n.storeLse) {
    body << "    if ((lane & 9) == 0) // one lane per row\n";
    body << "      lse["
         << qRowOffset("lse", n.storeLse.getLse(), query, head, s.hq, 1)
         << "] = attn_lse(" << m << ", " << l << ");\n";
  }
  body << "  }\n";
}

void MSLKernelEmitter::emitPartialFromFragments() {
  body << "\n  // attn-split-kv: this split's partial state (m, l, acc "
          "unnormalized) to the workspace.\n";
  body << "  const ulong record = (ulong((batch * " << s.hkv << " + kv_head) * "
       << qTiles << " + q_tile) * " << s.splits << " + split) * "
       << p.br * (p.dv + 2) << ";\n";
  body << "  for (int dn = 0; dn < " << p.dv / 8 << "; ++dn)\n";
  body << "    for (int e = 0; e < 2; ++e)\n";
  body << "      partials[record + my_row * " << p.dv
       << " + dn * 8 + frag_col + e] = acc[dn].thread_elements()[e];\n";
  body << "  if ((lane & 9) == 0) { // one lane per row\n";
  body << "    partials[record + " << p.br * p.dv << " + my_row] = m;\n";
  body << "    partials[record + " << p.br * p.dv + p.br << " + my_row] = l;\n";
  body << "  }\n";
}

void MSLKernelEmitter::emitMergeKeyBlocks() {
  const int64_t kb = p.keyBlocks;
  body << "\n  // attn.merge of the " << kb
       << " key blocks' partial states, in threadgroup memory.\n";
  body << "  threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  body << "  threadgroup float *part_acc = (threadgroup float *)smem; // ["
       << kb << "][" << p.br << "][" << p.dv << "]\n";
  body << "  threadgroup float *part_max = part_acc + " << kb * p.br * p.dv
       << "; // [" << kb << "][" << p.br << "]\n";
  body << "  threadgroup float *part_sum = part_max + " << kb * p.br << ";\n";
  body << "  for (int dn = 0; dn < " << p.dv / 8 << "; ++dn)\n";
  body << "    simdgroup_store(acc[dn], part_acc + (key_block * " << p.br
       << " + row_block * 8) * " << p.dv << " + dn * 8, " << p.dv << ");\n";
  body << "  if ((lane & 9) == 0) {\n";
  body << "    part_max[key_block * " << p.br << " + my_row] = m;\n";
  body << "    part_sum[key_block * " << p.br << " + my_row] = l;\n";
  body << "  }\n";
  body << "  threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  if (split())
    body << "  const ulong record = (ulong((batch * " << s.hkv
         << " + kv_head) * " << qTiles << " + q_tile) * " << s.splits
         << " + split) * " << p.br * (p.dv + 2) << ";\n";
  body << "  for (int i = int(tid); i < " << p.br * p.dv
       << "; i += " << p.threads << ") {\n";
  body << "    const int r = i / " << p.dv << ", c = i % " << p.dv << ";\n";
  body << "    float mr = ATTN_NO_SCORE, lr = 0.0f, ar = 0.0f;\n";
  body << "    for (int b = 0; b < " << kb << "; ++b)\n";
  body << "      attn_merge(mr, lr, ar, part_max[b * " << p.br
       << " + r], part_sum[b * " << p.br << " + r], part_acc[(b * " << p.br
       << " + r) * " << p.dv << " + c]);\n";
  if (split()) {
    body << "    // attn-split-kv: the merged partial state to the "
            "workspace.\n";
    body << "    partials[record + i] = ar;\n";
    body << "    if (c == 0) {\n";
    body << "      partials[record + " << p.br * p.dv << " + r] = mr;\n";
    body << "      partials[record + " << p.br * p.dv + p.br << " + r] = lr;\n";
    body << "    }\n  }\n";
    return;
  }
  body << "    // attn.finalize + attn.store_o / attn.store_lse\n";
  body << "    const int f = " << row0 << " + r;\n";
  body << "    if (f >= q_rows)\n      continue;\n";
  emitStoreElement();
  body << "  }\n";
}

void MSLKernelEmitter::emitStoreElement() {
  std::string head = "kv_head * " + std::to_string(s.group) + " + f % " +
                     std::to_string(s.group);
  std::string query = "f / " + std::to_string(s.group);
  if (s.sinks >= 0)
    body << "    // attention sink: one more score, of no value, in the "
            "state.\n    attn_merge(mr, lr, ar, "
         << sinkLogit(head) << ", 1.0f, 0.0f);\n";
  body << "    o[" << qRowOffset("o", n.storeO.getO(), query, head, s.hq, p.dv)
       << " + c] = " << outElt() << "(lr > 0.0f ? ar / lr : 0.0f);\n";
  if (n.storeLse) {
    body << "    if (c == 0)\n";
    body << "      lse["
         << qRowOffset("lse", n.storeLse.getLse(), query, head, s.hq, 1)
         << "] = attn_lse(mr, lr);\n";
  }
}

/// The kernel's launch facts and signature (its buffers, the spec's
/// operands in order), then its body.
LaunchFacts MSLKernelEmitter::finishKernel(StringRef name, KernelKind kind,
                                           bool partial, bool withTid) {
  LaunchFacts facts;
  facts.name = name.str();
  facts.function = s.func.getSymName().str();
  facts.kind = kind;
  facts.threads = p.threads;
  facts.blockQ = p.br;
  facts.blockKV = p.bct;
  facts.splits = partial ? s.splits : 1;
  facts.smemBytes = p.smemBytes;
  SmallVector<std::string> params;
  auto buffer = [&](StringRef role, int idx, StringRef decl) {
    params.push_back(decl.str() + " [[buffer(" + std::to_string(idx) + ")]]");
    facts.buffers.push_back({role.str(), idx});
  };
  std::string in = "device const " + elt() + " *";
  buffer("q", s.q, in + "q");
  buffer("k", s.k, in + "k");
  buffer("v", s.v, in + "v");
  if (s.cuQ >= 0)
    buffer("cu_seqlens_q", s.cuQ, "device const int *cu_seqlens_q");
  if (s.cuK >= 0)
    buffer("cu_seqlens_k", s.cuK, "device const int *cu_seqlens_k");
  if (s.blockTable >= 0)
    buffer("block_table", s.blockTable, "device const int *block_table");
  if (s.kvLens >= 0)
    buffer("kv_lens", s.kvLens, "device const int *kv_lens");
  if (partial) {
    buffer("partials", s.partials, "device float *partials");
  } else {
    buffer("o", s.o, "device " + outElt() + " *o");
    if (s.lse >= 0)
      buffer("lse", s.lse, "device float *lse");
  }
  buffer("sizes", s.sizes, "constant AttnSizes &sizes");
  if (s.strides >= 0)
    buffer("strides", s.strides, "constant AttnStrides &strides");
  for (auto [c, type] : llvm::enumerate(s.captureTypes)) {
    std::string name = "capture" + std::to_string(c);
    buffer(name, s.captures + c,
           "device const " + mslCaptureElementType(type.getElementType()) +
               " *" + name);
  }
  if (s.captureSizes >= 0)
    buffer("capture_sizes", s.captureSizes, "constant int *capture_sizes");
  if (s.sinks >= 0 && !partial) // a split's partial state has no sink
    buffer("sinks", s.sinks, "device const " + mslType(s.sinkElt) + " *sinks");
  params.push_back("threadgroup uchar *smem [[threadgroup(0)]]");
  params.push_back("uint3 group_id [[threadgroup_position_in_grid]]");
  if (gridTiles())
    params.push_back("uint3 grid [[threadgroups_per_grid]]");
  if (withTid)
    params.push_back("uint tid [[thread_index_in_threadgroup]]");
  params.push_back("uint lane [[thread_index_in_simdgroup]]");
  params.push_back("uint simd [[simdgroup_index_in_threadgroup]]");
  emitSignature(name, params);
  os << bodyText << "}\n";
  return facts;
}

FailureOr<LaunchFacts> MSLKernelEmitter::emitTileKernel(StringRef name,
                                                        KernelKind kind) {
  const bool partial = kind == KernelKind::Partial;
  if (failed(emitIndexArithmetic(partial, /*mergeOnly=*/false)))
    return failure();
  emitCaptureSizes();
  body << "  // This simdgroup's rows and keys; this lane's place in the 8x8 "
          "fragments.\n";
  body << "  const int row_block = int(simd) % " << p.rowBlocks << ";\n";
  body << "  const int key_block = int(simd) / " << p.rowBlocks << ";\n";
  body << "  const int frag_row = int(lane) / 16 * 4 + int(lane) / 2 % 4;\n";
  body << "  const int frag_col = int(lane) / 8 % 2 * 4 + int(lane) % 2 * "
          "2;\n";
  body << "  const int my_row = row_block * 8 + frag_row;\n";
  emitLoadQ();
  emitInitState();
  body << "\n  // The K/V loop (attn.kv_loop): one K and one V tile of "
       << p.bct << " rows per step.\n";
  body << "  threadgroup " << elt() << " *k_s = (threadgroup " << elt()
       << " *)smem;\n";
  body << "  threadgroup " << elt() << " *v_s = (threadgroup " << elt()
       << " *)(smem + " << p.kBytes << ");\n";
  body << "  for (int kv_start = " << kvBegin << "; kv_start < " << kvEnd
       << "; kv_start += " << p.bct << ") {\n";
  emitLoadKV(n.loadK, "k_s", p.d, "K");
  emitLoadKV(n.loadV, "v_s", p.dv, "V");
  body << "    threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  emitQK();
  emitMask();
  emitOnlineSoftmax();
  emitPV();
  body << "    // The next tile overwrites K and V.\n";
  body << "    threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  body << "  }\n";
  if (p.keyBlocks > 1)
    emitMergeKeyBlocks();
  else if (partial)
    emitPartialFromFragments();
  else
    emitFinalizeFromFragments();

  return finishKernel(name, kind, partial, /*withTid=*/true);
}

FailureOr<LaunchFacts> MSLKernelEmitter::emitVectorKernel(StringRef name,
                                                          KernelKind kind) {
  const bool partial = kind == KernelKind::VectorPartial;
  if (failed(emitIndexArithmetic(partial, /*mergeOnly=*/false)))
    return failure();
  emitCaptureSizes();
  const int64_t lanes = p.lanes, keyGroups = 32 / lanes, ek = p.ek, ev = p.ev;
  const std::string t = elt(), g = groupText();
  const std::string unroll = kUnroll;
  const bool paged = s.blockSize != 0;
  Value kMem = n.loadK.getSrc(), vMem = n.loadV.getSrc();

  body << "  // One flat row (query, head) per threadgroup; its keys are "
          "strided over "
       << kVectorSimdgroups << " simdgroups,\n  // " << keyGroups
       << " key(s) per simdgroup at a time, " << lanes
       << " lanes per key, each lane holding " << ek << " of D and " << ev
       << " of Dv.\n";
  body << "  if (row0 >= q_rows)\n    return;\n";
  body << "  const int query = row0 / " << g << ", head = kv_head * " << g
       << " + row0 % " << g << ";\n";
  body << "  const int piece = int(lane) % " << lanes
       << "; // this lane's piece of a key row\n";
  body << "  const int key_slot = int(simd) * " << keyGroups
       << " + int(lane) / " << lanes << ";\n";
  // n consecutive elements at `ptr` into the float array `dst`, through
  // 4-element vectors when the plan allows.
  auto loadPiece = [&](StringRef indent, StringRef ptr, int64_t count,
                       StringRef use) {
    // `use(i, x)`: the statement for element i with value x.
    auto stmt = [&](const std::string &i, const std::string &x) {
      std::string text = use.str();
      for (auto [from, to] :
           {std::pair<StringRef, std::string>{"$i", i}, {"$x", x}}) {
        size_t at;
        while ((at = text.find(from.str())) != std::string::npos)
          text.replace(at, from.size(), to);
      }
      return text;
    };
    if (p.vecLoads && p.aligned16 && p.eltBytes == 2 && count % 8 == 0) {
      // 16 bytes a load: 8 halves or bfloats as a uint4, split by as_type.
      body << indent << unroll << indent << "for (int i = 0; i < " << count / 8
           << "; ++i) {\n";
      body << indent << "  const uint4 raw = *((device const uint4 *)(" << ptr
           << ") + i);\n";
      for (int h = 0; h < 2; ++h) {
        const std::string half = h ? "hi" : "lo";
        body << indent << "  const float4 " << half << " = float4(as_type<" << t
             << "4>(raw." << (h ? "zw" : "xy") << "));\n";
        for (auto [c, comp] : llvm::enumerate(StringRef("xyzw")))
          body << indent << "  "
               << stmt("8 * i + " + std::to_string(4 * h + c),
                       half + "." + std::string(1, comp))
               << "\n";
      }
      body << indent << "}\n";
    } else if (p.vecLoads) {
      body << indent << unroll << indent << "for (int i = 0; i < " << count / 4
           << "; ++i) {\n";
      body << indent << "  const " << t << "4 raw = *((device const " << t
           << "4 *)(" << ptr << ") + i);\n";
      body << indent << "  const float4 x = float4(raw);\n";
      for (auto [c, comp] : llvm::enumerate(StringRef("xyzw")))
        body << indent << "  "
             << stmt("4 * i + " + std::to_string(c),
                     "x." + std::string(1, comp))
             << "\n";
      body << indent << "}\n";
    } else {
      body << indent << unroll << indent << "for (int i = 0; i < " << count
           << "; ++i)\n";
      body << indent << "  " << stmt("i", "float(" + ptr.str() + "[i])")
           << "\n";
    }
  };
  body << "  // Loads: "
       << (!p.vecLoads ? "scalar (fallback: the pieces are not multiples of "
                         "4 elements, or a stride is not)"
           : p.eltBytes == 2 && p.aligned16
               ? "16-byte uint4 loads for pieces of 8 elements, else "
                 "4-element vectors"
               : "4-element vectors (" + std::to_string(4 * p.eltBytes) +
                     " bytes" +
                     (p.eltBytes == 2 ? "; fallback: rows not 16-byte aligned"
                                      : "") +
                     ")")
       << "; " << ek * p.eltBytes << " bytes of K a lane a key.\n";
  body << "  device const " << t << " *q_row = q + ("
       << qRowOffset("q", n.loadQ.getQ(), "query", "head", s.hq, p.d)
       << ") + piece * " << ek << ";\n";
  body << "  float qv[" << ek << "];\n";
  loadPiece("  ", "q_row", ek, "qv[$i] = $x;");
  body << "\n  // attn.init_state: each lane group's (m, l) and its lanes' "
          "acc pieces.\n";
  body << "  float m = ATTN_NO_SCORE, l = 0.0f, acc[" << ev << "];\n";
  body << "  " << unroll << "  for (int i = 0; i < " << ev
       << "; ++i)\n    acc[i] = 0.0f;\n";

  // 32-bit offsets inside a (batch or page, head) slice; 64-bit bases.
  std::string kRow = kvRowStride("k", kMem), vRow = kvRowStride("v", vMem);
  auto kType = cast<MemRefType>(kMem.getType());
  bool index32 = true;
  if (!paged && !s.packedKV && !kType.isDynamicDim(2)) {
    auto [kStrides, kOff] = kType.getStridesAndOffset();
    auto [vStrides, vOff] =
        cast<MemRefType>(vMem.getType()).getStridesAndOffset();
    for (int64_t stride : {kStrides[2], vStrides[2]})
      if (!ShapedType::isDynamic(stride) &&
          kType.getDimSize(2) * stride >= (int64_t(1) << 32))
        index32 = false;
  }
  const std::string idx = index32 ? "uint" : "ulong";
  body << "\n  // The K/V range of the L1 nest: its tiles of " << p.bct
       << " keys from kv_begin while below kv_end.\n";
  body << "  const int key_stop = " << kvBegin << " + attn_ceil_div(max("
       << kvEnd << " - " << kvBegin << ", 0), " << p.bct << ") * " << p.bct
       << ";\n";
  if (index32)
    body << "  // Key offsets are 32-bit inside a ("
         << (paged ? "page" : "batch")
         << ", head) slice of K and V: this needs "
         << (paged ? "the block's rows" : "Sk") << " * row stride < 2^32.\n";
  else
    body << "  // Key offsets are 64-bit: the static Sk * row stride reaches "
            "2^32.\n";
  if (!paged) {
    body << "  device const " << t << " *k_seq = k + ("
         << kvSeqOffset("k", kMem) << ");\n";
    body << "  device const " << t << " *v_seq = v + ("
         << kvSeqOffset("v", vMem) << ");\n";
  }
  body << "  for (int j0 = " << kvBegin
       << "; j0 < key_stop; j0 += " << kVectorSimdgroups * keyGroups << ") {\n";
  body << "    const int key = j0 + key_slot;\n";
  body << "    const bool in_range = key < key_stop && key < " << kvLen
       << ";\n";
  std::string kRowPtr, vRowPtr;
  if (paged) {
    body << "    // attn.load_kv through the block table: keys past kv_len "
            "read nothing.\n";
    body << "    const int page = in_range ? block_table[batch * "
         << *index.dimOf("block_table", n.loadK.getBlockTable(), 1)
         << " + key / " << s.blockSize << "] : 0;\n";
    body << "    const " << idx << " in_page = " << idx << "(key % "
         << s.blockSize << ");\n";
    kRowPtr = "k + (" + offset64("k", kMem, "page", "kv_head", "0") +
              ") + in_page * " + kRow + " + piece * " + std::to_string(ek);
    vRowPtr = "v + (" + offset64("v", vMem, "page", "kv_head", "0") +
              ") + in_page * " + vRow + " + piece * " + std::to_string(ev);
  } else {
    kRowPtr = "k_seq + " + idx + "(key) * " + kRow + " + piece * " +
              std::to_string(ek);
    vRowPtr = "v_seq + " + idx + "(key) * " + vRow + " + piece * " +
              std::to_string(ev);
  }
  body << "    // attn.qk: this lane's part of q . k, summed over the " << lanes
       << " lanes of the key.\n";
  body << "    float dot = 0.0f;\n";
  body << "    if (in_range) {\n";
  body << "      device const " << t << " *k_row = " << kRowPtr << ";\n";
  loadPiece("      ", "k_row", ek, "dot += qv[$i] * $x;");
  body << "    }\n";
  for (int64_t off = 1; off < lanes; off *= 2)
    body << "    dot += simd_shuffle_xor(dot, " << off << ");\n";

  // attn.mask, printed from the mask's rules as in emitMask.
  MaskAttr mask = n.mask.getMask();
  ScoreTransform score = ScoreTransform::of(n.qk);
  TextExprs text;
  MaskRules<TextExprs> rules(text, mask);
  body << "    // attn.mask: the score in base-2 units"
       << (score.softcap ? " after the soft-cap" : "") << ".\n";
  body << "    float x = dot;\n";
  emitScale("    ");
  if (!mask.isNone())
    body << "    const int diagonal = "
         << text.add("query", rules.shift(qLen, kvLen)) << ";\n";
  body << "    const bool visible = "
       << modVisible("key < key_stop && (" +
                         rules.visibleFromDiagonal("key", "diagonal", kvLen) +
                         ")",
                     "head", "query")
       << ";\n";
  body << "    // attn.online_softmax: weights of hidden keys and empty "
          "states are 0 by select.\n";
  emitModScore("    ", "head", "query");
  body << "    const float m_new = max(m, x);\n";
  body << "    const float rescale = m > ATTN_NO_SCORE ? fast::exp2(m - m_new) "
          ": 0.0f;\n";
  body << "    const float pe = visible ? fast::exp2(x - m_new) : 0.0f;\n";
  body << "    l = l * rescale + pe;\n";
  body << "    m = m_new;\n";
  body << "    // attn.pv: acc = acc * rescale + p v; hidden keys read no V.\n";
  body << "    " << unroll << "    for (int i = 0; i < " << ev
       << "; ++i)\n      acc[i] *= rescale;\n";
  body << "    if (visible) {\n";
  body << "      device const " << t << " *v_row = " << vRowPtr << ";\n";
  loadPiece("      ", "v_row", ev, "acc[$i] += pe * $x;");
  body << "    }\n  }\n";

  // attn.merge, 1: the lane groups of a simdgroup (lanes differing in the
  // bits above the key's lanes) hold different keys' states.
  if (keyGroups > 1) {
    body << "\n  // attn.merge of the " << keyGroups
         << " lane groups of this simdgroup (lane bits of " << lanes
         << " and up).\n";
    for (int64_t off = lanes; off < 32; off *= 2) {
      body << "  {\n";
      body << "    const float m1 = simd_shuffle_xor(m, " << off
           << "), l1 = simd_shuffle_xor(l, " << off << ");\n";
      body << "    const float m_new = max(m, m1);\n";
      body << "    const float s0 = m > ATTN_NO_SCORE ? fast::exp2(m - m_new) "
              ": 0.0f;\n";
      body << "    const float s1 = m1 > ATTN_NO_SCORE ? fast::exp2(m1 - "
              "m_new) : 0.0f;\n";
      body << "    l = l * s0 + l1 * s1;\n";
      body << "    " << unroll << "    for (int i = 0; i < " << ev
           << "; ++i)\n";
      body << "      acc[i] = acc[i] * s0 + simd_shuffle_xor(acc[i], " << off
           << ") * s1;\n";
      body << "    m = m_new;\n  }\n";
    }
  }
  // attn.merge, 2: the simdgroups, through threadgroup memory, as MLX's
  // sdpa_vector: lane t reads simdgroup t's (m, l); the accumulators go
  // through a padded 32 x 33 block, 32 output elements per round, and
  // simdgroup s sums element s of the round over the simdgroups.
  const int64_t rounds = (p.dv + 31) / 32;
  body << "\n  // attn.merge of the " << kVectorSimdgroups
       << " simdgroups in threadgroup memory: lane t takes simdgroup t's "
          "state; then "
       << rounds << " round(s) of 32 output elements, element s of a round "
       << "summed by simdgroup s.\n";
  body << "  threadgroup float *sg_m = (threadgroup float *)smem; // ["
       << kVectorSimdgroups << "]\n";
  body << "  threadgroup float *sg_l = sg_m + " << kVectorSimdgroups << ";\n";
  body << "  threadgroup float *sg_acc = sg_l + " << kVectorSimdgroups
       << "; // [32 elements][33: simdgroups + 1 padding]\n";
  body << "  if (lane == 0) {\n    sg_m[simd] = m;\n    sg_l[simd] = l;\n  }\n";
  body << "  threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  body << "  const float m_t = sg_m[lane];\n";
  body << "  const float m_all = simd_max(m_t);\n";
  body << "  const float w_t = m_t > ATTN_NO_SCORE ? fast::exp2(m_t - m_all) "
          ": 0.0f;\n";
  body << "  const float l_all = simd_sum(sg_l[lane] * w_t);\n";
  std::string record;
  if (partial) {
    body << "  // attn-split-kv: this split's state (acc unnormalized, m, l) "
            "to the workspace.\n";
    body << "  const ulong record = (ulong((batch * " << s.hkv
         << " + kv_head) * " << qTiles << " + q_tile) * " << s.splits
         << " + split) * " << p.dv + 2 << ";\n";
  } else {
    body << "  const ulong o_row = "
         << qRowOffset("o", n.storeO.getO(), "query", "head", s.hq, p.dv)
         << ";\n";
  }
  // The sink's state merged into the row's: the output takes sink_scale.
  std::string mAll = "m_all", lAll = "l_all", oScale = "a / l_all";
  if (s.sinks >= 0 && !partial) {
    emitSinkMerge("  ", "m_all", "l_all", "head");
    mAll = "m_fin";
    lAll = "l_fin";
    oScale = "a * sink_scale / l_fin";
  }
  body << "  for (int r = 0; r < " << rounds << "; ++r) {\n";
  body << "    if (lane < " << lanes << ") { // one copy of the accumulator\n";
  body << "      " << unroll << "      for (int i = 0; i < " << ev
       << "; ++i) {\n";
  body << "        const int e = piece * " << ev << " + i - r * 32;\n";
  body << "        if (e >= 0 && e < 32)\n";
  body << "          sg_acc[e * 33 + simd] = acc[i];\n";
  body << "      }\n    }\n";
  body << "    threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  body << "    const int e = r * 32 + int(simd);\n";
  body << "    // e is uniform in the simdgroup: the simd_sum runs on all its "
          "lanes or none.\n";
  body << "    const float a = e < " << p.dv
       << " ? simd_sum(sg_acc[simd * 33 + lane] * w_t) : 0.0f;\n";
  body << "    if (lane == 0 && e < " << p.dv << ")\n";
  if (partial)
    body << "      partials[record + e] = a;\n";
  else
    body << "      o[o_row + e] = " << outElt() << "(" << lAll << " > 0.0f ? "
         << oScale << " : 0.0f);\n";
  body << "    threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  body << "  }\n";
  if (partial) {
    body << "  if (simd == 0 && lane == 0) {\n";
    body << "    partials[record + " << p.dv << "] = m_all;\n";
    body << "    partials[record + " << p.dv + 1 << "] = l_all;\n  }\n";
  } else if (n.storeLse) {
    body << "  if (simd == 0 && lane == 0)\n";
    body << "    lse["
         << qRowOffset("lse", n.storeLse.getLse(), "query", "head", s.hq, 1)
         << "] = attn_lse(" << mAll << ", " << lAll << ");\n";
  }

  return finishKernel(name, kind, partial, /*withTid=*/false);
}

FailureOr<LaunchFacts> MSLKernelEmitter::emitMergeKernel(StringRef name) {
  if (failed(emitIndexArithmetic(/*inSplit=*/false, /*mergeOnly=*/true)))
    return failure();
  body << "\n  // The merge loop of attn-split-kv: attn.merge of the "
       << s.splits << " partial states in split order (results do not depend "
       << "on scheduling), then attn.finalize + store_o / store_lse.\n";
  body << "  const ulong records = ulong((batch * " << s.hkv << " + kv_head) * "
       << qTiles << " + q_tile) * " << s.splits << ";\n";
  body << "  for (int i = int(tid); i < " << p.br * p.dv
       << "; i += " << kMergeThreads << ") {\n";
  body << "    const int r = i / " << p.dv << ", c = i % " << p.dv << ";\n";
  body << "    const int f = " << row0 << " + r;\n";
  body << "    if (f >= q_rows)\n      continue;\n";
  body << "    float mr = ATTN_NO_SCORE, lr = 0.0f, ar = 0.0f;\n";
  body << "    for (int split = 0; split < " << s.splits << "; ++split) {\n";
  body << "      const ulong record = (records + split) * " << p.br * (p.dv + 2)
       << ";\n";
  body << "      attn_merge(mr, lr, ar, partials[record + " << p.br * p.dv
       << " + r], partials[record + " << p.br * p.dv + p.br
       << " + r], partials[record + i]);\n";
  body << "    }\n";
  emitStoreElement();
  body << "  }\n";

  LaunchFacts facts;
  facts.name = name.str();
  facts.function = s.func.getSymName().str();
  facts.kind = KernelKind::Merge;
  facts.threads = kMergeThreads;
  facts.blockQ = p.br;
  facts.blockKV = p.bct;
  SmallVector<std::string> params;
  auto buffer = [&](StringRef role, int idx, StringRef decl) {
    params.push_back(decl.str() + " [[buffer(" + std::to_string(idx) + ")]]");
    facts.buffers.push_back({role.str(), idx});
  };
  if (s.cuQ >= 0)
    buffer("cu_seqlens_q", s.cuQ, "device const int *cu_seqlens_q");
  buffer("o", s.o, "device " + outElt() + " *o");
  if (s.lse >= 0)
    buffer("lse", s.lse, "device float *lse");
  buffer("sizes", s.sizes, "constant AttnSizes &sizes");
  buffer("partials", s.partials, "device const float *partials");
  if (s.strides >= 0)
    buffer("strides", s.strides, "constant AttnStrides &strides");
  if (s.sinks >= 0)
    buffer("sinks", s.sinks, "device const " + mslType(s.sinkElt) + " *sinks");
  params.push_back("uint3 group_id [[threadgroup_position_in_grid]]");
  if (gridTiles())
    params.push_back("uint3 grid [[threadgroups_per_grid]]");
  params.push_back("uint tid [[thread_index_in_threadgroup]]");
  emitSignature(name, params);
  os << bodyText << "}\n";
  return facts;
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

struct FunctionFacts {
  Spec spec;
  Plan plan;
  /// Both a one-pass and a two-pass variant: the host picks by Sk.
  bool dispatch = false;
  SmallVector<LaunchFacts> kernels;
};

/// What the kernels of a function need from Metal. simdgroup_matrix needs
/// MSL 2.3 and an Apple7-class GPU (M1, A14) or newer; bfloat needs MSL 3.1.
/// They are correct under Metal's default fast math (no infinities or NaNs
/// relied on), so a host may keep it: math_mode "fast".
struct MetalNeeds {
  int version = 230; // __METAL_VERSION__: 230 = MSL 2.3
  StringRef gpuFamily = "apple7";
  StringRef mathMode = "fast";
  std::string versionText() const {
    return std::to_string(version / 100) + "." +
           std::to_string(version / 10 % 10);
  }
};

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

//===----------------------------------------------------------------------===//
// attn.cache_append: one copy kernel per spec function
//===----------------------------------------------------------------------===//

constexpr int64_t kAppendThreads = 128;
constexpr int64_t kAppendTokens = 32;

/// What the host needs to launch one append kernel.
struct AppendFacts {
  func::FuncOp func;
  CacheAppendOp op;
  std::string name;
  Type elt;
  int64_t hkv = 1, d = 0, dv = 0, blockSize = 0, tokens = 0, vec = 1;
  SmallVector<std::pair<std::string, int>> buffers;
};

MetalNeeds needsOf(const AppendFacts &a) {
  MetalNeeds needs;
  if (a.elt.isBF16())
    needs.version = 310;
  return needs;
}

LogicalResult checkSupported(CacheAppendOp op) {
  if (op.isQuantized())
    return op.emitError()
           << "the msl tier does not lower a quantizing cache append ("
           << cast<MemRefType>(op.getKCache().getType()).getElementType()
           << " cache) yet; the CPU pipeline (attn-to-cpu) runs it";
  std::pair<StringRef, Value> operands[] = {
      {"k_new", op.getKNew()},
      {"v_new", op.getVNew()},
      {"block_table", op.getBlockTable()},
      {"kv_lens", op.getKvLens()},
      {"new_lens", op.getNewLens()},
      {"slot_mapping", op.getSlotMapping()},
      {"k_cache", op.getKCache()},
      {"v_cache", op.getVCache()}};
  return checkBuffers(op, operands);
}

/// "32" for a static dim, else `sizes.<field>`.
std::string sizeOf(Value memref, int64_t dim, StringRef field) {
  int64_t size = cast<MemRefType>(memref.getType()).getDimSize(dim);
  if (!ShapedType::isDynamic(size))
    return std::to_string(size);
  return ("sizes." + field).str();
}

/// The kernel of `op`: threadgroups (ceil(S_new / T), Hkv, B) of 128
/// threads; each thread copies vec-element pieces of the T tokens' K rows,
/// then V rows, with the op's rules for what is skipped.
FailureOr<AppendFacts> emitAppend(func::FuncOp func, CacheAppendOp op,
                                  raw_ostream &os) {
  if (failed(checkSupported(op)))
    return failure();
  AppendFacts a;
  a.func = func;
  a.op = op;
  a.name = (func.getSymName() + "_append").str();
  a.elt = cast<MemRefType>(op.getKNew().getType()).getElementType();
  a.hkv = op.getNumKVHeads();
  a.d = op.getHeadDim();
  a.dv = op.getValueHeadDim();
  a.blockSize = op.isSlotMapped() ? 0 : op.getBlockSize();
  a.vec = a.d % 4 == 0 && a.dv % 4 == 0 ? 4 : 1;
  const bool slotted = op.isSlotMapped();
  int64_t sNew =
      cast<MemRefType>(op.getKNew().getType()).getDimSize(slotted ? 0 : 2);
  a.tokens = ShapedType::isDynamic(sNew)
                 ? kAppendTokens
                 : std::min<int64_t>(kAppendTokens, llvm::PowerOf2Ceil(sNew));
  const std::string t = mslType(a.elt);
  const std::string piece = a.vec == 4 ? t + "4" : t;

  SmallVector<std::string> params;
  int next = 0;
  auto buffer = [&](StringRef role, StringRef decl) {
    params.push_back(decl.str() + " [[buffer(" + std::to_string(next) + ")]]");
    a.buffers.push_back({role.str(), next++});
  };
  buffer("k_new", "device const " + t + " *k_new");
  buffer("v_new", "device const " + t + " *v_new");
  if (op.getBlockTable())
    buffer("block_table", "device const int *block_table");
  if (op.getKvLens())
    buffer("kv_lens", "device const int *kv_lens");
  if (op.getNewLens())
    buffer("new_lens", "device const int *new_lens");
  if (slotted)
    buffer("slot_mapping", "device const int *slot_mapping");
  buffer("k_cache", "device " + t + " *k_cache");
  buffer("v_cache", "device " + t + " *v_cache");
  buffer("sizes", "constant AttnAppendSizes &sizes");
  params.push_back("uint3 group_id [[threadgroup_position_in_grid]]");
  params.push_back("uint tid [[thread_index_in_threadgroup]]");

  Value kn = op.getKNew(), kc = op.getKCache();
  const std::string sNewText = sizeOf(kn, slotted ? 0 : 2, "S_new");
  if (slotted) {
    // Packed tokens [T, Hkv, D] to slot_mapping's slots of [N, Hkv, R, D]
    // (sizes: S_new = T, num_blocks = N, capacity = R).
    os << "// attn.cache_append of @" << func.getSymName() << ": " << a.tokens
       << " packed tokens per threadgroup to their slots, " << a.vec
       << "-element pieces.\n";
    os << "kernel void " << a.name << "(";
    for (auto [i, param] : llvm::enumerate(params))
      os << (i ? ",\n    " : "\n    ") << param;
    os << ") {\n";
    os << "  const int h = int(group_id.y);\n";
    os << "  const int first = int(group_id.x) * " << a.tokens << ";\n";
    os << "  const int tokens = " << sNewText << ";\n";
    os << "  const int rows = " << sizeOf(kc, 2, "capacity") << ";\n";
    os << "  const long slots = long(" << sizeOf(kc, 0, "num_blocks")
       << ") * rows;\n";
    for (auto [src, dst, width] :
         {std::tuple<StringRef, StringRef, int64_t>{"k_new", "k_cache", a.d},
          {"v_new", "v_cache", a.dv}}) {
      const int64_t perRow = width / a.vec;
      os << "  for (int i = int(tid); i < " << a.tokens * perRow
         << "; i += " << kAppendThreads << ") {\n";
      os << "    const int t = first + i / " << perRow << ";\n";
      os << "    const int col = i % " << perRow << " * " << a.vec << ";\n";
      os << "    if (t >= tokens)\n      continue;\n";
      os << "    // A slot outside the cache (vLLM's padding -1) is "
            "skipped.\n";
      os << "    const long s = slot_mapping[t];\n";
      os << "    if (s < 0 || s >= slots)\n      continue;\n";
      os << "    const long to = ((s / rows * " << a.hkv
         << " + h) * rows + s % rows) * " << width << " + col;\n";
      os << "    const long from = (long(t) * " << a.hkv << " + h) * " << width
         << " + col;\n";
      if (a.vec == 1)
        os << "    " << dst << "[to] = " << src << "[from];\n";
      else
        os << "    *(device " << piece << " *)(" << dst << " + to) = *(device "
           << "const " << piece << " *)(" << src << " + from);\n";
      os << "  }\n";
    }
    os << "}\n\n";
    return a;
  }
  os << "// attn.cache_append of @" << func.getSymName() << ": " << a.tokens
     << " new tokens per threadgroup, " << a.vec << "-element pieces.\n";
  os << "kernel void " << a.name << "(";
  for (auto [i, param] : llvm::enumerate(params))
    os << (i ? ",\n    " : "\n    ") << param;
  os << ") {\n";
  os << "  const int b = int(group_id.z), h = int(group_id.y);\n";
  os << "  const int first = int(group_id.x) * " << a.tokens << ";\n";
  os << "  const int s_new = " << sNewText << ";\n";
  os << "  // The sequence's rows start at max(kv_lens[b], 0); the first "
        "`count`\n  // of its new tokens fit (the capacity or the block "
        "table), the rest\n  // are skipped.\n";
  os << "  const int start = max(kv_lens[b], 0);\n";
  if (op.getNewLens())
    os << "  const int n = min(max(new_lens[b], 0), s_new);\n";
  else
    os << "  const int n = s_new;\n";
  if (a.blockSize)
    os << "  const int limit = " << sizeOf(op.getBlockTable(), 1, "max_blocks")
       << " * " << a.blockSize << ";\n";
  else
    os << "  const int limit = " << sizeOf(kc, 2, "capacity") << ";\n";
  os << "  const int count = clamp(limit - start, 0, n);\n";
  if (a.blockSize)
    os << "  const int num_blocks = " << sizeOf(kc, 0, "num_blocks") << ";\n"
       << "  const int max_blocks = "
       << sizeOf(op.getBlockTable(), 1, "max_blocks") << ";\n";
  for (auto [src, dst, width] :
       {std::tuple<StringRef, StringRef, int64_t>{"k_new", "k_cache", a.d},
        {"v_new", "v_cache", a.dv}}) {
    const int64_t perRow = width / a.vec;
    os << "  for (int i = int(tid); i < " << a.tokens * perRow
       << "; i += " << kAppendThreads << ") {\n";
    os << "    const int t = first + i / " << perRow << ";\n";
    os << "    const int col = i % " << perRow << " * " << a.vec << ";\n";
    os << "    if (t >= count)\n      continue;\n";
    os << "    const int pos = start + t;\n";
    if (a.blockSize) {
      os << "    const int slot = block_table[long(b) * max_blocks + pos / "
         << a.blockSize << "];\n";
      os << "    if (slot < 0 || slot >= num_blocks)\n      continue;\n";
      os << "    const long to = ((long(slot) * " << a.hkv << " + h) * "
         << a.blockSize << " + pos % " << a.blockSize << ") * " << width
         << " + col;\n";
    } else {
      os << "    const long to = ((long(b) * " << a.hkv << " + h) * long("
         << sizeOf(kc, 2, "capacity") << ") + pos) * " << width << " + col;\n";
    }
    os << "    const long from = ((long(b) * " << a.hkv
       << " + h) * long(s_new) + t) * " << width << " + col;\n";
    if (a.vec == 1)
      os << "    " << dst << "[to] = " << src << "[from];\n";
    else
      os << "    *(device " << piece << " *)(" << dst << " + to) = *(device "
         << "const " << piece << " *)(" << src << " + from);\n";
    os << "  }\n";
  }
  os << "}\n\n";
  return a;
}

void writeAppendCommentFacts(raw_ostream &os, ArrayRef<AppendFacts> appends) {
  for (AppendFacts a : appends) { // the op accessors are not const
    os << "// attn.kernel " << a.name << " host=" << a.func.getSymName()
       << " tier=msl kind=append threads=" << kAppendThreads
       << " tokens=" << a.tokens << "\n";
    os << "//   grid=(ceil(S_new / " << a.tokens << "), " << a.hkv
       << ", B) threadgroup(0)=0 bytes\n";
    os << "//   buffers:";
    for (auto &[role, idx] : a.buffers)
      os << " " << role << "=" << idx;
    os << "\n";
  }
}

void writeAppendJsonFacts(raw_ostream &os, ArrayRef<AppendFacts> appends) {
  os << ",\n  \"appends\": [";
  for (auto [i, facts] : llvm::enumerate(appends)) {
    AppendFacts a = facts; // the op accessors are not const
    MetalNeeds needs = needsOf(a);
    os << (i ? "," : "") << "\n    {\"name\": \"" << a.func.getSymName()
       << "\", \"kernel\": \"" << a.name << "\", \"dtype\": \""
       << dtypeName(a.elt) << "\",\n     \"kv_heads\": " << a.hkv
       << ", \"head_dim\": " << a.d << ", \"value_head_dim\": " << a.dv
       << ", \"block_size\": " << a.blockSize
       << ", \"new_lens\": " << (a.op.getNewLens() ? "true" : "false")
       << ", \"slot_mapping\": " << (a.op.getSlotMapping() ? "true" : "false")
       << ",\n     \"msl_version\": \"" << needs.versionText()
       << "\", \"threads_per_threadgroup\": [" << kAppendThreads
       << ", 1, 1], \"tokens_per_threadgroup\": " << a.tokens
       << ",\n     \"threadgroups_per_grid\": [\"ceil(S_new / " << a.tokens
       << ")\", \"" << a.hkv << "\", \"B\"],\n"
       << "     \"sizes\": {\"fields\": [\"B\", \"S_new\", \"capacity\", "
          "\"max_blocks\", \"num_blocks\"], \"type\": \"int32\"},\n"
       << "     \"buffers\": {";
    for (auto [bi, buffer] : llvm::enumerate(a.buffers))
      os << (bi ? ", " : "") << "\"" << buffer.first << "\": " << buffer.second;
    os << "}}";
  }
  os << "\n  ]";
}

/// "ceil(G * Sq / block_q)" and friends, for people reading the facts.
/// A packed Q's grid: the nest's (B, Hkv, ceil(G * max_q_len / block_q))
/// with max_q_len a bound the host gives (at least the longest sequence's
/// q_len, at most the spec's max_q_len); a tile past its sequence's rows
/// exits early (its K/V loop is empty, it stores no row).
std::string gridX(const FunctionFacts &f, const LaunchFacts &k) {
  std::string sq = f.spec.packedQ ? "max_q_len" : "Sq";
  std::optional<int64_t> qLen = AttentionOp(f.spec.op).getStaticQueryLength();
  if (qLen && !f.spec.packedQ)
    sq = std::to_string(*qLen);
  std::string x = "ceil(" + std::to_string(f.spec.group) + " * " + sq + " / " +
                  std::to_string(k.blockQ) + ")";
  if (k.splits > 1)
    x += " * " + std::to_string(k.splits);
  return x;
}

/// The static cost of one kernel: what a reader compares with MLX's.
struct Cost {
  int64_t threadgroupsAtB1 = 0; // B = 1, Sq = 1 where Sq is dynamic
  int64_t readersPerKey = 0;    // threadgroups that read each K/V row
  int64_t bytesPerKey = 0;      // K + V bytes a threadgroup reads per key
  int64_t loadsPerKey = 0;      // load instructions issued for them
  int64_t loadBytes = 0;        // bytes per load instruction
};

Cost costOf(const FunctionFacts &f, const LaunchFacts &k) {
  Cost c;
  const Spec &s = f.spec;
  const Plan &p = f.plan;
  const int64_t sq = AttentionOp(s.op).getStaticQueryLength().value_or(1);
  const int64_t tiles = (s.group * sq + k.blockQ - 1) / k.blockQ;
  c.threadgroupsAtB1 = tiles * k.splits * s.hkv;
  if (k.kind == KernelKind::Merge)
    return c;
  c.readersPerKey = tiles;
  c.bytesPerKey = (s.d + s.dv) * p.eltBytes;
  if (p.vector) {
    int64_t perLoad = p.vecLoads ? 4 : 1;
    if (p.vecLoads && p.aligned16 && p.eltBytes == 2 && p.ek % 8 == 0 &&
        p.ev % 8 == 0)
      perLoad = 8;
    c.loadsPerKey = p.lanes * (p.ek + p.ev) / perLoad;
    c.loadBytes = perLoad * p.eltBytes;
  } else {
    const int64_t perLoad = p.copyVec ? p.copyVec : 1;
    c.loadsPerKey = (s.d + s.dv) / perLoad;
    c.loadBytes = perLoad * p.eltBytes;
  }
  return c;
}

std::string gridZ(const FunctionFacts &f) {
  AttentionOp op = f.spec.op;
  // A packed Q's B is cu_seqlens_q's length - 1.
  int64_t batch =
      op.isPackedQ()
          ? cast<MemRefType>(op.getCuSeqlensQ().getType()).getDimSize(0)
          : cast<MemRefType>(op.getQ().getType()).getDimSize(0);
  if (op.isPackedQ() && !ShapedType::isDynamic(batch))
    --batch;
  return ShapedType::isDynamic(batch) ? "B" : std::to_string(batch);
}

void writeCommentFacts(raw_ostream &os, ArrayRef<FunctionFacts> functions,
                       ArrayRef<AppendFacts> appends,
                       ArrayRef<MergeFacts> merges) {
  os << "// Generated by attn-translate --attn-to-msl (the msl tier of attn).\n"
        "// Checked only through attn's CPU emulator of MSL (runtime/msl); no\n"
        "// Metal compiler or Apple GPU has run it.\n"
        "//\n"
        "// Buffers are row-major (or strided where a kernel takes strides,\n"
        "// innermost stride 1): q [B, Hq, Sq, D], k and v\n"
        "// [B, Hkv, Sk, D(v)] (paged: [num_blocks, Hkv, block_size, D]),\n"
        "// o [B, Hq, Sq, Dv], lse [B, Hq, Sq] (f32), block_table\n"
        "// [B, max_blocks] and kv_lens [B] (int). `sizes` holds the\n"
        "// AttnSizes below; fields of static dims must match the spec.\n"
        "// Split-K: partials holds, per (batch, kv_head, q_tile, split),\n"
        "// block_q x Dv acc, then block_q m, then block_q l (f32).\n"
        "// Packed (varlen) forms: q, o [total_q, Hq, D(v)], lse [total_q, "
        "Hq]\n"
        "// by cu_seqlens_q, k, v [total_k, Hkv, D(v)] by cu_seqlens_k ([B + "
        "1]\n"
        "// int, monotone, within the buffers); a packed Q's Sq is max_q_len.\n"
        "// Cache appends: k_new, v_new [B, Hkv, S_new, D(v)] into k_cache,\n"
        "// v_cache [B, Hkv, capacity, D(v)] or paged, with AttnAppendSizes.\n"
        "// The host binds buffers at 16-byte aligned offsets (16-byte "
        "loads),\n"
        "// gives dynamic strides that are multiples of 16 bytes, and keeps\n"
        "// Sk x the K/V row stride below 2^32 (32-bit key offsets).\n"
        "//\n"
        "// Launch facts (grid = threadgroups_per_grid (x, y, z)):\n";
  for (const FunctionFacts &f : functions) {
    for (const LaunchFacts &k : f.kernels) {
      os << "// attn.kernel " << k.name << " host=" << k.function
         << " tier=msl kind=" << kindName(k.kind) << " threads=" << k.threads
         << " block_q=" << k.blockQ << " block_kv=" << k.blockKV
         << " group=" << f.spec.group << " splits=" << k.splits << "\n";
      os << "//   grid=(" << gridX(f, k) << ", " << f.spec.hkv << ", "
         << gridZ(f) << ") threadgroup(0)=" << k.smemBytes << " bytes\n";
      if (f.spec.packedQ || f.spec.packedKV)
        os << "//   packed (varlen):"
           << (f.spec.packedQ ? " q, o [total_q, Hq, D(v)], lse [total_q, Hq] "
                                "by cu_seqlens_q [B + 1];"
                              : "")
           << (f.spec.packedKV ? " k, v [total_k, Hkv, D(v)] by cu_seqlens_k "
                                 "[B + 1];"
                               : "")
           << (f.spec.packedQ
                   ? " max_q_len: the host's bound, at least "
                     "the longest sequence's q_len" +
                         (f.spec.maxQLen
                              ? ", at most " + std::to_string(f.spec.maxQLen)
                              : std::string()) +
                         ";"
                   : "")
           << (f.spec.packedQ ? " tiles past a sequence's rows exit early" : "")
           << "\n";
      os << "//   buffers:";
      for (auto &[role, idx] : k.buffers)
        os << " " << role << "=" << idx;
      os << "\n";
      MetalNeeds needs = needsOf(f.spec);
      os << "//   msl_version=" << needs.versionText()
         << " gpu_family=" << needs.gpuFamily << " math_mode=" << needs.mathMode
         << (k.variant.empty() ? "" : " variant=" + k.variant) << "\n";
      Cost c = costOf(f, k);
      os << "//   cost: " << k.threads << " threads/threadgroup, "
         << c.threadgroupsAtB1 << " threadgroups at B=1 (Sq=1 if dynamic), "
         << k.smemBytes << " threadgroup bytes";
      if (c.readersPerKey)
        os << "; per key: " << c.readersPerKey << " threadgroup(s) read "
           << c.bytesPerKey << " bytes of K+V each, in " << c.loadsPerKey
           << " loads of " << c.loadBytes << " bytes";
      os << "\n";
    }
    if (f.dispatch)
      os << "// dispatch " << f.kernels.front().function
         << ": the one_pass kernel while Sk < " << kTwoPassMinKeys
         << ", else the two_pass kernels (" << kTwoPassSplits << " splits)\n";
  }
  writeAppendCommentFacts(os, appends);
  writeMergeCommentFacts(os, merges);
  MetalNeeds needs = needsOf(functions);
  for (const AppendFacts &a : appends)
    needs.version = std::max(needs.version, needsOf(a).version);
  for (const MergeFacts &m : merges)
    needs.version = std::max(needs.version, m.version());
  os << "//\n"
        "// Needs MSL "
     << needs.versionText()
     << " or newer (MTLCompileOptions.languageVersion): simdgroup_matrix\n"
        "// needs 2.3"
     << (needs.version >= 310 ? ", bfloat 3.1" : "")
     << ", on an Apple7-family GPU (M1, A14) or newer. Correct under\n"
        "// Metal's default fast math (fastMathEnabled): no infinity or NaN "
        "is relied on.\n\n";
  os << "#if defined(__METAL_VERSION__) && __METAL_VERSION__ < "
     << needs.version << "\n"
     << "#error \"these kernels need MSL " << needs.versionText()
     << " or newer\"\n#endif\n\n";
}

/// The strides of strided operands (-1: dynamic, given in AttnStrides).
void writeJsonLayouts(raw_ostream &os, Spec s) {
  std::pair<StringRef, Value> roles[] = {{"q", s.op.getQ()},
                                         {"k", s.op.getK()},
                                         {"v", s.op.getV()},
                                         {"o", s.op.getO()}};
  std::string text;
  for (auto [role, value] : roles) {
    auto type = cast<MemRefType>(value.getType());
    if (type.getLayout().isIdentity())
      continue;
    auto [strides, offset] = type.getStridesAndOffset();
    text += (text.empty() ? "" : ", ") + ("\"" + role + "\": [").str();
    for (auto [i, stride] : llvm::enumerate(strides))
      text += (i ? ", " : "") +
              std::to_string(ShapedType::isDynamic(stride) ? -1 : stride);
    text += "]";
  }
  if (text.empty())
    return;
  os << "      \"strides\": {\"buffer\": " << s.strides << ", " << text
     << "},\n";
}

/// The spec's mod regions and their captures: each capture's buffer,
/// element type and shape (-1: a dynamic dim, whose size goes in
/// capture_sizes, in order).
void writeJsonMods(raw_ostream &os, Spec s) {
  if (!s.op.hasMods() && s.captureTypes.empty())
    return;
  os << "      \"mods\": {\"score_mod\": "
     << (s.op.hasScoreMod() ? "true" : "false")
     << ", \"mask_mod\": " << (s.op.hasMaskMod() ? "true" : "false")
     << ", \"inlined\": [" << (s.scoreMod.empty() ? "" : "\"score_mod\"")
     << (!s.scoreMod.empty() && !s.maskMod.empty() ? ", " : "")
     << (s.maskMod.empty() ? "" : "\"mask_mod\"") << "],\n";
  os << "               \"captures\": [";
  for (auto [c, type] : llvm::enumerate(s.captureTypes)) {
    std::string elt;
    llvm::raw_string_ostream eltOs(elt);
    type.getElementType().print(eltOs);
    os << (c ? ", " : "") << "{\"buffer\": " << s.captures + c
       << ", \"dtype\": \"" << elt << "\", \"shape\": [";
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      os << (d ? ", " : "") << (ShapedType::isDynamic(size) ? -1 : size);
    os << "]}";
  }
  os << "]";
  if (s.captureSizes >= 0)
    os << ",\n               \"capture_sizes\": {\"buffer\": " << s.captureSizes
       << ", \"type\": \"int32\", \"fields\": \"each capture's dynamic "
          "dims, in order\"}";
  os << "},\n";
}

void writeJsonFacts(raw_ostream &os, ArrayRef<FunctionFacts> functions,
                    ArrayRef<AppendFacts> appends,
                    ArrayRef<MergeFacts> merges) {
  MetalNeeds fileNeeds = needsOf(functions);
  for (const AppendFacts &a : appends)
    fileNeeds.version = std::max(fileNeeds.version, needsOf(a).version);
  for (const MergeFacts &m : merges)
    fileNeeds.version = std::max(fileNeeds.version, m.version());
  os << "{\n  \"tier\": \"msl\",\n  \"msl_version\": \""
     << fileNeeds.versionText() << "\", \"gpu_family\": \""
     << fileNeeds.gpuFamily << "\", \"math_mode\": \"" << fileNeeds.mathMode
     << "\",\n  \"functions\": [";
  for (auto [fi, f] : llvm::enumerate(functions)) {
    Spec s = f.spec;
    MaskAttr mask = s.op.getMaskOrNone();
    os << (fi ? "," : "") << "\n    {\n";
    os << "      \"name\": \"" << s.func.getSymName() << "\",\n";
    os << "      \"dtype\": \"" << dtypeName(s.elt) << "\", \"out_dtype\": \""
       << dtypeName(s.outElt) << "\",\n";
    os << "      \"q_heads\": " << s.hq << ", \"kv_heads\": " << s.hkv
       << ", \"group\": " << s.group << ", \"head_dim\": " << s.d
       << ", \"value_head_dim\": " << s.dv << ",\n";
    os << "      \"scale\": " << llvm::format("%.9g", s.op.getScaleOrDefault())
       << ", \"softcap\": "
       << llvm::format("%.9g", s.op.getSoftcap()
                                   ? s.op.getSoftcap()->convertToDouble()
                                   : 0.0)
       << ",\n";
    os << "      \"mask\": {\"text\": \"" << describeMask(mask)
       << "\", \"left\": " << mask.getLeft()
       << ", \"right\": " << mask.getRight()
       << ", \"bottom_right\": " << (mask.isBottomRight() ? "true" : "false")
       << "},\n";
    os << "      \"block_size\": " << s.blockSize
       << ", \"lse\": " << (s.hasLse ? "true" : "false")
       << ", \"kv_lens\": " << (s.hasKvLens ? "true" : "false")
       << ", \"splits\": " << s.splits << ",\n";
    if (s.sinks >= 0) // the sinks buffer's element type
      os << "      \"sinks\": \"" << dtypeName(s.sinkElt) << "\",\n";
    os << "      \"sizes\": {\"buffer\": " << s.sizes
       << ", \"fields\": [\"B\", \"Sq\", \"Sk\", \"max_blocks\"], "
          "\"type\": \"int32\"},\n";
    writeJsonLayouts(os, s);
    writeJsonMods(os, s);
    if (s.packedQ || s.packedKV)
      os << "      \"packed\": {\"q\": " << (s.packedQ ? "true" : "false")
         << ", \"kv\": " << (s.packedKV ? "true" : "false")
         << ", \"max_q_len\": " << (s.maxQLen ? s.maxQLen : -1)
         << ", \"grid\": \""
         << (s.packedQ
                 ? std::string("(ceil(G * max_q_len / block_q) * splits, "
                               "Hkv, B); max_q_len: ") +
                       "the host's bound, at least the longest q_len" +
                       (s.maxQLen ? ", at most the spec's max_q_len"
                                  : std::string(" (-1 here: none)")) +
                       "; tiles past a sequence's rows exit early"
                 : std::string("as padded: (ceil(G * Sq / block_q) * splits, "
                               "Hkv, B)"))
         << "\", \"offsets\": \"int32 [B + 1], monotone\"},\n";
    os << "      \"host_requires\": [\"buffers at 16-byte aligned offsets\", "
          "\"dynamic strides multiples of 16 bytes\", \"Sk * K/V row stride "
          "< 2^32\"],\n";
    if (f.dispatch)
      os << "      \"dispatch\": {\"two_pass_from_sk\": " << kTwoPassMinKeys
         << "},\n";
    if (s.splits > 0)
      os << "      \"partials\": {\"buffer\": " << s.partials
         << ", \"floats\": \"B * " << s.hkv << " * "
         << "ceil(" << s.group << " * " << (s.packedQ ? "max_q_len" : "Sq")
         << " / " << f.plan.br << ") * " << s.splits << " * "
         << f.plan.br * (f.plan.dv + 2) << "\"},\n";
    MetalNeeds needs = needsOf(s);
    os << "      \"kernels\": [";
    for (auto [ki, k] : llvm::enumerate(f.kernels)) {
      os << (ki ? "," : "") << "\n        {\"name\": \"" << k.name
         << "\", \"kind\": \"" << kindName(k.kind)
         << "\", \"pass\": " << (k.kind == KernelKind::Merge ? 2 : 1)
         << ",\n         \"msl_version\": \"" << needs.versionText()
         << "\", \"gpu_family\": \"" << needs.gpuFamily
         << "\", \"math_mode\": \"" << needs.mathMode << "\""
         << (k.variant.empty() ? "" : ", \"variant\": \"" + k.variant + "\"")
         << ",\n         \"threads_per_threadgroup\": [" << k.threads
         << ", 1, 1], \"block_q\": " << k.blockQ
         << ", \"block_kv\": " << k.blockKV << ", \"splits\": " << k.splits
         << ",\n         \"threadgroups_per_grid\": [\"" << gridX(f, k)
         << "\", \"" << s.hkv << "\", \"" << gridZ(f) << "\"],\n"
         << "         \"threadgroup_memory_bytes\": ["
         << (k.kind == KernelKind::Merge ? "" : std::to_string(k.smemBytes))
         << "],\n";
      Cost c = costOf(f, k);
      os << "         \"cost\": {\"threadgroups_at_b1\": " << c.threadgroupsAtB1
         << ", \"threadgroups_reading_each_key\": " << c.readersPerKey
         << ", \"bytes_per_key\": " << c.bytesPerKey
         << ", \"loads_per_key\": " << c.loadsPerKey
         << ", \"load_bytes\": " << c.loadBytes << "},\n";
      os << "         \"buffers\": {";
      for (auto [bi, buffer] : llvm::enumerate(k.buffers))
        os << (bi ? ", " : "") << "\"" << buffer.first
           << "\": " << buffer.second;
      os << "}}";
    }
    os << "\n      ]\n    }";
  }
  os << "\n  ]";
  writeAppendJsonFacts(os, appends);
  if (!merges.empty())
    writeMergeJsonFacts(os, merges);
  os << "\n}\n";
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

} // namespace

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
