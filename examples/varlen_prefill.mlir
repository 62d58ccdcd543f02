// A Llama-3-8B-shaped ragged prefill batch: the tokens of every sequence
// packed back to back (FlashAttention's varlen layout), with the offsets
// of each sequence's rows in cu_seqlens_q / cu_seqlens_k.
func.func @varlen_prefill(%q: memref<?x32x128xf16>, %k: memref<?x8x128xf16>,
                          %v: memref<?x8x128xf16>, %cq: memref<?xi32>,
                          %ck: memref<?xi32>, %o: memref<?x32x128xf16>,
                          %lse: memref<?x32xf32>) {
  attn.attention q(%q : memref<?x32x128xf16>)
                 k(%k : memref<?x8x128xf16>)
                 v(%v : memref<?x8x128xf16>)
                 cu_seqlens_q(%cq : memref<?xi32>)
                 cu_seqlens_k(%ck : memref<?xi32>)
              -> o(%o : memref<?x32x128xf16>)
                 lse(%lse : memref<?x32xf32>)
                 mask = <causal, bottom_right>
  return
}
