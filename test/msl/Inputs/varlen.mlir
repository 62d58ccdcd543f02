// Packed (varlen) specs for varlen.test: Q, O and LSE as [total_q, H, D]
// with cu_seqlens_q, K and V as [total_k, Hkv, D] with cu_seqlens_k, or a
// paged / contiguous K/V under a packed Q (chunked prefill), or a packed
// K/V under a padded Q.

// GQA 4, bottom-right causal (q_len > kv_len hides every key from a
// sequence's first queries), f16 with LSE.
func.func @packed_gqa4_causal_f16(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x64xf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right>
  return
}

// MHA, no mask, f32, Dv != D.
func.func @packed_mha_f32(%q: memref<?x4x32xf32>, %k: memref<?x4x32xf32>, %v: memref<?x4x48xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x4x48xf32>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x32xf32>) k(%k : memref<?x4x32xf32>) v(%v : memref<?x4x48xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x4x48xf32>) lse(%lse : memref<?x4xf32>)
  return
}

// GQA 8, a bottom-right sliding window and a soft-cap, f16, D 128.
func.func @packed_window_softcap_f16(%q: memref<?x8x128xf16>, %k: memref<?x1x128xf16>, %v: memref<?x1x128xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x128xf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x128xf16>) k(%k : memref<?x1x128xf16>) v(%v : memref<?x1x128xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x128xf16>) lse(%lse : memref<?x8xf32>) mask = <window 40, 0, bottom_right> softcap = 20.0
  return
}

// Chunked prefill: a packed Q over a paged cache of blocks of 16, GQA 4.
func.func @packed_paged_bs16_f16(%q: memref<?x4x64xf16>, %k: memref<?x1x16x64xf16>, %v: memref<?x1x16x64xf16>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x4x64xf16>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x64xf16>) k(%k : memref<?x1x16x64xf16>) v(%v : memref<?x1x16x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x64xf16>) lse(%lse : memref<?x4xf32>) mask = <causal, bottom_right>
  return
}

// A packed Q over a paged cache of one-row blocks, f32.
func.func @packed_paged_bs1_f32(%q: memref<?x2x32xf32>, %k: memref<?x2x1x32xf32>, %v: memref<?x2x1x32xf32>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x2x32xf32>) {
  attn.attention q(%q : memref<?x2x32xf32>) k(%k : memref<?x2x1x32xf32>) v(%v : memref<?x2x1x32xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x2x32xf32>) mask = <causal, bottom_right>
  return
}

// A packed Q over a contiguous K/V with kv_lens, f32.
func.func @packed_q_contiguous_kv_f32(%q: memref<?x4x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %cq: memref<?xi32>, %lens: memref<?xi32>, %o: memref<?x4x64xf32>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x64xf32>) k(%k : memref<?x2x?x64xf32>) v(%v : memref<?x2x?x64xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x64xf32>) lse(%lse : memref<?x4xf32>) mask = <causal, bottom_right>
  return
}

// A packed K/V under a padded Q, f32.
func.func @packed_kv_padded_q_f32(%q: memref<?x4x?x64xf32>, %k: memref<?x4x64xf32>, %v: memref<?x4x64xf32>, %ck: memref<?xi32>, %o: memref<?x4x?x64xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x4x64xf32>) v(%v : memref<?x4x64xf32>)
      cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x4x?x64xf32>) lse(%lse : memref<?x4x?xf32>) mask = <causal, bottom_right>
  return
}

// Decode shapes: max_q_len 1 over a paged cache (GQA 4), and 2 (speculative
// decode, GQA 4) over a packed K/V; the vector decode by default.
func.func @packed_decode_paged_f16(%q: memref<?x8x128xf16>, %k: memref<?x2x16x128xf16>, %v: memref<?x2x16x128xf16>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x8x128xf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x128xf16>) k(%k : memref<?x2x16x128xf16>) v(%v : memref<?x2x16x128xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x128xf16>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right> max_q_len = 1
  return
}

func.func @packed_spec2_f32(%q: memref<?x8x64xf32>, %k: memref<?x2x64xf32>, %v: memref<?x2x64xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x64xf32>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf32>) k(%k : memref<?x2x64xf32>) v(%v : memref<?x2x64xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x64xf32>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right> max_q_len = 2
  return
}

// A promise far past every sequence (max_q_len is legal up to 2^31-1):
// the host launches its own bound's tiles, not the promise's.
func.func @packed_promise_f16(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x64xf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right> max_q_len = 2147483647
  return
}
