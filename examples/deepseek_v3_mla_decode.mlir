// DeepSeek-V3's multi-head latent attention, one decode step with the
// up-projections absorbed into the queries: each of the 16 query heads a
// GPU holds under 8-way tensor parallelism attends over one latent head of
// 576 values a token (512 "no-position" values, then 64 rotary ones), in
// 64-row pages (FlashMLA's). V is the first 512 columns of the same cache
// (`v_from_k`): no copy and no v argument. The scale is the model's,
// 1/sqrt(192) times YaRN's mscale squared (0.1352), not 1/sqrt(576).
// On NVIDIA it runs on the decode tier's tensor-core split kernel, its
// warps splitting Dv (a remark says it is not yet an MLA kernel; see
// docs/Specs.md); Metal refuses it.
func.func @deepseek_v3_mla_decode(%q: memref<?x16x1x576xbf16>,
                                  %latent_cache: memref<?x1x64x576xbf16>,
                                  %block_table: memref<?x?xi32>,
                                  %kv_lens: memref<?xi32>,
                                  %o: memref<?x16x1x512xbf16>,
                                  %lse: memref<?x16x1xf32>) {
  attn.attention q(%q : memref<?x16x1x576xbf16>)
                 k(%latent_cache : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%block_table : memref<?x?xi32>)
                 kv_lens(%kv_lens : memref<?xi32>)
              -> o(%o : memref<?x16x1x512xbf16>)
                 lse(%lse : memref<?x16x1xf32>)
                 scale = 0.1352
  return
}
