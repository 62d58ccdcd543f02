// Paged K/V decode specs run by the MSL emulator tests: one query token per
// sequence (Sq static 1, so --msl-kernel=auto picks the decode kernel).

// GQA 4, pages of 16 rows, causal bottom-right, f16, LSE.
func.func @paged_gqa4_f16(%q: memref<?x8x1x64xf16>, %k: memref<?x2x16x64xf16>,
                          %v: memref<?x2x16x64xf16>, %table: memref<?x?xi32>,
                          %lens: memref<?xi32>, %o: memref<?x8x1x64xf16>,
                          %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x16x64xf16>)
                 v(%v : memref<?x2x16x64xf16>)
                 block_table(%table : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x8x1x64xf16>) lse(%lse : memref<?x8x1xf32>)
                 mask = <causal, bottom_right>
  return
}

// GQA 8, pages of 8 rows, sliding window of 40 keys (bottom-right), f32.
func.func @paged_gqa8_f32(%q: memref<?x8x1x32xf32>, %k: memref<?x1x8x32xf32>,
                          %v: memref<?x1x8x32xf32>, %table: memref<?x?xi32>,
                          %lens: memref<?xi32>, %o: memref<?x8x1x32xf32>,
                          %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x32xf32>) k(%k : memref<?x1x8x32xf32>)
                 v(%v : memref<?x1x8x32xf32>)
                 block_table(%table : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x8x1x32xf32>) lse(%lse : memref<?x8x1xf32>)
                 mask = <window 40, 0, bottom_right>
  return
}
