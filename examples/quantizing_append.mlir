// One decode step's new K and V (f16) into fp8_paged_decode.mlir's fp8
// cache: each appended row is quantized with a scale of its own
// (absmax / 448, written into k_scale / v_scale beside the cache, where
// attn.attention reads it), its elements the e4m3 bytes nearest
// x / scale. Runs on the CPU pipeline; the GPU append kernels do not
// quantize yet and refuse it by name.
func.func @quantizing_append(%k_new: memref<?x8x1x128xf16>,
                             %v_new: memref<?x8x1x128xf16>,
                             %block_table: memref<?x?xi32>,
                             %kv_lens: memref<?xi32>,
                             %k_cache: memref<?x8x16x128xf8E4M3FN>,
                             %v_cache: memref<?x8x16x128xf8E4M3FN>,
                             %k_scale: memref<?x8x16xf32>,
                             %v_scale: memref<?x8x16xf32>) {
  attn.cache_append k_new(%k_new : memref<?x8x1x128xf16>)
                    v_new(%v_new : memref<?x8x1x128xf16>)
                    block_table(%block_table : memref<?x?xi32>)
                    kv_lens(%kv_lens : memref<?xi32>)
                    k_scale(%k_scale : memref<?x8x16xf32>)
                    v_scale(%v_scale : memref<?x8x16xf32>)
                 -> k_cache(%k_cache : memref<?x8x16x128xf8E4M3FN>)
                    v_cache(%v_cache : memref<?x8x16x128xf8E4M3FN>)
  return
}
