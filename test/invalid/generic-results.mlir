// attn.attention has no results.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: 'attn.attention' op requires zero results
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0>}>
      : (memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>) -> i32
  return
}
