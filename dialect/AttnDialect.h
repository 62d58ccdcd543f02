//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNDIALECT_H
#define ATTN_DIALECT_ATTNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::OpTrait::attn {
/// Ops whose regions are score_mod / mask_mod bodies (AttnMods.h), ended
/// by attn.yield: attn.attention, attn.qk, attn.mask, and ops of other
/// dialects that carry a copy of one (attn_nv.mask_tile).
template <typename ConcreteType>
class HoldsModRegion : public TraitBase<ConcreteType, HoldsModRegion> {};
} // namespace mlir::OpTrait::attn

#include "dialect/AttnDialect.h.inc"
#include "dialect/AttnEnums.h.inc"
#include "dialect/AttnLaunch.h"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/AttnOps.h.inc"

namespace mlir::attn {

// The discardable attributes attn attaches to ops of other dialects; the
// dialect verifies each (AttnDialect::verifyOperationAttribute).

/// `#attn.tier<...>` on an attn.attention or its L1 loop nest (scf.forall):
/// the NVIDIA tier that lowers it.
inline constexpr llvm::StringLiteral kTierAttrName = "attn.tier";
/// `#attn.schedule<...>` on an L1 loop nest: the tiles and, for the GPU
/// tiers, warps and stages it was tiled with.
inline constexpr llvm::StringLiteral kScheduleAttrName = "attn.schedule";
/// A unit attribute on the K/V loop (scf.for) built by attn-tile, which
/// attn-split-kv rewrites.
inline constexpr llvm::StringLiteral kKVLoopAttrName = "attn.kv_loop";
/// On a kernel (gpu.func, then llvm.func): its first N parameters (an i64)
/// are TMA tensor maps, which attn-tensor-map-params passes by value.
inline constexpr llvm::StringLiteral kTensorMapParamsAttrName =
    "attn.tensor_map_params";

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTNDIALECT_H
