// Packed (varlen) kernels for varlen.test and varlen_check.c:
// FlashAttention's varlen prefill (Q and K/V packed by cu_seqlens, no
// max_q_len: prefill code, and decode code for a max_q_len hint of at most
// 16), chunked prefill of at most 4 new tokens a sequence against a paged
// cache (max_q_len 4: the decode tier), and a padded Q over packed K/V.
func.func @packed(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>,
                  %v: memref<?x2x64xf16>, %cq: memref<?xi32>,
                  %ck: memref<?xi32>, %o: memref<?x8x64xf16>,
                  %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>)
                 v(%v : memref<?x2x64xf16>)
                 cu_seqlens_q(%cq : memref<?xi32>)
                 cu_seqlens_k(%ck : memref<?xi32>)
              -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<?x8xf32>)
                 mask = <causal, bottom_right>
  return
}

func.func @chunked(%q: memref<?x8x64xf16>, %k: memref<?x2x16x64xf16>,
                   %v: memref<?x2x16x64xf16>, %cq: memref<?xi32>,
                   %table: memref<?x?xi32>, %lens: memref<?xi32>,
                   %o: memref<?x8x64xf16>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x16x64xf16>)
                 v(%v : memref<?x2x16x64xf16>)
                 cu_seqlens_q(%cq : memref<?xi32>)
                 block_table(%table : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x8x64xf16>) mask = <causal, bottom_right>
                 max_q_len = 4
  return
}

func.func @kv_packed(%q: memref<?x4x?x64xf16>, %k: memref<?x2x64xf16>,
                     %v: memref<?x2x64xf16>, %ck: memref<?xi32>,
                     %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x2x64xf16>)
                 v(%v : memref<?x2x64xf16>)
                 cu_seqlens_k(%ck : memref<?xi32>)
              -> o(%o : memref<?x4x?x64xf16>)
  return
}
