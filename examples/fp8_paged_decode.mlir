// One decode step of Llama-3-8B (32 query heads, 8 K/V heads of 128)
// over vLLM's fp8 KV cache (kv_cache_dtype=fp8_e4m3): paged caches of
// 16-row pages holding one byte an element, with an f32 scale per token
// and head laid out like the cache without D ([num_blocks, 8, 16]); an
// element is its e4m3 value times its scale. Half the bytes of
// paged_decode.mlir's f16 cache. On NVIDIA it runs on the decode tier's
// tensor-core split kernel from sm_90, its bytes decoded into mma.sync
// fragments in registers (on sm_80 its 4 rows take the SIMT kernel, which
// attn-compile's note names); the C functions take k_scale and v_scale
// after kv_lens.
func.func @fp8_paged_decode(%q: memref<?x32x1x128xf16>,
                            %k_cache: memref<?x8x16x128xf8E4M3FN>,
                            %v_cache: memref<?x8x16x128xf8E4M3FN>,
                            %block_table: memref<?x?xi32>,
                            %kv_lens: memref<?xi32>,
                            %k_scale: memref<?x8x16xf32>,
                            %v_scale: memref<?x8x16xf32>,
                            %o: memref<?x32x1x128xf16>) {
  attn.attention q(%q : memref<?x32x1x128xf16>)
                 k(%k_cache : memref<?x8x16x128xf8E4M3FN>)
                 v(%v_cache : memref<?x8x16x128xf8E4M3FN>)
                 block_table(%block_table : memref<?x?xi32>)
                 kv_lens(%kv_lens : memref<?xi32>)
                 k_scale(%k_scale : memref<?x8x16xf32>)
                 v_scale(%v_scale : memref<?x8x16xf32>)
              -> o(%o : memref<?x32x1x128xf16>)
  return
}
