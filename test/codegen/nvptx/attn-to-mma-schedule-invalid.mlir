// Schedules the NVIDIA tiers cannot run are refused with a diagnostic that
// names the schedule field and the rule.
// RUN: attn-opt %s --attn-tile --attn-to-mma="chip=sm_90" -split-input-file -verify-diagnostics
// The wmma tier runs one warp per 16 rows; Turing has no cp.async stages;
// the decode tier's SIMT kernel takes 1 to 8 keys per trip.
// RUN: not attn-opt %s --attn-tile --attn-to-wmma="chip=sm_90" -split-input-file 2>&1 | FileCheck %s --check-prefix=WMMA
// RUN: not attn-opt %s --attn-tile --attn-to-wmma="chip=sm_75" -split-input-file 2>&1 | FileCheck %s --check-prefix=TURING
// RUN: not attn-opt %s "--attn-select-tier=decode-tensor-cores=false" --attn-tile --attn-to-decode -split-input-file 2>&1 | FileCheck %s --check-prefix=DECODE

// WMMA: error: the wmma tier runs one warp per 16 query rows: schedule 'warps' must be block_q / 16 = 8; got 2
// TURING: error: more than one K/V stage needs cp.async (sm_80 or newer); got stages = 3 on sm_75
// DECODE: error: the split-K decode tier's SIMT kernel takes 1 to 8 keys per trip: schedule 'unroll' must be in [1, 8]; got 16

func.func @few_warps(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                     %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  // expected-error @+1 {{the mma tier gives a warp at most two 16-row m-tiles: schedule 'warps' must be at least block_q / 32 = 4; got 2}}
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 128, block_kv = 64, warps = 2>
  return
}

// -----

func.func @key_split(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                     %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  // expected-error @+1 {{schedule 'warps' = 16 splits each K/V tile's 32 keys among 4 groups of warps, which need a multiple of 16 keys each}}
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 64, block_kv = 32, warps = 16>
  return
}

// -----

func.func @stages(%q: memref<?x4x?x256xf16>, %k: memref<?x4x?x256xf16>,
                  %v: memref<?x4x?x256xf16>, %o: memref<?x4x?x256xf16>) {
  // expected-error @+1 {{the mma tier needs 557056 bytes of shared memory for D = 256, Dv = 256, tiles 64x128, 4 K/V stage(s); sm_90 allows 232448}}
  attn.attention q(%q : memref<?x4x?x256xf16>) k(%k : memref<?x4x?x256xf16>)
                 v(%v : memref<?x4x?x256xf16>) -> o(%o : memref<?x4x?x256xf16>)
                 schedule = <block_q = 64, block_kv = 128, stages = 4>
  return
}

// -----

func.func @wmma_warps(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                      %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 128, block_kv = 64, warps = 8>
  return
}

// -----

func.func @turing_stages(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                         %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 64, block_kv = 64, stages = 3>
  return
}

// -----

func.func @decode_unroll(%q: memref<?x8x1x128xf16>, %k: memref<?x2x?x128xf16>,
                        %v: memref<?x2x?x128xf16>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x2x?x128xf16>)
                 v(%v : memref<?x2x?x128xf16>) -> o(%o : memref<?x8x1x128xf16>)
                 schedule = <warps = 2, unroll = 16>
  return
}
