//===- Target.h - facts about NVIDIA chips ----------------------*- C++ -*-===//
//
// Everything attn knows about a chip, in one place: its compute capability,
// how much shared memory a block may take, which PTX ISA describes it, and
// which prefill tier runs there unless the user asks for another.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_TARGET_H
#define ATTN_CODEGEN_NVPTX_TARGET_H

#include "dialect/AttnDialect.h"
#include "mlir/Support/LLVM.h"

namespace mlir::attn {

/// Compute capability of "sm_XY[a]" (e.g. 80), or failure.
FailureOr<int> parseChip(StringRef chip);

/// Whether `chip` is the arch-specific sm_90a, the one chip with wgmma and
/// setmaxnreg (its code runs on compute capability 9.0 only).
bool hasWgmma(StringRef chip);

/// Largest dynamic shared memory a block may opt into on `sm`, in bytes.
int64_t maxSharedMemoryBytes(int sm);

/// The PTX ISA feature the NVPTX backend needs for `sm` ("+ptx80" ...).
StringRef ptxFeatures(int sm);

/// The prefill tier attn-to-ptx uses on `sm` unless told: mma from sm_80
/// (mma.sync, ldmatrix, cp.async), else wmma.
Tier defaultPrefillTier(int sm);
/// The same for a chip name: wgmma on the arch-specific sm_90a (specs it
/// cannot take go to mma, attn-select-tier says which), else as above.
Tier defaultPrefillTier(StringRef chip);

/// The oldest chip a tier runs on, and what it needs from it.
int minimumSm(Tier tier);
StringRef minimumSmReason(Tier tier);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_NVPTX_TARGET_H
