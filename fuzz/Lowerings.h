//===- Lowerings.h - what attn's fuzz targets run on a spec -----*- C++ -*-===//
//
// Both fuzz targets (attn-fuzz on spec text, attn-fuzz-specs on specs it
// builds from the input bytes) parse a spec and run every lowering a user
// can ask for, each on its own copy: attn-tile alone, attn-tile with
// attn-split-kv, attn-to-cpu (to the LLVM dialect), attn-to-ptx (to PTX
// with LLVM's NVPTX backend; ptxas is not run) and the MSL translation. A
// finding is a crash, a sanitizer report, or a lowering that fails without
// saying why (no error diagnostic): attn's rule is that bad input gets a
// clear error.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FUZZ_LOWERINGS_H
#define ATTN_FUZZ_LOWERINGS_H

#include "llvm/ADT/StringRef.h"

namespace attnfuzz {

/// What happened to a spec.
struct Outcome {
  bool parsed = false;   // parsed and verified, with an attn.attention
  int lowered = 0;       // lowerings that succeeded
  int refused = 0;       // lowerings that failed with an error diagnostic
};

/// Parses `spec` (text; copied so the lexer sees a terminating NUL) and
/// runs every lowering; aborts on a lowering that fails silently. `ptxChoice`
/// picks one of the NVIDIA targets (sm_90 mma, sm_80 wmma, sm_75): the
/// NVPTX backend is the slow part.
Outcome runLowerings(llvm::StringRef spec, unsigned ptxChoice);

} // namespace attnfuzz

#endif // ATTN_FUZZ_LOWERINGS_H
