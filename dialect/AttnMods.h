//===- AttnMods.h - score_mod / mask_mod regions ----------------*- C++ -*-===//
//
// The rules of the programmable regions of attn.attention (and of the L1
// ops attn.qk and attn.mask that carry them), checked once here, and the
// one way backends inline a region's body.
//
//   score_mod: (score: f32, b, h, q_idx, kv_idx: index, captures...) -> f32
//   mask_mod:  (b, h, q_idx, kv_idx: index, captures...) -> i1
//
// The body is one block of at most kMaxModOps ops: the arith and math ops
// of modOpNames() on the types of isModType(), and memref.loads of the
// capture arguments, ended by attn.yield. Integer divisions need divisors
// that range analysis proves nonzero (and not -1 over the signed minimum).
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

/// The largest region a kernel inlines: each op is cloned at every score
/// of every kernel a spec gives.
constexpr unsigned kMaxModOps = 256;
/// Captures take the operands' limits: static dims in [1, 2^31-1], fewer
/// than 2^48 elements through them.
constexpr int64_t kMaxModCaptureDim = 2147483647;
constexpr int64_t kMaxModCaptureElements = int64_t(1) << 48;

/// The types a region computes in: index, signless i1 to i64, f16, bf16,
/// f32 and f64.
bool isModType(Type type);

/// The ops a region may hold besides memref.load and attn.yield, by name.
ArrayRef<StringLiteral> modOpNames();

/// The rules on values that integer range analysis checks: an integer
/// division's divisor is provably nonzero (and not -1 where the dividend
/// may be the signed minimum), and no load index is always out of bounds.
LogicalResult verifyModValues(Operation *op, Region &region, ModKind kind);

/// Checks the types of the captures: memrefs of integers (i1, i8, i16,
/// i32, i64) or floats (f16, bf16, f32, f64) with the identity layout, static dims in
/// [1, 2^31-1] and fewer than 2^48 elements.
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
