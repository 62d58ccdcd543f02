//===- MSLVectorKernel.cpp - the vector decode kernel
//-----------------------===//
//
// MSLKernelEmitter::emitVectorKernel: MLX's sdpa_vector in the msl tier's
// scheme (MSLEmitter.cpp's header): block_q = 1, simdgroups striding the
// nest's K/V range key by key, shuffle-reduced dot products; its first
// pass also serves split-K.
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

} // namespace mlir::attn::msl::detail
