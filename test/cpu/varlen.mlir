// Packed (varlen) batches: Q, O and LSE as [total_q, H, D] with
// cu_seqlens_q, K and V as [total_k, Hkv, D] with cu_seqlens_k, or a
// padded/paged K/V under a packed Q (chunked prefill), or a packed K/V
// under a padded Q. attn-run draws each sequence's lengths (or takes
// --q-lens / --kv-lens), builds the offsets, packs exactly that many rows,
// poisons the outputs and checks every element against the float64
// reference (attn-run exits 1 otherwise). Empty and one-token sequences,
// sequences longer than a tile, and q_len > kv_len (a bottom-right causal
// mask hides every key from the first queries: O = 0, LSE = -inf) are
// all covered, with and without split-K.
// RUN: attn-run %s --func=varlen_gqa4_d64_f32_causal_br --batch=5 --q-len=70 --kv-len=150 --block-q=16 --block-kv=16
// RUN: attn-run %s --func=varlen_gqa4_d64_f32_causal_br --batch=4 --q-len=200 --kv-len=150 --q-lens=0,1,65,200 --kv-lens=0,5,64,150 --block-q=32 --block-kv=16
// RUN: attn-run %s --func=varlen_gqa4_d64_f32_causal_br --batch=3 --q-len=40 --kv-len=40 --q-lens=1,1,1 --kv-lens=1,17,40
// RUN: attn-run %s --func=varlen_gqa4_d64_f32_causal_br --batch=3 --q-len=90 --kv-len=300 --num-splits=3 --block-kv=16
// RUN: attn-run %s --func=varlen_mha_d128_f16 --batch=6 --q-len=100 --kv-len=130
// RUN: attn-run %s --func=varlen_mha_d128_f16 --batch=2 --q-len=100 --kv-len=130 --q-lens=100,0 --kv-lens=0,130
// RUN: attn-run %s --func=varlen_gqa8_d128_bf16_window_softcap --batch=4 --q-len=80 --kv-len=200 --block-q=16 --block-kv=32
// RUN: attn-run %s --func=varlen_gqa8_d128_bf16_window_softcap --batch=2 --q-len=80 --kv-len=200 --kv-chunk=64
// RUN: attn-run %s --func=varlen_causal_top_left_f32 --batch=4 --q-len=50 --kv-len=30 --q-lens=50,30,1,0 --kv-lens=30,30,30,7
// RUN: attn-run %s --func=varlen_causal_top_left_f32 --batch=3 --q-len=33 --kv-len=65
// RUN: attn-run %s --func=varlen_paged_bs16_gqa4_d64_f16_causal_br --batch=4 --q-len=40 --kv-len=120
// RUN: attn-run %s --func=varlen_paged_bs16_gqa4_d64_f16_causal_br --batch=3 --q-len=64 --kv-len=100 --q-lens=64,1,10 --kv-lens=100,1,5
// RUN: attn-run %s --func=varlen_paged_bs16_gqa4_d64_f16_causal_br --batch=2 --q-len=16 --kv-len=500 --num-splits=4 --block-kv=16
// RUN: attn-run %s --func=varlen_paged_bs1_mha_d32_f32 --batch=3 --q-len=9 --kv-len=40
// RUN: attn-run %s --func=varlen_paged_bs64_gqa2_d72_f16_window --batch=3 --q-len=70 --kv-len=260
// RUN: attn-run %s --func=varlen_q_over_contiguous_kv_lens --batch=3 --q-len=20 --kv-len=90 --block-q=16
// RUN: attn-run %s --func=varlen_q_over_contiguous_kv_lens --batch=3 --q-len=20 --kv-len=90 --kv-lens=0,90,45 --q-lens=20,0,3
// RUN: attn-run %s --func=varlen_kv_under_padded_q --batch=3 --q-len=12 --kv-len=80
// RUN: attn-run %s --func=varlen_kv_under_padded_q --batch=2 --q-len=12 --kv-len=80 --kv-lens=0,80 --num-splits=2
// RUN: attn-run %s --func=varlen_decode_max_q_len_1 --batch=7 --kv-len=300 --q-len=1
// RUN: attn-run %s --func=varlen_decode_max_q_len_1 --batch=3 --kv-len=300 --q-len=1 --q-lens=1,0,1 --num-splits=5
// RUN: attn-run %s --func=varlen_spec_max_q_len_4_gqa8 --batch=4 --kv-len=100 --q-len=4
// RUN: attn-run %s --func=varlen_mqa_d80_dv48 --batch=4 --q-len=30 --kv-len=60 --block-q=16 --block-kv=16
// RUN: attn-run %s --func=varlen_mqa_d80_dv48 --batch=2 --q-len=30 --kv-len=60 --q-lens=30,1 --kv-lens=1,60
// RUN: attn-run %s --func=varlen_strided_q_f16 --batch=3 --q-len=25 --kv-len=50
// The shipped example (examples/varlen_prefill.mlir, Llama-3-8B-shaped).
// RUN: attn-run %attn_src_root/examples/varlen_prefill.mlir --batch=4 --q-len=100 --kv-len=150

func.func @varlen_gqa4_d64_f32_causal_br(%q: memref<?x8x64xf32>, %k: memref<?x2x64xf32>, %v: memref<?x2x64xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x64xf32>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf32>) k(%k : memref<?x2x64xf32>) v(%v : memref<?x2x64xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x64xf32>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right>
  return
}

func.func @varlen_mha_d128_f16(%q: memref<?x4x128xf16>, %k: memref<?x4x128xf16>, %v: memref<?x4x128xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x4x128xf16>) {
  attn.attention q(%q : memref<?x4x128xf16>) k(%k : memref<?x4x128xf16>) v(%v : memref<?x4x128xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x4x128xf16>)
  return
}

func.func @varlen_gqa8_d128_bf16_window_softcap(%q: memref<?x8x128xbf16>, %k: memref<?x1x128xbf16>, %v: memref<?x1x128xbf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x128xbf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x128xbf16>) k(%k : memref<?x1x128xbf16>) v(%v : memref<?x1x128xbf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x128xbf16>) lse(%lse : memref<?x8xf32>) mask = <window 40, 0, bottom_right> softcap = 20.0
  return
}

func.func @varlen_causal_top_left_f32(%q: memref<?x2x32xf32>, %k: memref<?x2x32xf32>, %v: memref<?x2x32xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x2x32xf32>, %lse: memref<?x2xf32>) {
  attn.attention q(%q : memref<?x2x32xf32>) k(%k : memref<?x2x32xf32>) v(%v : memref<?x2x32xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x2x32xf32>) lse(%lse : memref<?x2xf32>) mask = <causal>
  return
}

func.func @varlen_paged_bs16_gqa4_d64_f16_causal_br(%q: memref<?x4x64xf16>, %k: memref<?x1x16x64xf16>, %v: memref<?x1x16x64xf16>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x4x64xf16>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x64xf16>) k(%k : memref<?x1x16x64xf16>) v(%v : memref<?x1x16x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x64xf16>) lse(%lse : memref<?x4xf32>) mask = <causal, bottom_right>
  return
}

func.func @varlen_paged_bs1_mha_d32_f32(%q: memref<?x2x32xf32>, %k: memref<?x2x1x32xf32>, %v: memref<?x2x1x32xf32>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x2x32xf32>) {
  attn.attention q(%q : memref<?x2x32xf32>) k(%k : memref<?x2x1x32xf32>) v(%v : memref<?x2x1x32xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x2x32xf32>) mask = <causal, bottom_right>
  return
}

func.func @varlen_paged_bs64_gqa2_d72_f16_window(%q: memref<?x4x72xf16>, %k: memref<?x2x64x72xf16>, %v: memref<?x2x64x72xf16>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x4x72xf16>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x72xf16>) k(%k : memref<?x2x64x72xf16>) v(%v : memref<?x2x64x72xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x72xf16>) lse(%lse : memref<?x4xf32>) mask = <window 100, 0, bottom_right>
  return
}

func.func @varlen_q_over_contiguous_kv_lens(%q: memref<?x4x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %cq: memref<?xi32>, %lens: memref<?xi32>, %o: memref<?x4x64xf32>) {
  attn.attention q(%q : memref<?x4x64xf32>) k(%k : memref<?x2x?x64xf32>) v(%v : memref<?x2x?x64xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x64xf32>) mask = <causal, bottom_right>
  return
}

func.func @varlen_kv_under_padded_q(%q: memref<?x4x?x64xf32>, %k: memref<?x4x64xf32>, %v: memref<?x4x64xf32>, %ck: memref<?xi32>, %o: memref<?x4x?x64xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x4x64xf32>) v(%v : memref<?x4x64xf32>)
      cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x4x?x64xf32>) lse(%lse : memref<?x4x?xf32>) mask = <causal, bottom_right>
  return
}

func.func @varlen_decode_max_q_len_1(%q: memref<?x8x128xf16>, %k: memref<?x2x16x128xf16>, %v: memref<?x2x16x128xf16>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x8x128xf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x128xf16>) k(%k : memref<?x2x16x128xf16>) v(%v : memref<?x2x16x128xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x128xf16>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right> max_q_len = 1
  return
}

func.func @varlen_spec_max_q_len_4_gqa8(%q: memref<?x8x64xf32>, %k: memref<?x1x64xf32>, %v: memref<?x1x64xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x64xf32>) {
  attn.attention q(%q : memref<?x8x64xf32>) k(%k : memref<?x1x64xf32>) v(%v : memref<?x1x64xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x64xf32>) mask = <causal, bottom_right> max_q_len = 4
  return
}

// MQA with Dv != D.
func.func @varlen_mqa_d80_dv48(%q: memref<?x6x80xf32>, %k: memref<?x1x80xf32>, %v: memref<?x1x48xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x6x48xf32>, %lse: memref<?x6xf32>) {
  attn.attention q(%q : memref<?x6x80xf32>) k(%k : memref<?x1x80xf32>) v(%v : memref<?x1x48xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x6x48xf32>) lse(%lse : memref<?x6xf32>) mask = <causal, bottom_right>
  return
}

// Q and O rows inside a wider token-major buffer (fused QKV projection).
func.func @varlen_strided_q_f16(%q: memref<?x4x64xf16, strided<[768, 64, 1]>>, %k: memref<?x4x64xf16>, %v: memref<?x4x64xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x4x64xf16>) {
  attn.attention q(%q : memref<?x4x64xf16, strided<[768, 64, 1]>>) k(%k : memref<?x4x64xf16>) v(%v : memref<?x4x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x4x64xf16>)
  return
}
