// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: 'attn.attention' op head dims must be <= 1024, got D = 1000000000, Dv = 64
func.func @f(%q: memref<1x8x4x1000000000xf16>, %k: memref<1x8x16x1000000000xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x4x64xf16>) {
  attn.attention q(%q : memref<1x8x4x1000000000xf16>) k(%k : memref<1x8x16x1000000000xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x4x64xf16>)
  return
}
