// bench/mla_compare.py's kernels (DeepSeek-V3): the absorbed MLA decode
// with 16 query heads (8-way tensor parallelism; bound by memory) and with
// 128 (one GPU, or Hq * Sq >= 64: bound by compute), over a latent cache
// of 576 in 64-row pages whose first 512 columns are V; and the prefill
// before absorption (D192 / Dv128, causal).
func.func @mla_decode_h16(%q: memref<?x16x1x576xbf16>,
                          %latent_cache: memref<?x1x64x576xbf16>,
                          %block_table: memref<?x?xi32>, %kv_lens: memref<?xi32>,
                          %o: memref<?x16x1x512xbf16>, %lse: memref<?x16x1xf32>) {
  attn.attention q(%q : memref<?x16x1x576xbf16>)
                 k(%latent_cache : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%block_table : memref<?x?xi32>)
                 kv_lens(%kv_lens : memref<?xi32>)
              -> o(%o : memref<?x16x1x512xbf16>) lse(%lse : memref<?x16x1xf32>)
                 scale = 0.1352
  return
}

func.func @mla_decode_h128(%q: memref<?x128x1x576xbf16>,
                           %latent_cache: memref<?x1x64x576xbf16>,
                           %block_table: memref<?x?xi32>, %kv_lens: memref<?xi32>,
                           %o: memref<?x128x1x512xbf16>, %lse: memref<?x128x1xf32>) {
  attn.attention q(%q : memref<?x128x1x576xbf16>)
                 k(%latent_cache : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%block_table : memref<?x?xi32>)
                 kv_lens(%kv_lens : memref<?xi32>)
              -> o(%o : memref<?x128x1x512xbf16>) lse(%lse : memref<?x128x1xf32>)
                 scale = 0.1352
  return
}

func.func @deepseek_v3_prefill(%q: memref<?x16x?x192xbf16>,
                               %k: memref<?x16x?x192xbf16>,
                               %v: memref<?x16x?x128xbf16>,
                               %o: memref<?x16x?x128xbf16>,
                               %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x192xbf16>)
                 k(%k : memref<?x16x?x192xbf16>)
                 v(%v : memref<?x16x?x128xbf16>)
              -> o(%o : memref<?x16x?x128xbf16>) lse(%lse : memref<?x16x?xf32>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}
