// The cache-append kernels bench/compare.py times against a device copy of
// the same bytes (the copy ceiling) and PyTorch indexing: a decode step
// (one token per sequence) and a prefill chunk, into contiguous and paged
// caches of 8 K/V heads of 128.
func.func @append_decode(%kn: memref<?x8x1x128xf16>, %vn: memref<?x8x1x128xf16>, %lens: memref<?xi32>, %kc: memref<?x8x?x128xf16>, %vc: memref<?x8x?x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x1x128xf16>) v_new(%vn : memref<?x8x1x128xf16>) kv_lens(%lens : memref<?xi32>) -> k_cache(%kc : memref<?x8x?x128xf16>) v_cache(%vc : memref<?x8x?x128xf16>)
  return
}
func.func @append_decode_paged(%kn: memref<?x8x1x128xf16>, %vn: memref<?x8x1x128xf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x1x128xf16>) v_new(%vn : memref<?x8x1x128xf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}
func.func @append_chunk(%kn: memref<?x8x?x128xf16>, %vn: memref<?x8x?x128xf16>, %lens: memref<?xi32>, %kc: memref<?x8x?x128xf16>, %vc: memref<?x8x?x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x?x128xf16>) v_new(%vn : memref<?x8x?x128xf16>) kv_lens(%lens : memref<?xi32>) -> k_cache(%kc : memref<?x8x?x128xf16>) v_cache(%vc : memref<?x8x?x128xf16>)
  return
}
func.func @append_chunk_paged(%kn: memref<?x8x?x128xf16>, %vn: memref<?x8x?x128xf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x?x128xf16>) v_new(%vn : memref<?x8x?x128xf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}
