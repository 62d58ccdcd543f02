//===- attn_msl_test.cpp - run attn's MSL kernels against the reference ---===//
//
// Host for the kernels of `attn-translate --attn-to-msl`, compiled with the
// emitted .metal through tools/msl-emulator/msl-emu-cc.sh (run-msl-tests.sh does
// that). It reads the launch facts JSON the translation wrote, and for each
// case `FUNCTION:B:Sq:Sk` on the command line it draws fresh random inputs,
// poisons the outputs (and split-K workspace) with NaN, launches the
// function's kernels as the facts say and compares with the float64
// reference of lib/Reference:
//
//   ||o - ref|| / ||ref|| <= 1e-2 (f16, bf16) or 1e-4 (f32); every output
//   element written; LSE within 1e-3; rows that see no key: o = 0, LSE -inf.
//
// Contiguous specs with kv_lens and paged specs draw per-sequence lengths in
// [0, Sk] (the last sequence gets Sk, the first 0 when B > 2).
//
// Packed (varlen) specs (the facts' "packed"): a packed Q draws each
// sequence's q_len in [0, Sq] and a packed K/V its kv_len in [0, Sk] (the
// last the longest, the first empty when B > 2, the second one token when
// B > 3), or takes them from the case: `FUNCTION:B:Sq:Sk:q=L,...:kv=L,...`
// (kv= also gives kv_lens). The offsets are cu_seqlens buffers, the rows
// packed exactly; a packed Q's grid covers max_q_len rows a sequence, this
// host's bound Sq (at most the spec's max_q_len, which may promise far
// more).
//
// A function with score_mod / mask_mod regions (the facts' "mods") gets
// its captures drawn as attn-run draws them (integers in [0, 4), [0, 2)
// for i1; floats in [-1, 1); a dynamic dim max(B, Sq, Sk)), and the
// reference evaluates the regions of the spec given by --spec=SPEC.mlir
// (tools/attn-run/ModsHost.h, ModEval: the region itself, not the EmitC
// text the kernels call).
//
// A case `merge:FUNCTION:N:T` runs an attn.merge_states kernel
// (runMergeCase) against the float64 reference merge.
// A case `cascade:PREFIX:SUFFIX:MERGE:B:P:S:Q:C` composes cascade
// attention from two attention functions and a merge (runCascadeCase) and
// compares it with attention over each request's whole sequence.
// A case `append:FUNCTION:B:S_new:KV_LEN` runs an attn.cache_append kernel
// instead (runAppendCase): poisoned caches, every element checked exactly
// (slot-mapping form: N blocks, T packed tokens, R rows per block).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "lib/Reference/Reference.h"
#include "metal_emulator.h"
#include "tools/attn-run/ModsHost.h"

namespace {

//===----------------------------------------------------------------------===//
// A minimal JSON reader for the launch facts
//===----------------------------------------------------------------------===//

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  double number = 0;
  bool boolean = false;
  std::string text;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> fields;

  const Json &operator[](const std::string &key) const {
    static const Json missing;
    for (const auto &field : fields)
      if (field.first == key)
        return field.second;
    return missing;
  }
  long integer() const { return long(number); }
};

struct JsonReader {
  const std::string &s;
  size_t at = 0;
  bool ok = true;

  void skip() {
    while (at < s.size() && std::isspace((unsigned char)s[at]))
      ++at;
  }
  bool eat(char c) {
    skip();
    if (at < s.size() && s[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  std::string str() {
    std::string out;
    if (!eat('"')) {
      ok = false;
      return out;
    }
    while (at < s.size() && s[at] != '"') {
      if (s[at] == '\\')
        ++at;
      out += s[at++];
    }
    ++at;
    return out;
  }
  Json value() {
    Json v;
    skip();
    if (at >= s.size()) {
      ok = false;
      return v;
    }
    char c = s[at];
    if (c == '{') {
      v.kind = Json::Object;
      ++at;
      if (eat('}'))
        return v;
      do {
        std::string key = str();
        if (!eat(':'))
          ok = false;
        v.fields.push_back({key, value()});
      } while (ok && eat(','));
      if (!eat('}'))
        ok = false;
    } else if (c == '[') {
      v.kind = Json::Array;
      ++at;
      if (eat(']'))
        return v;
      do
        v.items.push_back(value());
      while (ok && eat(','));
      if (!eat(']'))
        ok = false;
    } else if (c == '"') {
      v.kind = Json::String;
      v.text = str();
    } else if (s.compare(at, 4, "true") == 0 ||
               s.compare(at, 5, "false") == 0) {
      v.kind = Json::Bool;
      v.boolean = s[at] == 't';
      at += v.boolean ? 4 : 5;
    } else {
      v.kind = Json::Number;
      char *end = nullptr;
      v.number = std::strtod(s.c_str() + at, &end);
      if (end == s.c_str() + at)
        ok = false;
      at = end - s.c_str();
    }
    return v;
  }
};

//===----------------------------------------------------------------------===//
// Typed device arrays
//===----------------------------------------------------------------------===//

// One buffer in the element type the kernel reads (half, bfloat or float).
struct DeviceArray {
  std::string dtype;
  std::vector<_Float16> f16;
  std::vector<__bf16> bf16;
  std::vector<float> f32;

  DeviceArray(std::string type, size_t n) : dtype(std::move(type)) {
    if (dtype == "f16")
      f16.assign(n, _Float16(NAN));
    else if (dtype == "bf16")
      bf16.assign(n, __bf16(float(NAN)));
    else
      f32.assign(n, NAN);
  }
  size_t size() const {
    return dtype == "f16"    ? f16.size()
           : dtype == "bf16" ? bf16.size()
                             : f32.size();
  }
  // Stores x rounded to the element type; returns the rounded value.
  double set(size_t i, double x) {
    if (dtype == "f16")
      return double(f16[i] = _Float16(float(x)));
    if (dtype == "bf16")
      return double(float(bf16[i] = __bf16(float(x))));
    return double(f32[i] = float(x));
  }
  double get(size_t i) const {
    if (dtype == "f16")
      return double(f16[i]);
    if (dtype == "bf16")
      return double(float(bf16[i]));
    return double(f32[i]);
  }
  attn_msl::Buffer bind(unsigned index) {
    if (dtype == "f16")
      return attn_msl::bind_buffer(index, f16.data(), f16.size());
    if (dtype == "bf16")
      return attn_msl::bind_buffer(index, bf16.data(), bf16.size());
    return attn_msl::bind_buffer(index, f32.data(), f32.size());
  }
};

// A rank-4 buffer as the kernel sees it: logical [d0, d1, d2, d3] row-major
// indices to element offsets through strides (the innermost is 1). A
// strided view leaves gaps, which stay NaN: reading one poisons a result,
// writing one is caught.
struct View {
  long dims[4] = {1, 1, 1, 1}, strides[4] = {0, 0, 0, 1};

  View(long d0, long d1, long d2, long d3) : dims{d0, d1, d2, d3} {
    strides[2] = d3;
    strides[1] = d2 * d3;
    strides[0] = d1 * d2 * d3;
  }
  // The layout the launch facts give, -1 for a dynamic stride: those get
  // the span of the dims inside them plus a gap of 8 elements (16-byte
  // aligned for f16), innermost first.
  void setStrides(const Json &layout) {
    long span = 1;
    for (int i = 0; i < 3; ++i)
      if (layout.items[i].integer() >= 0) {
        strides[i] = layout.items[i].integer();
        span += (dims[i] - 1) * strides[i];
      }
    span += dims[3] - 1;
    for (int i = 2; i >= 0; --i)
      if (layout.items[i].integer() < 0) {
        strides[i] = (span + 7) / 8 * 8 + 8;
        span = strides[i] * dims[i];
      }
  }
  long size() const { return dims[0] * dims[1] * dims[2] * dims[3]; }
  long span() const {
    long last = 0;
    for (int i = 0; i < 4; ++i)
      last += (dims[i] - 1) * strides[i];
    return last + 1;
  }
  long at(long i) const {
    long offset = 0;
    for (int d = 3; d >= 0; --d) {
      offset += i % dims[d] * strides[d];
      i /= dims[d];
    }
    return offset;
  }
};

// An N-d buffer as a merge kernel sees it: row-major, or the launch
// facts' strides (every dim's; -1 for a dynamic one, which gets the span
// of the dims inside it plus a gap of 8 elements, innermost first). Gaps
// stay NaN.
struct Layout {
  std::vector<long> dims, strides;

  Layout(std::vector<long> shape, const Json &given)
      : dims(std::move(shape)), strides(dims.size(), 1) {
    for (int i = int(dims.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * dims[i + 1];
    if (given.kind != Json::Array)
      return;
    long span = 1;
    for (size_t i = 0; i < dims.size(); ++i)
      if (given.items[i].integer() >= 0) {
        strides[i] = given.items[i].integer();
        span += (dims[i] - 1) * strides[i];
      }
    for (int i = int(dims.size()) - 1; i >= 0; --i)
      if (given.items[i].integer() < 0) {
        strides[i] = (span + 7) / 8 * 8 + 8;
        span = strides[i] * dims[i];
      }
  }
  long size() const {
    return std::accumulate(dims.begin(), dims.end(), 1L,
                           std::multiplies<long>());
  }
  long span() const {
    long last = 0;
    for (size_t i = 0; i < dims.size(); ++i)
      last += (dims[i] - 1) * strides[i];
    return last + 1;
  }
  long at(long i) const {
    long offset = 0;
    for (int d = int(dims.size()) - 1; d >= 0; --d) {
      offset += i % dims[d] * strides[d];
      i /= dims[d];
    }
    return offset;
  }
};

std::mt19937 &rng() {
  static std::mt19937 generator = [] {
    unsigned seed = std::random_device{}();
    if (const char *fixed = std::getenv("ATTN_MSL_TEST_SEED"))
      seed = unsigned(std::strtoul(fixed, nullptr, 10));
    std::printf("seed %u\n", seed);
    return std::mt19937(seed);
  }();
  return generator;
}

double uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng());
}

//===----------------------------------------------------------------------===//
// One case
//===----------------------------------------------------------------------===//

using KernelTable = std::map<std::string, attn_msl::Kernel>;

// The entry of facts[member] named `name` (an append's or a merge's
// facts); prints a FAIL line for `label` and returns null if none is.
const Json *factsNamed(const Json &facts, const char *member,
                       const std::string &name, const std::string &label) {
  for (const Json &f : facts[member].items)
    if (f["name"].text == name)
      return &f;
  std::printf("FAIL %s: no %.*s '%s' in the launch facts\n", label.c_str(),
              int(std::strlen(member) - 1), member, name.c_str());
  return nullptr;
}

// Kernel `name` of the compiled .metal; prints a FAIL line for `label` and
// returns null if the file has none.
const attn_msl::Kernel *kernelNamed(const KernelTable &table,
                                    const std::string &name,
                                    const std::string &label) {
  auto found = table.find(name);
  if (found != table.end())
    return &found->second;
  std::printf("FAIL %s: kernel %s is not in the .metal\n", label.c_str(),
              name.c_str());
  return nullptr;
}


struct Case {
  std::string function;
  long batch = 1, qLen = 1, kvLen = 1;
  /// Given per-sequence lengths (`q=...`, `kv=...`); empty: drawn.
  std::vector<int32_t> qLens, kvLens;
};

bool parseLens(const std::string &text, std::vector<int32_t> &lens) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    lens.push_back(int32_t(std::atol(item.c_str())));
  return !lens.empty();
}

bool parseCase(const std::string &text, Case &c) {
  std::stringstream in(text);
  std::string part;
  std::vector<std::string> parts;
  while (std::getline(in, part, ':'))
    parts.push_back(part);
  if (parts.size() < 4 || parts.size() > 6)
    return false;
  c.function = parts[0];
  c.batch = std::atol(parts[1].c_str());
  c.qLen = std::atol(parts[2].c_str());
  c.kvLen = std::atol(parts[3].c_str());
  for (size_t i = 4; i < parts.size(); ++i) {
    std::vector<int32_t> *lens = parts[i].rfind("q=", 0) == 0    ? &c.qLens
                                 : parts[i].rfind("kv=", 0) == 0 ? &c.kvLens
                                                                 : nullptr;
    if (!lens || !parseLens(parts[i].substr(parts[i].find('=') + 1), *lens) ||
        long(lens->size()) != c.batch)
      return false;
  }
  for (int32_t len : c.qLens)
    if (len < 0 || len > c.qLen)
      return false;
  for (int32_t len : c.kvLens)
    if (len < 0 || len > c.kvLen)
      return false;
  return c.batch > 0 && c.qLen > 0 && c.kvLen >= 0;
}

/// Per-sequence lengths in [0, max]: given, else drawn, the last one max,
/// the first empty and the second one token long when there are enough.
std::vector<int32_t> drawLens(long batch, long max,
                              const std::vector<int32_t> &given) {
  if (!given.empty())
    return given;
  std::vector<int32_t> lens(batch, int32_t(max));
  for (long b = 0; b + 1 < batch; ++b)
    lens[b] = (b == 0 && batch > 2)   ? 0
              : (b == 1 && batch > 3) ? std::min<int32_t>(1, int32_t(max))
                                      : int32_t(std::uniform_int_distribution<
                                                long>(0, max)(rng()));
  return lens;
}

std::vector<int32_t> offsetsOf(const std::vector<int32_t> &lens) {
  std::vector<int32_t> cu(lens.size() + 1, 0);
  for (size_t b = 0; b < lens.size(); ++b)
    cu[b + 1] = cu[b] + lens[b];
  return cu;
}

/// The spec the launch facts came from (--spec=), for its mod regions.
std::string &specPath() {
  static std::string path;
  return path;
}

/// A capture of the mod regions, in its element type, and its values as
/// the reference reads them.
struct CaptureArray {
  std::string dtype; // f32, i64, i32, i16, i8 or i1
  std::vector<double> values;
  std::vector<unsigned char> bytes;

  size_t eltBytes() const {
    return dtype == "i64" ? 8 : dtype == "i32" || dtype == "f32" ? 4
                            : dtype == "i16"                     ? 2
                                                                 : 1;
  }
  template <class T> void store(size_t i, T x) {
    std::memcpy(bytes.data() + i * sizeof(T), &x, sizeof(T));
  }
  /// n fresh values; false for a type this host does not know.
  bool fill(size_t n) {
    bytes.assign(n * eltBytes(), 0);
    values.resize(n);
    for (size_t i = 0; i < n; ++i) {
      if (dtype == "f32") {
        float x = float(uniform(-1, 1));
        store(i, x);
        values[i] = x;
        continue;
      }
      const long top = dtype == "i1" ? 2 : 4;
      const long x = std::uniform_int_distribution<long>(0, top - 1)(rng());
      values[i] = double(x);
      if (dtype == "i64")
        store(i, int64_t(x));
      else if (dtype == "i32")
        store(i, int32_t(x));
      else if (dtype == "i16")
        store(i, int16_t(x));
      else if (dtype == "i8")
        store(i, int8_t(x));
      else if (dtype == "i1")
        store(i, bool(x));
      else
        return false;
    }
    return true;
  }
  attn_msl::Buffer bind(unsigned at) {
    const size_t n = values.size();
    void *data = bytes.data();
    if (dtype == "f32")
      return attn_msl::bind_buffer(at, static_cast<float *>(data), n);
    if (dtype == "i64")
      return attn_msl::bind_buffer(at, static_cast<int64_t *>(data), n);
    if (dtype == "i32")
      return attn_msl::bind_buffer(at, static_cast<int32_t *>(data), n);
    if (dtype == "i16")
      return attn_msl::bind_buffer(at, static_cast<int16_t *>(data), n);
    if (dtype == "i8")
      return attn_msl::bind_buffer(at, static_cast<int8_t *>(data), n);
    return attn_msl::bind_buffer(at, static_cast<bool *>(data), n);
  }
};

#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ok = false;                                                              \
      std::printf("  check failed: %s: ", #cond);                              \
      std::printf(__VA_ARGS__);                                                \
      std::printf("\n");                                                       \
    }                                                                          \
  } while (0)

// The buffers of one attention function's kernels. A packed Q's grid
// covers sq rows a sequence (the host's max_q_len bound); sk picks a
// one-pass or two-pass variant and fills the sizes buffer.
// Captures, sinks and strides are set where a function has them.
struct AttentionArgs {
  long batch, sq, sk, maxBlocks;
  DeviceArray *q, *k, *v, *o;
  std::vector<float> *lse;
  // qLens: a packed Q's rows per sequence (its grid's live tiles).
  std::vector<int32_t> *blockTable, *lens, *cuQ, *cuK, *qLens;
  int32_t strides[12] = {}; // q, k, v, o's three outer strides
  std::vector<CaptureArray> *captures = nullptr;
  std::vector<int32_t> *captureSizes = nullptr;
  DeviceArray *sinks = nullptr;
};

// Launches attention function `f`'s kernels (the dispatch variant by Sk,
// the split-K partials NaN-poisoned and checked all written). A failed
// check clears `ok`; false when the case cannot go on (a FAIL line was
// printed).
bool launchAttention(const Json &f, const KernelTable &table,
                     const std::string &label, AttentionArgs &a,
                     bool &ok, std::string &variant) {
  const long batch = a.batch, sq = a.sq, sk = a.sk;
  const long hkv = f["kv_heads"].integer(), group = f["group"].integer(),
             dv = f["value_head_dim"].integer();
  const bool packedQ = f["packed"]["q"].boolean;
  int32_t sizes[4] = {int32_t(batch), int32_t(sq), int32_t(sk),
                      int32_t(a.maxBlocks)};
  // A function with one-pass and two-pass variants: the dispatch rule of
  // the launch facts picks by Sk.
  std::vector<const Json *> kernels;
  if (f["dispatch"].kind == Json::Object)
    variant = sk >= f["dispatch"]["two_pass_from_sk"].integer() ? "two_pass"
                                                                 : "one_pass";
  long splits = 0;
  for (const Json &kernelFacts : f["kernels"].items)
    if (variant.empty() || kernelFacts["variant"].text == variant) {
      kernels.push_back(&kernelFacts);
      if (kernelFacts["kind"].text.rfind("partial", 0) == 0)
        splits = kernelFacts["splits"].integer();
    }
  // Q tiles per (batch, K/V head): a packed Q's rows are the host's
  // max_q_len bound's, Sq.
  const long maxQ = sq;
  std::vector<float> partials;
  long recordFloats = 0, tilesQ = 0;
  if (splits > 0) {
    const long br = kernels[0]->operator[]("block_q").integer();
    tilesQ = (group * maxQ + br - 1) / br;
    recordFloats = br * (dv + 2);
    partials.assign(batch * hkv * tilesQ * splits * recordFloats, NAN);
  }

  for (const Json *kernelPtr : kernels) {
    const Json &kernelFacts = *kernelPtr;
    const std::string name = kernelFacts["name"].text;
    const attn_msl::Kernel *entry = kernelNamed(table, name, label);
    if (!entry)
      return false;
    const long br = kernelFacts["block_q"].integer();
    const long kernelSplits = kernelFacts["splits"].integer();
    const unsigned gridX =
        unsigned((group * maxQ + br - 1) / br * kernelSplits);
    std::vector<attn_msl::Buffer> buffers;
    for (const auto &[role, index] : kernelFacts["buffers"].fields) {
      unsigned at = unsigned(index.integer());
      if (role == "q")
        buffers.push_back(a.q->bind(at));
      else if (role == "k")
        buffers.push_back(a.k->bind(at));
      else if (role == "v")
        buffers.push_back(a.v->bind(at));
      else if (role == "o")
        buffers.push_back(a.o->bind(at));
      else if (role == "lse")
        buffers.push_back(attn_msl::bind_buffer(at, a.lse->data(), a.lse->size()));
      else if (role == "block_table")
        buffers.push_back(
            attn_msl::bind_buffer(at, a.blockTable->data(),
                                a.blockTable->size()));
      else if (role == "kv_lens")
        buffers.push_back(attn_msl::bind_buffer(at, a.lens->data(), a.lens->size()));
      else if (role == "cu_seqlens_q")
        buffers.push_back(attn_msl::bind_buffer(at, a.cuQ->data(), a.cuQ->size()));
      else if (role == "cu_seqlens_k")
        buffers.push_back(attn_msl::bind_buffer(at, a.cuK->data(), a.cuK->size()));
      else if (role == "sizes")
        buffers.push_back(attn_msl::bind_bytes(at, sizes, sizeof(sizes)));
      else if (role == "strides")
        buffers.push_back(
            attn_msl::bind_bytes(at, a.strides, sizeof(a.strides)));
      else if (role == "partials")
        buffers.push_back(
            attn_msl::bind_buffer(at, partials.data(), partials.size()));
      else if (role.rfind("capture", 0) == 0 && role != "capture_sizes" &&
               std::stoul(role.substr(7)) < a.captures->size())
        buffers.push_back((*a.captures)[std::stoul(role.substr(7))].bind(at));
      else if (role == "sinks" && a.sinks)
        buffers.push_back(a.sinks->bind(at));
      else if (role == "capture_sizes")
        buffers.push_back(attn_msl::bind_buffer(at, a.captureSizes->data(),
                                                a.captureSizes->size()));
      else {
        std::printf("FAIL %s: unknown buffer role %s\n", label.c_str(),
                    role.c_str());
        return false;
      }
    }
    std::vector<size_t> smem;
    for (const Json &bytes : kernelFacts["threadgroup_memory_bytes"].items)
      smem.push_back(size_t(bytes.integer()));
    attn_msl::LaunchResult result = attn_msl::launch(
        *entry, {gridX, unsigned(hkv), unsigned(batch)},
        {unsigned(kernelFacts["threads_per_threadgroup"].items[0].integer()), 1,
         1},
        buffers, smem);
    EXPECT(result.ok, "%s: %s", name.c_str(), result.error.c_str());
    if (!result.ok)
      break;
  }
  if (ok && splits > 0) {
    // Every record the merge reads: all of them, but a packed Q's tiles
    // past their sequence's rows, which exit early.
    long unwritten = 0;
    const long br = kernels[0]->operator[]("block_q").integer();
    for (long b = 0; b < batch; ++b)
      for (long t = 0; t < tilesQ; ++t) {
        if (packedQ && t * br >= group * (*a.qLens)[b])
          continue;
        for (long h = 0; h < hkv; ++h) {
          const float *at =
              partials.data() + ((b * hkv + h) * tilesQ + t) * splits *
                                    recordFloats;
          unwritten += std::count_if(at, at + splits * recordFloats,
                                     [](float x) { return std::isnan(x); });
        }
      }
    EXPECT(unwritten == 0, "%ld workspace floats never written", unwritten);
  }

  return true;
}

bool runCase(const Json &facts, const KernelTable &table, const Case &c,
             const std::string &label) {
  const Json *fn = nullptr;
  for (const Json &f : facts["functions"].items)
    if (f["name"].text == c.function)
      fn = &f;
  if (!fn) {
    std::printf("FAIL %s: no function '%s' in the launch facts\n",
                label.c_str(), c.function.c_str());
    return false;
  }
  const Json &f = *fn;
  const std::string dtype = f["dtype"].text, outType = f["out_dtype"].text;
  const long hq = f["q_heads"].integer(), hkv = f["kv_heads"].integer();
  const long d = f["head_dim"].integer(), dv = f["value_head_dim"].integer();
  const long blockSize = f["block_size"].integer();
  const bool hasLse = f["lse"].boolean, hasLens = f["kv_lens"].boolean;
  const long batch = c.batch, sq = c.qLen, sk = c.kvLen;
  // The packed (varlen) forms: Q, O, LSE [total_q, Hq, D] by cu_seqlens_q,
  // K, V [total_k, Hkv, D] by cu_seqlens_k. A packed Q's grid covers
  // max_q_len rows a sequence: this host's bound, Sq, within the spec's.
  const bool packedQ = f["packed"]["q"].boolean,
             packedKV = f["packed"]["kv"].boolean;
  const long specMaxQ =
      f["packed"].kind == Json::Object ? f["packed"]["max_q_len"].integer() : -1;
  if (packedQ && specMaxQ >= 0 && sq > specMaxQ) {
    std::printf("FAIL %s: Sq %ld exceeds the spec's max_q_len %ld\n",
                label.c_str(), sq, specMaxQ);
    return false;
  }
  if ((packedQ || packedKV) && f["strides"].kind == Json::Object) {
    std::printf("FAIL %s: this host takes packed operands row-major only\n",
                label.c_str());
    return false;
  }
  if ((!packedQ && !c.qLens.empty()) ||
      (!packedKV && !hasLens && f["block_size"].integer() == 0 &&
       !c.kvLens.empty())) {
    std::printf("FAIL %s: per-sequence lengths the spec does not take\n",
                label.c_str());
    return false;
  }
  std::vector<int32_t> qLens, cuQ, cuK, kvPacked;
  if (packedQ) {
    qLens = drawLens(batch, sq, c.qLens);
    cuQ = offsetsOf(qLens);
  }
  if (packedKV) {
    kvPacked = drawLens(batch, sk, c.kvLens);
    cuK = offsetsOf(kvPacked);
  }
  const long totalQ = packedQ ? cuQ.back() : 0,
             totalK = packedKV ? cuK.back() : 0;

  attn::reference::Problem problem;
  problem.batch = batch;
  problem.qHeads = hq;
  problem.kvHeads = hkv;
  problem.qLen = sq;
  problem.kvLen = sk;
  problem.headDim = d;
  problem.valueHeadDim = dv;
  if (packedQ)
    problem.cuSeqlensQ = cuQ.data();
  if (packedKV)
    problem.cuSeqlensK = cuK.data();
  problem.scale = f["scale"].number;
  problem.softcap = f["softcap"].number;
  problem.mask.left = f["mask"]["left"].integer();
  problem.mask.right = f["mask"]["right"].integer();
  problem.mask.bottomRight = f["mask"]["bottom_right"].boolean;

  // Per-sequence lengths: ragged, one empty sequence when there are three.
  std::vector<int32_t> lens(batch, int32_t(sk));
  if (!c.kvLens.empty() && !packedKV)
    lens = c.kvLens;
  else if (hasLens || blockSize)
    for (long b = 0; b + 1 < batch; ++b)
      lens[b] =
          (b == 0 && batch > 2)
              ? 0
              : int32_t(std::uniform_int_distribution<long>(0, sk)(rng()));
  long maxBlocks = 0, numBlocks = 0;
  std::vector<int32_t> blockTable;
  if (blockSize) {
    maxBlocks = std::max<long>(1, (sk + blockSize - 1) / blockSize);
    numBlocks = batch * maxBlocks + 3; // a few blocks nobody uses
    std::vector<int32_t> blocks(numBlocks);
    std::iota(blocks.begin(), blocks.end(), 0);
    std::shuffle(blocks.begin(), blocks.end(), rng());
    blockTable.assign(blocks.begin(), blocks.begin() + batch * maxBlocks);
    problem.blockSize = blockSize;
    problem.numBlocks = numBlocks;
    problem.maxBlocks = maxBlocks;
    problem.blockTable = blockTable.data();
  }
  if (hasLens || blockSize)
    problem.kvLens = lens.data();

  // The mod regions' captures, and the regions from the spec.
  std::vector<CaptureArray> captures;
  std::vector<int32_t> captureSizes;
  const Json &mods = f["mods"];
  if (mods.kind == Json::Object) {
    if (specPath().empty()) {
      std::printf("FAIL %s: '%s' has mod regions; pass --spec=SPEC.mlir\n",
                  label.c_str(), c.function.c_str());
      return false;
    }
    const long dynamic = std::max({batch, sq, sk, 1L});
    std::vector<attn::modshost::Capture> contents;
    for (const Json &capture : mods["captures"].items) {
      attn::modshost::Capture &content = contents.emplace_back();
      size_t count = 1;
      for (const Json &dim : capture["shape"].items) {
        const long size = dim.integer() < 0 ? dynamic : dim.integer();
        if (dim.integer() < 0)
          captureSizes.push_back(int32_t(size));
        content.shape.push_back(size);
        count *= size_t(size);
      }
      CaptureArray &array = captures.emplace_back();
      array.dtype = capture["dtype"].text;
      if (!array.fill(count)) {
        std::printf("FAIL %s: capture of unknown dtype %s\n", label.c_str(),
                    array.dtype.c_str());
        return false;
      }
      content.data = array.values;
    }
    attn::modshost::Mods regions;
    std::string error;
    if (!attn::modshost::load(specPath(), c.function, contents, regions,
                              error)) {
      std::printf("FAIL %s: %s\n", label.c_str(), error.c_str());
      return false;
    }
    problem.scoreMod = regions.score;
    problem.maskMod = regions.mask;
  }

  // Attention sinks ("sinks": their dtype): one logit a query head, drawn
  // in [-2, 4) so that some rows put most of their weight on the sink.
  std::optional<DeviceArray> sinks;
  std::vector<double> sinkRef;
  if (f["sinks"].kind == Json::String) {
    sinks.emplace(f["sinks"].text, size_t(hq));
    for (long h = 0; h < hq; ++h)
      sinkRef.push_back(sinks->set(size_t(h), uniform(-2, 4)));
    problem.sinks = sinkRef.data();
  }

  const long kvOuter = blockSize ? numBlocks : batch,
             kvInner = blockSize ? blockSize : sk;
  View qView(batch, hq, sq, d), kView(kvOuter, hkv, kvInner, d),
      vView(kvOuter, hkv, kvInner, dv), oView(batch, hq, sq, dv);
  if (packedQ) {
    qView = View(1, totalQ, hq, d);
    oView = View(1, totalQ, hq, dv);
  }
  if (packedKV) {
    kView = View(1, totalK, hkv, d);
    vView = View(1, totalK, hkv, dv);
  }
  const Json &layouts = f["strides"];
  for (auto [role, view] : {std::pair<const char *, View *>{"q", &qView},
                            {"k", &kView},
                            {"v", &vView},
                            {"o", &oView}})
    if (layouts[role].kind == Json::Array)
      view->setStrides(layouts[role]);
  DeviceArray q(dtype, qView.span()), k(dtype, kView.span()),
      v(dtype, vView.span()), o(outType, oView.span());
  std::vector<double> qRef(qView.size()), kRef(kView.size()),
      vRef(vView.size());
  // Q spans [-2, 2] so that softmax rows are far from uniform.
  for (size_t i = 0; i < qRef.size(); ++i)
    qRef[i] = q.set(qView.at(i), uniform(-2, 2));
  for (size_t i = 0; i < kRef.size(); ++i)
    kRef[i] = k.set(kView.at(i), uniform(-1, 1));
  for (size_t i = 0; i < vRef.size(); ++i)
    vRef[i] = v.set(vView.at(i), uniform(-1, 1));
  int32_t strides[12];
  for (auto [i, view] : {std::pair<int, View *>{0, &qView},
                         {1, &kView},
                         {2, &vView},
                         {3, &oView}})
    for (int j = 0; j < 3; ++j)
      strides[3 * i + j] = int32_t(view->strides[j]);
  std::vector<float> lse(packedQ ? totalQ * hq : batch * hq * sq, NAN);
  std::vector<double> oRef, lseRef;
  attn::reference::attention(problem, qRef, kRef, vRef, oRef, lseRef);

  AttentionArgs args{batch, sq,  sk,          maxBlocks, &q,    &k,
                     &v,    &o,  &lse,        &blockTable, &lens, &cuQ,
                     &cuK,  &qLens};
  std::copy(std::begin(strides), std::end(strides), args.strides);
  args.captures = &captures;
  args.captureSizes = &captureSizes;
  args.sinks = sinks ? &*sinks : nullptr;
  std::string variant;
  bool ok = true;
  if (!launchAttention(f, table, label, args, ok, variant))
    return false;

  // Every element written; error norms; empty rows.
  double diff = 0, norm = 0, worstLse = 0, maxAbs = 0;
  long unwritten = 0, emptyRows = 0, clobbered = 0;
  if (ok && oView.span() != oView.size()) {
    std::vector<bool> covered(o.size());
    for (long i = 0; i < oView.size(); ++i)
      covered[oView.at(i)] = true;
    for (size_t i = 0; i < o.size(); ++i)
      clobbered += !covered[i] && !std::isnan(o.get(i));
  }
  for (size_t row = 0; ok && row < lse.size(); ++row) {
    const bool empty = std::isinf(lseRef[row]);
    emptyRows += empty;
    for (long c2 = 0; c2 < dv; ++c2) {
      double out = o.get(oView.at(row * dv + c2)), ref = oRef[row * dv + c2];
      if (std::isnan(out)) {
        ++unwritten;
        continue;
      }
      if (empty)
        EXPECT(out == 0, "row %zu sees no key but o = %g", row, out);
      diff += (out - ref) * (out - ref);
      maxAbs = std::max(maxAbs, std::fabs(out - ref));
      norm += ref * ref;
    }
    if (hasLse) {
      if (empty) {
        EXPECT(std::isinf(lse[row]) && lse[row] < 0,
               "row %zu sees no key but lse = %g", row, double(lse[row]));
      } else {
        double err = std::fabs(double(lse[row]) - lseRef[row]);
        worstLse = std::max(worstLse, std::isnan(err) ? INFINITY : err);
      }
    }
  }
  const double rel =
      norm > 0 ? std::sqrt(diff) / std::sqrt(norm) : std::sqrt(diff);
  const double tolerance = dtype == "f32" && outType == "f32" ? 1e-4 : 1e-2;
  if (ok) {
    EXPECT(unwritten == 0, "%ld output elements never written", unwritten);
    EXPECT(clobbered == 0, "%ld elements written between strided rows",
           clobbered);
    EXPECT(rel <= tolerance, "relative error %.3g > %.0e", rel, tolerance);
    EXPECT(worstLse <= 1e-3, "LSE error %.3g > 1e-3", worstLse);
  }
  std::printf("%s %s: rel %.3g (tol %.0e), max abs %.3g, lse err %.3g, %ld "
              "empty rows%s%s\n",
              ok ? "PASS" : "FAIL", label.c_str(), rel, tolerance, maxAbs,
              worstLse, emptyRows, variant.empty() ? "" : ", ",
              variant.c_str());
  std::fflush(stdout);
  return ok;
}

//===----------------------------------------------------------------------===//
// A cache-append case: append:FUNCTION:B:S_new:KV_LEN
//===----------------------------------------------------------------------===//

// KV_LEN is the capacity of a contiguous cache, or the tokens a paged
// sequence's block table names. The caches are NaN poison with a poisoned
// tail past their end; kv_lens include an empty sequence, a full one and
// one that overflows; new_lens (when the spec has them) include 0 and more
// than S_new; a paged table has an entry naming no block (-1) and one naming
// the block past the cache (num_blocks). Every cache
// element must equal the reference append's, exactly, and the tails must
// stay poison.
bool runAppendCase(const Json &facts, const KernelTable &table,
                   const std::vector<std::string> &parts,
                   const std::string &label) {
  if (parts.size() != 5) {
    std::printf("FAIL bad case '%s' (want append:FUNCTION:B:S_new:KV_LEN)\n",
                label.c_str());
    return false;
  }
  const Json *fn = factsNamed(facts, "appends", parts[1], label);
  if (!fn)
    return false;
  const Json &f = *fn;
  const long batch = std::atol(parts[2].c_str()),
             sNew = std::atol(parts[3].c_str()),
             kvLen = std::atol(parts[4].c_str());
  if (batch < 1 || sNew < 1 || kvLen < 1) {
    std::printf("FAIL %s: sizes must be at least 1\n", label.c_str());
    return false;
  }
  const std::string dtype = f["dtype"].text;
  const long hkv = f["kv_heads"].integer(), d = f["head_dim"].integer(),
             dv = f["value_head_dim"].integer(),
             blockSize = f["block_size"].integer();
  attn::reference::AppendProblem p;
  p.batch = batch;
  p.kvHeads = hkv;
  p.newLen = sNew;
  p.headDim = d;
  p.valueHeadDim = dv;
  // The slot-mapping form: B is the cache's N blocks, S_new its T packed
  // tokens, KV_LEN its R rows per block.
  const bool slotted = f["slot_mapping"].boolean;
  if (slotted && sNew > batch * kvLen) {
    std::printf("FAIL %s: T packed tokens need T slots\n", label.c_str());
    return false;
  }
  long maxBlocks = 0, numBlocks = 0;
  std::vector<int32_t> slots;
  if (slotted) {
    numBlocks = batch;
    p.numBlocks = batch;
    p.blockSize = kvLen;
    p.capacity = kvLen;
    std::vector<int32_t> all(batch * kvLen);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng());
    slots.assign(all.begin(), all.begin() + sNew);
    slots[0] = -1; // vLLM's padding
    if (sNew > 1)
      slots[1] = int32_t(batch * kvLen); // one past the cache: the tail
    p.slotMapping = slots.data();
  } else if (blockSize) {
    maxBlocks = (kvLen + blockSize - 1) / blockSize;
    numBlocks = batch * maxBlocks + 3;
    p.blockSize = blockSize;
    p.maxBlocks = maxBlocks;
    p.numBlocks = numBlocks;
    p.capacity = maxBlocks * blockSize;
  } else {
    p.capacity = kvLen;
  }
  std::vector<int32_t> lens(batch), newLens(batch), blockTable;
  for (long b = 0; b < batch; ++b) {
    lens[b] = int32_t(std::uniform_int_distribution<long>(0, p.capacity)(rng()));
    newLens[b] = int32_t(std::uniform_int_distribution<long>(0, sNew)(rng()));
  }
  lens[0] = 0;
  if (batch > 1)
    lens[batch - 1] = int32_t(p.capacity - 1); // room for one token
  if (batch > 2)
    lens[1] = int32_t(p.capacity);             // full
  if (batch > 3)
    lens[2] = -7;                              // counts as 0
  if (f["new_lens"].boolean) {
    newLens[0] = int32_t(sNew + 5);
    if (batch > 1)
      newLens[batch - 1] = 0;
    p.newLens = newLens.data();
  }
  p.kvLens = lens.data();
  if (blockSize && !slotted) {
    std::vector<int32_t> blocks(numBlocks);
    std::iota(blocks.begin(), blocks.end(), 0);
    std::shuffle(blocks.begin(), blocks.end(), rng());
    blockTable.assign(blocks.begin(), blocks.begin() + batch * maxBlocks);
    if (maxBlocks > 1)
      blockTable[maxBlocks - 1] = -1; // sequence 0's last block is missing
    // The last sequence (one row of room) names the block past the cache,
    // which lies in the poisoned tail.
    if (batch > 1)
      blockTable[batch * maxBlocks - 1] = int32_t(numBlocks);
    p.blockTable = blockTable.data();
  }

  const long outer = blockSize || slotted ? numBlocks : batch;
  const long rows = blockSize ? blockSize : p.capacity;
  // Poison past the end, a block's worth when paged: a write there is a bug.
  const long tail =
      64 + (blockSize || slotted ? hkv * rows * std::max(d, dv) : 0);
  const size_t kCount = outer * hkv * rows * d, vCount = outer * hkv * rows * dv;
  const long newRows = slotted ? sNew : batch * sNew;
  DeviceArray kn(dtype, newRows * hkv * d), vn(dtype, newRows * hkv * dv),
      kc(dtype, kCount + tail), vc(dtype, vCount + tail);
  std::vector<double> knRef(kn.size()), vnRef(vn.size());
  for (size_t i = 0; i < kn.size(); ++i)
    knRef[i] = kn.set(i, uniform(-1, 1));
  for (size_t i = 0; i < vn.size(); ++i)
    vnRef[i] = vn.set(i, uniform(-1, 1));
  std::vector<double> kWant(kCount, NAN), vWant(vCount, NAN);
  const long rowsWritten =
      attn::reference::cacheAppend(p, knRef, vnRef, kWant, vWant);

  int32_t sizes[5] = {int32_t(batch), int32_t(sNew), int32_t(p.capacity),
                      int32_t(maxBlocks), int32_t(numBlocks)};
  const std::string name = f["kernel"].text;
  const attn_msl::Kernel *entry = kernelNamed(table, name, label);
  if (!entry)
    return false;
  std::vector<attn_msl::Buffer> buffers;
  for (const auto &[role, index] : f["buffers"].fields) {
    unsigned at = unsigned(index.integer());
    if (role == "k_new")
      buffers.push_back(kn.bind(at));
    else if (role == "v_new")
      buffers.push_back(vn.bind(at));
    else if (role == "k_cache")
      buffers.push_back(kc.bind(at));
    else if (role == "v_cache")
      buffers.push_back(vc.bind(at));
    else if (role == "block_table")
      buffers.push_back(
          attn_msl::bind_buffer(at, blockTable.data(), blockTable.size()));
    else if (role == "kv_lens")
      buffers.push_back(attn_msl::bind_buffer(at, lens.data(), lens.size()));
    else if (role == "slot_mapping")
      buffers.push_back(attn_msl::bind_buffer(at, slots.data(), slots.size()));
    else if (role == "new_lens")
      buffers.push_back(
          attn_msl::bind_buffer(at, newLens.data(), newLens.size()));
    else if (role == "sizes")
      buffers.push_back(attn_msl::bind_bytes(at, sizes, sizeof(sizes)));
    else {
      std::printf("FAIL %s: unknown buffer role %s\n", label.c_str(),
                  role.c_str());
      return false;
    }
  }
  const long tokens = f["tokens_per_threadgroup"].integer();
  bool ok = true;
  attn_msl::LaunchResult result = attn_msl::launch(
      *entry,
      {unsigned((sNew + tokens - 1) / tokens), unsigned(hkv),
       unsigned(slotted ? 1 : batch)},
      {unsigned(f["threads_per_threadgroup"].items[0].integer()), 1, 1},
      buffers, {});
  EXPECT(result.ok, "%s: %s", name.c_str(), result.error.c_str());
  long wrong = 0, clobbered = 0, written = 0;
  auto same = [](double x, double y) {
    return (std::isnan(x) && std::isnan(y)) || x == y;
  };
  for (auto [got, want] : {std::pair<DeviceArray *, std::vector<double> *>{
                               &kc, &kWant},
                           {&vc, &vWant}}) {
    for (size_t i = 0; i < got->size(); ++i) {
      const double w = i < want->size() ? (*want)[i] : NAN;
      written += !std::isnan(w);
      if (!same(got->get(i), w))
        ++(std::isnan(w) ? clobbered : wrong);
    }
  }
  EXPECT(wrong == 0, "%ld written elements differ from the new tokens", wrong);
  EXPECT(clobbered == 0, "%ld elements written that should not be",
         clobbered);
  std::printf("%s %s: %ld rows, %ld elements written, %ld wrong, %ld "
              "clobbered\n",
              ok ? "PASS" : "FAIL", label.c_str(), rowsWritten, written, wrong,
              clobbered);
  std::fflush(stdout);
  return ok;
}

// Launches merge `f`'s kernel over n parts of t rows. A failed launch
// clears `ok`; false when the case cannot go on (a FAIL line was printed).
// `strides` (AttnMergeStrides: o_parts, lse_parts 3, o, lse 2 each) is
// bound where the kernel takes it.
bool launchMerge(const Json &f, const KernelTable &table,
                 const std::string &label, long n, long t, DeviceArray &oParts,
                 std::vector<float> &lseParts, DeviceArray &o,
                 std::vector<float> &lse, int64_t (&strides)[10], bool &ok) {
  const long rows = t * f["heads"].integer();
  const std::string name = f["kernel"].text;
  const attn_msl::Kernel *entry = kernelNamed(table, name, label);
  if (!entry)
    return false;
  int32_t sizes[2] = {int32_t(n), int32_t(t)};
  std::vector<attn_msl::Buffer> buffers;
  for (const auto &[role, index] : f["buffers"].fields) {
    unsigned at = unsigned(index.integer());
    if (role == "o_parts")
      buffers.push_back(oParts.bind(at));
    else if (role == "lse_parts")
      buffers.push_back(
          attn_msl::bind_buffer(at, lseParts.data(), lseParts.size()));
    else if (role == "o")
      buffers.push_back(o.bind(at));
    else if (role == "lse")
      buffers.push_back(attn_msl::bind_buffer(at, lse.data(), lse.size()));
    else if (role == "sizes")
      buffers.push_back(attn_msl::bind_bytes(at, sizes, sizeof(sizes)));
    else if (role == "strides")
      buffers.push_back(attn_msl::bind_bytes(at, strides, sizeof(strides)));
    else {
      std::printf("FAIL %s: unknown buffer role %s\n", label.c_str(),
                  role.c_str());
      return false;
    }
  }
  const long perGroup = f["rows_per_threadgroup"].integer();
  attn_msl::LaunchResult result = attn_msl::launch(
      *entry, {unsigned((rows + perGroup - 1) / perGroup), 1, 1},
      {unsigned(f["threads_per_threadgroup"].items[0].integer()), 1, 1},
      buffers, {});
  EXPECT(result.ok, "%s: %s", name.c_str(), result.error.c_str());
  return true;
}

//===----------------------------------------------------------------------===//
// A merge case: merge:FUNCTION:N:T
//===----------------------------------------------------------------------===//

// N parts of T rows (a static N or T must match the spec): about one
// (part, row) in four is empty (LSE -inf, its O NaN, which must not be
// read) and every part of the rows r % 11 == 5 is. O and the LSE are NaN
// poison with a poisoned tail; O and the LSE must match the float64
// reference merge, an empty row must be O = 0, LSE = -inf exactly, and the
// tails must stay poison.
bool runMergeCase(const Json &facts, const KernelTable &table,
                  const std::vector<std::string> &parts,
                  const std::string &label) {
  if (parts.size() != 4) {
    std::printf("FAIL bad case '%s' (want merge:FUNCTION:N:T)\n",
                label.c_str());
    return false;
  }
  const Json *fn = factsNamed(facts, "merges", parts[1], label);
  if (!fn)
    return false;
  const Json &f = *fn;
  const long n = std::atol(parts[2].c_str()), t = std::atol(parts[3].c_str());
  const long heads = f["heads"].integer(), dv = f["value_head_dim"].integer();
  if (n < 1 || t < 1 || (f["parts"].integer() && f["parts"].integer() != n) ||
      (f["rows"].integer() && f["rows"].integer() != t)) {
    std::printf("FAIL %s: N and T must be at least 1 and match the spec's "
                "static dims\n",
                label.c_str());
    return false;
  }
  const long rows = t * heads, tail = 64;
  // Each operand row-major or strided as the facts say; a poisoned tail
  // past each output.
  const Json &layouts = f["strides"];
  const Layout partsAt({n, t, heads, dv}, layouts["o_parts"]),
      lsePartsAt({n, t, heads}, layouts["lse_parts"]),
      oAt({t, heads, dv}, layouts["o"]), lseAt({t, heads}, layouts["lse"]);
  DeviceArray oParts(f["dtype"].text, partsAt.span()),
      o(f["out_dtype"].text, oAt.span() + tail);
  std::vector<float> lseParts(lsePartsAt.span(), NAN),
      lse(lseAt.span() + tail, NAN);
  int64_t strides[10];
  for (int i = 0; i < 3; ++i) {
    strides[i] = partsAt.strides[i];
    strides[3 + i] = lsePartsAt.strides[i];
  }
  for (int i = 0; i < 2; ++i) {
    strides[6 + i] = oAt.strides[i];
    strides[8 + i] = lseAt.strides[i];
  }
  std::vector<double> partsRef(n * rows * dv), lseRef(n * rows);
  auto empty = [&](long r) {
    return r % 11 == 5 || std::uniform_int_distribution<int>(0, 3)(rng()) == 0;
  };
  for (long p = 0; p < n; ++p)
    for (long r = 0; r < rows; ++r) {
      const bool none = empty(r);
      float &l = lseParts[lsePartsAt.at(p * rows + r)];
      l = none ? -INFINITY : float(uniform(-6, 6));
      lseRef[p * rows + r] = l;
      for (long x = 0; x < dv; ++x) {
        const size_t i = (p * rows + r) * dv + x;
        partsRef[i] = oParts.set(partsAt.at(i), none ? NAN : uniform(-1, 1));
      }
    }
  std::vector<double> oWant, lseWant;
  attn::reference::mergeStates(n, rows, dv, partsRef, lseRef, oWant, lseWant);

  bool ok = true;
  if (!launchMerge(f, table, label, n, t, oParts, lseParts, o, lse, strides,
                   ok))
    return false;
  double num = 0, den = 0, lseErr = 0;
  long unwritten = 0, emptyRows = 0, emptyWrong = 0, clobbered = 0;
  const bool withLse = f["lse"].boolean;
  for (long r = 0; r < rows; ++r) {
    const bool none = std::isinf(lseWant[r]);
    emptyRows += none;
    for (long x = 0; x < dv; ++x) {
      const double got = o.get(oAt.at(r * dv + x)), want = oWant[r * dv + x];
      if (std::isnan(got))
        ++unwritten;
      else if (none)
        emptyWrong += got != 0.0;
      num += (got - want) * (got - want);
      den += want * want;
    }
    if (!withLse)
      continue;
    const float got = lse[lseAt.at(r)];
    if (std::isnan(got))
      ++unwritten;
    else if (none)
      emptyWrong += !(std::isinf(got) && got < 0);
    else
      lseErr = std::max(lseErr, std::abs(got - lseWant[r]) /
                                    std::max(1.0, std::abs(lseWant[r])));
  }
  // Nothing written in the gaps between strided rows or past the end.
  std::vector<bool> oCovered(o.size()), lseCovered(lse.size());
  for (long i = 0; i < oAt.size(); ++i)
    oCovered[oAt.at(i)] = true;
  for (long i = 0; i < lseAt.size(); ++i)
    lseCovered[lseAt.at(i)] = true;
  for (size_t i = 0; i < o.size(); ++i)
    clobbered += !oCovered[i] && !std::isnan(o.get(i));
  for (size_t i = 0; withLse && i < lse.size(); ++i)
    clobbered += !lseCovered[i] && !std::isnan(lse[i]);
  const double rel = std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
  const double tol = f["dtype"].text == "f32" && f["out_dtype"].text == "f32"
                         ? 1e-5
                         : 1e-2;
  EXPECT(unwritten == 0, "%ld outputs never written", unwritten);
  EXPECT(emptyWrong == 0, "%ld empty-row outputs not O = 0, LSE = -inf",
         emptyWrong);
  EXPECT(clobbered == 0, "%ld elements written past the outputs", clobbered);
  EXPECT(rel <= tol, "O rel err %.3g > %.0e", rel, tol);
  EXPECT(lseErr <= 1e-5, "LSE err %.3g", lseErr);
  EXPECT(rows <= 5 || emptyRows > 0, "no empty row among %ld", rows);
  std::printf("%s %s: rel %.3g (tol %.0e), lse err %.3g, %ld empty rows\n",
              ok ? "PASS" : "FAIL", label.c_str(), rel, tol, lseErr,
              emptyRows);
  std::fflush(stdout);
  return ok;
}

//===----------------------------------------------------------------------===//
// A cascade case: cascade:PREFIX:SUFFIX:MERGE:B:P:S:Q:C
//===----------------------------------------------------------------------===//

// Cascade attention from the .metal's own kernels, as attn.cascade
// composes them on GPUs: PREFIX (every request's queries stacked into one
// sequence, over the shared prefix's pages cut into C chunks of whole
// pages, each a sequence with the same queries), SUFFIX (each of the B
// requests over its own pages, suffix lengths in [0, S], the first empty
// when B > 2) and MERGE over the C + 1 parts, against float64 attention
// over each request's whole sequence. Both levels are paged attentions
// over packed queries with kv_lens and an LSE, reading one cache whose
// pages are shuffled; query counts are in [1, Q] (at most the suffix + 1
// when SUFFIX is causal). Level outputs and the merge's are NaN poison.
bool runCascadeCase(const Json &facts, const KernelTable &table,
                    const std::vector<std::string> &parts,
                    const std::string &label) {
  if (parts.size() != 9) {
    std::printf("FAIL bad case '%s' (want "
                "cascade:PREFIX:SUFFIX:MERGE:B:P:S:Q:C)\n",
                label.c_str());
    return false;
  }
  const Json *levels[2] = {factsNamed(facts, "functions", parts[1], label),
                           factsNamed(facts, "functions", parts[2], label)};
  const Json *mergeFacts = factsNamed(facts, "merges", parts[3], label);
  if (!levels[0] || !levels[1] || !mergeFacts)
    return false;
  const Json &pf = *levels[0], &sf = *levels[1], &mf = *mergeFacts;
  const long batch = std::atol(parts[4].c_str()),
             prefixLen = std::atol(parts[5].c_str()),
             maxSuffix = std::atol(parts[6].c_str()),
             maxQ = std::atol(parts[7].c_str()),
             chunks = std::atol(parts[8].c_str());
  const std::string dtype = sf["dtype"].text;
  const long hq = sf["q_heads"].integer(), hkv = sf["kv_heads"].integer(),
             d = sf["head_dim"].integer(), dv = sf["value_head_dim"].integer(),
             bs = sf["block_size"].integer();
  auto plainLevel = [&](const Json &f) {
    return f["block_size"].integer() == bs && bs > 0 &&
           f["packed"]["q"].boolean && !f["packed"]["kv"].boolean &&
           f["lse"].boolean && f["mods"].kind != Json::Object &&
           f["sinks"].kind != Json::String &&
           f["strides"].kind != Json::Object && f["dtype"].text == dtype &&
           f["q_heads"].integer() == hq && f["kv_heads"].integer() == hkv &&
           f["head_dim"].integer() == d &&
           f["value_head_dim"].integer() == dv &&
           f["scale"].number == sf["scale"].number &&
           f["softcap"].number == sf["softcap"].number;
  };
  const long suffixLeft = sf["mask"]["left"].integer(),
             suffixRight = sf["mask"]["right"].integer();
  const bool causal = suffixRight == 0;
  if (!plainLevel(pf) || !plainLevel(sf) ||
      pf["mask"]["left"].integer() != -1 ||
      pf["mask"]["right"].integer() != -1 || suffixLeft != -1 ||
      (suffixRight != -1 &&
       !(causal && sf["mask"]["bottom_right"].boolean)) ||
      mf["heads"].integer() != hq || mf["value_head_dim"].integer() != dv) {
    std::printf("FAIL %s: the levels must be paged attentions of one "
                "cache over packed queries with kv_lens and an LSE, the "
                "prefix unmasked, the suffix unmasked or causal, and the "
                "merge of their heads\n",
                label.c_str());
    return false;
  }
  const long n = chunks + 1;
  if (batch < 1 || prefixLen < 0 || maxSuffix < 0 || maxQ < 1 ||
      chunks < 1 || prefixLen + maxSuffix < 1 ||
      (mf["parts"].integer() && mf["parts"].integer() != n)) {
    std::printf("FAIL %s: B, Q and C must be at least 1, P and S at least "
                "0 (not both), and C + 1 the merge's static part count\n",
                label.c_str());
    return false;
  }

  // Lengths, pages and block tables. Entries past a sequence's pages name
  // valid blocks the kernels must not read.
  std::vector<int32_t> suffixLens = drawLens(batch, maxSuffix, {}),
                       qLens(batch);
  for (long b = 0; b < batch; ++b)
    qLens[b] = int32_t(std::uniform_int_distribution<long>(
        1, causal ? std::min(maxQ, long(suffixLens[b]) + 1) : maxQ)(rng()));
  const long rowsT = std::accumulate(qLens.begin(), qLens.end(), 0L);
  auto pages = [&](long tokens) { return (tokens + bs - 1) / bs; };
  const long prefixPages = pages(prefixLen),
             chunkPages = std::max(1L, (prefixPages + chunks - 1) / chunks),
             suffixPages = std::max(1L, pages(maxSuffix));
  long usedPages = prefixPages;
  for (int32_t s : suffixLens)
    usedPages += pages(s);
  const long numBlocks = usedPages + 3;
  std::vector<int32_t> order(numBlocks);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng());
  std::vector<int32_t> prefixCuQ, prefixLens, prefixTable, suffixTable,
      suffixCuQ = offsetsOf(qLens), noCuK, noQLens;
  for (long c = 0; c < chunks; ++c) {
    prefixCuQ.push_back(int32_t(c * rowsT));
    const long lo = std::min(prefixLen, c * chunkPages * bs),
               hi = std::min(prefixLen, (c + 1) * chunkPages * bs);
    prefixLens.push_back(int32_t(hi - lo));
    for (long j = 0; j < chunkPages; ++j) {
      const long page = c * chunkPages + j;
      prefixTable.push_back(order[page < prefixPages ? page
                                                     : page % usedPages]);
    }
  }
  prefixCuQ.push_back(int32_t(chunks * rowsT));
  std::vector<std::vector<int32_t>> ownPages(batch);
  long next = prefixPages;
  for (long b = 0; b < batch; ++b)
    for (long j = 0; j < suffixPages; ++j) {
      const bool used = j < pages(suffixLens[b]);
      suffixTable.push_back(used ? order[next++] : order[(b + j) % usedPages]);
      if (used)
        ownPages[b].push_back(suffixTable.back());
    }

  // One cache and one Q (the prefix level's is it once per chunk).
  DeviceArray k(dtype, numBlocks * hkv * bs * d),
      v(dtype, numBlocks * hkv * bs * dv), q(dtype, rowsT * hq * d),
      qPrefix(dtype, chunks * rowsT * hq * d);
  std::vector<double> qRef(q.size()), kRef(k.size()), vRef(v.size());
  for (size_t i = 0; i < qRef.size(); ++i)
    qRef[i] = q.set(i, uniform(-2, 2));
  for (size_t i = 0; i < qPrefix.size(); ++i)
    qPrefix.set(i, qRef[i % qRef.size()]);
  for (size_t i = 0; i < kRef.size(); ++i)
    kRef[i] = k.set(i, uniform(-1, 1));
  for (size_t i = 0; i < vRef.size(); ++i)
    vRef[i] = v.set(i, uniform(-1, 1));

  // The reference: each request's prefix then suffix, packed.
  std::vector<double> kPacked, vPacked;
  std::vector<int32_t> cuK{0};
  auto gather = [&](const std::vector<double> &cache, long width,
                    int32_t block, long row, std::vector<double> &out) {
    for (long h = 0; h < hkv; ++h)
      for (long x = 0; x < width; ++x)
        out.push_back(cache[((block * hkv + h) * bs + row) * width + x]);
  };
  for (long b = 0; b < batch; ++b) {
    for (long j = 0; j < prefixLen; ++j) {
      gather(kRef, d, order[j / bs], j % bs, kPacked);
      gather(vRef, dv, order[j / bs], j % bs, vPacked);
    }
    for (long j = 0; j < suffixLens[b]; ++j) {
      gather(kRef, d, ownPages[b][j / bs], j % bs, kPacked);
      gather(vRef, dv, ownPages[b][j / bs], j % bs, vPacked);
    }
    cuK.push_back(cuK.back() + int32_t(prefixLen) + suffixLens[b]);
  }
  attn::reference::Problem problem;
  problem.batch = batch;
  problem.qHeads = hq;
  problem.kvHeads = hkv;
  problem.headDim = d;
  problem.valueHeadDim = dv;
  problem.cuSeqlensQ = suffixCuQ.data();
  problem.cuSeqlensK = cuK.data();
  problem.scale = sf["scale"].number;
  problem.softcap = sf["softcap"].number;
  problem.mask.left = suffixLeft;
  problem.mask.right = suffixRight;
  problem.mask.bottomRight = sf["mask"]["bottom_right"].boolean;
  std::vector<double> oRef, lseRef;
  attn::reference::attention(problem, qRef, kPacked, vPacked, oRef, lseRef);

  // The two levels.
  const std::string outType = sf["out_dtype"].text;
  DeviceArray oPrefix(outType, chunks * rowsT * hq * dv),
      oSuffix(outType, rowsT * hq * dv);
  std::vector<float> lsePrefix(chunks * rowsT * hq, NAN),
      lseSuffix(rowsT * hq, NAN);
  std::vector<int32_t> chunkRows(chunks, int32_t(rowsT));
  AttentionArgs prefixArgs{chunks,      std::max(1L, rowsT),
                           chunkPages * bs, chunkPages,
                           &qPrefix,    &k,
                           &v,          &oPrefix,
                           &lsePrefix,  &prefixTable,
                           &prefixLens, &prefixCuQ,
                           &noCuK,      &chunkRows};
  AttentionArgs suffixArgs{batch,      maxQ,        maxSuffix,    suffixPages,
                           &q,         &k,          &v,           &oSuffix,
                           &lseSuffix, &suffixTable, &suffixLens, &suffixCuQ,
                           &noCuK,     &qLens};
  bool ok = true;
  std::string variant;
  if (!launchAttention(pf, table, label, prefixArgs, ok, variant) ||
      !launchAttention(sf, table, label, suffixArgs, ok, variant))
    return false;
  long levelUnwritten = 0, emptyParts = 0;
  for (size_t i = 0; i < oPrefix.size(); ++i)
    levelUnwritten += std::isnan(oPrefix.get(i));
  for (size_t i = 0; i < oSuffix.size(); ++i)
    levelUnwritten += std::isnan(oSuffix.get(i));
  for (const std::vector<float> *lse : {&lsePrefix, &lseSuffix})
    for (float x : *lse) {
      levelUnwritten += std::isnan(x);
      emptyParts += std::isinf(x) && x < 0;
    }

  // The merge: parts [C + 1, T, Hq, Dv], the chunks then the suffix.
  const long rows = rowsT * hq, tail = 64;
  DeviceArray oParts(mf["dtype"].text, n * rows * dv),
      o(mf["out_dtype"].text, rows * dv + tail);
  std::vector<float> lseParts(n * rows), lse(rows + tail, NAN);
  for (size_t i = 0; i < oParts.size(); ++i)
    oParts.set(i, i < oPrefix.size() ? oPrefix.get(i)
                                     : oSuffix.get(i - oPrefix.size()));
  for (size_t i = 0; i < lseParts.size(); ++i)
    lseParts[i] = i < lsePrefix.size() ? lsePrefix[i]
                                       : lseSuffix[i - lsePrefix.size()];
  int64_t rowMajor[10] = {}; // the cascade's merge is row-major
  if (mf["strides"].kind == Json::Object) {
    std::printf("FAIL %s: this host's cascade takes a row-major merge\n",
                label.c_str());
    return false;
  }
  if (!launchMerge(mf, table, label, n, rowsT, oParts, lseParts, o, lse,
                   rowMajor, ok))
    return false;

  double num = 0, den = 0, lseErr = 0;
  long unwritten = 0, clobbered = 0;
  const bool withLse = mf["lse"].boolean;
  for (long r = 0; r < rows; ++r) {
    for (long x = 0; x < dv; ++x) {
      const double got = o.get(r * dv + x), want = oRef[r * dv + x];
      if (std::isnan(got)) {
        ++unwritten;
        continue;
      }
      num += (got - want) * (got - want);
      den += want * want;
    }
    if (!withLse)
      continue;
    if (std::isnan(lse[r]))
      ++unwritten;
    else if (std::isinf(lseRef[r]) || std::isinf(lse[r]))
      lseErr = std::max(lseErr, double(lse[r]) == lseRef[r] ? 0.0 : INFINITY);
    else
      lseErr = std::max(lseErr, std::abs(lse[r] - lseRef[r]) /
                                    std::max(1.0, std::abs(lseRef[r])));
  }
  for (long i = 0; i < tail; ++i)
    clobbered += !std::isnan(o.get(rows * dv + i)) ||
                 (withLse && !std::isnan(lse[rows + i]));
  const double rel = std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
  const bool allF32 = dtype == "f32" && outType == "f32" &&
                      mf["dtype"].text == "f32" &&
                      mf["out_dtype"].text == "f32";
  const double tol = allF32 ? 1e-4 : 1e-2;
  EXPECT(levelUnwritten == 0, "%ld level outputs never written",
         levelUnwritten);
  EXPECT(unwritten == 0, "%ld merged outputs never written", unwritten);
  EXPECT(clobbered == 0, "%ld elements written past the outputs", clobbered);
  EXPECT(rel <= tol, "O rel err %.3g > %.0e", rel, tol);
  EXPECT(lseErr <= 1e-3, "LSE err %.3g", lseErr);
  std::printf("%s %s: rel %.3g (tol %.0e), lse err %.3g, %ld rows, %ld empty "
              "parts\n",
              ok ? "PASS" : "FAIL", label.c_str(), rel, tol, lseErr, rowsT,
              emptyParts);
  std::fflush(stdout);
  return ok;
}

int runAll(int argc, char **argv, const KernelTable &table) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s FACTS.json [--spec=SPEC.mlir] FUNCTION:B:Sq:Sk...\n",
                 argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  JsonReader reader{json};
  Json facts = reader.value();
  if (!reader.ok ||
      (facts["functions"].items.empty() && facts["appends"].items.empty() &&
       facts["merges"].items.empty())) {
    std::printf("FAIL cannot read launch facts from %s\n", argv[1]);
    return 1;
  }
  rng();
  int passed = 0, failed = 0;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--spec=", 0) == 0) {
      specPath() = argv[i] + 7;
      continue;
    }
    const bool append = std::string(argv[i]).rfind("append:", 0) == 0;
    const bool merge = std::string(argv[i]).rfind("merge:", 0) == 0;
    const bool cascade = std::string(argv[i]).rfind("cascade:", 0) == 0;
    if (append || merge || cascade) {
      std::vector<std::string> parts;
      std::stringstream in(argv[i]);
      std::string part;
      while (std::getline(in, part, ':'))
        parts.push_back(part);
      if (append    ? runAppendCase(facts, table, parts, argv[i])
          : merge   ? runMergeCase(facts, table, parts, argv[i])
                    : runCascadeCase(facts, table, parts, argv[i]))
        ++passed;
      else
        ++failed;
      continue;
    }
    Case c;
    if (!parseCase(argv[i], c)) {
      std::printf("FAIL bad case '%s' (want FUNCTION:B:Sq:Sk)\n", argv[i]);
      ++failed;
      continue;
    }
    if (runCase(facts, table, c, argv[i]))
      ++passed;
    else
      ++failed;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

} // namespace

#include ATTN_MSL_KERNEL_SOURCE

// From here on MSL keywords are macros; only the kernel table follows.
int main(int argc, char **argv) {
  KernelTable table = {
#include ATTN_TEST_KERNEL_TABLE
  };
  return runAll(argc, argv, table);
}
