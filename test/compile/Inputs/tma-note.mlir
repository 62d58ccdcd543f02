// Prefill specs whose K/V no tensor map can read (tma-note.test).
func.func @paged(%q: memref<?x32x?x128xf16>, %k: memref<?x8x16x128xf16>,
                 %v: memref<?x8x16x128xf16>, %bt: memref<?x?xi32>,
                 %lens: memref<?xi32>, %o: memref<?x32x?x128xf16>) {
  attn.attention q(%q : memref<?x32x?x128xf16>) k(%k : memref<?x8x16x128xf16>)
                 v(%v : memref<?x8x16x128xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) -> o(%o : memref<?x32x?x128xf16>)
                 mask = <causal, bottom_right>
  return
}
func.func @lens(%q: memref<?x32x?x128xf16>, %k: memref<?x8x?x128xf16>,
                %v: memref<?x8x?x128xf16>, %lens: memref<?xi32>,
                %o: memref<?x32x?x128xf16>) {
  attn.attention q(%q : memref<?x32x?x128xf16>) k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>) kv_lens(%lens : memref<?xi32>)
                 -> o(%o : memref<?x32x?x128xf16>)
  return
}
