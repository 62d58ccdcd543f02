// Hand-written generic form with attributes of the wrong kind.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: invalid properties {{.*}} for op attn.attention: Invalid attribute `mask` in property conversion: 42 : i32
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  "attn.attention"(%q, %k, %v, %o) <{mask = 42 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0>}>
      : (memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>) -> ()
  return
}
