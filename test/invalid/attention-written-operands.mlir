// The operands attn.attention writes (o, lse) are buffers of their own:
// neither may be the same value as another operand. `o(%q)` and `o(%k)`
// verified, then attn-compile wrote C that did not compile and attn-run
// crashed. A read-only buffer may be two operands (k and v).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @f(%q: memref<1x4x16x64xf16>, %k: memref<1x4x16x64xf16>,
             %v: memref<1x4x16x64xf16>) {
  // expected-error @+1 {{operand 'q' is the same buffer as operand 'o', which the op writes}}
  attn.attention q(%q : memref<1x4x16x64xf16>) k(%k : memref<1x4x16x64xf16>)
                 v(%v : memref<1x4x16x64xf16>) -> o(%q : memref<1x4x16x64xf16>)
  return
}

// -----

func.func @f(%q: memref<1x4x16x64xf16>, %k: memref<1x4x16x64xf16>,
             %v: memref<1x4x16x64xf16>) {
  // expected-error @+1 {{operand 'k' is the same buffer as operand 'o', which the op writes}}
  attn.attention q(%q : memref<1x4x16x64xf16>) k(%k : memref<1x4x16x64xf16>)
                 v(%v : memref<1x4x16x64xf16>) -> o(%k : memref<1x4x16x64xf16>)
  return
}

// -----

func.func @f(%q: memref<1x4x16x64xf32>, %k: memref<1x4x16x64xf32>,
             %v: memref<1x4x16x64xf32>, %o: memref<1x4x16x64xf32>) {
  // expected-error @+1 {{operand 'v' is the same buffer as operand 'o', which the op writes}}
  attn.attention q(%q : memref<1x4x16x64xf32>) k(%k : memref<1x4x16x64xf32>)
                 v(%o : memref<1x4x16x64xf32>) -> o(%o : memref<1x4x16x64xf32>)
  return
}
