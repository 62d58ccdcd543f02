// attn.cache_append into quantized caches on the CPU: f16, bf16 or f32 new
// tokens stored as fp8 (e4m3fn, e5m2) or i8 bytes, each the byte nearest
// x / scale (QuantRules' encode: ties to even, fp8 saturating, i8 clamped
// to [-127, 127]). Per-tensor and per-head scales are read (drawn near
// 1 / the format's largest value, so some values saturate); per-token
// scales are computed (absmax(row) / largest) and written beside the
// cache. attn-run poisons the caches and the written scales, then checks
// every element: each written byte against the nearest stored value of
// x / scale computed in float64 from the formats' definition, each
// written scale against absmax / largest to 1e-6, and that nothing else
// changed; it exits 1 otherwise.
//
// RUN: attn-run %s --func=paged_e4m3_token --batch=3 --new-len=20 --kv-len=100 --new-lens=20,0,7 --invalid-blocks=1 | FileCheck %s --check-prefixes=CHECK,TOKEN
// RUN: attn-run %s --func=contiguous_i8_head_tensor --batch=3 --new-len=7 --kv-len=40 | FileCheck %s --check-prefixes=CHECK,I8
// RUN: attn-run %s --func=slots_e5m2_token --batch=4 --new-len=20 --kv-len=16 --invalid-blocks=3 | FileCheck %s --check-prefixes=CHECK,E5M2
// RUN: attn-run %s --func=contiguous_e4m3_unscaled --batch=2 --new-len=5 --kv-len=9 | FileCheck %s
// An engine's step: the append quantizes a token into a paged fp8 cache,
// writing its per-token scales, and attention reads the cache back with
// them; O is checked against float64 attention over the cache's
// dequantized rows (old and new), so the two ops must agree on where the
// rows and their scales live. Also a chunk into an i8 cache, f32, causal.
// RUN: attn-run %s --func=append_then_decode_e4m3 --batch=4 --kv-len=70 | FileCheck %s --check-prefixes=CHECK,ATTN
// RUN: attn-run %s --func=append_then_decode_e4m3 --batch=2 --kv-len=70 --kv-lens=0,69 --num-splits=3 | FileCheck %s --check-prefixes=CHECK,ATTN
// RUN: attn-run %s --func=append_then_prefill_i8 --batch=3 --new-len=20 --q-len=20 --kv-len=90 | FileCheck %s --check-prefixes=CHECK,ATTN
//
// CHECK: wrong=0 clobbered=0 cache=
// TOKEN-SAME: f8E4M3FN k_scale=token v_scale=token
// I8-SAME: i8 k_scale=head v_scale=tensor
// E5M2-SAME: f8E5M2 k_scale=token v_scale=none
// CHECK-SAME: scales_wrong=0
// ATTN-SAME: ; attention {{.*}} unwritten=0
// CHECK-SAME: PASS

func.func @paged_e4m3_token(%kn: memref<?x2x?x64xf16>, %vn: memref<?x2x?x64xf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %ks: memref<?x2x16xf32>, %vs: memref<?x2x16xf32>, %kc: memref<?x2x16x64xf8E4M3FN>, %vc: memref<?x2x16x64xf8E4M3FN>) {
  attn.cache_append k_new(%kn : memref<?x2x?x64xf16>) v_new(%vn : memref<?x2x?x64xf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>) k_scale(%ks : memref<?x2x16xf32>) v_scale(%vs : memref<?x2x16xf32>) -> k_cache(%kc : memref<?x2x16x64xf8E4M3FN>) v_cache(%vc : memref<?x2x16x64xf8E4M3FN>)
  return
}
func.func @contiguous_i8_head_tensor(%kn: memref<?x2x?x32xf32>, %vn: memref<?x2x?x32xf32>, %lens: memref<?xi32>, %ks: memref<2xf32>, %vs: memref<f32>, %kc: memref<?x2x?x32xi8>, %vc: memref<?x2x?x32xi8>) {
  attn.cache_append k_new(%kn : memref<?x2x?x32xf32>) v_new(%vn : memref<?x2x?x32xf32>) kv_lens(%lens : memref<?xi32>) k_scale(%ks : memref<2xf32>) v_scale(%vs : memref<f32>) -> k_cache(%kc : memref<?x2x?x32xi8>) v_cache(%vc : memref<?x2x?x32xi8>)
  return
}
func.func @slots_e5m2_token(%kn: memref<?x2x32xbf16>, %vn: memref<?x2x32xbf16>, %sm: memref<?xi32>, %ks: memref<?x2x16xf32>, %kc: memref<?x2x16x32xf8E5M2>, %vc: memref<?x2x16x32xf8E5M2>) {
  attn.cache_append k_new(%kn : memref<?x2x32xbf16>) v_new(%vn : memref<?x2x32xbf16>) slot_mapping(%sm : memref<?xi32>) k_scale(%ks : memref<?x2x16xf32>) -> k_cache(%kc : memref<?x2x16x32xf8E5M2>) v_cache(%vc : memref<?x2x16x32xf8E5M2>)
  return
}
func.func @contiguous_e4m3_unscaled(%kn: memref<?x1x?x16xf16>, %vn: memref<?x1x?x16xf16>, %lens: memref<?xi32>, %kc: memref<?x1x?x16xf8E4M3FN>, %vc: memref<?x1x?x16xf8E4M3FN>) {
  attn.cache_append k_new(%kn : memref<?x1x?x16xf16>) v_new(%vn : memref<?x1x?x16xf16>) kv_lens(%lens : memref<?xi32>) -> k_cache(%kc : memref<?x1x?x16xf8E4M3FN>) v_cache(%vc : memref<?x1x?x16xf8E4M3FN>)
  return
}

func.func @append_then_decode_e4m3(
    %q: memref<?x8x1x128xf16>, %kn: memref<?x2x1x128xf16>, %vn: memref<?x2x1x128xf16>,
    %bt: memref<?x?xi32>, %lens: memref<?xi32>, %lens1: memref<?xi32>,
    %ks: memref<?x2x16xf32>, %vs: memref<?x2x16xf32>,
    %kc: memref<?x2x16x128xf8E4M3FN>, %vc: memref<?x2x16x128xf8E4M3FN>,
    %o: memref<?x8x1x128xf16>, %lse: memref<?x8x1xf32>) {
  attn.cache_append k_new(%kn : memref<?x2x1x128xf16>) v_new(%vn : memref<?x2x1x128xf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                    k_scale(%ks : memref<?x2x16xf32>) v_scale(%vs : memref<?x2x16xf32>)
                 -> k_cache(%kc : memref<?x2x16x128xf8E4M3FN>) v_cache(%vc : memref<?x2x16x128xf8E4M3FN>)
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%kc : memref<?x2x16x128xf8E4M3FN>)
                 v(%vc : memref<?x2x16x128xf8E4M3FN>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens1 : memref<?xi32>)
                 k_scale(%ks : memref<?x2x16xf32>) v_scale(%vs : memref<?x2x16xf32>)
              -> o(%o : memref<?x8x1x128xf16>) lse(%lse : memref<?x8x1xf32>)
  return
}

func.func @append_then_prefill_i8(
    %q: memref<?x4x?x64xf32>, %kn: memref<?x1x?x64xf32>, %vn: memref<?x1x?x64xf32>,
    %lens: memref<?xi32>, %lens1: memref<?xi32>, %ks: memref<1xf32>, %vs: memref<?x1x?xf32>,
    %kc: memref<?x1x?x64xi8>, %vc: memref<?x1x?x64xi8>, %o: memref<?x4x?x64xf32>) {
  attn.cache_append k_new(%kn : memref<?x1x?x64xf32>) v_new(%vn : memref<?x1x?x64xf32>)
                    kv_lens(%lens : memref<?xi32>)
                    k_scale(%ks : memref<1xf32>) v_scale(%vs : memref<?x1x?xf32>)
                 -> k_cache(%kc : memref<?x1x?x64xi8>) v_cache(%vc : memref<?x1x?x64xi8>)
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%kc : memref<?x1x?x64xi8>)
                 v(%vc : memref<?x1x?x64xi8>) kv_lens(%lens1 : memref<?xi32>)
                 k_scale(%ks : memref<1xf32>) v_scale(%vs : memref<?x1x?xf32>)
              -> o(%o : memref<?x4x?x64xf32>)
                 mask = <causal, bottom_right>
  return
}
