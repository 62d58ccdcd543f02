// Captures of score_mod / mask_mod regions run on the CPU only so far: the
// NVIDIA column refuses them with a diagnostic, at L0 (attn-select-tier,
// hence attn-to-ptx) and at L1 (each tier pass, through the nest
// matcher), and never falls back silently. Regions without captures are
// lowered (mods.mlir).
// RUN: attn-opt %s --attn-select-tier -split-input-file -verify-diagnostics
// RUN: not attn-opt %s --attn-to-ptx=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not attn-opt %s --attn-tile --attn-to-mma=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not attn-opt %s --attn-tile --attn-to-wmma=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=WMMA
// RUN: not attn-opt %s --attn-tile=block-q=4 --attn-to-decode=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=DECODE

// PTX: error: 'attn.attention' op has captures, which the NVIDIA tiers cannot take yet (CPU only so far: attn-to-cpu); score_mod and mask_mod regions without captures are lowered
// MMA: error: attn-to-mma: score_mod / mask_mod captures are lowered on the CPU only so far (attn-to-cpu); the NVIDIA tiers take regions without captures
// WMMA: error: attn-to-wmma: score_mod / mask_mod captures are lowered on the CPU only so far
// The second spec is marked for the decode tier (as attn-select-tier would).
// DECODE: error: attn-to-decode: score_mod / mask_mod captures are lowered on the CPU only so far

func.func @alibi(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                 %v: memref<?x8x?x64xf16>, %slopes: memref<8xf32>,
                 %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has captures, which the NVIDIA tiers cannot take yet}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 captures(%slopes : memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: memref<8xf32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %r = arith.addf %s, %slope : f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @document_mask(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                         %v: memref<?x2x?x64xf16>, %doc: memref<?xi32>,
                         %o: memref<?x8x1x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has captures}}
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
                 captures(%doc : memref<?xi32>)
              -> o(%o : memref<?x8x1x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: memref<?xi32>):
    %di = memref.load %d[%i] : memref<?xi32>
    %dj = memref.load %d[%j] : memref<?xi32>
    %r = arith.cmpi eq, %di, %dj : i32
    attn.yield %r : i1
  } {attn.tier = #attn.tier<decode>}
  return
}
