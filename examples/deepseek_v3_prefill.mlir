// DeepSeek-V3's prefill before absorption: 16 heads a GPU (128 under
// 8-way tensor parallelism), a query/key head of 192 (128 "no-position"
// values and 64 rotary ones) and a value head of 128, causal, bf16, with
// the LSE (chunked prefill merges it). The scale is the model's (1/sqrt(192)
// times YaRN's mscale squared).
func.func @deepseek_v3_prefill(%q: memref<?x16x?x192xbf16>,
                               %k: memref<?x16x?x192xbf16>,
                               %v: memref<?x16x?x128xbf16>,
                               %o: memref<?x16x?x128xbf16>,
                               %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x192xbf16>)
                 k(%k : memref<?x16x?x192xbf16>)
                 v(%v : memref<?x16x?x128xbf16>)
              -> o(%o : memref<?x16x?x128xbf16>)
                 lse(%lse : memref<?x16x?xf32>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}
