//===- attn_gpu_test.cpp - generated kernels on a GPU vs the reference ----===//
//
// Runs attn's generated PTX kernels through libattnrt on fresh random
// inputs and compares them with the float64 reference:
//
//   attn_gpu_test check cases.txt PTX_DIR     one line per case, then
//                                             "N passed, M failed"
//   attn_gpu_test bench cases.txt PTX_DIR     median time over many runs,
//                                             each after an L2 flush
//   attn_gpu_test append append_cases.txt PTX_DIR
//   attn_gpu_test append-bench append_bench.txt PTX_DIR
//                                             attn.cache_append kernels:
//                                             every cache element checked,
//                                             timed against a device copy
//
// Each case line names a kernel, its PTX file, the problem's static facts
// and the sizes (see make_cases.py). The launch facts (threads, shared
// memory, rows per block) come from the "// attn.kernel" line attn-translate
// writes at the top of the PTX. Outputs are poisoned with NaN before each
// run, so an element the kernel never wrote fails the check.
//
//===----------------------------------------------------------------------===//

#include "attnrt.h"
#include "lib/Reference/HostFloat.h"
#include "lib/Reference/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Case {
  std::string spec, ptx;
  int64_t hq, hkv, d, dv, left, right;
  bool bottomRight, lse;
  double scale, softcap;
  int64_t batch, sq, sk;
  int64_t blockSize = 0; // paged K/V: rows per block (0: contiguous)
  bool lens = false;     // a kv_lens operand (random lengths up to sk)
  int64_t splits = 0;    // decode tier: forced split count (0: chosen)
  bool bf16 = false;     // element type of Q, K, V, O (else f16)
  bool f32Out = false;   // O in f32 instead (dtype "f16:f32")
  // Packed (varlen) forms (a last column packed_q, packed_kv or
  // packed_qkv): sq and sk are the longest sequence's lengths.
  bool packedQ = false, packedKV = false;
  // Benchmark: packed lengths drawn from [64, sq] with a fixed seed, the
  // same for Q and K/V (a prefill batch), instead of the check's pattern.
  bool benchLengths = false;
  // Attention sinks ([Hq] of `sinkType`: f32, f16 or bf16; a last
  // column "sinks:TYPE"), drawn from [-2, 4).
  bool sinks = false;
  std::string sinkType;
  // A quantized K/V cache (a last column "kv:FORMAT:SCALES"): K/V of
  // f8E4M3FN, f8E5M2 or i8 bytes, with scales per "tensor", "head",
  // "token" or "none".
  std::string kvFormat, kvScales;
  bool quantized() const { return !kvFormat.empty(); }
  // Keep the inputs' values on the host for the reference (benchmark
  // shapes too large to check are timed only, without them).
  bool hostCopies = true;
};

struct LaunchFacts {
  std::string name, tier;
  int64_t threads = 0, smem = 0, blockQ = 0, group = 0, rowsPerBlock = 0;
  /// The first two params are tensor maps of K and V (the wgmma tier's
  /// TMA copies).
  bool tensorMaps = false, qTensorMap = false, oTensorMap = false;
  // A combine that may overlap the split launch (griddepcontrol).
  bool programmatic = false;
  attnrt_kernel *kernel = nullptr;
};

struct Module {
  attnrt_module *module = nullptr;
  std::map<std::string, std::vector<LaunchFacts>> byHost;
};

#define CHECK_RT(call)                                                         \
  do {                                                                         \
    attnrt_status s_ = (call);                                                 \
    if (s_ != ATTNRT_SUCCESS) {                                                \
      std::fprintf(stderr, "%s failed: %s: %s\n", #call,                      \
                   attnrt_status_string(s_), attnrt_last_error());             \
      return false;                                                            \
    }                                                                          \
  } while (0)

using ::attn::host::fromBF16;
using ::attn::host::fromHalf;
uint16_t toHalf(double x) { return ::attn::host::toHalf(static_cast<float>(x)); }
uint16_t toBF16(double x) { return ::attn::host::toBF16(static_cast<float>(x)); }

/// One memref argument: device buffer plus its descriptor fields.
struct Arg {
  attnrt_deviceptr ptr = 0;
  std::vector<int64_t> sizes;
  int64_t elementBytes = 2;
  // ptr, ptr, offset, sizes..., strides...: one kernel parameter each.
  std::vector<uint64_t> params;
  void describe() {
    params = {ptr, ptr, 0};
    for (int64_t s : sizes)
      params.push_back(s);
    int64_t stride = 1;
    std::vector<int64_t> strides(sizes.size());
    for (int64_t i = sizes.size() - 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= sizes[i];
    }
    for (int64_t s : strides)
      params.push_back(s);
  }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
};

bool loadModule(const std::string &path, Module &m) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string ptx = text.str();
  std::istringstream lines(ptx);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// attn.kernel ", 0) != 0)
      continue;
    std::istringstream words(line.substr(15));
    std::string word, host;
    LaunchFacts f;
    words >> f.name;
    while (words >> word) {
      auto eq = word.find('=');
      if (eq == std::string::npos)
        continue;
      std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "host") host = value;
      if (key == "tier") f.tier = value;
      if (key == "threads") f.threads = std::stoll(value);
      if (key == "smem") f.smem = std::stoll(value);
      if (key == "block_q") f.blockQ = std::stoll(value);
      if (key == "group") f.group = std::stoll(value);
      if (key == "rows_per_block") f.rowsPerBlock = std::stoll(value);
      if (key == "programmatic") f.programmatic = value == "1";
      if (key == "params") {
        f.qTensorMap = value.rfind("[tensor_map(q)", 0) == 0;
        f.tensorMaps = f.qTensorMap || value.rfind("[tensor_map(k)", 0) == 0;
        f.oTensorMap = value.find("tensor_map(o)") != std::string::npos;
      }
    }
    m.byHost[host].push_back(f);
  }
  CHECK_RT(attnrt_module_load(&m.module, ptx.data(), ptx.size()));
  for (auto &[host, launches] : m.byHost)
    for (LaunchFacts &f : launches)
      CHECK_RT(attnrt_module_get_kernel(&f.kernel, m.module, f.name.c_str()));
  return true;
}

/// Device buffers of one case, filled with fresh random inputs.
struct Problem {
  Arg q, k, v, kScale, vScale, cuQ, cuK, blockTable, kvLens, sinks, o, lse,
      workspace;
  std::vector<double> hq, hk, hv; // the inputs as the kernel sees them
  std::vector<double> hsinks;
  std::vector<int32_t> table, lens, offsetsQ, offsetsK;
  int64_t numBlocks = 0, maxBlocks = 0, splits = 1;
  int64_t totalQ = 0, totalK = 0; // packed rows
};

/// A packed batch's lengths, each up to `most`: the first sequence the
/// longest, then (where the batch has them) one token and an empty one,
/// the rest random; returns the B + 1 offsets.
std::vector<int32_t> packedOffsets(int64_t batch, int64_t most,
                                   std::mt19937_64 &rng) {
  std::vector<int32_t> offsets{0};
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = b == 0   ? most
                  : b == 1 ? 1
                  : b == 2 ? 0
                           : std::uniform_int_distribution<int64_t>(0, most)(rng);
    offsets.push_back(offsets.back() + int32_t(len));
  }
  return offsets;
}

bool upload(Arg &a, const void *data) {
  CHECK_RT(attnrt_malloc(&a.ptr, a.count() * a.elementBytes));
  CHECK_RT(attnrt_memcpy_htod(a.ptr, data, a.count() * a.elementBytes));
  return true;
}

/// The K/V split count libattnrt's generated functions choose for `c`
/// (attnrt_internal_splits_of): the policy
/// (attnrt_decode_split_count_resident) given the split launch's grid
/// without its splits, its Q tile's rows, and the blocks of its kernel a
/// multiprocessor holds, over the K/V length libattnrt sees (a block
/// table's reach, all of a packed K's rows). 1 where the spec has no split
/// launch.
int64_t librarySplits(const Case &c, const std::vector<LaunchFacts> &launches,
                      const Problem &p, int sms) {
  int64_t kvLen = c.blockSize > 0 ? p.maxBlocks * c.blockSize
                  : c.packedKV    ? p.totalK
                                  : c.sk;
  for (const LaunchFacts &f : launches) {
    if (f.tier != "decode-split")
      continue;
    int64_t rows = c.sq * (c.hq / c.hkv);
    int64_t qTiles = (rows + f.blockQ - 1) / f.blockQ;
    int resident = 0;
    if (attnrt_kernel_resident_blocks(&resident, f.kernel, int(f.threads),
                                      size_t(f.smem)) != ATTNRT_SUCCESS)
      resident = 0; // the policy's own guess, as libattnrt falls back
    return attnrt_decode_split_count_resident(
        sms, resident, c.hkv * c.batch * qTiles, kvLen, f.blockQ);
  }
  return 1;
}

bool setUp(const Case &c, const std::vector<LaunchFacts> &launches,
           std::mt19937_64 &rng, int sms, Problem &p) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const bool paged = c.blockSize > 0;
  p.maxBlocks = paged ? (c.sk + c.blockSize - 1) / c.blockSize : 0;
  p.numBlocks = c.batch * p.maxBlocks + 3;
  const int64_t kvOuter = paged ? p.numBlocks : c.batch;
  const int64_t kvRows = paged ? c.blockSize : c.sk;
  p.q.sizes = {c.batch, c.hq, c.sq, c.d};
  p.k.sizes = {kvOuter, c.hkv, kvRows, c.d};
  p.v.sizes = {kvOuter, c.hkv, kvRows, c.dv};
  p.o.sizes = {c.batch, c.hq, c.sq, c.dv};
  p.lse.sizes = {c.batch, c.hq, c.sq};
  auto uploadOffsets = [&](Arg &a, const std::vector<int32_t> &offsets) {
    a.sizes = {int64_t(offsets.size())};
    a.elementBytes = 4;
    return upload(a, offsets.data());
  };
  if (c.benchLengths) {
    std::mt19937_64 fixed(19);
    std::vector<int32_t> offsets{0};
    for (int64_t b = 0; b < c.batch; ++b)
      offsets.push_back(offsets.back() +
                        int32_t(std::uniform_int_distribution<int64_t>(
                            std::min<int64_t>(64, c.sq), c.sq)(fixed)));
    p.offsetsQ = p.offsetsK = offsets;
  }
  // A packed operand group: its offsets (drawn unless benchmarking) and
  // total rows, uploaded.
  auto pack = [&](Arg &cu, std::vector<int32_t> &offsets, int64_t most,
                  int64_t &total) {
    if (!c.benchLengths)
      offsets = packedOffsets(c.batch, most, rng);
    total = offsets.back();
    return uploadOffsets(cu, offsets);
  };
  if (c.packedQ) {
    if (!pack(p.cuQ, p.offsetsQ, c.sq, p.totalQ))
      return false;
    p.q.sizes = {p.totalQ, c.hq, c.d};
    p.o.sizes = {p.totalQ, c.hq, c.dv};
    p.lse.sizes = {p.totalQ, c.hq};
  }
  if (c.packedKV) {
    if (!pack(p.cuK, p.offsetsK, c.sk, p.totalK))
      return false;
    p.k.sizes = {p.totalK, c.hkv, c.d};
    p.v.sizes = {p.totalK, c.hkv, c.dv};
  }
  p.o.elementBytes = c.f32Out ? 4 : 2;
  p.lse.elementBytes = 4;
  auto random = [&](Arg &a, std::vector<double> &host) -> bool {
    std::vector<uint16_t> bits(a.count());
    host.resize(c.hostCopies ? a.count() : 0);
    for (int64_t i = 0; i < a.count(); ++i) {
      double x = uniform(rng);
      bits[i] = c.bf16 ? toBF16(x) : toHalf(x);
      if (c.hostCopies)
        host[i] = c.bf16 ? fromBF16(bits[i]) : fromHalf(bits[i]);
    }
    return upload(a, bits.data());
  };
  // A quantized cache: fresh bytes (any finite code) and scales around
  // 4 / the format's largest value, so elements reach a few units; the
  // reference reads them dequantized. Scales per token are K's shape
  // without D.
  auto quantized = [&](Arg &a, Arg &scale, std::vector<double> &host) {
    const bool e4m3 = c.kvFormat == "f8E4M3FN", i8 = c.kvFormat == "i8";
    const double largest = e4m3 ? 448 : i8 ? 127 : 57344;
    a.elementBytes = 1;
    std::vector<uint8_t> bytes(a.count());
    std::uniform_int_distribution<int> byte(0, 255);
    for (uint8_t &x : bytes) {
      do
        x = uint8_t(byte(rng));
      while (i8 ? x == 0x80
                : e4m3 ? (x & 0x7f) == 0x7f : ((x >> 2) & 31) == 31);
    }
    std::vector<float> scales;
    std::vector<int64_t> scaleSizes;
    if (c.kvScales == "head")
      scaleSizes = {c.hkv};
    else if (c.kvScales == "token")
      scaleSizes.assign(a.sizes.begin(), a.sizes.end() - 1);
    if (c.kvScales != "none") {
      scale.sizes = scaleSizes;
      scale.elementBytes = 4;
      std::uniform_real_distribution<double> around(2.0, 6.0);
      scales.resize(scale.count());
      for (float &x : scales)
        x = float(around(rng) / largest);
      if (!upload(scale, scales.data()))
        return false;
    }
    // The scale of element i: one, a head's (dim 1), or its row's.
    const int64_t rowLen = a.sizes.back(), heads = a.sizes[1];
    if (!c.hostCopies)
      return upload(a, bytes.data());
    host.resize(a.count());
    for (int64_t i = 0; i < a.count(); ++i) {
      int64_t row = i / rowLen;
      int64_t head = a.sizes.size() == 3 ? row % heads
                                         : (row / a.sizes[2]) % heads;
      double s = c.kvScales == "none"     ? 1.0
                 : c.kvScales == "tensor" ? scales[0]
                 : c.kvScales == "head"   ? scales[head]
                                          : scales[row];
      double x = i8 ? double(int8_t(bytes[i]))
                    : ::attn::host::fromFP8(bytes[i], e4m3);
      host[i] = x * s;
    }
    return upload(a, bytes.data());
  };
  if (!random(p.q, p.hq))
    return false;
  if (c.quantized() ? !quantized(p.k, p.kScale, p.hk) ||
                          !quantized(p.v, p.vScale, p.hv)
                    : !random(p.k, p.hk) || !random(p.v, p.hv))
    return false;
  if (c.sinks) {
    // Past the scores' usual range, so that a sink sometimes dominates.
    std::uniform_real_distribution<double> sinkValue(-2.0, 4.0);
    p.sinks.sizes = {c.hq};
    p.sinks.elementBytes = c.sinkType == "f32" ? 4 : 2;
    p.hsinks.resize(c.hq);
    std::vector<float> f32(c.hq);
    std::vector<uint16_t> bits(c.hq);
    for (int64_t h = 0; h < c.hq; ++h) {
      double x = sinkValue(rng);
      if (c.sinkType == "f32") {
        f32[h] = float(x);
        p.hsinks[h] = f32[h];
      } else {
        bool bf = c.sinkType == "bf16";
        bits[h] = bf ? toBF16(x) : toHalf(x);
        p.hsinks[h] = bf ? fromBF16(bits[h]) : fromHalf(bits[h]);
      }
    }
    if (!upload(p.sinks, c.sinkType == "f32" ? static_cast<const void *>(
                                                  f32.data())
                                            : bits.data()))
      return false;
  }
  if (paged || c.lens) {
    p.lens.resize(c.batch);
    for (int64_t b = 0; b < c.batch; ++b)
      p.lens[b] = c.lens ? std::uniform_int_distribution<int64_t>(0, c.sk)(rng)
                         : c.sk;
    p.kvLens.sizes = {c.batch};
    p.kvLens.elementBytes = 4;
    if (!upload(p.kvLens, p.lens.data()))
      return false;
  }
  if (paged) {
    std::vector<int32_t> blocks(p.numBlocks);
    for (int64_t i = 0; i < p.numBlocks; ++i)
      blocks[i] = i;
    std::shuffle(blocks.begin(), blocks.end(), rng);
    p.table.assign(blocks.begin(), blocks.begin() + c.batch * p.maxBlocks);
    p.blockTable.sizes = {c.batch, p.maxBlocks};
    p.blockTable.elementBytes = 4;
    if (!upload(p.blockTable, p.table.data()))
      return false;
  }
  CHECK_RT(attnrt_malloc(&p.o.ptr, p.o.count() * p.o.elementBytes));
  if (c.lse)
    CHECK_RT(attnrt_malloc(&p.lse.ptr, p.lse.count() * 4));
  // Decode: the generated libraries' choice, unless the case forces a
  // count.
  int64_t rows = c.packedQ ? p.totalQ * c.hq : c.batch * c.hq * c.sq;
  p.splits = c.splits > 0 ? c.splits : librarySplits(c, launches, p, sms);
  p.workspace.sizes = {rows, p.splits, c.dv + 2};
  p.workspace.elementBytes = 4;
  CHECK_RT(attnrt_malloc(&p.workspace.ptr, p.workspace.count() * 4));
  for (Arg *a : {&p.q, &p.k, &p.v, &p.kScale, &p.vScale, &p.cuQ, &p.cuK,
                 &p.blockTable, &p.kvLens, &p.sinks, &p.o, &p.lse,
                 &p.workspace})
    if (a->ptr)
      a->describe();
  return true;
}

/// Kernel parameters: each memref's descriptor fields, in `args` order.
struct Params {
  std::vector<uint64_t> storage;
  std::vector<void *> pointers;
  explicit Params(std::initializer_list<const Arg *> args) {
    for (const Arg *a : args)
      if (a->ptr)
        storage.insert(storage.end(), a->params.begin(), a->params.end());
    for (uint64_t &x : storage)
      pointers.push_back(&x);
  }
};

void tearDown(Problem &p) {
  for (Arg *a : {&p.q, &p.k, &p.v, &p.kScale, &p.vScale, &p.cuQ, &p.cuK,
                 &p.blockTable, &p.kvLens, &p.sinks, &p.o, &p.lse,
                 &p.workspace})
    if (a->ptr)
      attnrt_free(a->ptr);
}

bool poison(const Case &c, Problem &p) {
  // 0xFF bytes: NaN as f16 (0xFFFF) and as f32 (0xFFFFFFFF).
  CHECK_RT(attnrt_memset_d8(p.o.ptr, 0xFF, p.o.count() * p.o.elementBytes));
  if (c.lse)
    CHECK_RT(attnrt_memset_d8(p.lse.ptr, 0xFF, p.lse.count() * 4));
  return true;
}

/// Launches the spec's kernels: one (wmma) or split + combine (decode),
/// or at one split the decode code's one-split kernel alone where it has
/// one (as libattnrt does).
bool launch(const Case &c, const std::vector<LaunchFacts> &launches,
            Problem &p, attnrt_stream *stream) {
  bool unsplit =
      p.splits == 1 &&
      std::any_of(launches.begin(), launches.end(), [](const LaunchFacts &f) {
        return f.tier == "decode-unsplit";
      });
  for (const LaunchFacts &f : launches) {
    if (f.tier == "decode-unsplit" && !unsplit)
      continue;
    if (unsplit && (f.tier == "decode-split" || f.tier == "decode-combine"))
      continue;
    if (f.tier == "wmma" || f.tier == "mma" || f.tier == "wgmma" ||
        f.tier == "decode-unsplit") {
      int64_t rows = c.sq * (c.hq / c.hkv);
      unsigned gridX = static_cast<unsigned>((rows + f.blockQ - 1) / f.blockQ);
      unsigned gridZ = static_cast<unsigned>(c.batch);
      // A packed Q: floor(total_q * G / block_q) + B tiles (packed_q_tiles).
      if (c.packedQ) {
        gridX = static_cast<unsigned>(p.totalQ * (c.hq / c.hkv) / f.blockQ +
                                      c.batch);
        gridZ = 1;
      }
      Params params{&p.q,          &p.k,      &p.v,     &p.kScale,
                    &p.vScale,     &p.cuQ,    &p.cuK,   &p.blockTable,
                    &p.kvLens,     &p.sinks,  &p.o,     &p.lse};
      // The contract's [tensor_map(q),] tensor_map(k), tensor_map(v)
      // [, tensor_map(o)] first, encoded as libattnrt does (AttnAttrs.td).
      attnrt_tensor_map maps[4];
      if (f.tensorMaps) {
        int n = 0;
        auto encode = [&](const Arg &a, bool qView) {
          std::vector<long long> sizes(a.sizes.begin(), a.sizes.end()),
              strides(a.params.begin() + 3 + sizes.size(), a.params.end());
          return attnrt_encode_attention_tensor_map(
              &maps[n++], a.ptr, int(a.elementBytes), sizes.data(),
              strides.data(), qView, int(f.blockQ), int(f.group));
        };
        if (f.qTensorMap)
          CHECK_RT(encode(p.q, true));
        CHECK_RT(encode(p.k, false));
        CHECK_RT(encode(p.v, false));
        if (f.oTensorMap)
          CHECK_RT(encode(p.o, true));
        for (int i = n - 1; i >= 0; --i)
          params.pointers.insert(params.pointers.begin(), &maps[i]);
      }
      if (gridX > 0)
        CHECK_RT(attnrt_launch(f.kernel, gridX, c.hkv, gridZ, f.threads, 1,
                               1, f.smem, stream, params.pointers.data()));
    } else if (f.tier == "decode-split") {
      int64_t rows = c.sq * (c.hq / c.hkv);
      int64_t qTiles = (rows + f.blockQ - 1) / f.blockQ;
      Params params{&p.q,      &p.k,   &p.v,          &p.kScale,
                    &p.vScale, &p.cuQ, &p.cuK,        &p.blockTable,
                    &p.kvLens, &p.workspace};
      CHECK_RT(attnrt_launch(f.kernel, p.splits, c.hkv, c.batch * qTiles,
                             f.threads, 1, 1, f.smem, stream,
                             params.pointers.data()));
    } else if (f.tier == "decode-combine") {
      int64_t rows = c.packedQ ? p.totalQ * c.hq : c.batch * c.hq * c.sq,
              perBlock = std::max<int64_t>(1, f.rowsPerBlock);
      if (rows == 0)
        continue;
      Params params{&p.workspace, &p.sinks, &p.o, &p.lse};
      CHECK_RT((f.programmatic ? attnrt_launch_programmatic : attnrt_launch)(
          f.kernel, (rows + perBlock - 1) / perBlock, 1, 1, f.threads, 1, 1,
          f.smem, stream, params.pointers.data()));
    } else {
      std::fprintf(stderr, "unknown tier '%s'\n", f.tier.c_str());
      return false;
    }
  }
  return true;
}

struct Result {
  double relErr = 0, lseErr = 0;
  int64_t unwritten = 0, lseWrong = 0, emptyRows = 0;
};

bool check(const Case &c, Problem &p, Result &r) {
  std::vector<uint16_t> o(c.f32Out ? 0 : p.o.count());
  std::vector<float> o32(c.f32Out ? p.o.count() : 0);
  CHECK_RT(c.f32Out ? attnrt_memcpy_dtoh(o32.data(), p.o.ptr, o32.size() * 4)
                    : attnrt_memcpy_dtoh(o.data(), p.o.ptr, o.size() * 2));
  std::vector<float> lse(c.lse ? p.lse.count() : 0);
  if (c.lse)
    CHECK_RT(attnrt_memcpy_dtoh(lse.data(), p.lse.ptr, lse.size() * 4));
  attn::reference::Problem rp;
  rp.batch = c.batch;
  rp.qHeads = c.hq;
  rp.kvHeads = c.hkv;
  rp.qLen = c.sq;
  rp.kvLen = c.sk;
  rp.headDim = c.d;
  rp.valueHeadDim = c.dv;
  rp.scale = c.scale;
  rp.softcap = c.softcap;
  rp.mask.left = c.left;
  rp.mask.right = c.right;
  rp.mask.bottomRight = c.bottomRight;
  if (c.blockSize) {
    rp.blockSize = c.blockSize;
    rp.numBlocks = p.numBlocks;
    rp.maxBlocks = p.maxBlocks;
    rp.blockTable = p.table.data();
  }
  if (!p.lens.empty())
    rp.kvLens = p.lens.data();
  if (c.packedQ)
    rp.cuSeqlensQ = p.offsetsQ.data();
  if (c.packedKV)
    rp.cuSeqlensK = p.offsetsK.data();
  if (c.sinks)
    rp.sinks = p.hsinks.data();
  std::vector<double> refO, refLse;
  attn::reference::attention(rp, p.hq, p.hk, p.hv, refO, refLse);
  double num = 0, den = 0;
  for (size_t i = 0; i < refO.size(); ++i) {
    double x = c.f32Out ? o32[i] : c.bf16 ? fromBF16(o[i]) : fromHalf(o[i]);
    if (std::isnan(x)) {
      ++r.unwritten;
      continue;
    }
    num += (x - refO[i]) * (x - refO[i]);
    den += refO[i] * refO[i];
  }
  r.relErr = std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0);
  for (size_t i = 0; i < lse.size(); ++i) {
    if (std::isnan(lse[i]))
      ++r.unwritten;
    else if (std::isinf(refLse[i])) {
      ++r.emptyRows;
      r.lseWrong += !(std::isinf(lse[i]) && lse[i] < 0);
    } else
      r.lseErr = std::max(r.lseErr, std::abs(lse[i] - refLse[i]));
  }
  return true;
}

std::vector<Case> readCases(const char *path) {
  std::vector<Case> cases;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream w(line);
    Case c;
    int br, lse;
    int lens;
    w >> c.spec >> c.ptx >> c.hq >> c.hkv >> c.d >> c.dv >> c.left >>
        c.right >> br >> c.scale >> c.softcap >> lse >> c.batch >> c.sq >>
        c.sk >> c.blockSize >> lens >> c.splits;
    if (!w)
      continue;
    std::string dtype, form;
    if (w >> dtype) {
      c.bf16 = dtype.rfind("bf16", 0) == 0;
      c.f32Out = dtype.size() > 4 && dtype.substr(dtype.size() - 4) == ":f32";
    }
    // Then the form and "sinks:TYPE", each optional.
    while (w >> form) {
      if (form.rfind("sinks:", 0) == 0) {
        c.sinks = true;
        c.sinkType = form.substr(6);
        continue;
      }
      if (form.rfind("kv:", 0) == 0) {
        auto colon = form.find(':', 3);
        c.kvFormat = form.substr(3, colon - 3);
        c.kvScales = form.substr(colon + 1);
        continue;
      }
      c.packedQ = form == "packed_q" || form == "packed_qkv";
      c.packedKV = form == "packed_kv" || form == "packed_qkv";
    }
    c.bottomRight = br;
    c.lse = lse;
    c.lens = lens;
    cases.push_back(c);
  }
  return cases;
}

//===----------------------------------------------------------------------===//
// attn.cache_append kernels: attn_gpu_test append|append-bench CASES PTX_DIR
//===----------------------------------------------------------------------===//

// A case line (make_cases.py, append_cases.txt):
//   spec ptx hkv d dv dtype block_size new_lens batch s_new kv_len
// kv_len: a contiguous cache's capacity, or the tokens a paged sequence's
// block table names. The check draws kv_lens in [-2, kv_len] (negative,
// full and overflowing sequences included), new_lens in [0, s_new + 2],
// and names no block in one table entry (-1) and the block past the cache
// in another; the caches are poisoned (0xFF bytes: NaN) with a poisoned
// tail (a block's worth when paged), and every element must equal the
// reference append's, the tail untouched. The benchmark appends every
// token (kv_lens = kv_len - s_new, or 0) and compares with a
// device-to-device copy of the same bytes, read and written once: the
// copy ceiling.
// The slot-mapping form (a last column "slots"): batch is the cache's N
// blocks, s_new its T packed tokens, kv_len its R rows per block; slot_mapping
// is a shuffle of the N * R slots, with (when checking) a -1 (vLLM's
// padding) and a slot one past the cache.
struct AppendCase {
  std::string spec, ptx, dtype;
  int64_t hkv, d, dv, blockSize, batch, sNew, kvLen;
  bool newLens, slots = false;
  int64_t elementBytes() const { return dtype == "f32" ? 4 : 2; }
};

std::vector<AppendCase> readAppendCases(const char *path) {
  std::vector<AppendCase> cases;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream w(line);
    AppendCase c;
    int newLens;
    w >> c.spec >> c.ptx >> c.hkv >> c.d >> c.dv >> c.dtype >> c.blockSize >>
        newLens >> c.batch >> c.sNew >> c.kvLen;
    c.newLens = newLens;
    if (!w)
      continue;
    std::string form;
    c.slots = (w >> form) && form == "slots";
    cases.push_back(c);
  }
  return cases;
}

/// New tokens per block of an append launch: N of its grid's
/// "ceildiv(new_len,N)" (the PTX's "// attn.kernel" line).
int64_t appendTokens(const std::string &ptxPath, const std::string &kernel) {
  std::ifstream in(ptxPath);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("// attn.kernel " + kernel + " ", 0) != 0)
      continue;
    size_t at = line.find("ceildiv(new_len,");
    if (at != std::string::npos)
      return std::stoll(line.substr(at + 16));
    return 1; // grid=[new_len,...]
  }
  return 0;
}

struct AppendProblem {
  Arg kNew, vNew, blockTable, kvLens, newLens, slotMapping, kCache, vCache;
  std::vector<double> hkNew, hvNew;
  std::vector<int32_t> table, lens, counts, slots;
  int64_t numBlocks = 0, maxBlocks = 0, capacity = 0;
  // Poisoned bytes past each cache: 256, and a block's worth when paged.
  static constexpr int64_t kTail = 256;
  int64_t tail = kTail;
};

double decode(const AppendCase &c, const uint8_t *p) {
  if (c.dtype == "f32") {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return c.dtype == "bf16" ? fromBF16(h) : fromHalf(h);
}

bool setUpAppend(const AppendCase &c, std::mt19937_64 &rng, bool bench,
                 AppendProblem &p) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const bool paged = c.blockSize > 0 && !c.slots;
  p.maxBlocks = paged ? (c.kvLen + c.blockSize - 1) / c.blockSize : 0;
  p.numBlocks = c.slots ? c.batch : c.batch * p.maxBlocks + 3;
  p.capacity = paged ? p.maxBlocks * c.blockSize : c.kvLen;
  const int64_t outer = paged || c.slots ? p.numBlocks : c.batch;
  const int64_t rows = paged ? c.blockSize : c.kvLen;
  const int64_t eb = c.elementBytes();
  if (c.slots) {
    p.kNew.sizes = {c.sNew, c.hkv, c.d};
    p.vNew.sizes = {c.sNew, c.hkv, c.dv};
  } else {
    p.kNew.sizes = {c.batch, c.hkv, c.sNew, c.d};
    p.vNew.sizes = {c.batch, c.hkv, c.sNew, c.dv};
  }
  p.kCache.sizes = {outer, c.hkv, rows, c.d};
  p.vCache.sizes = {outer, c.hkv, rows, c.dv};
  for (Arg *a : {&p.kNew, &p.vNew, &p.kCache, &p.vCache})
    a->elementBytes = eb;
  auto random = [&](Arg &a, std::vector<double> &host) -> bool {
    std::vector<uint8_t> bytes(a.count() * eb);
    host.resize(a.count());
    for (int64_t i = 0; i < a.count(); ++i) {
      double x = uniform(rng);
      if (eb == 4) {
        float f = float(x);
        std::memcpy(&bytes[i * 4], &f, 4);
      } else {
        uint16_t h = c.dtype == "bf16" ? toBF16(x) : toHalf(x);
        std::memcpy(&bytes[i * 2], &h, 2);
      }
      host[i] = decode(c, &bytes[i * eb]);
    }
    return upload(a, bytes.data());
  };
  if (!random(p.kNew, p.hkNew) || !random(p.vNew, p.hvNew))
    return false;
  if (c.slots) {
    if (c.sNew > c.batch * c.kvLen) {
      std::fprintf(stderr, "%s: T tokens need T slots\n", c.spec.c_str());
      return false;
    }
    std::vector<int32_t> all(c.batch * c.kvLen);
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = int32_t(i);
    std::shuffle(all.begin(), all.end(), rng);
    p.slots.assign(all.begin(), all.begin() + c.sNew);
    if (!bench) {
      p.slots[0] = -1;
      if (c.sNew > 1)
        p.slots[1] = int32_t(c.batch * c.kvLen); // past the cache: the tail
    }
    p.slotMapping.sizes = {c.sNew};
    p.slotMapping.elementBytes = 4;
    if (!upload(p.slotMapping, p.slots.data()))
      return false;
  }
  p.lens.resize(c.batch);
  p.counts.resize(c.batch);
  for (int64_t b = 0; b < c.batch; ++b) {
    if (bench) {
      p.lens[b] = int32_t(std::max<int64_t>(0, p.capacity - c.sNew));
      p.counts[b] = int32_t(c.sNew);
    } else {
      p.lens[b] = int32_t(
          std::uniform_int_distribution<int64_t>(-2, p.capacity)(rng));
      p.counts[b] = int32_t(
          std::uniform_int_distribution<int64_t>(0, c.sNew + 2)(rng));
    }
  }
  p.kvLens.sizes = {c.batch};
  p.kvLens.elementBytes = 4;
  if (!c.slots && !upload(p.kvLens, p.lens.data()))
    return false;
  if (c.newLens) {
    p.newLens.sizes = {c.batch};
    p.newLens.elementBytes = 4;
    if (!upload(p.newLens, p.counts.data()))
      return false;
  }
  if (paged) {
    std::vector<int32_t> blocks(p.numBlocks);
    for (int64_t i = 0; i < p.numBlocks; ++i)
      blocks[i] = int32_t(i);
    std::shuffle(blocks.begin(), blocks.end(), rng);
    p.table.assign(blocks.begin(), blocks.begin() + c.batch * p.maxBlocks);
    if (!bench) {
      if (p.maxBlocks > 1)
        p.table[p.maxBlocks - 1] = -1; // sequence 0's last block: none
      // The last sequence has one row of room, in a block past the cache
      // (in the poisoned tail): nothing may be written there.
      if (c.batch > 1) {
        p.table[c.batch * p.maxBlocks - 1] = int32_t(p.numBlocks);
        p.lens[c.batch - 1] = int32_t(p.capacity - 1);
        CHECK_RT(attnrt_memcpy_htod(p.kvLens.ptr, p.lens.data(),
                                    p.lens.size() * 4));
      }
    }
    p.blockTable.sizes = {c.batch, p.maxBlocks};
    p.blockTable.elementBytes = 4;
    if (!upload(p.blockTable, p.table.data()))
      return false;
  }
  p.tail = AppendProblem::kTail +
           (paged || c.slots ? c.hkv * rows * std::max(c.d, c.dv) * eb : 0);
  for (Arg *a : {&p.kCache, &p.vCache}) {
    size_t bytes = a->count() * eb + p.tail;
    CHECK_RT(attnrt_malloc(&a->ptr, bytes));
    CHECK_RT(attnrt_memset_d8(a->ptr, 0xFF, bytes));
  }
  for (Arg *a : {&p.kNew, &p.vNew, &p.blockTable, &p.kvLens, &p.newLens,
                 &p.slotMapping, &p.kCache, &p.vCache})
    if (a->ptr)
      a->describe();
  return true;
}

void tearDownAppend(AppendProblem &p) {
  for (Arg *a : {&p.kNew, &p.vNew, &p.blockTable, &p.kvLens, &p.newLens,
                 &p.slotMapping, &p.kCache, &p.vCache})
    if (a->ptr)
      attnrt_free(a->ptr);
}

bool launchAppend(const AppendCase &c, const LaunchFacts &f, int64_t tokens,
                  AppendProblem &p, attnrt_stream *stream) {
  // k_new, v_new, [block_table], [kv_lens], [new_lens], [slot_mapping],
  // k_cache, v_cache: Params skips the absent ones.
  Params params{&p.kNew,    &p.vNew,        &p.blockTable, &p.kvLens,
                &p.newLens, &p.slotMapping, &p.kCache,     &p.vCache};
  unsigned gridX = unsigned((c.sNew + tokens - 1) / tokens);
  unsigned gridZ = c.slots ? 1 : unsigned(c.batch);
  CHECK_RT(attnrt_launch(f.kernel, gridX, unsigned(c.hkv), gridZ,
                         unsigned(f.threads), 1, 1, unsigned(f.smem), stream,
                         params.pointers.data()));
  return true;
}

struct AppendResult {
  int64_t rows = 0, written = 0, wrong = 0, clobbered = 0, tail = 0;
};

bool checkAppend(const AppendCase &c, AppendProblem &p, AppendResult &r) {
  attn::reference::AppendProblem rp;
  rp.batch = c.batch;
  rp.kvHeads = c.hkv;
  rp.newLen = c.sNew;
  rp.headDim = c.d;
  rp.valueHeadDim = c.dv;
  rp.capacity = p.capacity;
  if (c.slots) {
    rp.blockSize = c.kvLen;
    rp.numBlocks = c.batch;
    rp.slotMapping = p.slots.data();
  } else if (c.blockSize) {
    rp.blockSize = c.blockSize;
    rp.numBlocks = p.numBlocks;
    rp.maxBlocks = p.maxBlocks;
    rp.blockTable = p.table.data();
  }
  rp.kvLens = p.lens.data();
  if (c.newLens)
    rp.newLens = p.counts.data();
  std::vector<double> kWant(p.kCache.count(), NAN), vWant(p.vCache.count(), NAN);
  r.rows = attn::reference::cacheAppend(rp, p.hkNew, p.hvNew, kWant, vWant);
  const int64_t eb = c.elementBytes();
  for (auto [arg, want] : {std::pair<Arg *, std::vector<double> *>{&p.kCache,
                                                                    &kWant},
                           {&p.vCache, &vWant}}) {
    std::vector<uint8_t> got(arg->count() * eb + p.tail);
    CHECK_RT(attnrt_memcpy_dtoh(got.data(), arg->ptr, got.size()));
    for (int64_t i = 0; i < arg->count(); ++i) {
      double x = decode(c, &got[i * eb]), w = (*want)[i];
      bool same = (std::isnan(x) && std::isnan(w)) || x == w;
      r.written += !std::isnan(w);
      if (!same)
        ++(std::isnan(w) ? r.clobbered : r.wrong);
    }
    for (size_t i = arg->count() * eb; i < got.size(); ++i)
      r.tail += got[i] != 0xFF;
  }
  return true;
}

int runAppendCases(bool bench, const char *casesPath, const char *ptxDir) {
  std::vector<AppendCase> cases = readAppendCases(casesPath);
  if (cases.empty()) {
    std::fprintf(stderr, "attn_gpu_test: no append cases in %s\n", casesPath);
    return 1;
  }
  const size_t kFlushBytes = size_t(128) << 20;
  attnrt_deviceptr flush[2] = {0, 0};
  if (bench && (attnrt_malloc(&flush[0], kFlushBytes) != ATTNRT_SUCCESS ||
                attnrt_malloc(&flush[1], kFlushBytes) != ATTNRT_SUCCESS)) {
    std::fprintf(stderr, "attn_gpu_test: %s\n", attnrt_last_error());
    return 1;
  }
  std::map<std::string, Module> modules;
  std::mt19937_64 rng(std::random_device{}());
  int passed = 0, failed = 0;
  for (const AppendCase &c : cases) {
    Module &m = modules[c.ptx];
    const std::string path = std::string(ptxDir) + "/" + c.ptx;
    if (!m.module && !loadModule(path, m)) {
      ++failed;
      continue;
    }
    if (!m.byHost.count(c.spec) || m.byHost[c.spec].front().tier != "append") {
      std::printf("FAIL %s: no append kernel launched by @%s in %s\n",
                  c.spec.c_str(), c.spec.c_str(), c.ptx.c_str());
      ++failed;
      continue;
    }
    const LaunchFacts &f = m.byHost[c.spec].front();
    const int64_t tokens = appendTokens(path, f.name);
    std::fprintf(stderr, "running %s B=%lld S_new=%lld kv_len=%lld\n",
                 c.spec.c_str(), (long long)c.batch, (long long)c.sNew,
                 (long long)c.kvLen);
    AppendProblem p;
    AppendResult r;
    bool ok = tokens > 0 && setUpAppend(c, rng, bench, p) &&
              launchAppend(c, f, tokens, p, nullptr) &&
              attnrt_synchronize() == ATTNRT_SUCCESS && checkAppend(c, p, r);
    if (!ok) {
      std::printf("FAIL %s B=%lld S_new=%lld kv_len=%lld: runtime error: %s\n",
                  c.spec.c_str(), (long long)c.batch, (long long)c.sNew,
                  (long long)c.kvLen, attnrt_last_error());
      ++failed;
      tearDownAppend(p);
      continue;
    }
    bool pass = r.wrong == 0 && r.clobbered == 0 && r.tail == 0;
    std::printf("%s %s %s=%lld %s=%lld %s=%lld %s%s: rows=%lld "
                "written=%lld wrong=%lld clobbered=%lld tail=%lld",
                pass ? "PASS" : "FAIL", c.spec.c_str(), c.slots ? "N" : "B",
                (long long)c.batch, c.slots ? "T" : "S_new", (long long)c.sNew,
                c.slots ? "R" : "kv_len", (long long)c.kvLen, c.dtype.c_str(),
                c.slots       ? " slots"
                : c.blockSize ? (" paged bs=" + std::to_string(c.blockSize)).c_str()
                              : "",
                (long long)r.rows, (long long)r.written, (long long)r.wrong,
                (long long)r.clobbered, (long long)r.tail);
    if (bench) {
      // Bytes: the new K and V rows read once and written once.
      const double moved =
          2.0 * double((c.slots ? 1 : c.batch) * c.hkv * c.sNew *
                       (c.d + c.dv)) *
          c.elementBytes();
      // The copy ceiling: a device-to-device copy of the same bytes (half
      // read, half written), from the new K buffer into the K cache (which
      // is at least as large).
      const size_t copyBytes = size_t(moved / 2);
      attnrt_deviceptr copySrc = 0, copyDst = 0;
      if (attnrt_malloc(&copySrc, copyBytes) != ATTNRT_SUCCESS ||
          attnrt_malloc(&copyDst, copyBytes) != ATTNRT_SUCCESS) {
        std::fprintf(stderr, "attn_gpu_test: %s\n", attnrt_last_error());
        return 1;
      }
      attnrt_event *start, *stop;
      attnrt_event_create(&start);
      attnrt_event_create(&stop);
      auto time = [&](bool copy) {
        for (int i = 0; i < 5; ++i)
          copy ? (void)attnrt_memcpy_dtod(copyDst, copySrc, copyBytes)
               : (void)launchAppend(c, f, tokens, p, nullptr);
        std::vector<float> ms;
        for (int i = 0; i < 30; ++i) {
          attnrt_memcpy_dtod(flush[1], flush[0], kFlushBytes);
          attnrt_event_record(start, nullptr);
          copy ? (void)attnrt_memcpy_dtod(copyDst, copySrc, copyBytes)
               : (void)launchAppend(c, f, tokens, p, nullptr);
          attnrt_event_record(stop, nullptr);
          attnrt_event_synchronize(stop);
          float t = 0;
          attnrt_event_elapsed_ms(&t, start, stop);
          ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        return double(ms[ms.size() / 2]);
      };
      const double appendMs = time(false), copyMs = time(true);
      std::printf(" median=%.1fus %.2fTB/s copy=%.1fus %.2fTB/s "
                  "of_copy=%.2f",
                  appendMs * 1e3, moved / (appendMs * 1e-3) / 1e12,
                  copyMs * 1e3, moved / (copyMs * 1e-3) / 1e12,
                  copyMs / appendMs);
      attnrt_event_destroy(start);
      attnrt_event_destroy(stop);
      attnrt_free(copySrc);
      attnrt_free(copyDst);
    }
    std::printf("\n");
    pass ? ++passed : ++failed;
    tearDownAppend(p);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  for (attnrt_deviceptr buffer : flush)
    if (buffer)
      attnrt_free(buffer);
  return failed ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4 || (std::strcmp(argv[1], "check") &&
                    std::strcmp(argv[1], "bench") &&
                    std::strcmp(argv[1], "append") &&
                    std::strcmp(argv[1], "append-bench"))) {
    std::fprintf(stderr,
                 "usage: %s check|bench|append|append-bench CASES PTX_DIR\n",
                 argv[0]);
    return 2;
  }
  const bool bench = !std::strcmp(argv[1], "bench");
  const bool append = !std::strncmp(argv[1], "append", 6);
  // Line by line, so a log cut short by a time limit still says how far
  // it got.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  attnrt_status init = attnrt_init();
  if (init != ATTNRT_SUCCESS) {
    std::fprintf(stderr, "attn_gpu_test: %s: %s\n",
                 attnrt_status_string(init), attnrt_last_error());
    return 1;
  }
  if (append)
    return runAppendCases(!std::strcmp(argv[1], "append-bench"), argv[2],
                          argv[3]);
  std::vector<Case> cases = readCases(argv[2]);
  if (cases.empty()) {
    std::fprintf(stderr, "attn_gpu_test: no cases in %s\n", argv[2]);
    return 1;
  }
  attnrt_device_info info;
  if (attnrt_get_device_info(&info, 0) != ATTNRT_SUCCESS) {
    std::fprintf(stderr, "attn_gpu_test: %s\n", attnrt_last_error());
    return 1;
  }
  const int sms = info.multiprocessor_count;
  // The benchmark's L2 flush: a copy between two buffers before each run.
  const size_t kFlushBytes = size_t(128) << 20;
  attnrt_deviceptr flush[2] = {0, 0};
  if (bench && (attnrt_malloc(&flush[0], kFlushBytes) != ATTNRT_SUCCESS ||
                attnrt_malloc(&flush[1], kFlushBytes) != ATTNRT_SUCCESS)) {
    std::fprintf(stderr, "attn_gpu_test: %s\n", attnrt_last_error());
    return 1;
  }
  std::map<std::string, Module> modules;
  std::mt19937_64 rng(std::random_device{}());
  int passed = 0, failed = 0;
  for (const Case &c : cases) {
    Module &m = modules[c.ptx];
    if (!m.module && !loadModule(std::string(argv[3]) + "/" + c.ptx, m)) {
      ++failed;
      continue;
    }
    if (!m.byHost.count(c.spec)) {
      std::printf("FAIL %s: no kernel launched by @%s in %s\n",
                  c.spec.c_str(), c.spec.c_str(), c.ptx.c_str());
      ++failed;
      continue;
    }
    const std::vector<LaunchFacts> &f = m.byHost[c.spec];
    std::fprintf(stderr, "running %s B=%lld Sq=%lld Sk=%lld bs=%lld\n",
                 c.spec.c_str(), (long long)c.batch, (long long)c.sq,
                 (long long)c.sk, (long long)c.blockSize);
    Problem p;
    Result r;
    // The float64 reference of the largest benchmark shapes would take
    // hours on the host: those are timed only (the check suite covers
    // correctness on smaller shapes of the same kernels).
    const bool verify =
        !bench || double(c.batch) * c.hq * c.sq * c.sk * c.d < 4e9;
    Case run = c;
    run.benchLengths = bench && (c.packedQ || c.packedKV);
    run.hostCopies = verify;
    bool ok = setUp(run, f, rng, sms, p) && poison(c, p) &&
              launch(c, f, p, nullptr) &&
              attnrt_synchronize() == ATTNRT_SUCCESS &&
              (!verify || check(c, p, r));
    if (!ok) {
      std::printf("FAIL %s B=%lld Sq=%lld Sk=%lld: runtime error: %s\n",
                  c.spec.c_str(), (long long)c.batch, (long long)c.sq,
                  (long long)c.sk, attnrt_last_error());
      ++failed;
      tearDown(p);
      continue;
    }
    bool pass = r.relErr <= 1e-2 && r.unwritten == 0 && r.lseErr <= 1e-2 &&
                r.lseWrong == 0;
    std::printf("%s %s B=%lld Sq=%lld Sk=%lld", !verify ? "TIMED"
                                                : pass  ? "PASS"
                                                        : "FAIL",
                c.spec.c_str(), (long long)c.batch, (long long)c.sq,
                (long long)c.sk);
    if (c.blockSize)
      std::printf(" paged bs=%lld", (long long)c.blockSize);
    if (c.bf16)
      std::printf(" bf16");
    if (c.f32Out)
      std::printf(" o=f32");
    if (c.quantized())
      std::printf(" kv=%s scales=%s", c.kvFormat.c_str(), c.kvScales.c_str());
    if (c.packedQ || c.packedKV) {
      // Packed: the tokens, and the causal FLOPs of the sequences.
      double flops = 0;
      for (int64_t b = 0; b < c.batch; ++b) {
        double lq = c.packedQ ? p.offsetsQ[b + 1] - p.offsetsQ[b] : c.sq;
        double lk = c.packedKV ? p.offsetsK[b + 1] - p.offsetsK[b] : c.sk;
        flops += 4.0 * c.hq * lq * lk * c.d * (c.right == 0 ? 0.5 : 1.0);
      }
      std::printf(" packed q_tokens=%lld kv_tokens=%lld flops=%.4e",
                  (long long)(c.packedQ ? p.totalQ : c.batch * c.sq),
                  (long long)(c.packedKV ? p.totalK : c.batch * c.sk), flops);
    }
    if (f.front().tier.rfind("decode", 0) == 0)
      std::printf(" splits=%lld", (long long)p.splits);
    std::printf(":");
    if (verify)
      std::printf(" rel_err=%.3e lse_err=%.3e empty_rows=%lld unwritten=%lld",
                  r.relErr, r.lseErr, (long long)r.emptyRows,
                  (long long)r.unwritten);
    if (bench) {
      attnrt_event *start, *stop;
      attnrt_event_create(&start);
      attnrt_event_create(&stop);
      for (int i = 0; i < 5; ++i)
        launch(c, f, p, nullptr);
      std::vector<float> ms;
      for (int i = 0; i < 30; ++i) {
        // A 128 MiB device-to-device copy (256 MiB of traffic) evicts L2
        // (50 MiB on an H100) and keeps the GPU busy while the host queues
        // the start event and the launch, so the time is the kernel's,
        // cold, without launch latency.
        if (attnrt_memcpy_dtod(flush[1], flush[0], kFlushBytes) !=
            ATTNRT_SUCCESS) {
          std::fprintf(stderr, "attn_gpu_test: %s\n", attnrt_last_error());
          return 1;
        }
        attnrt_event_record(start, nullptr);
        launch(c, f, p, nullptr);
        attnrt_event_record(stop, nullptr);
        attnrt_event_synchronize(stop);
        float t = 0;
        attnrt_event_elapsed_ms(&t, start, stop);
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      double median = ms[ms.size() / 2];
      // FLOPs 4 B Hq Sq Sk D (halved for causal), as in DESIGN.md.
      double flops = 4.0 * c.batch * c.hq * c.sq * c.sk * c.d;
      if (c.left < 0 && c.right == 0)
        flops /= 2;
      // Bytes: Q, K, V (and a quantized cache's scales) read once, O.
      double bytes = 0;
      for (const Arg *a : {&p.q, &p.k, &p.v, &p.kScale, &p.vScale, &p.o})
        if (a->ptr)
          bytes += double(a->elementBytes) * a->count();
      std::printf(" median=%.1fus %.1fTFLOP/s %.2fTB/s", median * 1e3,
                  flops / (median * 1e-3) / 1e12,
                  bytes / (median * 1e-3) / 1e12);
      attnrt_event_destroy(start);
      attnrt_event_destroy(stop);
    }
    std::printf("\n");
    pass ? ++passed : ++failed;
    tearDown(p);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  for (attnrt_deviceptr buffer : flush)
    if (buffer)
      attnrt_free(buffer);
  return failed ? 1 : 0;
}
