//===- AttnMods.h - score_mod / mask_mod regions ----------------*- C++ -*-===//
//
// The rules of the programmable regions of attn.attention (and of the L1
// ops attn.qk and attn.mask that carry them), checked once here, and the
// one way backends inline a region's body.
//
//   score_mod: (score: f32, b, h, q_idx, kv_idx: index, captures...) -> f32
//   mask_mod:  (b, h, q_idx, kv_idx: index, captures...) -> i1
//
// The body is one block of pure arith/math ops and memref.loads of the
// capture arguments, ended by attn.yield.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNMODS_H
#define ATTN_DIALECT_ATTNMODS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

namespace mlir::attn {

enum class ModKind { Score, Mask };

/// The region's name in diagnostics ("score_mod" or "mask_mod").
StringRef modName(ModKind kind);

/// The position arguments before the captures: 5 (score, b, h, q_idx,
/// kv_idx) for a score_mod, 4 for a mask_mod.
unsigned numPositionArgs(ModKind kind);

/// Checks a non-empty `region` of `op` against the rules above, with one
/// trailing argument per value of `captures`; each error names the rule.
LogicalResult verifyModRegion(Operation *op, Region &region, ModKind kind,
                              ValueRange captures);

/// Checks the types of the captures: memrefs of integers or floats with
/// the identity layout.
LogicalResult verifyCaptureTypes(Operation *op, ValueRange captures);

/// Whether block argument `arg` of a mod region reaches the indices of a
/// load from a capture that integer range analysis cannot prove in bounds
/// (a static dimension and an index the region bounds itself): a position
/// that addresses memory, which a kernel must keep inside the sequence
/// even where it drops the result.
bool addressesMemory(Region &region, unsigned arg);

/// Clones the body of a (verified) mod region at `b`'s insertion point,
/// its block arguments replaced by `args` (positions, then captures), and
/// returns the value it yields.
Value inlineMod(OpBuilder &b, Region &region, ValueRange args);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNMODS_H
