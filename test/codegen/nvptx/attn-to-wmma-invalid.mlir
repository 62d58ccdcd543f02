// What the wmma tier cannot do is refused with a diagnostic that says what
// is unsupported and what is.
// RUN: attn-opt %s --attn-tile="block-q=64 block-kv=64" --attn-to-wmma="chip=sm_80" -split-input-file -verify-diagnostics
// RUN: not attn-opt %s --attn-tile --attn-to-wmma="chip=sm_70" -split-input-file 2>&1 | FileCheck %s --check-prefix=VOLTA
// RUN: not attn-opt %s --attn-tile --attn-to-wmma="chip=gfx90a" -split-input-file 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --attn-tile="block-q=32 block-kv=8" --attn-to-wmma -split-input-file 2>&1 | FileCheck %s --check-prefix=TILE

// VOLTA: error: the wmma tier needs sm_75 or newer (f16 WMMA with f32 accumulation); got sm_70
// CHIP: error: option 'chip' must be sm_XY with XY in [70, 120] (e.g. sm_80, sm_90a), got 'gfx90a'
// TILE: error: the wmma tier needs tile sizes that are multiples of 16 up to 128; got block_q = 32, block_kv = 8

func.func @f32(%q: memref<?x4x?x64xf32>, %k: memref<?x4x?x64xf32>,
               %v: memref<?x4x?x64xf32>, %o: memref<?x4x?x64xf32>) {
  // expected-error @+1 {{the wmma tier takes f16 or bf16 inputs; got 'f32'}}
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x4x?x64xf32>)
                 v(%v : memref<?x4x?x64xf32>) -> o(%o : memref<?x4x?x64xf32>)
  return
}

// -----

func.func @d36(%q: memref<?x4x?x36xf16>, %k: memref<?x4x?x36xf16>,
               %v: memref<?x4x?x36xf16>, %o: memref<?x4x?x36xf16>) {
  // expected-error @+1 {{the wmma tier needs head dims that are multiples of 8; got D = 36, Dv = 36}}
  attn.attention q(%q : memref<?x4x?x36xf16>) k(%k : memref<?x4x?x36xf16>)
                 v(%v : memref<?x4x?x36xf16>) -> o(%o : memref<?x4x?x36xf16>)
  return
}

// -----

func.func @d256(%q: memref<?x4x?x256xf16>, %k: memref<?x4x?x256xf16>,
                %v: memref<?x4x?x256xf16>, %o: memref<?x4x?x256xf16>) {
  // expected-error @+1 {{the wmma tier needs 169472 bytes of shared memory for D = 256, Dv = 256, tiles 64x64, 2 K/V stage(s); sm_80 allows 166912}}
  attn.attention q(%q : memref<?x4x?x256xf16>) k(%k : memref<?x4x?x256xf16>)
                 v(%v : memref<?x4x?x256xf16>) -> o(%o : memref<?x4x?x256xf16>)
  return
}
