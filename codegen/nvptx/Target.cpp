//===- Target.cpp - facts about NVIDIA chips ------------------------------===//

#include "codegen/nvptx/Target.h"

using namespace mlir;
using namespace mlir::attn;

FailureOr<int> mlir::attn::parseChip(StringRef chip) {
  int sm = 0;
  if (!chip.consume_front("sm_"))
    return failure();
  chip.consume_back("a");
  if (chip.getAsInteger(10, sm) || sm < 70 || sm > 120)
    return failure();
  return sm;
}

bool mlir::attn::hasWgmma(StringRef chip) {
  FailureOr<int> sm = parseChip(chip);
  return succeeded(sm) && *sm == 90 && chip.ends_with("a");
}

int64_t mlir::attn::maxSharedMemoryBytes(int sm) {
  switch (sm) {
  case 75: return 64 * 1024;
  case 80: return 163 * 1024;
  case 86:
  case 89: return 99 * 1024;
  case 90: return 227 * 1024;
  // sm_120 (consumer Blackwell) has the 99 KiB of sm_86, sm_100 Hopper's.
  default: return sm >= 120 ? 99 * 1024 : sm > 90 ? 227 * 1024 : 96 * 1024;
  }
}

StringRef mlir::attn::ptxFeatures(int sm) {
  // PTX ISA 8.0 is understood by CUDA 12.0+ drivers and covers sm_90a;
  // Blackwell needs 8.6 (sm_100) or 8.7 (sm_120), and CUDA 12.8+.
  return sm >= 120 ? "+ptx87" : sm >= 100 ? "+ptx86" : "+ptx80";
}

Tier mlir::attn::defaultPrefillTier(int sm) {
  return sm >= minimumSm(Tier::MMA) ? Tier::MMA : Tier::WMMA;
}

Tier mlir::attn::defaultPrefillTier(StringRef chip) {
  if (hasWgmma(chip))
    return Tier::WGMMA;
  FailureOr<int> sm = parseChip(chip);
  return failed(sm) ? Tier::MMA : defaultPrefillTier(*sm);
}

int mlir::attn::minimumSm(Tier tier) {
  switch (tier) {
  case Tier::MMA: return 80;
  case Tier::WGMMA: return 90;
  case Tier::WMMA: return 75;
  case Tier::Decode: return 75;
  case Tier::Copy: return 75;
  }
  return 80;
}

StringRef mlir::attn::minimumSmReason(Tier tier) {
  switch (tier) {
  case Tier::MMA: return "mma.sync, ldmatrix, cp.async";
  case Tier::WGMMA: return "wgmma, in the arch-specific sm_90a";
  case Tier::WMMA: return "f16 WMMA with f32 accumulation";
  case Tier::Decode: return "16-byte loads and warp shuffles";
  case Tier::Copy: return "16-byte loads and stores";
  }
  return "";
}
