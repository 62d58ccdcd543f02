// Multi-head latent attention through attn-compile (mla.test): DeepSeek-V3's
// absorbed decode, 16 query heads (8-way tensor parallelism) over one latent
// head of 576 values a token, V its first 512 (`v_from_k`), paged in
// 64-row pages (FlashMLA's), with the LSE; and two tokens a sequence
// (multi-token prediction) under the bottom-right causal mask.
func.func @mla_decode(%q: memref<?x16x1x576xbf16>,
                      %ckv: memref<?x1x64x576xbf16>,
                      %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                      %o: memref<?x16x1x512xbf16>, %lse: memref<?x16x1xf32>) {
  attn.attention q(%q : memref<?x16x1x576xbf16>)
                 k(%ckv : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x16x1x512xbf16>) lse(%lse : memref<?x16x1xf32>)
                 scale = 0.1352
  return
}

func.func @mla_mtp(%q: memref<?x16x2x576xbf16>,
                   %ckv: memref<?x1x64x576xbf16>,
                   %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                   %o: memref<?x16x2x512xbf16>, %lse: memref<?x16x2xf32>) {
  attn.attention q(%q : memref<?x16x2x576xbf16>)
                 k(%ckv : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x16x2x512xbf16>) lse(%lse : memref<?x16x2xf32>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}
