// Decode step over a paged K/V cache (vLLM-style): one new query token per
// sequence, 32 query heads over 8 K/V heads, head dim 128, pages of 16 rows.
// block_table[b, i] names the cache block holding keys 16*i .. 16*i+15 of
// sequence b; kv_lens[b] is how many keys sequence b has.
func.func @paged_decode(%q: memref<?x32x1x128xf16>,
                        %k_cache: memref<?x8x16x128xf16>,
                        %v_cache: memref<?x8x16x128xf16>,
                        %block_table: memref<?x?xi32>,
                        %kv_lens: memref<?xi32>,
                        %o: memref<?x32x1x128xf16>) {
  attn.attention q(%q : memref<?x32x1x128xf16>)
                 k(%k_cache : memref<?x8x16x128xf16>)
                 v(%v_cache : memref<?x8x16x128xf16>)
                 block_table(%block_table : memref<?x?xi32>)
                 kv_lens(%kv_lens : memref<?xi32>)
              -> o(%o : memref<?x32x1x128xf16>)
                 mask = <causal, bottom_right>
  return
}
