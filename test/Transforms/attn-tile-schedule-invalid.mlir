// A schedule attribute with a bad tile size names the attribute field.
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
