//===- MSLEmitter.h - attn-to-msl: L0 spec -> Metal Shading Language -*- C++
//-*-===//
//
// The msl tier. MLIR has no MSL target, so this is a direct emitter: it
// tiles each attn.attention with attn-tile (and attn-split-kv for split-K),
// matches the L1 loop nest and prints one Metal kernel per spec function,
// each L1 op becoming a commented piece of the kernel body. The user's
// score_mod / mask_mod regions, arbitrary arith/math programs, go through
// upstream EmitC instead (ModsToEmitC.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_MSL_MSLEMITTER_H
#define ATTN_CODEGEN_MSL_MSLEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::attn {

struct MSLOptions {
  /// "prefill" (a Q tile of 32 rows per threadgroup, one simdgroup per 8
  /// rows), "vector" (one row per threadgroup, 32 simdgroups stride its
  /// keys and merge in threadgroup memory, as MLX's sdpa_vector), "decode"
  /// (the simdgroup_matrix decode: 8 rows per threadgroup, 4 simdgroups
  /// stride the keys) or "auto" (vector when G * Sq <= 8 with a static Sq,
  /// else prefill).
  std::string kernel = "auto";
  /// -1: by Sk (the vector decode runs two passes of 32 splits from 1024
  /// keys; a dynamic Sk gets both variants and a dispatch rule; the other
  /// kernels one pass). 0: one pass. N >= 1: two-pass split-K
  /// (attn-split-kv num-splits=N): a partial kernel writes N partial states
  /// to a workspace buffer and a merge kernel combines them in split order.
  int64_t splits = -1;
};

/// Writes the .metal source of every spec function of `module` (func.func
/// holding one attn.attention) to `os`, with its launch facts as a comment
/// block at the top; the same facts go to `launchFacts` as JSON when it is
/// non-null. Unsupported specs are reported as diagnostics on the op.
LogicalResult translateToMSL(ModuleOp module, raw_ostream &os,
                             const MSLOptions &options,
                             raw_ostream *launchFacts = nullptr);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_MSL_MSLEMITTER_H
