
// vLLM's reshape_and_cache: packed tokens to their slots.
func.func @slots_f16(%kn: memref<?x2x64xf16>, %vn: memref<?x2x64xf16>,
                     %slots: memref<?xi32>,
                     %kc: memref<?x2x16x64xf16>, %vc: memref<?x2x16x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x2x64xf16>) v_new(%vn : memref<?x2x64xf16>)
                    slot_mapping(%slots : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x16x64xf16>) v_cache(%vc : memref<?x2x16x64xf16>)
  return
}
