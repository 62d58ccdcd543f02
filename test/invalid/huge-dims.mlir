// Dims that parse but cannot be launched are refused by the verifier.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: 'attn.attention' op operand 'q' dim 2 is 9223372036854775806, larger than 2^31-1
func.func @f(%q: memref<1x8x9223372036854775806x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x9223372036854775806x64xf16>) {
  attn.attention q(%q : memref<1x8x9223372036854775806x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x9223372036854775806x64xf16>)
  return
}
