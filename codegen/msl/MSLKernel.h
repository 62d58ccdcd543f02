//===- MSLKernel.h - the msl tier's shared parts ----------------*- C++ -*-===//
//
// What the files of the msl tier share: MSLEmitter.cpp (plans, checks,
// each spec function's translation, the prelude), MSLKernelEmitter.cpp
// and MSLVectorKernel.cpp (a kernel's text from its L1 nest),
// MSLAppend.cpp (attn.cache_append's copy kernels) and MSLFacts.cpp (the
// launch facts, as comments and JSON). Internal to codegen/msl.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_MSL_MSLKERNEL_H
#define ATTN_CODEGEN_MSL_MSLKERNEL_H

#include "codegen/msl/MSLEmitter.h"
#include "codegen/msl/MSLTypes.h"
#include "codegen/msl/MergeStatesMSL.h"
#include "dialect/AttnDialect.h"
#include "lib/Transforms/L1Nest.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::attn::msl::detail {

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

/// Simdgroups of the vector decode kernel: 1024 threads, as MLX's
/// sdpa_vector.
constexpr int64_t kVectorSimdgroups = 32;
/// From this many keys (static Sk) the vector decode runs two passes
/// (MLX's sdpa_vector_2pass starts at 1024 keys on large GPUs), with this
/// many splits (MLX: 32 blocks).
constexpr int64_t kTwoPassMinKeys = 1024;
constexpr int64_t kTwoPassSplits = 32;

/// A float literal MSL and C++ read the same way (always with a 'f').
std::string floatLiteral(double v);
std::string intLiteral(int64_t v);

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

/// Every present operand of `op` is a kernel buffer (MSLEmitter.cpp).
LogicalResult checkBuffers(Operation *op,
                           ArrayRef<std::pair<StringRef, Value>> operands,
                           ArrayRef<StringRef> strided = {});

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

StringRef kindName(KernelKind kind);

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

MetalNeeds needsOf(const Spec &s);
/// The file compiles once, so it needs the most any of its kernels needs.
MetalNeeds needsOf(ArrayRef<FunctionFacts> functions);

/// What the host needs to launch one append kernel.
struct AppendFacts {
  func::FuncOp func;
  CacheAppendOp op;
  std::string name;
  Type elt;
  int64_t hkv = 1, d = 0, dv = 0, blockSize = 0, tokens = 0, vec = 1;
  SmallVector<std::pair<std::string, int>> buffers;
};

MetalNeeds needsOf(const AppendFacts &a);
/// attn.cache_append's copy kernel for `func` (MSLAppend.cpp).
FailureOr<AppendFacts> emitAppend(func::FuncOp func, CacheAppendOp op,
                                  raw_ostream &os);
void writeAppendCommentFacts(raw_ostream &os, ArrayRef<AppendFacts> appends);
void writeAppendJsonFacts(raw_ostream &os, ArrayRef<AppendFacts> appends);

/// The mask as the facts print it (MSLEmitter.cpp).
std::string describeMask(MaskAttr mask);

/// The launch facts of every kernel of the file: comment lines before the
/// source, and the JSON (MSLFacts.cpp).
void writeCommentFacts(raw_ostream &os, ArrayRef<FunctionFacts> functions,
                       ArrayRef<AppendFacts> appends,
                       ArrayRef<MergeFacts> merges);
void writeJsonFacts(raw_ostream &os, ArrayRef<FunctionFacts> functions,
                    ArrayRef<AppendFacts> appends, ArrayRef<MergeFacts> merges);

} // namespace mlir::attn::msl::detail

#endif // ATTN_CODEGEN_MSL_MSLKERNEL_H
