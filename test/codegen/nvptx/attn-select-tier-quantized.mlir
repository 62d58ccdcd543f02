// attn-select-tier on quantized K/V caches: with head dims the decoded
// fragments take (D 64, 128 or 256; Dv 32, 64, 128 or 256), whatever
// its scales, a decode takes the tensor-core split kernel like f16
// (16-row Q tiles on sm_90), with 128-key tiles and two stages (half the
// bytes of f16's 64 keys and four). Otherwise the SIMT split kernel, said
// in a remark that names the reason.
// RUN: attn-opt %s --attn-select-tier="sm=90" 2>&1 | FileCheck %s

// CHECK-NOT: remark: {{.*}}scale per token
// CHECK: remark: decodes on the SIMT split kernel: a quantized K/V cache with D 96 / Dv 96 (the tensor-core split kernel decodes K in 64-column slices and V in 32-column groups, each row a power of two of 16-byte chunks, at most 256 bytes)
// CHECK: remark: decodes on the SIMT split kernel: a quantized K/V cache with D 192 / Dv 96 (the tensor-core split kernel decodes K in 64-column slices and V in 32-column groups, each row a power of two of 16-byte chunks, at most 256 bytes)
// CHECK-LABEL: func.func @fp8_tensor
// CHECK: schedule = <block_q = 16, block_kv = 128, warps = 4, stages = 2>
// CHECK-LABEL: func.func @i8_token
// CHECK: schedule = <block_q = 16, block_kv = 128, warps = 4, stages = 2>
// CHECK-LABEL: func.func @e5m2_d96
// CHECK: schedule = <block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 4>
// CHECK-LABEL: func.func @e4m3_d192_dv96
// CHECK: schedule = <block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 4>

func.func @fp8_tensor(%q: memref<?x8x1x128xf16>, %k: memref<?x2x?x128xf8E4M3FN>,
                      %v: memref<?x2x?x128xf8E4M3FN>, %ks: memref<f32>,
                      %vs: memref<f32>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x2x?x128xf8E4M3FN>)
                 v(%v : memref<?x2x?x128xf8E4M3FN>)
                 k_scale(%ks : memref<f32>) v_scale(%vs : memref<f32>)
              -> o(%o : memref<?x8x1x128xf16>)
  return
}

func.func @i8_token(%q: memref<?x8x1x128xf16>, %k: memref<?x2x?x128xi8>,
                    %v: memref<?x2x?x128xi8>, %ks: memref<?x2x?xf32>,
                    %vs: memref<?x2x?xf32>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x2x?x128xi8>)
                 v(%v : memref<?x2x?x128xi8>)
                 k_scale(%ks : memref<?x2x?xf32>) v_scale(%vs : memref<?x2x?xf32>)
              -> o(%o : memref<?x8x1x128xf16>)
  return
}

func.func @e5m2_d96(%q: memref<?x8x1x96xf16>, %k: memref<?x2x?x96xf8E5M2>,
                    %v: memref<?x2x?x96xf8E5M2>, %o: memref<?x8x1x96xf16>) {
  attn.attention q(%q : memref<?x8x1x96xf16>) k(%k : memref<?x2x?x96xf8E5M2>)
                 v(%v : memref<?x2x?x96xf8E5M2>) -> o(%o : memref<?x8x1x96xf16>)
  return
}

func.func @e4m3_d192_dv96(%q: memref<?x8x1x192xf16>, %k: memref<?x2x?x192xf8E4M3FN>,
                          %v: memref<?x2x?x96xf8E4M3FN>, %o: memref<?x8x1x96xf16>) {
  attn.attention q(%q : memref<?x8x1x192xf16>) k(%k : memref<?x2x?x192xf8E4M3FN>)
                 v(%v : memref<?x2x?x96xf8E4M3FN>) -> o(%o : memref<?x8x1x96xf16>)
  return
}
