//===- ModsHost.h - a spec's mod regions for hosts without MLIR -*- C++ -*-===//
//
// The MSL emulator's test host (test/msl/attn_msl_test.cpp) is built with
// the emitted kernels by a plain clang++ line, without MLIR. It links this
// small shared library to evaluate a spec function's score_mod / mask_mod
// the way attn-run's float64 checks do (ModEval), over the capture
// contents the host drew: the reference then follows the region itself,
// not a transcription of it, and not the EmitC text under test.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_RUN_MODSHOST_H
#define ATTN_TOOLS_ATTN_RUN_MODSHOST_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn::modshost {

/// A capture's contents, row-major, each element as a double.
struct Capture {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

/// The regions as callbacks (empty: the spec has none), in the form
/// lib/Reference's Problem takes them.
struct Mods {
  std::function<double(double score, int64_t b, int64_t h, int64_t i,
                       int64_t j)>
      score;
  std::function<bool(int64_t b, int64_t h, int64_t i, int64_t j)> mask;
};

/// Parses the L0 spec at `path`, finds function `function`'s
/// attn.attention and compiles its regions over `captures` (one per
/// capture operand, in order). Returns false and sets `error` on failure.
bool load(const std::string &path, const std::string &function,
          const std::vector<Capture> &captures, Mods &out, std::string &error);

} // namespace attn::modshost

#endif // ATTN_TOOLS_ATTN_RUN_MODSHOST_H
