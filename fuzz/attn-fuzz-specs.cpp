//===- attn-fuzz-specs.cpp - libFuzzer target over generated specs --------===//
//
// Text mutation rarely keeps a spec valid, so this target builds one from
// the input bytes instead: element types, head counts (GQA groups), head
// dims (multiples of 8 and others), static or dynamic batch and lengths,
// contiguous, strided ([B, S, H, D] views) or paged K/V, quantized K/V
// caches (fp8, i8) with dequantization scales of every granularity (and
// shapes just off them) and fp8 Q, LSE, masks with any extents and
// alignment, scale, soft-cap and schedules, each drawn from
// a range that includes the edges and values just past them. Most specs it
// writes verify, so the lowerings (fuzz/Lowerings.h) see every input; the
// rest exercise the verifier's rules. ATTN_FUZZ_PRINT=1 prints each spec.
//
// Built with -DATTN_FUZZ=ON (clang only); scripts/fuzz.sh specs runs it.
//
//===----------------------------------------------------------------------===//

#include "fuzz/Lowerings.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

template <typename T, size_t N>
T pick(FuzzedDataProvider &in, const T (&values)[N]) {
  return values[in.ConsumeIntegralInRange<size_t>(0, N - 1)];
}

/// "?" or a static size.
std::string dim(FuzzedDataProvider &in, int64_t staticValue) {
  return in.ConsumeBool() ? "?" : std::to_string(staticValue);
}

struct Spec {
  std::string q, k, v, o, lse, table, lens, kScale, vScale, qScale;
  std::string attrs;
};

Spec generate(FuzzedDataProvider &in) {
  static const char *const elementTypes[] = {"f16", "bf16", "f32"};
  static const int64_t headDims[] = {8,   16,  32,  40,  64,  72, 80,  96,
                                     104, 128, 160, 192, 256, 12, 100, 512};
  static const int64_t groups[] = {1, 1, 2, 4, 8, 16, 32, 3};
  static const int64_t kvHeads[] = {1, 2, 4, 8};
  static const int64_t blockSizes[] = {1, 16, 64, 128, 256, 3};
  static const int64_t lengths[] = {1, 2, 4, 7, 16, 100, 1024, 65536};
  static const int64_t extents[] = {0,    1,          15,         64,
                                    4096, 2147483646, 2147483647, 1000};
  static const char *const floats[] = {"0.125",  "1.0",    "30.0",   "1.0e-30",
                                       "1.0e30", "2.3e38", "0.0625", "50.0"};
  static const int64_t tiles[] = {0, 8, 16, 32, 48, 64, 128, 256};
  static const int64_t warpCounts[] = {0, 1, 2, 4, 8, 16, 3, 32};
  static const int64_t stageCounts[] = {0, 1, 2, 3, 4};

  static const char *const quantizedTypes[] = {"f8E4M3FN", "f8E5M2", "i8",
                                               "f8E4M3", "ui8"};
  const std::string elt = pick(in, elementTypes);
  const std::string outElt = in.ConsumeBool() ? elt : "f32";
  // A quantized K/V cache, one time in four (the last two of its types
  // are not quantized formats: refused), and then sometimes an fp8 Q.
  const bool quantized = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  const std::string kvElt = quantized ? pick(in, quantizedTypes) : elt;
  const std::string qElt =
      quantized && in.ConsumeIntegralInRange<int>(0, 3) == 0 ? kvElt : elt;
  const int64_t hkv = pick(in, kvHeads), hq = hkv * pick(in, groups);
  const int64_t d = pick(in, headDims);
  const int64_t dv = in.ConsumeBool() ? d : pick(in, headDims);
  const std::string b = dim(in, 1 + in.ConsumeIntegralInRange<int>(0, 3));
  const std::string sq =
      in.ConsumeBool() ? "?" : std::to_string(pick(in, lengths));
  const bool paged = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  // [B, S, H, D] memory viewed as [B, H, S, D]: static head and row strides.
  const bool strided = !paged && in.ConsumeIntegralInRange<int>(0, 3) == 0;
  auto layout = [&](int64_t heads, int64_t hd) {
    if (!strided)
      return std::string();
    return ", strided<[?, " + std::to_string(hd) + ", " +
           std::to_string(heads * hd) + ", 1]>";
  };
  // A [outer, heads, rows, hd] memref of `t`, strided as above unless
  // `contiguous`.
  auto memref = [&](const std::string &outer, int64_t heads,
                    const std::string &rows, int64_t hd, const std::string &t,
                    bool contiguous) {
    return "memref<" + outer + "x" + std::to_string(heads) + "x" + rows + "x" +
           std::to_string(hd) + "x" + t +
           (contiguous ? std::string() : layout(heads, hd)) + ">";
  };
  Spec s;
  s.q = memref(b, hq, sq, d, qElt, false);
  s.o = memref(b, hq, sq, dv, outElt, false);
  // Paged: [num_blocks, Hkv, block_size, D] caches, always contiguous.
  const std::string outer = paged ? "?" : b;
  const std::string rows =
      paged ? std::to_string(pick(in, blockSizes)) : dim(in, pick(in, lengths));
  s.k = memref(outer, hkv, rows, d, kvElt, paged);
  s.v = memref(outer, hkv, rows, dv,
               quantized && in.ConsumeIntegralInRange<int>(0, 7) == 0 ? elt
                                                                      : kvElt,
               paged);
  // Scales: none, per tensor, per K/V head, per token, or just off one of
  // those (a wrong head count, rank, element type or a scale on float K/V).
  auto scale = [&](int64_t heads) -> std::string {
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
    case 1:
      return "";
    case 2:
      return "memref<f32>";
    case 3:
      return "memref<" + std::to_string(heads) + "xf32>";
    case 4:
      return "memref<" + outer + "x" + std::to_string(hkv) + "x" + rows +
             "xf32>";
    case 5:
      return "memref<" + std::to_string(heads + 1) + "xf32>";
    case 6:
      return "memref<" + outer + "x" + std::to_string(hkv) + "xf32>";
    default:
      return "memref<" + std::to_string(heads) + "xf16>";
    }
  };
  if (quantized || in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    s.kScale = scale(hkv);
    s.vScale = scale(hkv);
    // Q's per-token form (rank 3 here) is refused: Q has no such scale.
    if (in.ConsumeBool())
      s.qScale = scale(hq);
  }
  if (paged)
    s.table = "memref<" + b + "x?xi32>";
  if (paged || in.ConsumeBool())
    s.lens = "memref<" + b + "xi32>";
  if (in.ConsumeBool())
    s.lse = "memref<" + b + "x" + std::to_string(hq) + "x" + sq + "xf32>";

  // In the order the op prints them: scale, mask, softcap, schedule.
  if (in.ConsumeBool())
    s.attrs += std::string(" scale = ") + pick(in, floats);
  const std::string align = in.ConsumeBool() ? ", bottom_right" : "";
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
  case 0:
    break;
  case 1:
    s.attrs += " mask = <causal" + align + ">";
    break;
  default:
    s.attrs += " mask = <window " + std::to_string(pick(in, extents)) + ", " +
               std::to_string(pick(in, extents)) + align + ">";
  }
  if (in.ConsumeIntegralInRange<int>(0, 2) == 0)
    s.attrs += std::string(" softcap = ") + pick(in, floats);
  if (in.ConsumeIntegralInRange<int>(0, 2) == 0)
    s.attrs += " schedule = <block_q = " + std::to_string(pick(in, tiles)) +
               ", block_kv = " + std::to_string(pick(in, tiles)) +
               ", warps = " + std::to_string(pick(in, warpCounts)) +
               ", stages = " + std::to_string(pick(in, stageCounts)) + ">";
  return s;
}

std::string text(const Spec &s) {
  std::string args = "%q: " + s.q + ", %k: " + s.k + ", %v: " + s.v;
  std::string op = "  attn.attention q(%q : " + s.q + ") k(%k : " + s.k +
                   ") v(%v : " + s.v + ")";
  if (!s.table.empty()) {
    args += ", %bt: " + s.table;
    op += " block_table(%bt : " + s.table + ")";
  }
  if (!s.lens.empty()) {
    args += ", %lens: " + s.lens;
    op += " kv_lens(%lens : " + s.lens + ")";
  }
  for (auto [name, type] :
       {std::pair<std::string, const std::string *>{"k_scale", &s.kScale},
        {"v_scale", &s.vScale},
        {"q_scale", &s.qScale}}) {
    if (type->empty())
      continue;
    args += ", %" + name + ": " + *type;
    op += " " + name + "(%" + name + " : " + *type + ")";
  }
  args += ", %o: " + s.o;
  op += "\n      -> o(%o : " + s.o + ")";
  if (!s.lse.empty()) {
    args += ", %lse: " + s.lse;
    op += " lse(%lse : " + s.lse + ")";
  }
  return "func.func @fuzz(" + args + ") {\n" + op + s.attrs + "\n  return\n}\n";
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  const unsigned ptxChoice = in.ConsumeIntegralInRange<unsigned>(0, 2);
  const std::string spec = text(generate(in));
  static const bool print = std::getenv("ATTN_FUZZ_PRINT");
  if (print)
    std::fprintf(stderr, "%s", spec.c_str());
  attnfuzz::runLowerings(spec, ptxChoice);
  return 0;
}
