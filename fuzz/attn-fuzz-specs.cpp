//===- attn-fuzz-specs.cpp - libFuzzer target over generated specs --------===//
//
// Text mutation rarely keeps a spec valid, so this target builds one from
// the input bytes instead: element types, head counts (GQA groups), head
// dims (multiples of 8 and others), static or dynamic batch and lengths,
// contiguous, strided ([B, S, H, D] views) or paged K/V, LSE, masks with
// any extents and alignment, scale, soft-cap and schedules, each drawn from
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
  std::string q, k, v, o, lse, table, lens;
  std::string attrs;
};

Spec generate(FuzzedDataProvider &in) {
  static const char *const elementTypes[] = {"f16", "bf16", "f32"};
  static const int64_t headDims[] = {8,  16, 32,  40,  64,  72,  80, 96,
                                     104, 128, 160, 192, 256, 12, 100, 512};
  static const int64_t groups[] = {1, 1, 2, 4, 8, 16, 32, 3};
  static const int64_t kvHeads[] = {1, 2, 4, 8};
  static const int64_t blockSizes[] = {1, 16, 64, 128, 256, 3};
  static const int64_t lengths[] = {1, 2, 4, 7, 16, 100, 1024, 65536};
  static const int64_t extents[] = {0,       1,          15,        64,
                                    4096,    2147483646, 2147483647, 1000};
  static const char *const floats[] = {"0.125", "1.0", "30.0", "1.0e-30",
                                       "1.0e30", "2.3e38", "0.0625", "50.0"};
  static const int64_t tiles[] = {0, 8, 16, 32, 48, 64, 128, 256};
  static const int64_t warpCounts[] = {0, 1, 2, 4, 8, 16, 3, 32};
  static const int64_t stageCounts[] = {0, 1, 2, 3, 4};

  const std::string elt = pick(in, elementTypes);
  const std::string outElt = in.ConsumeBool() ? elt : "f32";
  const int64_t hkv = pick(in, kvHeads), hq = hkv * pick(in, groups);
  const int64_t d = pick(in, headDims);
  const int64_t dv = in.ConsumeBool() ? d : pick(in, headDims);
  const std::string b = dim(in, 1 + in.ConsumeIntegralInRange<int>(0, 3));
  const std::string sq = in.ConsumeBool() ? "?" : std::to_string(pick(in, lengths));
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
    return "memref<" + outer + "x" + std::to_string(heads) + "x" + rows +
           "x" + std::to_string(hd) + "x" + t +
           (contiguous ? std::string() : layout(heads, hd)) + ">";
  };
  Spec s;
  s.q = memref(b, hq, sq, d, elt, false);
  s.o = memref(b, hq, sq, dv, outElt, false);
  // Paged: [num_blocks, Hkv, block_size, D] caches, always contiguous.
  const std::string outer = paged ? "?" : b;
  const std::string rows = paged ? std::to_string(pick(in, blockSizes))
                                 : dim(in, pick(in, lengths));
  s.k = memref(outer, hkv, rows, d, elt, paged);
  s.v = memref(outer, hkv, rows, dv, elt, paged);
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
  args += ", %o: " + s.o;
  op += "\n      -> o(%o : " + s.o + ")";
  if (!s.lse.empty()) {
    args += ", %lse: " + s.lse;
    op += " lse(%lse : " + s.lse + ")";
  }
  return "func.func @fuzz(" + args + ") {\n" + op + s.attrs +
         "\n  return\n}\n";
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
