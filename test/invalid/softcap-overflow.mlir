// A soft-cap that overflows f32 parses as inf; the verifier refuses it.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: 'attn.attention' op attribute 'softcap' must be positive and finite, got inf
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  attn.attention q(%q : memref<1x8x16x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
                 softcap = 1.0e400
  return
}
