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
//   attn.mask         scale (or soft-cap) and mask on thread_elements()
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
//===----------------------------------------------------------------------===//

#include "codegen/msl/MSLEmitter.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnSemantics.h"
#include "lib/Transforms/L1Nest.h"
#include "lib/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::attn;

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

std::string mslType(Type t) {
  if (t.isF16())
    return "half";
  if (t.isBF16())
    return "bfloat";
  return "float";
}

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
};

/// Threadgroup memory of a plan: the Q staging tile, the K/V tiles and the
/// merge area are used one after the other, so they share one block.
Plan makePlan(int64_t br, int64_t bct, bool decode, int64_t d, int64_t dv,
              int64_t eltBytes) {
  Plan p;
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
  p.qBytes = br * d * eltBytes;
  p.kBytes = bct * d * eltBytes;
  p.vBytes = bct * dv * eltBytes;
  if (p.keyBlocks > 1)
    p.mergeBytes = p.keyBlocks * br * (dv + 2) * 4;
  int64_t bytes = std::max({p.qBytes, p.kBytes + p.vBytes, p.mergeBytes});
  p.smemBytes = (bytes + 15) / 16 * 16;
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
  /// Fixed buffer indices of the spec's kernels (-1: absent).
  int q = 0, k = 1, v = 2, blockTable = -1, kvLens = -1, o = -1, lse = -1,
      sizes = -1, partials = -1;
};

/// Every present operand of `op` is a kernel buffer: a function argument,
/// contiguous row-major, in the default memory space.
LogicalResult checkBuffers(Operation *op,
                           ArrayRef<std::pair<StringRef, Value>> operands) {
  for (auto [name, value] : operands) {
    if (!value)
      continue;
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      return op->emitError() << "the msl tier binds each operand to a kernel "
                               "buffer; operand '"
                            << name << "' must be an argument of the function";
    auto type = cast<MemRefType>(value.getType());
    if (!type.getLayout().isIdentity())
      return op->emitError()
             << "the msl tier takes contiguous row-major buffers; operand '"
             << name << "' has layout " << type.getLayout()
             << " (view it as a contiguous memref)";
    if (type.getMemorySpace())
      return op->emitError() << "the msl tier takes buffers in the default "
                               "memory space; operand '"
                            << name << "' is in " << type.getMemorySpace();
  }
  return success();
}

/// Refuses what this tier cannot do, naming the rule.
LogicalResult checkSupported(AttentionOp op) {
  if (op.isPackedQ() || op.isPackedKV())
    return op.emitError() << "the msl tier does not take the packed (varlen) "
                             "forms yet (operand '"
                          << (op.isPackedQ() ? "cu_seqlens_q" : "cu_seqlens_k")
                          << "'); pad the batch to [B, H, S, D], or use the "
                             "CPU or NVIDIA targets";
  const int64_t d = op.getHeadDim(), dv = op.getValueHeadDim();
  if (d % 8 || dv % 8 || d > kMaxHeadDim || dv > kMaxHeadDim)
    return op.emitError() << "the msl tier needs head dims that are "
                             "multiples of 8 up to "
                          << kMaxHeadDim
                          << " (simdgroup_matrix 8x8); got D = " << d
                          << ", Dv = " << dv;
  std::pair<StringRef, Value> operands[] = {
      {"q", op.getQ()},           {"k", op.getK()},
      {"v", op.getV()},           {"o", op.getO()},
      {"lse", op.getLse()},       {"block_table", op.getBlockTable()},
      {"kv_lens", op.getKvLens()}};
  return checkBuffers(op, operands);
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
    else if (auto dim = dyn_cast<memref::DimOp>(def)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      auto it = roles.find(dim.getSource());
      if (!index || it == roles.end())
        return fail(v);
      FailureOr<std::string> size = dimOf(it->second, dim.getSource(), *index);
      if (failed(size))
        return fail(v);
      expr = *size;
    } else if (auto load = dyn_cast<memref::LoadOp>(def)) {
      auto it = roles.find(load.getMemRef());
      if (it == roles.end() || it->second != "kv_lens")
        return fail(v);
      expr = "kv_lens[" + args[0] + "]";
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

  bool paged = false;

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

enum class KernelKind { Prefill, Decode, Partial, Merge };

StringRef kindName(KernelKind kind) {
  switch (kind) {
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
  /// The second pass of split-K.
  FailureOr<LaunchFacts> emitMergeKernel(StringRef name);

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
  void emitMask();
  void emitOnlineSoftmax();
  void emitPV();
  void emitFinalizeFromFragments();
  /// o[row, c] = ar / lr and, for c == 0, lse[row], for the merged state
  /// (mr, lr, ar) of tile element (r, c) with flat row f.
  void emitStoreElement();
  void emitMergeKeyBlocks();
  void emitPartialFromFragments();
  /// Element offset of row (query, head) of a [B, H, Sq, width] buffer.
  std::string qRowOffset(StringRef role, Value memref, StringRef query,
                         StringRef head, int64_t heads, int64_t width);
  void emitSignature(StringRef name, ArrayRef<std::string> params);

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
  std::string sq = *index.dimOf(role, memref, 2);
  std::string offset = "(ulong(batch) * " + std::to_string(heads) + " + " +
                       head.str() + ") * " + sq + " + " + query.str();
  if (width == 1)
    return offset;
  return "(" + offset + ") * " + std::to_string(width);
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
  if (failed(get(n.loadQ.getRow(), row0)) ||
      failed(get(n.mask.getQLen(), qLen)))
    return failure();
  // The merge kernel of split-K reads no K/V.
  if (!mergeOnly && (failed(get(n.mask.getKvLen(), kvLen)) ||
                     failed(get(n.kvLoop.getLowerBound(), kvBegin)) ||
                     failed(get(n.kvLoop.getUpperBound(), kvEnd))))
    return failure();
  if (split()) {
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
  body << "\n  // attn.load_q: tile row r is query (row0 + r) / " << s.group
       << " of head kv_head * " << s.group << " + (row0 + r) % " << s.group
       << "; rows past the end are zero.\n";
  body << "  threadgroup " << elt() << " *q_s = (threadgroup " << elt()
       << " *)smem;\n";
  body << "  for (int i = int(tid); i < " << p.br * p.d
       << "; i += " << p.threads << ") {\n";
  body << "    const int r = i / " << p.d << ", c = i % " << p.d << ";\n";
  body << "    const int f = " << row0 << " + r;\n";
  body << "    " << elt() << " x = " << elt() << "(0.0f);\n";
  body << "    if (f < q_rows)\n";
  body << "      x = q["
       << qRowOffset("q", n.loadQ.getQ(), "f / " + std::to_string(s.group),
                     "kv_head * " + std::to_string(s.group) + " + f % " +
                         std::to_string(s.group),
                     s.hq, p.d)
       << " + c];\n";
  body << "    q_s[i] = x;\n  }\n";
  body << "  threadgroup_barrier(mem_flags::mem_threadgroup);\n";
  body << "  " << fragType() << " q_frag[" << p.d / 8 << "];\n";
  body << "  for (int kk = 0; kk < " << p.d / 8 << "; ++kk)\n";
  body << "    simdgroup_load(q_frag[kk], q_s + row_block * " << 8 * p.d
       << " + kk * 8, " << p.d << ");\n";
  body << "  // K/V tiles reuse Q's threadgroup memory from here on.\n";
  body << "  threadgroup_barrier(mem_flags::mem_threadgroup);\n";
}

void MSLKernelEmitter::emitInitState() {
  body << "\n  // attn.init_state: this lane's row keeps m and l; acc is "
          "8x8 fragments.\n";
  body << "  float m = ATTN_NO_SCORE, l = 0.0f;\n";
  body << "  simdgroup_float8x8 acc[" << p.dv / 8 << "];\n";
  body << "  for (int dn = 0; dn < " << p.dv / 8 << "; ++dn)\n";
  body << "    acc[dn] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);\n";
}

void MSLKernelEmitter::emitLoadKV(LoadKVOp load, StringRef dst, int64_t width,
                                  StringRef what) {
  StringRef src = load == n.loadK ? "k" : "v";
  body << "    // attn.load_kv (" << what << "): rows past kv_len are zero and "
       << "read nothing" << (s.blockSize ? ", not even the block table" : "")
       << ".\n";
  body << "    for (int i = int(tid); i < " << p.bct * width
       << "; i += " << p.threads << ") {\n";
  body << "      const int j = kv_start + i / " << width << ", c = i % "
       << width << ";\n";
  body << "      " << elt() << " x = " << elt() << "(0.0f);\n";
  body << "      if (j < " << kvLen << ") {\n";
  if (s.blockSize) {
    body << "        const int page = block_table[batch * "
         << *index.dimOf("block_table", load.getBlockTable(), 1) << " + j / "
         << s.blockSize << "];\n";
    body << "        x = " << src << "[((ulong(page) * " << s.hkv
         << " + kv_head) * " << s.blockSize << " + j % " << s.blockSize
         << ") * " << width << " + c];\n";
  } else {
    body << "        x = " << src << "[((ulong(batch) * " << s.hkv
         << " + kv_head) * " << *index.dimOf(src, load.getSrc(), 2)
         << " + j) * " << width << " + c];\n";
  }
  body << "      }\n      " << dst << "[i] = x;\n    }\n";
}

void MSLKernelEmitter::emitQK() {
  body << "\n    // attn.qk: S = Q K^T for this simdgroup's 8 rows x " << p.bc
       << " keys, f32 accumulation.\n";
  body << "    simdgroup_float8x8 s[" << p.bc / 8 << "];\n";
  body << "    for (int nb = 0; nb < " << p.bc / 8 << "; ++nb) {\n";
  body << "      s[nb] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);\n";
  body << "      for (int kk = 0; kk < " << p.d / 8 << "; ++kk) {\n";
  body << "        " << fragType() << " kt;\n";
  body << "        simdgroup_load(kt, k_s + (key_block * " << p.bc
       << " + nb * 8) * " << p.d << " + kk * 8, " << p.d
       << ", ulong2(0, 0), true);\n";
  body << "        simdgroup_multiply_accumulate(s[nb], q_frag[kk], kt, "
          "s[nb]);\n";
  body << "      }\n    }\n";
}

void MSLKernelEmitter::emitMask() {
  MaskAttr mask = n.mask.getMask();
  ScoreTransform score = ScoreTransform::of(n.qk);
  // The mask's rules (AttnSemantics.h), printed as MSL expressions.
  TextExprs text;
  MaskRules<TextExprs> rules(text, mask);
  body << "\n    // attn.mask: scores in base-2 units";
  body << (score.softcap ? " after the soft-cap" : "")
       << "; keys past kv_len or hidden by the mask are ATTN_NO_SCORE.\n";
  if (!mask.isNone())
    body << "    const int query = (" << row0 << " + my_row) / " << s.group
         << ";\n"
         << "    const int diagonal = "
         << text.add("query", rules.shift(qLen, kvLen)) << ";\n";
  body << "    float row_max = ATTN_NO_SCORE;\n";
  body << "    for (int nb = 0; nb < " << p.bc / 8 << "; ++nb)\n";
  body << "      for (int e = 0; e < 2; ++e) {\n";
  body << "        float x = s[nb].thread_elements()[e];\n";
  if (std::optional<double> c = score.linearFactor()) {
    body << "        x *= " << floatLiteral(*c) << ";\n";
  } else {
    body << "        x = " << floatLiteral(score.tanhOutputFactor())
         << " * precise::tanh(x * " << floatLiteral(score.tanhInputFactor())
         << ");\n";
  }
  body << "        const int key = kv_start + key_block * " << p.bc
       << " + nb * 8 + frag_col + e;\n";
  body << "        const bool visible = "
       << rules.visibleFromDiagonal("key", "diagonal", kvLen) << ";\n";
  body << "        x = visible ? x : ATTN_NO_SCORE;\n";
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
  body << "    for (int nb = 0; nb < " << p.bc / 8 << "; ++nb)\n";
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
  body << "    for (int dn = 0; dn < " << p.dv / 8 << "; ++dn) {\n";
  body << "      acc[dn].thread_elements() *= rescale;\n";
  body << "      for (int kk = 0; kk < " << p.bc / 8 << "; ++kk) {\n";
  body << "        " << fragType() << " vt;\n";
  body << "        simdgroup_load(vt, v_s + (key_block * " << p.bc
       << " + kk * 8) * " << p.dv << " + dn * 8, " << p.dv << ");\n";
  body << "        simdgroup_multiply_accumulate(acc[dn], prob[kk], vt, "
          "acc[dn]);\n";
  body << "      }\n    }\n";
}

void MSLKernelEmitter::emitFinalizeFromFragments() {
  body << "\n  // attn.finalize + attn.store_o / attn.store_lse, straight "
          "from the fragments.\n";
  body << "  const int f = " << row0 << " + my_row;\n";
  body << "  if (f < q_rows) {\n";
  body << "    const float inv_l = l > 0.0f ? 1.0f / l : 0.0f;\n";
  std::string head = "kv_head * " + std::to_string(s.group) + " + f % " +
                     std::to_string(s.group);
  std::string query = "f / " + std::to_string(s.group);
  body << "    const ulong o_row = "
       << qRowOffset("o", n.storeO.getO(), query, head, s.hq, p.dv) << ";\n";
  body << "    for (int dn = 0; dn < " << p.dv / 8 << "; ++dn)\n";
  body << "      for (int e = 0; e < 2; ++e)\n";
  body << "        o[o_row + dn * 8 + frag_col + e] = " << outElt()
       << "(acc[dn].thread_elements()[e] * inv_l);\n";
  if (n.storeLse) {
    body << "    if ((lane & 9) == 0) // one lane per row\n";
    body << "      lse["
         << qRowOffset("lse", n.storeLse.getLse(), query, head, s.hq, 1)
         << "] = attn_lse(m, l);\n";
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
  body << "    o[" << qRowOffset("o", n.storeO.getO(), query, head, s.hq, p.dv)
       << " + c] = " << outElt() << "(lr > 0.0f ? ar / lr : 0.0f);\n";
  if (n.storeLse) {
    body << "    if (c == 0)\n";
    body << "      lse["
         << qRowOffset("lse", n.storeLse.getLse(), query, head, s.hq, 1)
         << "] = attn_lse(mr, lr);\n";
  }
}

FailureOr<LaunchFacts> MSLKernelEmitter::emitTileKernel(StringRef name,
                                                        KernelKind kind) {
  const bool partial = kind == KernelKind::Partial;
  if (failed(emitIndexArithmetic(partial, /*mergeOnly=*/false)))
    return failure();
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
  params.push_back("threadgroup uchar *smem [[threadgroup(0)]]");
  params.push_back("uint3 group_id [[threadgroup_position_in_grid]]");
  params.push_back("uint tid [[thread_index_in_threadgroup]]");
  params.push_back("uint lane [[thread_index_in_simdgroup]]");
  params.push_back("uint simd [[simdgroup_index_in_threadgroup]]");
  emitSignature(name, params);
  os << bodyText << "}\n";
  return facts;
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
  buffer("o", s.o, "device " + outElt() + " *o");
  if (s.lse >= 0)
    buffer("lse", s.lse, "device float *lse");
  buffer("sizes", s.sizes, "constant AttnSizes &sizes");
  buffer("partials", s.partials, "device const float *partials");
  params.push_back("uint3 group_id [[threadgroup_position_in_grid]]");
  params.push_back("uint tid [[thread_index_in_threadgroup]]");
  emitSignature(name, params);
  os << bodyText << "}\n";
  return facts;
}

//===----------------------------------------------------------------------===//
// The translation
//===----------------------------------------------------------------------===//

StringRef dtypeName(Type t) {
  return t.isF16() ? "f16" : t.isBF16() ? "bf16" : "f32";
}

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

struct FunctionFacts {
  Spec spec;
  Plan plan;
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
  s.splits = options.splits;
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
  int next = 3;
  if (op.isPaged())
    s.blockTable = next++;
  if (s.hasKvLens)
    s.kvLens = next++;
  s.o = next++;
  if (s.hasLse)
    s.lse = next++;
  s.sizes = next++;
  if (s.splits > 0)
    s.partials = next++;

  int64_t qLen = cast<MemRefType>(op.getQ().getType()).getDimSize(2);
  if (options.kernel == "auto")
    s.decode = !ShapedType::isDynamic(qLen) && s.group * qLen <= kDecodeRows;
  else
    s.decode = options.kernel == "decode";

  // Tile sizes: the largest K/V tile whose threadgroup memory fits.
  const int64_t eltBytes = s.elt.isF32() ? 4 : 2;
  const int64_t br = s.decode ? kDecodeRows : kPrefillRows;
  int64_t bct = 0;
  Plan smallest;
  for (int64_t candidate : {32, 16, 8}) {
    Plan plan = makePlan(br, candidate, s.decode, s.d, s.dv, eltBytes);
    smallest = plan;
    if (plan.smemBytes <= kMaxThreadgroupBytes) {
      bct = candidate;
      break;
    }
  }
  if (!bct)
    return op.emitError() << "the msl tier needs " << smallest.smemBytes
                          << " bytes of threadgroup memory for D = " << s.d
                          << ", Dv = " << s.dv << ", " << dtypeName(s.elt)
                          << ", tiles " << br << "x" << smallest.bct
                          << "; Metal allows " << kMaxThreadgroupBytes;

  OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
  FailureOr<func::FuncOp> tiled = tileCopy(func, *scratch, br, bct, s.splits);
  if (failed(tiled))
    return failure();
  scf::ForallOp forall;
  tiled->walk([&](scf::ForallOp f) {
    if (!forall && !f->getParentOfType<scf::ForallOp>())
      forall = f;
  });
  if (!forall)
    return op.emitError("attn-to-msl: attn-tile built no loop nest"), failure();
  FailureOr<L1Nest> nest = matchL1Nest(forall, "attn-to-msl");
  if (failed(nest))
    return failure();

  // The tile sizes the nest has: the op's schedule may override ours.
  auto qTile = cast<RankedTensorType>(nest->loadQ.getTile().getType());
  auto kTile = cast<RankedTensorType>(nest->loadK.getTile().getType());
  const int64_t tileQ = qTile.getDimSize(0), tileKV = kTile.getDimSize(0);
  if (tileQ % 8 || tileKV % 8 || tileQ > 64 || tileKV > 64 ||
      (s.decode && tileQ != kDecodeRows))
    return op.emitError() << "the msl tier needs block_q "
                          << (s.decode ? "= 8 (decode)" : "in {8, 16, 32, 64}")
                          << " and block_kv in {8, 16, 32, 64}; got block_q = "
                          << tileQ << ", block_kv = " << tileKV;
  Plan plan = makePlan(tileQ, tileKV, s.decode, s.d, s.dv, eltBytes);
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
        {"q", op.getQ()},           {"k", op.getK()},
        {"v", op.getV()},           {"o", op.getO()},
        {"lse", op.getLse()},       {"block_table", op.getBlockTable()},
        {"kv_lens", op.getKvLens()}};
    for (auto [role, value] : roles)
      if (value)
        if (Value a = arg(value))
          index.setRole(a, role);
  };

  std::string base =
      (func.getSymName() + "_" + (s.decode ? "decode" : "prefill")).str();
  for (int pass = 0; pass < (s.splits > 0 ? 2 : 1); ++pass) {
    MSLKernelEmitter emitter(s, *nest, plan, os);
    setRoles(emitter.indexPrinter());
    FailureOr<LaunchFacts> facts =
        s.splits == 0
            ? emitter.emitTileKernel(base, s.decode ? KernelKind::Decode
                                                    : KernelKind::Prefill)
        : pass == 0
            ? emitter.emitTileKernel(base + "_partial", KernelKind::Partial)
            : emitter.emitMergeKernel(base + "_merge");
    if (failed(facts))
      return failure();
    os << "\n";
    out.kernels.push_back(*facts);
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
  std::pair<StringRef, Value> operands[] = {
      {"k_new", op.getKNew()},         {"v_new", op.getVNew()},
      {"block_table", op.getBlockTable()}, {"kv_lens", op.getKvLens()},
      {"new_lens", op.getNewLens()},   {"slot_mapping", op.getSlotMapping()},
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
  int64_t sNew = cast<MemRefType>(op.getKNew().getType())
                     .getDimSize(slotted ? 0 : 2);
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
    os << "// attn.cache_append of @" << func.getSymName() << ": "
       << a.tokens << " packed tokens per threadgroup to their slots, "
       << a.vec << "-element pieces.\n";
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
      os << "    const long from = (long(t) * " << a.hkv << " + h) * "
         << width << " + col;\n";
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
  os << "// attn.cache_append of @" << func.getSymName() << ": "
     << a.tokens << " new tokens per threadgroup, " << a.vec
     << "-element pieces.\n";
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
         << sizeOf(kc, 2, "capacity") << ") + pos) * " << width
         << " + col;\n";
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
       << ", \"block_size\": " << a.blockSize << ", \"new_lens\": "
       << (a.op.getNewLens() ? "true" : "false") << ", \"slot_mapping\": "
       << (a.op.getSlotMapping() ? "true" : "false")
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
std::string gridX(const FunctionFacts &f, const LaunchFacts &k) {
  std::string sq = "Sq";
  int64_t qLen =
      cast<MemRefType>(AttentionOp(f.spec.op).getQ().getType()).getDimSize(2);
  if (!ShapedType::isDynamic(qLen))
    sq = std::to_string(qLen);
  std::string x = "ceil(" + std::to_string(f.spec.group) + " * " + sq + " / " +
                  std::to_string(k.blockQ) + ")";
  if (k.splits > 1)
    x += " * " + std::to_string(k.splits);
  return x;
}

std::string gridZ(const FunctionFacts &f) {
  int64_t batch =
      cast<MemRefType>(AttentionOp(f.spec.op).getQ().getType()).getDimSize(0);
  return ShapedType::isDynamic(batch) ? "B" : std::to_string(batch);
}

void writeCommentFacts(raw_ostream &os, ArrayRef<FunctionFacts> functions,
                       ArrayRef<AppendFacts> appends) {
  os << "// Generated by attn-translate --attn-to-msl (the msl tier of attn).\n"
        "// Checked only through attn's CPU emulator of MSL (runtime/msl); no\n"
        "// Metal compiler or Apple GPU has run it.\n"
        "//\n"
        "// Buffers are contiguous row-major: q [B, Hq, Sq, D], k and v\n"
        "// [B, Hkv, Sk, D(v)] (paged: [num_blocks, Hkv, block_size, D]),\n"
        "// o [B, Hq, Sq, Dv], lse [B, Hq, Sq] (f32), block_table\n"
        "// [B, max_blocks] and kv_lens [B] (int). `sizes` holds the\n"
        "// AttnSizes below; fields of static dims must match the spec.\n"
        "// Split-K: partials holds, per (batch, kv_head, q_tile, split),\n"
        "// block_q x Dv acc, then block_q m, then block_q l (f32).\n"
        "// Cache appends: k_new, v_new [B, Hkv, S_new, D(v)] into k_cache,\n"
        "// v_cache [B, Hkv, capacity, D(v)] or paged, with AttnAppendSizes.\n"
        "//\n"
        "// Launch facts (grid = threadgroups_per_grid (x, y, z)):\n";
  for (const FunctionFacts &f : functions)
    for (const LaunchFacts &k : f.kernels) {
      os << "// attn.kernel " << k.name << " host=" << k.function
         << " tier=msl kind=" << kindName(k.kind) << " threads=" << k.threads
         << " block_q=" << k.blockQ << " block_kv=" << k.blockKV
         << " group=" << f.spec.group << " splits=" << k.splits << "\n";
      os << "//   grid=(" << gridX(f, k) << ", " << f.spec.hkv << ", "
         << gridZ(f) << ") threadgroup(0)=" << k.smemBytes << " bytes\n";
      os << "//   buffers:";
      for (auto &[role, idx] : k.buffers)
        os << " " << role << "=" << idx;
      os << "\n";
      MetalNeeds needs = needsOf(f.spec);
      os << "//   msl_version=" << needs.versionText()
         << " gpu_family=" << needs.gpuFamily << " math_mode=" << needs.mathMode
         << "\n";
    }
  writeAppendCommentFacts(os, appends);
  MetalNeeds needs = needsOf(functions);
  for (const AppendFacts &a : appends)
    needs.version = std::max(needs.version, needsOf(a).version);
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

void writeJsonFacts(raw_ostream &os, ArrayRef<FunctionFacts> functions,
                    ArrayRef<AppendFacts> appends) {
  MetalNeeds fileNeeds = needsOf(functions);
  for (const AppendFacts &a : appends)
    fileNeeds.version = std::max(fileNeeds.version, needsOf(a).version);
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
    os << "      \"sizes\": {\"buffer\": " << s.sizes
       << ", \"fields\": [\"B\", \"Sq\", \"Sk\", \"max_blocks\"], "
          "\"type\": \"int32\"},\n";
    if (s.splits > 0)
      os << "      \"partials\": {\"buffer\": " << s.partials
         << ", \"floats\": \"B * " << s.hkv << " * "
         << "ceil(" << s.group << " * Sq / " << f.plan.br << ") * " << s.splits
         << " * " << f.plan.br * (f.plan.dv + 2) << "\"},\n";
    MetalNeeds needs = needsOf(s);
    os << "      \"kernels\": [";
    for (auto [ki, k] : llvm::enumerate(f.kernels)) {
      os << (ki ? "," : "") << "\n        {\"name\": \"" << k.name
         << "\", \"kind\": \"" << kindName(k.kind)
         << "\", \"pass\": " << (k.kind == KernelKind::Merge ? 2 : 1)
         << ",\n         \"msl_version\": \"" << needs.versionText()
         << "\", \"gpu_family\": \"" << needs.gpuFamily
         << "\", \"math_mode\": \"" << needs.mathMode << "\""
         << ",\n         \"threads_per_threadgroup\": [" << k.threads
         << ", 1, 1], \"block_q\": " << k.blockQ
         << ", \"block_kv\": " << k.blockKV << ", \"splits\": " << k.splits
         << ",\n         \"threadgroups_per_grid\": [\"" << gridX(f, k)
         << "\", \"" << s.hkv << "\", \"" << gridZ(f) << "\"],\n"
         << "         \"threadgroup_memory_bytes\": ["
         << (k.kind == KernelKind::Merge ? "" : std::to_string(k.smemBytes))
         << "],\n         \"buffers\": {";
      for (auto [bi, buffer] : llvm::enumerate(k.buffers))
        os << (bi ? ", " : "") << "\"" << buffer.first
           << "\": " << buffer.second;
      os << "}}";
    }
    os << "\n      ]\n    }";
  }
  os << "\n  ]";
  writeAppendJsonFacts(os, appends);
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
      options.kernel != "decode")
    return emitError(module.getLoc())
           << "option 'msl-kernel' must be auto, prefill or decode, got '"
           << options.kernel << "'";
  if (options.splits < 0 || options.splits > 64)
    return emitError(module.getLoc())
           << "option 'msl-splits' must be in [0, 64] (0: no split-K), got "
           << options.splits;
  SmallVector<std::pair<func::FuncOp, AttentionOp>> specs;
  SmallVector<std::pair<func::FuncOp, CacheAppendOp>> appendSpecs;
  bool ok = true;
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<AttentionOp> ops;
    func.walk([&](AttentionOp op) { ops.push_back(op); });
    SmallVector<CacheAppendOp> appendOps;
    func.walk([&](CacheAppendOp op) { appendOps.push_back(op); });
    if (appendOps.size() > 1) {
      appendOps[1].emitError() << "the msl tier makes one append kernel per "
                                  "function; '"
                               << func.getSymName()
                               << "' holds more than one attn.cache_append";
      ok = false;
    } else if (appendOps.size() == 1) {
      appendSpecs.push_back({func, appendOps.front()});
    }
    if (ops.size() > 1) {
      ops[1].emitError() << "the msl tier makes one kernel per function; '"
                         << func.getSymName()
                         << "' holds more than one attn.attention";
      ok = false;
    } else if (ops.size() == 1) {
      specs.push_back({func, ops.front()});
    }
  }
  if (!ok)
    return failure();
  if (specs.empty() && appendSpecs.empty())
    return emitError(module.getLoc(),
                     "--attn-to-msl found no attn.attention or "
                     "attn.cache_append: it takes an L0 spec (func.func "
                     "holding one of them)");
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
  writeCommentFacts(os, functions, appends);
  os << kPrelude << kernels;
  if (launchFacts)
    writeJsonFacts(*launchFacts, functions, appends);
  return success();
}
