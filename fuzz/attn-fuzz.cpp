//===- attn-fuzz.cpp - libFuzzer target over attn's passes ----------------===//
//
// Each input is spec text, mutated by libFuzzer from the seed corpus
// (scripts/fuzz.sh: every spec in examples/ and test/) with the dialect's
// dictionary; fuzz/Lowerings.h says what runs on it and what counts as a
// finding. Most mutations no longer parse or verify: this target tests the
// parser, the verifiers and their messages first; attn-fuzz-specs feeds
// the lowerings valid specs.
//
// Built with -DATTN_FUZZ=ON (clang only).
//
//===----------------------------------------------------------------------===//

#include "fuzz/Lowerings.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Specs are small; long inputs only slow the search down.
  if (size > 8192)
    return 0;
  llvm::StringRef spec(reinterpret_cast<const char *>(data), size);
  // MLIR 22's parser crashes on dense arrays of `index` (docs/Testing.md,
  // "Known issues"); no attn code is involved, so such inputs are not
  // findings.
  std::string squeezed;
  for (char c : spec)
    if (!llvm::isSpace(c))
      squeezed += c;
  if (llvm::StringRef(squeezed).contains("array<index"))
    return 0;
  attnfuzz::runLowerings(spec, size);
  return 0;
}
