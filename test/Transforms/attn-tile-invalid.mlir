// Bad schedules and options of attn-tile and attn-split-kv: a diagnostic that
// names the option and the rule, never a crash.
// RUN: attn-opt %s --attn-tile="block-q=0" -split-input-file -verify-diagnostics
// RUN: not attn-opt %s --attn-tile="block-kv=48" -split-input-file 2>&1 | FileCheck %s --check-prefix=NOTPOW2
// RUN: not attn-opt %s --attn-tile="block-q=512" -split-input-file 2>&1 | FileCheck %s --check-prefix=TOOBIG
// RUN: not attn-opt %s --attn-tile --attn-split-kv="num-splits=-2" -split-input-file 2>&1 | FileCheck %s --check-prefix=SPLITS
// RUN: not attn-opt %s --attn-tile --attn-split-kv -split-input-file 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: not attn-opt %s --attn-tile --attn-split-kv="num-splits=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: not attn-opt %s --attn-tile --attn-split-kv="num-splits=2 kv-chunk=64" -split-input-file 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: not attn-opt %s --attn-tile="block-kv=64" --attn-split-kv="kv-chunk=96" -split-input-file 2>&1 | FileCheck %s --check-prefix=CHUNK
// RUN: not attn-opt %s --attn-tile --attn-split-kv="kv-chunk=-5" -split-input-file 2>&1 | FileCheck %s --check-prefix=NEGCHUNK

// NOTPOW2: error: option 'block-kv' must be a power of two in [1, 256], got 48
// TOOBIG: error: option 'block-q' must be a power of two in [1, 256], got 512
// SPLITS: error: option 'num-splits' must be >= 1, got -2
// NOSPLIT: error: attn-split-kv needs exactly one of option 'num-splits' or option 'kv-chunk' (>= 1)
// CHUNK: error: option 'kv-chunk' (96) must be a multiple of the K/V tile size (64)
// NEGCHUNK: error: option 'kv-chunk' must be >= 1, got -5

// expected-error @+1 {{option 'block-q' must be a power of two in [1, 256], got 0}}
func.func @f(%q: memref<1x2x8x64xf16>, %k: memref<1x2x8x64xf16>,
             %v: memref<1x2x8x64xf16>, %o: memref<1x2x8x64xf16>) {
  attn.attention q(%q : memref<1x2x8x64xf16>) k(%k : memref<1x2x8x64xf16>)
                 v(%v : memref<1x2x8x64xf16>) -> o(%o : memref<1x2x8x64xf16>)
  return
}
