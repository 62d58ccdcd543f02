// Every form of attn.attention parses, prints and parses again to the same IR,
// in both the custom and the generic syntax.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @mha_defaults
// CHECK: attn.attention q(%{{.*}} : memref<2x8x128x64xf16>) k(%{{.*}} : memref<2x8x256x64xf16>) v(%{{.*}} : memref<2x8x256x64xf16>) -> o(%{{.*}} : memref<2x8x128x64xf16>){{$}}
func.func @mha_defaults(%q: memref<2x8x128x64xf16>, %k: memref<2x8x256x64xf16>,
                        %v: memref<2x8x256x64xf16>, %o: memref<2x8x128x64xf16>) {
  attn.attention q(%q : memref<2x8x128x64xf16>) k(%k : memref<2x8x256x64xf16>)
                 v(%v : memref<2x8x256x64xf16>) -> o(%o : memref<2x8x128x64xf16>)
  return
}

// CHECK-LABEL: func.func @gqa_causal_lse
// CHECK: attn.attention q(%{{.*}} : memref<?x32x?x128xbf16>) k(%{{.*}} : memref<?x8x?x128xbf16>) v(%{{.*}} : memref<?x8x?x128xbf16>) -> o(%{{.*}} : memref<?x32x?x128xbf16>) lse(%{{.*}} : memref<?x32x?xf32>) scale = 1.250000e-01 mask = <causal, bottom_right>{{$}}
func.func @gqa_causal_lse(%q: memref<?x32x?x128xbf16>, %k: memref<?x8x?x128xbf16>,
                          %v: memref<?x8x?x128xbf16>, %o: memref<?x32x?x128xbf16>,
                          %lse: memref<?x32x?xf32>) {
  attn.attention q(%q : memref<?x32x?x128xbf16>) k(%k : memref<?x8x?x128xbf16>)
                 v(%v : memref<?x8x?x128xbf16>) -> o(%o : memref<?x32x?x128xbf16>)
                 lse(%lse : memref<?x32x?xf32>) scale = 0.125 mask = <causal, bottom_right>
  return
}

// MQA, top-left causal (printed without alignment), soft-cap, f32 with an f32
// output; V's head dim differs from Q/K's.
// CHECK-LABEL: func.func @mqa_softcap_dv
// CHECK: mask = <causal> softcap = 3.000000e+01{{$}}
func.func @mqa_softcap_dv(%q: memref<1x16x?x192xf32>, %k: memref<1x1x?x192xf32>,
                          %v: memref<1x1x?x128xf32>, %o: memref<1x16x?x128xf32>) {
  attn.attention q(%q : memref<1x16x?x192xf32>) k(%k : memref<1x1x?x192xf32>)
                 v(%v : memref<1x1x?x128xf32>) -> o(%o : memref<1x16x?x128xf32>)
                 mask = <causal, top_left> softcap = 30.0
  return
}

// CHECK-LABEL: func.func @window
// CHECK: mask = <window 256, 16>{{$}}
func.func @window(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                  %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf32>)
                 mask = #attn.mask<window 256, 16>
  return
}

// Contiguous K/V with per-sequence lengths (variable-length batch).
// CHECK-LABEL: func.func @varlen
// CHECK: attn.attention q(%{{.*}} : memref<4x8x1x64xf16>) k(%{{.*}} : memref<4x8x?x64xf16>) v(%{{.*}} : memref<4x8x?x64xf16>) kv_lens(%{{.*}} : memref<4xi32>) -> o(%{{.*}} : memref<4x8x1x64xf16>)
func.func @varlen(%q: memref<4x8x1x64xf16>, %k: memref<4x8x?x64xf16>,
                  %v: memref<4x8x?x64xf16>, %lens: memref<4xi32>,
                  %o: memref<4x8x1x64xf16>) {
  attn.attention q(%q : memref<4x8x1x64xf16>) k(%k : memref<4x8x?x64xf16>)
                 v(%v : memref<4x8x?x64xf16>) kv_lens(%lens : memref<4xi32>)
              -> o(%o : memref<4x8x1x64xf16>)
  return
}

// CHECK-LABEL: func.func @paged
// CHECK: attn.attention q(%{{.*}} : memref<?x32x1x128xf16>) k(%{{.*}} : memref<?x8x16x128xf16>) v(%{{.*}} : memref<?x8x16x128xf16>) block_table(%{{.*}} : memref<?x?xi32>) kv_lens(%{{.*}} : memref<?xi32>) -> o(%{{.*}} : memref<?x32x1x128xf16>) lse(%{{.*}} : memref<?x32x1xf32>) mask = <window 128, 0, bottom_right>{{$}}
func.func @paged(%q: memref<?x32x1x128xf16>, %kc: memref<?x8x16x128xf16>,
                 %vc: memref<?x8x16x128xf16>, %bt: memref<?x?xi32>,
                 %lens: memref<?xi32>, %o: memref<?x32x1x128xf16>,
                 %lse: memref<?x32x1xf32>) {
  attn.attention q(%q : memref<?x32x1x128xf16>) k(%kc : memref<?x8x16x128xf16>)
                 v(%vc : memref<?x8x16x128xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) -> o(%o : memref<?x32x1x128xf16>)
                 lse(%lse : memref<?x32x1xf32>) mask = <window 128, 0, bottom_right>
  return
}

// [B, S, H, D] memory viewed as [B, H, S, D] through strides.
// CHECK-LABEL: func.func @strided_bshd
// CHECK: attn.attention q(%{{.*}} : memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>)
func.func @strided_bshd(%q: memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>,
                        %k: memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>,
                        %v: memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>,
                        %o: memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>) {
  attn.attention q(%q : memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>)
                 k(%k : memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>)
                 v(%v : memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>)
              -> o(%o : memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>)
  return
}

// CHECK-LABEL: func.func @mask_none_explicit
// CHECK: mask = <none>
func.func @mask_none_explicit(%q: memref<1x1x1x32xf16>, %k: memref<1x1x1x32xf16>,
                              %v: memref<1x1x1x32xf16>, %o: memref<1x1x1x32xf16>) {
  attn.attention q(%q : memref<1x1x1x32xf16>) k(%k : memref<1x1x1x32xf16>)
                 v(%v : memref<1x1x1x32xf16>) -> o(%o : memref<1x1x1x32xf16>)
                 mask = <none>
  return
}

// Packed (varlen) forms: packed Q and K/V; packed Q over a paged cache
// with max_q_len; packed K/V under a padded Q.
// CHECK-LABEL: func.func @packed_varlen
// CHECK: attn.attention q(%{{.*}} : memref<?x8x64xf16>) k(%{{.*}} : memref<?x2x64xf16>) v(%{{.*}} : memref<?x2x64xf16>) cu_seqlens_q(%{{.*}} : memref<?xi32>) cu_seqlens_k(%{{.*}} : memref<?xi32>) -> o(%{{.*}} : memref<?x8x64xf16>) lse(%{{.*}} : memref<?x8xf32>) mask = <causal, bottom_right>{{$}}
func.func @packed_varlen(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x64xf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right>
  return
}

// CHECK-LABEL: func.func @varlen_paged
// CHECK: attn.attention q(%{{.*}} : memref<?x8x64xf16>) k(%{{.*}} : memref<?x2x16x64xf16>) v(%{{.*}} : memref<?x2x16x64xf16>) cu_seqlens_q(%{{.*}} : memref<?xi32>) block_table(%{{.*}} : memref<?x?xi32>) kv_lens(%{{.*}} : memref<?xi32>) -> o(%{{.*}} : memref<?x8x64xf16>) max_q_len = 16{{$}}
func.func @varlen_paged(%q: memref<?x8x64xf16>, %k: memref<?x2x16x64xf16>, %v: memref<?x2x16x64xf16>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x8x64xf16>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x16x64xf16>) v(%v : memref<?x2x16x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x64xf16>) max_q_len = 16
  return
}

// CHECK-LABEL: func.func @varlen_kv_padded_q
// CHECK: attn.attention q(%{{.*}} : memref<?x8x?x64xf16>) k(%{{.*}} : memref<?x2x64xf16>) v(%{{.*}} : memref<?x2x64xf16>) cu_seqlens_k(%{{.*}} : memref<?xi32>) -> o(%{{.*}} : memref<?x8x?x64xf16>){{$}}
func.func @varlen_kv_padded_q(%q: memref<?x8x?x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %ck: memref<?xi32>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>)
      cu_seqlens_k(%ck : memref<?xi32>) -> o(%o : memref<?x8x?x64xf16>)
  return
}

// Attention sinks, one logit per query head, printed after kv_lens.
// CHECK-LABEL: func.func @sinks
// CHECK: attn.attention q(%{{.*}} : memref<?x8x?x64xf16>) k(%{{.*}} : memref<?x2x?x64xf16>) v(%{{.*}} : memref<?x2x?x64xf16>) kv_lens(%{{.*}} : memref<?xi32>) sinks(%{{.*}} : memref<8xbf16>) -> o(%{{.*}} : memref<?x8x?x64xf16>) lse(%{{.*}} : memref<?x8x?xf32>) mask = <window 128, 0>{{$}}
func.func @sinks(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                 %v: memref<?x2x?x64xf16>, %lens: memref<?xi32>,
                 %s: memref<8xbf16>, %o: memref<?x8x?x64xf16>,
                 %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) kv_lens(%lens : memref<?xi32>)
                 sinks(%s : memref<8xbf16>)
              -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>)
                 mask = <window 128, 0>
  return
}
