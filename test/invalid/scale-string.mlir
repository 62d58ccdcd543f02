// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: custom op 'attn.attention' invalid kind of attribute specified
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  attn.attention q(%q : memref<1x8x16x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
                 scale = "big"
  return
}
