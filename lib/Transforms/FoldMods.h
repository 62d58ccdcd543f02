//===- FoldMods.h - score_mod / mask_mod regions the built-ins can say -*- C++ -*-===//
//
// A region that says what a built-in attribute says runs as well as the
// attribute when it becomes the attribute: the kernels then skip the tiles
// a mask hides and fuse the soft-cap into the score. The analysis reads the
// region's yielded value:
//
//   score_mod  cap * tanh(s / cap)  (or s * (1 / cap))  -> softcap = cap
//   mask_mod   a conjunction (arith.andi) of comparisons of q_idx - kv_idx
//              with constants: lo <= q_idx - kv_idx <= hi
//              -> the built-in band, top-left aligned (the region's
//              positions are absolute), intersected with the op's mask
//
// A mask_mod with other terms keeps its region, and the band of its
// affine terms still narrows the built-in mask, so hidden tiles are
// skipped. Nothing folds into a bottom-right aligned mask.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_FOLDMODS_H
#define ATTN_LIB_TRANSFORMS_FOLDMODS_H

#include "dialect/AttnDialect.h"

#include <optional>

namespace mlir::attn {

struct ModFolds {
  /// The soft-cap the score_mod says (the region goes).
  std::optional<double> softcap;
  /// The built-in mask narrowed by the mask_mod's affine terms.
  std::optional<MaskAttr> mask;
  /// Whether those terms are the whole mask_mod (the region goes).
  bool maskModFolded = false;

  bool any() const { return softcap || mask; }
};

/// What of `op`'s regions the built-in attributes can say.
ModFolds analyzeMods(AttentionOp op);

/// Applies `folds` to `op`: attributes set, folded regions emptied.
void applyModFolds(AttentionOp op, const ModFolds &folds);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_FOLDMODS_H
