//===- attn-fuzz-mods.cpp - libFuzzer target over score_mod / mask_mod ----===//
//
// Builds, from the input bytes, a spec whose attn.attention carries a
// random score_mod and/or mask_mod region and random captures, then:
//
//  (a) parses and verifies it: a crash, a sanitizer report, or a refusal
//      without an error diagnostic is a finding; a spec that verifies must
//      print, parse again and print the same text;
//  (b) compiles each region of a spec that verifies with attn-run's float64
//      evaluator (tools/attn-run/ModEval.cpp) and evaluates it at a few
//      positions with random capture contents: a crash or a sanitizer
//      report is a finding, and so is a verified region the evaluator
//      cannot compile (the verifier's op list, modOpNames(), and ModEval
//      disagree), a mask_mod giving other than 0 or 1, or a score_mod
//      giving a value no f32 holds;
//  (c) with ATTN_FUZZ_MODS_LOWER=1 (slow; off by default), runs the specs
//      that verify through fuzz/Lowerings.h (attn-tile, attn-split-kv,
//      attn-to-cpu, attn-to-ptx, MSL), to replay a corpus through the
//      backends.
//
// The regions mix the ops of modOpNames() on every type a region may
// compute in (i3 included), casts between them, constants at the edges (0,
// -1, the signed minimum, huge and tiny floats, NaN, inf), integer
// divisions by constants, positions and clamped positions, and loads from
// captures of ranks 0 to 3 with static, dynamic and out-of-range dims at
// constant, position and computed indices; and, less often, what the
// verifier must refuse: ops off the list (math.ipowi, math.cbrt,
// arith.addui_extended, memref.alloca, ...), i128, f8E4M3FN, vector and
// tensor values, captures of unloadable element types or strided layouts,
// selects of captures, regions over the op limit.
//
// ATTN_FUZZ_PRINT=1 prints each spec, ATTN_FUZZ_VERBOSE=1 its diagnostics,
// ATTN_FUZZ_MODS_STATS=1 counts the outcomes at exit; ATTN_FUZZ_MODS_KNOWN
// (comma-separated substrings of findings' messages) counts the findings it
// names instead of aborting on them, and ATTN_FUZZ_MODS_SKIP_EVAL
// (comma-separated op names) does not evaluate regions holding those ops
// (for known sanitizer reports in the evaluator); `small-scores` in that
// list evaluates score_mods at small integral scores only.
//
// Built with -DATTN_FUZZ=ON (clang only); scripts/fuzz.sh mods runs it.
//
//===----------------------------------------------------------------------===//

#include "fuzz/Lowerings.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnMods.h"
#include "lib/Reference/HostFloat.h"
#include "tools/attn-run/ModEval.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace mlir;

namespace {

template <typename T, size_t N>
T pick(FuzzedDataProvider &in, const T (&values)[N]) {
  return values[in.ConsumeIntegralInRange<size_t>(0, N - 1)];
}

/// True with probability 1/n (false once the input is used up).
bool oneIn(FuzzedDataProvider &in, unsigned n) {
  return in.ConsumeIntegralInRange<unsigned>(0, n - 1) == n - 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

bool isIndex(const std::string &t) { return t == "index"; }
bool isInt(const std::string &t) {
  return isIndex(t) || (t.size() > 1 && t[0] == 'i' && isdigit(t[1]));
}
bool isFloatType(const std::string &t) {
  return t == "f16" || t == "bf16" || t == "f32" || t == "f64" ||
         t == "f8E4M3FN";
}
unsigned width(const std::string &t) {
  if (isIndex(t))
    return 64;
  if (isInt(t))
    return std::stoi(t.substr(1));
  if (t == "f16" || t == "bf16")
    return 16;
  if (t == "f32")
    return 32;
  if (t == "f8E4M3FN")
    return 8;
  return 64;
}

/// The types a region computes in (i3 is one: any signless width up to 64).
const char *const kIntTypes[] = {"index", "i1",  "i8",  "i16",   "i32",
                                 "i64",   "i64", "i32", "index", "i3"};
const char *const kFloatTypes[] = {"f32", "f32", "f16", "bf16", "f64"};

//===----------------------------------------------------------------------===//
// Captures
//===----------------------------------------------------------------------===//

struct CaptureDecl {
  std::string type;          // memref<...>
  std::string elt;           // element type
  std::vector<int64_t> dims; // -1: dynamic
};

CaptureDecl makeCapture(FuzzedDataProvider &in) {
  static const char *const elts[] = {"f32", "f16", "bf16", "f64",
                                     "i32", "i64", "i8",   "i16",
                                     "i1",  "f32", "i32",  "index"};
  static const char *const edgeElts[] = {"i3",   "i128", "f8E4M3FN", "ui8",
                                         "si32", "f80",  "tf32",     "i4"};
  static const int64_t dims[] = {1, 2, 3, 4,  8,          16,         32,   100,
                                 7, 1, 0, -1, 2147483647, 2147483648, 65536};
  CaptureDecl c;
  c.elt = oneIn(in, 12) ? pick(in, edgeElts) : pick(in, elts);
  unsigned rank = in.ConsumeIntegralInRange<unsigned>(0, 3);
  std::string shape;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t size = in.ConsumeBool() ? -1 : pick(in, dims);
    c.dims.push_back(size);
    shape += (size < 0 ? std::string("?") : std::to_string(size)) + "x";
  }
  std::string layout;
  if (rank > 0 && oneIn(in, 16)) {
    // Not the identity layout: refused.
    layout = ", strided<[";
    for (unsigned d = 0; d < rank; ++d)
      layout += std::string(d ? ", " : "") + (d + 1 == rank ? "2" : "?");
    layout += "], offset: ?>";
  }
  c.type = "memref<" + shape + c.elt + layout + ">";
  return c;
}

//===----------------------------------------------------------------------===//
// Regions
//===----------------------------------------------------------------------===//

class RegionGen {
public:
  RegionGen(FuzzedDataProvider &in, bool score,
            const std::vector<CaptureDecl> &caps)
      : in(in), score(score), caps(caps) {}

  std::string generate();

private:
  FuzzedDataProvider &in;
  const bool score;
  const std::vector<CaptureDecl> &caps;
  std::string body;
  unsigned next = 0;
  std::map<std::string, std::vector<std::string>> pool;
  std::vector<std::string> positions; // b, h, q_idx, kv_idx

  std::string fresh() { return "%v" + std::to_string(next++); }
  void line(const std::string &text) { body += "    " + text + "\n"; }
  /// Emits `%r = <rhs>` and adds %r to the pool of `type`.
  std::string def(const std::string &rhs, const std::string &type,
                  bool keep = true) {
    std::string r = fresh();
    line(r + " = " + rhs);
    typeOfValue[r] = type;
    if (keep)
      pool[type].push_back(r);
    return r;
  }

  std::string intLiteral(const std::string &t);
  std::string floatLiteral(const std::string &t);
  std::string constant(const std::string &t);
  std::string anyValue();
  std::string typeOf(const std::string &v) const;
  std::string value(const std::string &t);
  std::string convert(const std::string &v, const std::string &from,
                      const std::string &to);
  std::string divisor(const std::string &t);
  std::string indexFor(int64_t dim);
  std::string intType() { return pick(in, kIntTypes); }
  std::string floatType() { return pick(in, kFloatTypes); }
  std::string fastmath();
  std::string overflow();
  void step();
  void unlisted();
  void load();
  std::string finish();

  std::map<std::string, std::string> typeOfValue;
};

std::string RegionGen::intLiteral(const std::string &t) {
  // Each literal with the fewest bits that hold it (signed or unsigned).
  static const std::pair<const char *, unsigned> values[] = {
      {"0", 1},
      {"1", 1},
      {"-1", 2},
      {"2", 2},
      {"3", 2},
      {"-2", 2},
      {"4", 3},
      {"5", 3},
      {"7", 3},
      {"100", 7},
      {"127", 7},
      {"-128", 8},
      {"255", 8},
      {"1024", 11},
      {"32767", 15},
      {"-32768", 16},
      {"65536", 17},
      {"2147483647", 31},
      {"-2147483648", 32},
      {"4294967295", 32},
      {"4294967296", 33},
      {"9223372036854775807", 63},
      {"-9223372036854775808", 64},
      {"18446744073709551615", 64}};
  static const char *const bools[] = {"true", "false", "0", "1", "-1", "2"};
  if (t == "i1")
    return pick(in, bools);
  // Mostly literals that fit the type; at times any (out of range).
  const unsigned w = width(t);
  size_t fit = 0;
  while (fit < std::size(values) && values[fit].second <= w)
    ++fit;
  if (oneIn(in, 6))
    fit = std::size(values);
  return values[in.ConsumeIntegralInRange<size_t>(0, fit - 1)].first;
}

std::string RegionGen::floatLiteral(const std::string &t) {
  static const char *const decimal[] = {
      "0.0",      "-0.0",    "1.0",     "-1.0",    "0.5",     "2.0",
      "3.0",      "0.125",   "1.0e-45", "1.0e-30", "1.0e-8",  "6.0e-8",
      "65504.0",  "65520.0", "3.4e38",  "3.5e38",  "1.0e300", "-1.0e30",
      "1.0e-320", "30.0",    "-50.0",   "1.5",     "100.0",   "2.77258872"};
  if (in.ConsumeIntegralInRange<int>(0, 3) != 0)
    return pick(in, decimal);
  // NaN, +inf, -inf, a signalling NaN, the largest finite, by bits.
  static const char *const f16[] = {"0x7E00", "0x7C00", "0xFC00", "0x7C01",
                                    "0x7BFF"};
  static const char *const bf16[] = {"0x7FC0", "0x7F80", "0xFF80", "0x7F81",
                                     "0x7F7F"};
  static const char *const f32[] = {"0x7FC00000", "0x7F800000", "0xFF800000",
                                    "0x7F800001", "0x7F7FFFFF"};
  static const char *const f64[] = {"0x7FF8000000000000", "0x7FF0000000000000",
                                    "0xFFF0000000000000", "0x7FF0000000000001",
                                    "0x7FEFFFFFFFFFFFFF"};
  static const char *const f8[] = {"0x7F", "0x7E", "0xFF", "0x00", "0x80"};
  if (t == "f16")
    return pick(in, f16);
  if (t == "bf16")
    return pick(in, bf16);
  if (t == "f64")
    return pick(in, f64);
  if (t == "f8E4M3FN")
    return pick(in, f8);
  return pick(in, f32);
}

std::string RegionGen::constant(const std::string &t) {
  std::string lit = isFloatType(t) ? floatLiteral(t) : intLiteral(t);
  // `true` and `false` are typed already.
  if (lit == "true" || lit == "false")
    return def("arith.constant " + lit, t);
  return def("arith.constant " + lit + " : " + t, t);
}

std::string RegionGen::typeOf(const std::string &v) const {
  auto it = typeOfValue.find(v);
  return it == typeOfValue.end() ? std::string() : it->second;
}

/// Any value of the region so far, or a fresh constant.
std::string RegionGen::anyValue() {
  std::vector<std::string> all;
  for (auto &[t, values] : pool)
    for (auto &v : values)
      all.push_back(v);
  if (all.empty())
    return constant("f32");
  return all[in.ConsumeIntegralInRange<size_t>(0, all.size() - 1)];
}

/// A value of type `t`: an earlier one, one converted from an earlier value
/// of another type, or a constant.
std::string RegionGen::value(const std::string &t) {
  unsigned how = in.ConsumeIntegralInRange<unsigned>(0, 7);
  auto &same = pool[t];
  if (how < 4 && !same.empty())
    return same[in.ConsumeIntegralInRange<size_t>(0, same.size() - 1)];
  if (how < 6) {
    std::string v = anyValue();
    return convert(v, typeOf(v), t);
  }
  return constant(t);
}

/// A chain of casts from `v` (of type `from`) to `to`.
std::string RegionGen::convert(const std::string &v, const std::string &from,
                               const std::string &to) {
  if (from == to)
    return v;
  if (isInt(from) && isInt(to)) {
    if (isIndex(from) || isIndex(to))
      return def(std::string(in.ConsumeBool() ? "arith.index_cast "
                                              : "arith.index_castui ") +
                     v + " : " + from + " to " + to,
                 to);
    unsigned wf = width(from), wt = width(to);
    if (wf == wt)
      return v;
    if (wf < wt)
      return def(
          std::string(in.ConsumeBool() ? "arith.extsi " : "arith.extui ") + v +
              " : " + from + " to " + to,
          to);
    return def("arith.trunci " + v + " : " + from + " to " + to, to);
  }
  // Integer to float or back: index through i64, the bits now and then at
  // equal widths, else the signed or unsigned conversion.
  if ((isInt(from) && isFloatType(to)) || (isFloatType(from) && isInt(to))) {
    const bool toFloat = isFloatType(to);
    if (isIndex(toFloat ? from : to))
      return convert(convert(v, from, "i64"), "i64", to);
    if (width(from) == width(to) && (toFloat ? to : from) != "f8E4M3FN" &&
        oneIn(in, 3))
      return def("arith.bitcast " + v + " : " + from + " to " + to, to);
    const bool isSigned = in.ConsumeBool();
    const char *op = toFloat ? (isSigned ? "arith.sitofp " : "arith.uitofp ")
                             : (isSigned ? "arith.fptosi " : "arith.fptoui ");
    return def(op + v + " : " + from + " to " + to, to);
  }
  if (isFloatType(from) && isFloatType(to)) {
    unsigned wf = width(from), wt = width(to);
    if (wf == wt) {
      // f16 and bf16: through f32, or the bits.
      if (oneIn(in, 4))
        return def("arith.bitcast " + v + " : " + from + " to " + to, to);
      return convert(convert(v, from, "f32"), "f32", to);
    }
    if (wf < wt)
      return def("arith.extf " + v + fastmath() + " : " + from + " to " + to,
                 to);
    static const char *const modes[] = {"",
                                        "",
                                        "",
                                        "",
                                        " downward",
                                        " upward",
                                        " toward_zero",
                                        " to_nearest_away",
                                        " to_nearest_even"};
    return def("arith.truncf " + v + pick(in, modes) + fastmath() + " : " +
                   from + " to " + to,
               to);
  }
  // A memref or an edge type: a constant instead.
  return constant(to);
}

std::string RegionGen::fastmath() {
  static const char *const flags[] = {"",
                                      "",
                                      "",
                                      "",
                                      "",
                                      "",
                                      " fastmath<fast>",
                                      " fastmath<nnan,ninf>",
                                      " fastmath<afn>",
                                      " fastmath<contract>"};
  return pick(in, flags);
}

std::string RegionGen::overflow() {
  static const char *const flags[] = {"",
                                      "",
                                      "",
                                      "",
                                      "",
                                      " overflow<nsw>",
                                      " overflow<nuw>",
                                      " overflow<nsw, nuw>"};
  return pick(in, flags);
}

/// A divisor of type `t`: constants (0 and -1 included), positions, and
/// positions clamped from below (what the verifier wants) or not.
std::string RegionGen::divisor(const std::string &t) {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 6)) {
  case 0:
  case 1:
    return constant(t);
  case 2:
    return convert(positions[in.ConsumeIntegralInRange<size_t>(0, 3)], "index",
                   t);
  case 3:
  case 4: {
    // max(x, c), c from {1, 2, 0, -1, 7}.
    std::string x = value(t);
    static const char *const floors[] = {"1", "2", "0", "-1", "7", "1"};
    std::string lit = t == "i1" ? "1" : pick(in, floors);
    std::string c = def("arith.constant " + lit + " : " + t, t);
    std::string m = in.ConsumeBool() ? "arith.maxsi " : "arith.maxui ";
    return def(m + x + ", " + c + " : " + t, t);
  }
  case 5: {
    // x | 1: nonzero, but may be -1.
    std::string x = value(t);
    std::string c = def("arith.constant 1 : " + t, t);
    return def("arith.ori " + x + ", " + c + " : " + t, t);
  }
  default:
    return value(t);
  }
}

/// An index for a dim of size `dim` (-1: dynamic): constants in and out of
/// range, positions, clamped or wrapped positions, loaded values.
std::string RegionGen::indexFor(int64_t dim) {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 7)) {
  case 0: {
    static const char *const values[] = {"0", "1", "-1",
                                         "2", "3", "9223372036854775807"};
    std::string lit = dim > 0 && in.ConsumeBool()
                          ? std::to_string(dim - (in.ConsumeBool() ? 1 : 0))
                          : pick(in, values);
    return def("arith.constant " + lit + " : index", "index");
  }
  case 1:
  case 2:
    return positions[in.ConsumeIntegralInRange<size_t>(0, 3)];
  case 3: {
    // min(max(x, 0), dim - 1): in bounds of a static dim.
    std::string x = value("index");
    std::string zero = def("arith.constant 0 : index", "index");
    std::string hi = def("arith.constant " +
                             std::to_string(dim > 0 ? dim - 1 : 7) + " : index",
                         "index");
    std::string lo =
        def("arith.maxsi " + x + ", " + zero + " : index", "index");
    return def("arith.minsi " + lo + ", " + hi + " : index", "index");
  }
  case 4: {
    // x rem dim (unsigned, so in [0, dim)).
    std::string x = value("index");
    std::string d =
        def("arith.constant " + std::to_string(dim > 0 ? dim : 5) + " : index",
            "index");
    return def(std::string(in.ConsumeBool() ? "arith.remui " : "arith.remsi ") +
                   x + ", " + d + " : index",
               "index");
  }
  case 5: {
    // A position minus a position (negative at some positions).
    std::string a = positions[in.ConsumeIntegralInRange<size_t>(0, 3)];
    std::string b = positions[in.ConsumeIntegralInRange<size_t>(0, 3)];
    return def("arith.subi " + a + ", " + b + " : index", "index");
  }
  default:
    return value("index");
  }
}

void RegionGen::load() {
  if (caps.empty())
    return;
  size_t c = in.ConsumeIntegralInRange<size_t>(0, caps.size() - 1);
  const CaptureDecl &cap = caps[c];
  std::string indices;
  for (size_t d = 0; d < cap.dims.size(); ++d)
    indices += (d ? ", " : "") + indexFor(cap.dims[d]);
  std::string r = def("memref.load %cap" + std::to_string(c) + "[" + indices +
                          "] : " + cap.type,
                      cap.elt);
}

/// What the verifier must refuse.
void RegionGen::unlisted() {
  switch (in.ConsumeIntegralInRange<unsigned>(0, 15)) {
  case 0: {
    std::string a = value("i32"), b = value("i32");
    def("math.ipowi " + a + ", " + b + " : i32", "i32");
    break;
  }
  case 1:
    def("math.cbrt " + value("f32") + " : f32", "f32");
    break;
  case 2: {
    std::string a = value("i32"), b = value("i32");
    std::string s = fresh(), o = fresh();
    line(s + ", " + o + " = arith.addui_extended " + a + ", " + b +
         " : i32, i1");
    pool["i32"].push_back(s);
    pool["i1"].push_back(o);
    break;
  }
  case 3: {
    std::string a = value("i32"), b = value("i32");
    std::string lo = fresh(), hi = fresh();
    line(lo + ", " + hi + " = arith.mulsi_extended " + a + ", " + b + " : i32");
    pool["i32"].push_back(lo);
    break;
  }
  case 4:
    def("math.ctlz " + value("i32") + " : i32", "i32");
    break;
  case 5: {
    std::string a = value("f32"), b = value("i32");
    def("math.fpowi " + a + ", " + b + " : f32, i32", "f32");
    break;
  }
  case 6: {
    // i128 arithmetic, back to i64.
    std::string x =
        def("arith.extsi " + value("i64") + " : i64 to i128", "i128", false);
    std::string y =
        def("arith.muli " + x + ", " + x + " : i128", "i128", false);
    std::string r = def("arith.trunci " + y + " : i128 to i64", "i64");
    break;
  }
  case 7: {
    // f8E4M3FN, back to f32.
    std::string x = def("arith.truncf " + value("f32") + " : f32 to f8E4M3FN",
                        "f8E4M3FN", false);
    std::string r = def("arith.extf " + x + " : f8E4M3FN to f32", "f32");
    break;
  }
  case 8: {
    std::string v = def("arith.constant dense<1.5> : vector<4xf32>",
                        "vector<4xf32>", false);
    def("arith.addf " + v + ", " + v + " : vector<4xf32>", "vector<4xf32>",
        false);
    break;
  }
  case 9:
    def("arith.constant dense<[1, 2]> : tensor<2xi32>", "tensor<2xi32>", false);
    break;
  case 10: {
    std::string m = def("memref.alloca() : memref<4xf32>", "memref", false);
    std::string c0 = def("arith.constant 0 : index", "index");
    std::string r =
        def("memref.load " + m + "[" + c0 + "] : memref<4xf32>", "f32");
    break;
  }
  case 11:
    if (!caps.empty()) {
      // A select of captures (allowed op, memref type), maybe loaded from.
      size_t a = in.ConsumeIntegralInRange<size_t>(0, caps.size() - 1);
      size_t b = in.ConsumeIntegralInRange<size_t>(0, caps.size() - 1);
      std::string cond = value("i1");
      if (caps[a].type == caps[b].type) {
        std::string m =
            def("arith.select " + cond + ", %cap" + std::to_string(a) +
                    ", %cap" + std::to_string(b) + " : " + caps[a].type,
                "memref", false);
        if (in.ConsumeBool() && caps[a].dims.empty()) {
          std::string r =
              def("memref.load " + m + "[] : " + caps[a].type, caps[a].elt);
        }
      }
    }
    break;
  case 12:
    if (!caps.empty()) {
      // A store into a (rank-0) capture.
      size_t c = in.ConsumeIntegralInRange<size_t>(0, caps.size() - 1);
      if (caps[c].dims.empty())
        line("memref.store " + value(caps[c].elt) + ", %cap" +
             std::to_string(c) + "[] : " + caps[c].type);
    }
    break;
  case 13: {
    // Signed integers are not signless.
    def("arith.constant 1 : ui8", "ui8", false);
    break;
  }
  case 14: {
    // A region over the op limit.
    static const unsigned counts[] = {250, 255, 256, 257, 300};
    unsigned n = pick(in, counts);
    std::string acc = value("f32");
    std::string one = constant("f32");
    for (unsigned k = 0; k < n; ++k)
      acc = def("arith.addf " + acc + ", " + one + " : f32", "f32", false);
    pool["f32"].push_back(acc);
    break;
  }
  default:
    // A cast between widths the op does not allow.
    def("arith.extsi " + value("i32") + " : i32 to i16", "i16");
    break;
  }
}

/// One op of the region.
void RegionGen::step() {
  static const char *const floatBinary[] = {
      "arith.addf",    "arith.subf",     "arith.mulf",     "arith.divf",
      "arith.remf",    "arith.maximumf", "arith.minimumf", "arith.maxnumf",
      "arith.minnumf", "math.atan2",     "math.powf",      "math.copysign"};
  static const char *const floatUnary[] = {
      "arith.negf",     "math.absf",  "math.exp",   "math.exp2",  "math.expm1",
      "math.log",       "math.log2",  "math.log10", "math.log1p", "math.tanh",
      "math.sqrt",      "math.rsqrt", "math.floor", "math.ceil",  "math.round",
      "math.roundeven", "math.trunc", "math.sin",   "math.cos",   "math.tan",
      "math.atan",      "math.erf"};
  static const char *const intBinary[] = {
      "arith.addi", "arith.subi",  "arith.muli",  "arith.andi",  "arith.ori",
      "arith.xori", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
      "arith.shli", "arith.shrui", "arith.shrsi"};
  static const char *const divisions[] = {
      "arith.divsi", "arith.remsi",      "arith.divui",
      "arith.remui", "arith.floordivsi", "arith.ceildivsi"};
  static const char *const cmpf[] = {"false", "oeq", "ogt", "oge", "olt", "ole",
                                     "one",   "ord", "ueq", "ugt", "uge", "ult",
                                     "ule",   "une", "uno", "true"};
  static const char *const cmpi[] = {"eq",  "ne",  "slt", "sle", "sgt",
                                     "sge", "ult", "ule", "ugt", "uge"};

  switch (in.ConsumeIntegralInRange<unsigned>(0, 19)) {
  case 0:
  case 1: {
    std::string t = floatType();
    std::string a = value(t), b = value(t);
    std::string r = def(std::string(pick(in, floatBinary)) + " " + a + ", " +
                            b + fastmath() + " : " + t,
                        t);
    break;
  }
  case 2:
  case 3: {
    std::string t = floatType();
    std::string a = value(t);
    std::string r = def(std::string(pick(in, floatUnary)) + " " + a +
                            fastmath() + " : " + t,
                        t);
    break;
  }
  case 4: {
    std::string t = floatType();
    std::string a = value(t), b = value(t), c = value(t);
    std::string r =
        def("math.fma " + a + ", " + b + ", " + c + fastmath() + " : " + t, t);
    break;
  }
  case 5:
  case 6: {
    std::string t = intType();
    std::string a = value(t), b = value(t);
    std::string op = pick(in, intBinary);
    bool flags = op == "arith.addi" || op == "arith.subi" ||
                 op == "arith.muli" || op == "arith.shli";
    std::string r =
        def(op + " " + a + ", " + b + (flags ? overflow() : "") + " : " + t, t);
    break;
  }
  case 7:
  case 8: {
    std::string t = intType();
    std::string a = value(t), b = divisor(t);
    std::string r = def(
        std::string(pick(in, divisions)) + " " + a + ", " + b + " : " + t, t);
    break;
  }
  case 9: {
    std::string t = intType();
    std::string r = def("math.absi " + value(t) + " : " + t, t);
    break;
  }
  case 10: {
    // A cast to a random type.
    std::string v = anyValue();
    std::string t = in.ConsumeBool() ? intType() : floatType();
    std::string r = convert(v, typeOf(v), t);
    break;
  }
  case 11: {
    std::string t = floatType();
    std::string a = value(t), b = value(t);
    std::string r = def("arith.cmpf " + std::string(pick(in, cmpf)) + ", " + a +
                            ", " + b + fastmath() + " : " + t,
                        "i1");
    break;
  }
  case 12: {
    std::string t = intType();
    std::string a = value(t), b = value(t);
    std::string r = def("arith.cmpi " + std::string(pick(in, cmpi)) + ", " + a +
                            ", " + b + " : " + t,
                        "i1");
    break;
  }
  case 13: {
    std::string t = in.ConsumeBool() ? intType() : floatType();
    std::string c = value("i1"), a = value(t), b = value(t);
    std::string r =
        def("arith.select " + c + ", " + a + ", " + b + " : " + t, t);
    break;
  }
  case 14: {
    std::string t = in.ConsumeBool() ? intType() : floatType();
    std::string r = constant(t);
    break;
  }
  case 15:
  case 16:
  case 17:
    load();
    break;
  case 18:
    if (oneIn(in, 2))
      unlisted();
    break;
  default: {
    // A position as a float, the way relative biases use them.
    std::string a = positions[in.ConsumeIntegralInRange<size_t>(0, 3)];
    std::string b = positions[in.ConsumeIntegralInRange<size_t>(0, 3)];
    std::string d = def("arith.subi " + a + ", " + b + " : index", "index");
    std::string f = convert(d, "index", floatType());
    (void)f;
    break;
  }
  }
}

/// The yield: f32 for a score_mod (often mixed with the score), i1 for a
/// mask_mod.
std::string RegionGen::finish() {
  std::string v = anyValue();
  std::string t = typeOf(v);
  if (score) {
    std::string f = convert(v, t, "f32");
    if (in.ConsumeBool()) {
      static const char *const mix[] = {"arith.addf", "arith.mulf",
                                        "arith.subf", "arith.maximumf"};
      f = def(std::string(pick(in, mix)) + " %score, " + f + " : f32", "f32");
    }
    if (oneIn(in, 24)) {
      // The wrong type.
      line("attn.yield " + v + " : " + t);
      return body;
    }
    line("attn.yield " + f + " : f32");
    return body;
  }
  std::string r;
  if (isInt(t) && t != "i1" && in.ConsumeBool()) {
    static const char *const preds[] = {"eq",  "ne",  "slt", "sle", "sgt",
                                        "sge", "ult", "ule", "ugt", "uge"};
    std::string other = value(t);
    r = def("arith.cmpi " + std::string(pick(in, preds)) + ", " + v + ", " +
                other + " : " + t,
            "i1");
  } else {
    r = convert(v, t, "i1");
  }
  line("attn.yield " + r + " : i1");
  return body;
}

std::string RegionGen::generate() {
  std::string header;
  if (score) {
    header = "^bb0(%score: f32, %b: index, %h: index, %q_idx: index, "
             "%kv_idx: index";
    pool["f32"].push_back("%score");
    typeOfValue["%score"] = "f32";
  } else {
    header = "^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index";
  }
  positions = {"%b", "%h", "%q_idx", "%kv_idx"};
  for (auto &p : positions) {
    pool["index"].push_back(p);
    typeOfValue[p] = "index";
  }
  for (size_t c = 0; c < caps.size(); ++c)
    header += ", %cap" + std::to_string(c) + ": " + caps[c].type;
  if (oneIn(in, 40))
    header += ", %extra: index"; // one argument too many
  header += "):\n";

  unsigned steps = in.ConsumeIntegralInRange<unsigned>(0, 24);
  for (unsigned k = 0; k < steps && in.remaining_bytes() > 0; ++k)
    step();
  finish();
  return " {\n  " + header + body + "  }";
}

//===----------------------------------------------------------------------===//
// Specs
//===----------------------------------------------------------------------===//

struct Generated {
  std::string text;
  std::vector<CaptureDecl> caps;
};

Generated generate(FuzzedDataProvider &in) {
  Generated g;
  static const char *const elts[] = {"f16", "bf16", "f32"};
  static const int64_t kvHeads[] = {1, 2, 4};
  static const int64_t groups[] = {1, 2, 4};
  static const int64_t headDims[] = {64, 64, 128, 32};
  const std::string elt = pick(in, elts);
  const int64_t hkv = pick(in, kvHeads), hq = hkv * pick(in, groups);
  const int64_t d = pick(in, headDims);
  const std::string D = std::to_string(d), HQ = std::to_string(hq),
                    HKV = std::to_string(hkv);
  // 0: padded [B, H, S, D]; 1: decode (Sq = 1); 2: packed (cu_seqlens);
  // 3: paged K/V.
  const unsigned form = in.ConsumeIntegralInRange<unsigned>(0, 3);
  std::string q, k, v, o, extra, extraArgs;
  if (form == 2) {
    q = "memref<?x" + HQ + "x" + D + "x" + elt + ">";
    k = "memref<?x" + HKV + "x" + D + "x" + elt + ">";
    v = k;
    o = q;
    extra = " cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : "
            "memref<?xi32>)";
    extraArgs = ", %cq: memref<?xi32>, %ck: memref<?xi32>";
  } else {
    const std::string sq = form == 1 ? "1" : in.ConsumeBool() ? "?" : "128";
    q = "memref<?x" + HQ + "x" + sq + "x" + D + "x" + elt + ">";
    o = q;
    if (form == 3) {
      k = "memref<?x" + HKV + "x16x" + D + "x" + elt + ">";
      extra = " block_table(%bt : memref<?x?xi32>) kv_lens(%lens : "
              "memref<?xi32>)";
      extraArgs = ", %bt: memref<?x?xi32>, %lens: memref<?xi32>";
    } else {
      k = "memref<?x" + HKV + "x?x" + D + "x" + elt + ">";
    }
    v = k;
  }

  unsigned numCaps = in.ConsumeIntegralInRange<unsigned>(0, 3);
  for (unsigned c = 0; c < numCaps; ++c)
    g.caps.push_back(makeCapture(in));

  std::string attrs;
  if (in.ConsumeBool())
    attrs += " scale = 0.125";
  switch (in.ConsumeIntegralInRange<unsigned>(0, 5)) {
  case 0:
    attrs += " mask = <causal>";
    break;
  case 1:
    attrs += " mask = <window 64, 0>";
    break;
  default:
    break;
  }
  if (oneIn(in, 4))
    attrs += " softcap = 30.0";

  // A score_mod, a mask_mod, or both.
  unsigned which = in.ConsumeIntegralInRange<unsigned>(0, 9);
  bool hasScore = which != 0 && which <= 6, hasMask = which == 0 || which >= 5;
  std::string regions;
  if (hasScore)
    regions += " score_mod" + RegionGen(in, true, g.caps).generate();
  if (hasMask)
    regions += " mask_mod" + RegionGen(in, false, g.caps).generate();

  std::string args = "%q: " + q + ", %k: " + k + ", %v: " + v + extraArgs;
  std::string capNames, capTypes;
  for (size_t c = 0; c < g.caps.size(); ++c) {
    args += ", %c" + std::to_string(c) + ": " + g.caps[c].type;
    capNames += (c ? ", %c" : "%c") + std::to_string(c);
    capTypes += (c ? ", " : "") + g.caps[c].type;
  }
  args += ", %o: " + o;
  std::string op = "  attn.attention q(%q : " + q + ") k(%k : " + k +
                   ") v(%v : " + v + ")" + extra;
  if (!g.caps.empty())
    op += " captures(" + capNames + " : " + capTypes + ")";
  op += "\n      -> o(%o : " + o + ")" + attrs + regions;
  g.text = "func.func @fuzz(" + args + ") {\n" + op + "\n  return\n}\n";
  return g;
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

struct Stats {
  uint64_t inputs = 0, verified = 0, refused = 0, regions = 0, skipped = 0,
           evaluations = 0, faults = 0, lowered = 0;
  std::map<std::string, uint64_t> reasons, known;
  ~Stats() {
    if (!std::getenv("ATTN_FUZZ_MODS_STATS"))
      return;
    std::fprintf(stderr,
                 "attn-fuzz-mods: %llu inputs, %llu verified, %llu refused; "
                 "%llu regions compiled, %llu of them not evaluated "
                 "(ATTN_FUZZ_MODS_SKIP_EVAL), evaluated at %llu positions "
                 "(%llu regions with a load outside a capture); %llu "
                 "lowered\n",
                 (unsigned long long)inputs, (unsigned long long)verified,
                 (unsigned long long)refused, (unsigned long long)regions,
                 (unsigned long long)skipped, (unsigned long long)evaluations,
                 (unsigned long long)faults, (unsigned long long)lowered);
    for (auto &[reason, n] : reasons)
      std::fprintf(stderr, "attn-fuzz-mods:   refused %8llu  %s\n",
                   (unsigned long long)n, reason.c_str());
    for (auto &[finding, n] : known)
      std::fprintf(stderr, "attn-fuzz-mods:   known finding %8llu  %s\n",
                   (unsigned long long)n, finding.c_str());
  }
};
Stats stats;

/// A refusal's kind, for the stats: the verifier's rule, or the parser.
std::string reasonOf(const std::string &message) {
  static const char *const rules[] = {"may hold only",
                                      "computes in",
                                      "the divisor must",
                                      "is always outside",
                                      "must be a memref of",
                                      "identity layout",
                                      "a static dim must",
                                      "the limit is",
                                      "must yield",
                                      "must take",
                                      "must be 'f32'",
                                      "must be 'index'",
                                      "argument #",
                                      "out of range",
                                      "unregistered",
                                      "expected",
                                      "use of undeclared",
                                      "custom op",
                                      "integer return type must be signless",
                                      "invalid",
                                      "failed to verify",
                                      "must be"};
  for (const char *rule : rules)
    if (message.find(rule) != std::string::npos)
      return rule;
  return message.substr(0, 80);
}

/// The items of a comma-separated list (none for null).
std::vector<std::string> splitList(const char *env) {
  std::vector<std::string> list;
  for (llvm::StringRef rest = env ? env : ""; !rest.empty();) {
    auto [item, tail] = rest.split(',');
    if (!item.empty())
      list.push_back(item.str());
    rest = tail;
  }
  return list;
}

/// Reports a finding and aborts, unless `what` contains one of the
/// comma-separated strings of ATTN_FUZZ_MODS_KNOWN (known findings, to keep
/// a campaign going past them): then counts it, and the caller skips the
/// rest of the input.
void finding(const std::string &what, const std::string &spec) {
  static const std::vector<std::string> known =
      splitList(std::getenv("ATTN_FUZZ_MODS_KNOWN"));
  for (const std::string &k : known)
    if (what.find(k) != std::string::npos) {
      ++stats.known[k];
      return;
    }
  std::fprintf(stderr, "attn-fuzz-mods: %s, on:\n%s\n", what.c_str(),
               spec.c_str());
  std::abort();
}

const DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *r = new DialectRegistry;
    r->insert<mlir::attn::AttnDialect, func::FuncDialect, arith::ArithDialect,
              math::MathDialect, memref::MemRefDialect>();
    return r;
  }();
  return *r;
}

/// Random contents for `cap` (dynamic dims 1 to 8; static ones capped, so
/// the evaluator's bounds checks see loads past the data it has).
::attn::modeval::Capture fill(FuzzedDataProvider &in, const CaptureDecl &cap) {
  ::attn::modeval::Capture c;
  int64_t elements = 1;
  for (int64_t dim : cap.dims) {
    int64_t size = dim < 0 ? in.ConsumeIntegralInRange<int64_t>(1, 8)
                           : std::min<int64_t>(dim, 16);
    c.shape.push_back(size);
    elements *= size;
  }
  c.data.resize(elements);
  const std::string &e = cap.elt;
  for (double &x : c.data) {
    unsigned how = in.ConsumeIntegralInRange<unsigned>(0, 7);
    if (isFloatType(e)) {
      static const double edges[] = {0.0,  -0.0,     1.0,       -1.0, 1e-30,
                                     3e38, INFINITY, -INFINITY, NAN,  65504.0};
      double v = how < 6 ? in.ConsumeFloatingPointInRange<double>(-2, 2)
                         : pick(in, edges);
      // As the capture's type stores it.
      if (e == "f16")
        v = ::attn::host::fromHalf(::attn::host::toHalf(float(v)));
      else if (e == "bf16")
        v = ::attn::host::fromBF16(::attn::host::toBF16(float(v)));
      else if (e == "f32")
        v = double(float(v));
      x = v;
    } else {
      unsigned w = width(e);
      int64_t lo = w >= 64 ? INT64_MIN : -(int64_t(1) << (w - 1));
      int64_t hi = w >= 64 ? (int64_t(1) << 62) : (int64_t(1) << (w - 1)) - 1;
      if (w == 1) {
        lo = 0;
        hi = 1;
      }
      int64_t v = how < 4   ? in.ConsumeIntegralInRange<int64_t>(0, 7)
                  : how < 6 ? in.ConsumeIntegralInRange<int64_t>(lo, hi)
                  : how < 7 ? lo
                            : hi;
      x = double(std::clamp(v, lo, hi));
    }
  }
  return c;
}

/// The positions to evaluate at: small ones, and edges.
double position(FuzzedDataProvider &in) {
  static const double edges[] = {0,   1,   2,    7,     15,          16,
                                 127, 128, 1000, 65535, 2147483647.0};
  return in.ConsumeBool() ? double(in.ConsumeIntegralInRange<int>(0, 40))
                          : pick(in, edges);
}

double scoreValue(FuzzedDataProvider &in) {
  static const double edges[] = {0.0,      -0.0,      1.0,   -1.0,
                                 30.0,     -1e30,     1e-40, 3.4e38,
                                 INFINITY, -INFINITY, NAN};
  return in.ConsumeBool()
             ? double(float(in.ConsumeFloatingPointInRange<double>(-100, 100)))
             : pick(in, edges);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  const unsigned ptxChoice = in.ConsumeIntegralInRange<unsigned>(0, 2);
  const Generated g = generate(in);
  const std::string &spec = g.text;
  static const bool print = std::getenv("ATTN_FUZZ_PRINT");
  static const bool verbose = std::getenv("ATTN_FUZZ_VERBOSE");
  static const bool lowerToo = [] {
    const char *env = std::getenv("ATTN_FUZZ_MODS_LOWER");
    return env && *env && std::string(env) != "0";
  }();
  if (print)
    std::fprintf(stderr, "%s", spec.c_str());
  ++stats.inputs;

  // (a) Parse and verify; a refusal must say why.
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  int errors = 0;
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      if (!errors++)
        firstError = diag.str();
    }
    if (verbose)
      llvm::errs() << "attn-fuzz-mods: diagnostic: " << diag.getLocation()
                   << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(llvm::StringRef(spec), &context);
  if (!module) {
    if (!errors) {
      finding("the spec failed to parse or verify without an error "
              "diagnostic",
              spec);
      return 0;
    }
    ++stats.refused;
    ++stats.reasons[reasonOf(firstError)];
    return 0;
  }
  ++stats.verified;
  mlir::attn::AttentionOp op;
  module->walk([&](mlir::attn::AttentionOp a) { op = a; });
  if (!op) {
    finding("the spec verified without its attn.attention", spec);
    return 0;
  }

  // A spec that verifies prints, parses again and prints the same.
  std::string printed;
  {
    llvm::raw_string_ostream os(printed);
    module->print(os);
  }
  OwningOpRef<ModuleOp> again =
      parseSourceString<ModuleOp>(llvm::StringRef(printed), &context);
  if (!again) {
    finding("the printed spec does not parse again (" + firstError + "):\n" +
                printed + "\nfrom",
            spec);
    return 0;
  }
  std::string reprinted;
  {
    llvm::raw_string_ostream os(reprinted);
    again->print(os);
  }
  if (reprinted != printed) {
    finding("printing is not stable:\n" + printed + "\nthen\n" + reprinted +
                "\nfrom",
            spec);
    return 0;
  }

  // (b) Evaluate each region with the float64 reference.
  std::vector<::attn::modeval::Capture> captures;
  for (const CaptureDecl &cap : g.caps)
    captures.push_back(fill(in, cap));
  for (auto [region, kind] :
       {std::pair<Region *, mlir::attn::ModKind>{&op.getScoreMod(),
                                                 mlir::attn::ModKind::Score},
        {&op.getMaskMod(), mlir::attn::ModKind::Mask}}) {
    if (region->empty())
      continue;
    // The region reaches its captures only through memref.load: an op
    // that takes or gives a memref (an arith.select of captures) is
    // something no evaluator or backend expects.
    std::string onMemRef;
    region->walk([&](Operation *inner) {
      if (isa<memref::LoadOp>(inner) || !onMemRef.empty())
        return;
      for (Type t : llvm::concat<const Type>(inner->getOperandTypes(),
                                             inner->getResultTypes()))
        if (isa<MemRefType>(t))
          onMemRef = inner->getName().getStringRef().str();
    });
    if (!onMemRef.empty()) {
      finding("a verified " + mlir::attn::modName(kind).str() + " applies '" +
                  onMemRef + "' to a capture (only memref.load may)",
              spec);
      return 0;
    }
    std::string error;
    auto eval = ::attn::modeval::Evaluator::compile(
        *region, mlir::attn::numPositionArgs(kind), captures, error);
    if (!eval) {
      finding(("a verified " + mlir::attn::modName(kind) +
               " the reference cannot evaluate: " + error)
                  .str(),
              spec);
      return 0;
    }
    ++stats.regions;
    // ATTN_FUZZ_MODS_SKIP_EVAL (comma-separated op names): regions holding
    // one of them are compiled but not evaluated (known sanitizer reports
    // in the evaluator, to keep a campaign going past them).
    static const std::vector<std::string> skipEval =
        splitList(std::getenv("ATTN_FUZZ_MODS_SKIP_EVAL"));
    bool skip = false;
    region->walk([&](Operation *inner) {
      skip |= llvm::is_contained(skipEval, inner->getName().getStringRef());
    });
    if (skip) {
      ++stats.skipped;
      continue;
    }
    // And `small-scores` in that list: score_mods are evaluated at scores
    // in [-8, 8] only, no NaN, inf or huge ones.
    static const bool smallScores =
        llvm::is_contained(skipEval, "small-scores");
    const unsigned n = mlir::attn::numPositionArgs(kind);
    for (int point = 0; point < 4; ++point) {
      double args[5];
      unsigned k = 0;
      if (kind == mlir::attn::ModKind::Score)
        args[k++] = smallScores ? double(in.ConsumeIntegralInRange<int>(-8, 8))
                                : scoreValue(in);
      for (; k < n; ++k)
        args[k] = position(in);
      double r = (*eval)(args);
      ++stats.evaluations;
      if (kind == mlir::attn::ModKind::Mask && r != 0 && r != 1) {
        finding("a mask_mod evaluated to " + std::to_string(r), spec);
        return 0;
      }
      if (kind == mlir::attn::ModKind::Score && !std::isnan(r) &&
          !std::isinf(r) &&
          (std::fabs(r) > double(FLT_MAX) || double(float(r)) != r)) {
        finding("a score_mod evaluated to " + std::to_string(r) +
                    ", not an f32",
                spec);
        return 0;
      }
    }
    if (!eval->fault().empty())
      ++stats.faults;
  }

  // (c) The backends, on request.
  if (lowerToo) {
    attnfuzz::Outcome outcome = attnfuzz::runLowerings(spec, ptxChoice);
    if (!outcome.parsed) {
      finding("a spec that verified here did not parse for the lowerings",
              spec);
      return 0;
    }
    ++stats.lowered;
  }
  return 0;
}
