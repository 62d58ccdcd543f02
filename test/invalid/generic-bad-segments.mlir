// Operand segment sizes that do not add up to the operand count.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: 'attn.attention' op operand count (4) does not match with the total size (9) specified in attribute 'operandSegmentSizes'
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 2, 2, 1, 1>}>
      : (memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>) -> ()
  return
}
