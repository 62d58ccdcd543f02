// The type written in the op disagrees with the value's type.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: use of value '%q' expects different type than prior uses
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  attn.attention q(%q : memref<1x8x16x64xf32>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
  return
}
