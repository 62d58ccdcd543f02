//===- ModEval.h - evaluate score_mod / mask_mod regions on the host
//-------===//
//
// The float64 reference (lib/Reference, no MLIR) takes the regions as
// callbacks; this turns a region into one. Each arith/math op is
// evaluated on doubles (floats) or int64 (integers, wrapped to the op's
// width), and a float result is rounded to its type (f32 ops round to
// float), so the reference follows the region's own arithmetic rather
// than a second transcription of it. Loads read the capture buffers the
// run filled.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_RUN_MODEVAL_H
#define ATTN_TOOLS_ATTN_RUN_MODEVAL_H

#include "mlir/IR/Region.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attn::modeval {

/// A capture's contents as the reference reads it: row-major, each
/// element as a double (integers exactly, up to 2^53).
struct Capture {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

class Program;

/// A compiled region: call with the position arguments (score first for
/// a score_mod), get the yielded value (1/0 for a mask_mod).
class Evaluator {
public:
  /// Compiles `region` (a verified score_mod or mask_mod with
  /// `numPositions` leading arguments); on an op it cannot evaluate,
  /// fails and sets `error`.
  static std::unique_ptr<Evaluator> compile(mlir::Region &region,
                                            unsigned numPositions,
                                            std::vector<Capture> captures,
                                            std::string &error);
  ~Evaluator();
  double operator()(const double *positions) const;
  /// The first load outside its capture's shape (the load gave 0), with
  /// its indices and positions; "" if none.
  const std::string &fault() const;

private:
  Evaluator();
  std::unique_ptr<Program> program;
};

} // namespace attn::modeval

#endif // ATTN_TOOLS_ATTN_RUN_MODEVAL_H
