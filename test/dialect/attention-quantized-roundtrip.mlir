// attn.attention over quantized K/V caches (fp8 e4m3fn and e5m2, i8) with
// each granularity of dequantization scale, and the L1 load_kv that
// dequantizes, parse, print and parse again to the same IR, in both the
// custom and the generic syntax.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Per-tensor scales over a paged fp8 cache (vLLM's fp8_e4m3 cache).
// CHECK-LABEL: func.func @paged_e4m3_tensor
// CHECK: attn.attention q(%{{.*}} : memref<?x32x1x128xf16>) k(%{{.*}} : memref<?x8x16x128xf8E4M3FN>) v(%{{.*}} : memref<?x8x16x128xf8E4M3FN>) block_table(%{{.*}} : memref<?x?xi32>) kv_lens(%{{.*}} : memref<?xi32>) k_scale(%{{.*}} : memref<f32>) v_scale(%{{.*}} : memref<f32>) -> o(%{{.*}} : memref<?x32x1x128xf16>){{$}}
func.func @paged_e4m3_tensor(%q: memref<?x32x1x128xf16>, %k: memref<?x8x16x128xf8E4M3FN>, %v: memref<?x8x16x128xf8E4M3FN>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %ks: memref<f32>, %vs: memref<f32>, %o: memref<?x32x1x128xf16>) {
  attn.attention q(%q : memref<?x32x1x128xf16>) k(%k : memref<?x8x16x128xf8E4M3FN>) v(%v : memref<?x8x16x128xf8E4M3FN>)
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 k_scale(%ks : memref<f32>) v_scale(%vs : memref<f32>)
              -> o(%o : memref<?x32x1x128xf16>)
  return
}

// Per-token K scales, per-head V scales, i8, causal.
// CHECK-LABEL: func.func @i8_token_head
// CHECK: k(%{{.*}} : memref<?x2x?x64xi8>) v(%{{.*}} : memref<?x2x?x64xi8>) k_scale(%{{.*}} : memref<?x2x?xf32>) v_scale(%{{.*}} : memref<2xf32>) -> o(%{{.*}} : memref<?x8x?x64xbf16>) mask = <causal>{{$}}
func.func @i8_token_head(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xi8>, %v: memref<?x2x?x64xi8>, %ks: memref<?x2x?xf32>, %vs: memref<2xf32>, %o: memref<?x8x?x64xbf16>) {
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x2x?x64xi8>) v(%v : memref<?x2x?x64xi8>)
                 k_scale(%ks : memref<?x2x?xf32>) v_scale(%vs : memref<2xf32>)
              -> o(%o : memref<?x8x?x64xbf16>) mask = <causal>
  return
}

// Packed e5m2 K/V with per-token scales [total_k, Hkv], no V scale, sinks.
// CHECK-LABEL: func.func @packed_e5m2
// CHECK: cu_seqlens_k(%{{.*}} : memref<?xi32>) sinks(%{{.*}} : memref<4xf32>) k_scale(%{{.*}} : memref<?x4xf32>) -> o(
func.func @packed_e5m2(%q: memref<?x4x64xf32>, %k: memref<?x4x64xf8E5M2>, %v: memref<?x4x64xf8E5M2>, %cq: memref<?xi32>, %ck: memref<?xi32>, %s: memref<4xf32>, %ks: memref<?x4xf32>, %o: memref<?x4x64xf32>) {
  attn.attention q(%q : memref<?x4x64xf32>) k(%k : memref<?x4x64xf8E5M2>) v(%v : memref<?x4x64xf8E5M2>)
                 cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>) sinks(%s : memref<4xf32>)
                 k_scale(%ks : memref<?x4xf32>)
              -> o(%o : memref<?x4x64xf32>)
  return
}

// L1: a quantized tile dequantized to f32, and scores of an f16 Q tile
// against it.
// CHECK-LABEL: func.func @load_kv_dequantized
// CHECK: attn.load_kv %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] length %{{.*}} block_table %{{.*}} scale(%{{.*}} : memref<?x2x16xf32>) : memref<?x2x16x64xf8E4M3FN>, memref<?x?xi32> -> tensor<16x64xf32>
// CHECK: attn.qk %{{.*}}, %{{.*}} scale 1.250000e-01 : tensor<16x64xf16>, tensor<16x64xf32> -> tensor<16x16xf32>
func.func @load_kv_dequantized(%k: memref<?x2x16x64xf8E4M3FN>, %bt: memref<?x?xi32>, %ks: memref<?x2x16xf32>, %qt: tensor<16x64xf16>, %i: index) -> tensor<16x16xf32> {
  %kt = attn.load_kv %k[%i, %i, %i] length %i block_table %bt scale(%ks : memref<?x2x16xf32>)
      : memref<?x2x16x64xf8E4M3FN>, memref<?x?xi32> -> tensor<16x64xf32>
  %s = attn.qk %qt, %kt scale 0.125 : tensor<16x64xf16>, tensor<16x64xf32> -> tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

// fp8 attention: an fp8 Q with per-head scales over an fp8 cache.
// CHECK-LABEL: func.func @fp8_attention
// CHECK: attn.attention q(%{{.*}} : memref<?x8x?x128xf8E4M3FN>) k(%{{.*}} : memref<?x8x?x128xf8E4M3FN>) v(%{{.*}} : memref<?x8x?x128xf8E4M3FN>) k_scale(%{{.*}} : memref<f32>) v_scale(%{{.*}} : memref<f32>) q_scale(%{{.*}} : memref<8xf32>) -> o(%{{.*}} : memref<?x8x?x128xbf16>) mask = <causal>{{$}}
// CHECK-LABEL: func.func @load_q_dequantized
// CHECK: attn.load_q %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] group 1 scale(%{{.*}} : memref<f32>) : memref<?x8x?x128xf8E5M2> -> tensor<16x128xf32>
func.func @fp8_attention(%q: memref<?x8x?x128xf8E4M3FN>, %k: memref<?x8x?x128xf8E4M3FN>, %v: memref<?x8x?x128xf8E4M3FN>, %ks: memref<f32>, %vs: memref<f32>, %qs: memref<8xf32>, %o: memref<?x8x?x128xbf16>) {
  attn.attention q(%q : memref<?x8x?x128xf8E4M3FN>) k(%k : memref<?x8x?x128xf8E4M3FN>) v(%v : memref<?x8x?x128xf8E4M3FN>)
                 k_scale(%ks : memref<f32>) v_scale(%vs : memref<f32>) q_scale(%qs : memref<8xf32>)
              -> o(%o : memref<?x8x?x128xbf16>) mask = <causal>
  return
}
func.func @load_q_dequantized(%q: memref<?x8x?x128xf8E5M2>, %s: memref<f32>, %i: index) -> tensor<16x128xf32> {
  %t = attn.load_q %q[%i, %i, %i] group 1 scale(%s : memref<f32>) : memref<?x8x?x128xf8E5M2> -> tensor<16x128xf32>
  return %t : tensor<16x128xf32>
}
