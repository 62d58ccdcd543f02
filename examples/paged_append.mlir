// One decode step's new K and V into the paged cache paged_decode.mlir
// reads (8 K/V heads of 128, pages of 16 rows): token kv_lens[b] of
// sequence b goes to block block_table[b, kv_lens[b] / 16], row
// kv_lens[b] % 16. The op does not update kv_lens: the engine adds 1 (the
// tokens it appended) before it runs paged_decode over them.
func.func @paged_append(%k_new: memref<?x8x1x128xf16>,
                        %v_new: memref<?x8x1x128xf16>,
                        %block_table: memref<?x?xi32>,
                        %kv_lens: memref<?xi32>,
                        %k_cache: memref<?x8x16x128xf16>,
                        %v_cache: memref<?x8x16x128xf16>) {
  attn.cache_append k_new(%k_new : memref<?x8x1x128xf16>)
                    v_new(%v_new : memref<?x8x1x128xf16>)
                    block_table(%block_table : memref<?x?xi32>)
                    kv_lens(%kv_lens : memref<?xi32>)
                 -> k_cache(%k_cache : memref<?x8x16x128xf16>)
                    v_cache(%v_cache : memref<?x8x16x128xf16>)
  return
}
