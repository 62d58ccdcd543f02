//===- MSLKernelEmitter.cpp - a Metal kernel from an L1 nest
//----------------===//
//
// MSLKernelEmitter: each L1 op of a nest printed as a piece of one Metal
// kernel (MSLEmitter.cpp's header says how), the simdgroup-matrix tile
// kernels and split-K's merge kernel. The vector decode kernel is
// MSLVectorKernel.cpp.
//
//===----------------------------------------------------------------------===//

#include "codegen/msl/MSLKernel.h"

#include "codegen/msl/ModsToEmitC.h"
#include "dialect/AttnSemantics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::msl;

namespace mlir::attn::msl::detail {

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

} // namespace mlir::attn::msl::detail
