// attn.attention works on buffers; tensors are refused by name.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: custom op 'attn.attention' invalid kind of type specified: expected builtin.memref, but found 'tensor<1x8x16x64xf16>'
func.func @f(%q: tensor<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  attn.attention q(%q : tensor<1x8x16x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
  return
}
