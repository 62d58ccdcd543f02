// score_mod / mask_mod regions run on the CPU only so far: the NVIDIA
// column refuses them with a diagnostic, at L0 (attn-select-tier, hence
// attn-to-ptx) and at L1 (each tier pass, through the nest matcher), and
// never falls back silently.
// RUN: attn-opt %s --attn-select-tier -split-input-file -verify-diagnostics
// RUN: not attn-opt %s --attn-to-ptx=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not attn-opt %s --attn-tile --attn-to-mma=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not attn-opt %s --attn-tile --attn-to-wmma=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=WMMA
// RUN: not attn-opt %s --attn-tile=block-q=4 --attn-to-decode=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=DECODE

// PTX: error: 'attn.attention' op has a score_mod or mask_mod region, which the NVIDIA tiers cannot lower yet (CPU only so far: attn-to-cpu)
// MMA: error: attn-to-mma: score_mod and mask_mod regions are lowered on the CPU only so far (attn-to-cpu); this target cannot take them yet
// WMMA: error: attn-to-wmma: score_mod and mask_mod regions are lowered on the CPU only so far
// The second spec is marked for the decode tier (as attn-select-tier would).
// DECODE: error: attn-to-decode: score_mod and mask_mod regions are lowered on the CPU only so far

func.func @alibi(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                 %v: memref<?x8x?x64xf16>, %slopes: memref<8xf32>,
                 %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has a score_mod or mask_mod region, which the NVIDIA tiers cannot lower yet (CPU only so far: attn-to-cpu)}}
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

func.func @prefix_lm(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                     %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{'attn.attention' op has a score_mod or mask_mod region}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c16 = arith.constant 16 : index
    %prefix = arith.cmpi slt, %j, %c16 : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %prefix, %causal : i1
    attn.yield %r : i1
  } {attn.tier = #attn.tier<decode>}
  return
}
