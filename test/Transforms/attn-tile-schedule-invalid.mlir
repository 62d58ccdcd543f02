// A schedule attribute with a bad tile size, warp count or stage count
// names the attribute field.
// RUN: attn-opt %s --attn-tile -split-input-file -verify-diagnostics

func.func @f(%q: memref<1x2x8x64xf16>, %k: memref<1x2x8x64xf16>,
             %v: memref<1x2x8x64xf16>, %o: memref<1x2x8x64xf16>) {
  // expected-error @+1 {{schedule 'block_q' must be a power of two in [1, 256], got 24}}
  attn.attention q(%q : memref<1x2x8x64xf16>) k(%k : memref<1x2x8x64xf16>)
                 v(%v : memref<1x2x8x64xf16>) -> o(%o : memref<1x2x8x64xf16>)
                 schedule = <block_q = 24>
  return
}

// -----

func.func @f(%q: memref<1x2x8x64xf16>, %k: memref<1x2x8x64xf16>,
             %v: memref<1x2x8x64xf16>, %o: memref<1x2x8x64xf16>) {
  // expected-error @+1 {{schedule 'block_kv' must be a power of two in [1, 256], got -1}}
  attn.attention q(%q : memref<1x2x8x64xf16>) k(%k : memref<1x2x8x64xf16>)
                 v(%v : memref<1x2x8x64xf16>) -> o(%o : memref<1x2x8x64xf16>)
                 schedule = <block_q = 16, block_kv = -1>
  return
}

// -----

func.func @f(%q: memref<1x2x8x64xf16>, %k: memref<1x2x8x64xf16>,
             %v: memref<1x2x8x64xf16>, %o: memref<1x2x8x64xf16>) {
  // expected-error @+1 {{schedule 'warps' must be a power of two in [1, 16], got 6}}
  attn.attention q(%q : memref<1x2x8x64xf16>) k(%k : memref<1x2x8x64xf16>)
                 v(%v : memref<1x2x8x64xf16>) -> o(%o : memref<1x2x8x64xf16>)
                 schedule = <block_q = 16, warps = 6>
  return
}

// -----

func.func @f(%q: memref<1x2x8x64xf16>, %k: memref<1x2x8x64xf16>,
             %v: memref<1x2x8x64xf16>, %o: memref<1x2x8x64xf16>) {
  // expected-error @+1 {{schedule 'stages' must be in [1, 4] (0: the tier's default), got 5}}
  attn.attention q(%q : memref<1x2x8x64xf16>) k(%k : memref<1x2x8x64xf16>)
                 v(%v : memref<1x2x8x64xf16>) -> o(%o : memref<1x2x8x64xf16>)
                 schedule = <stages = 5>
  return
}
