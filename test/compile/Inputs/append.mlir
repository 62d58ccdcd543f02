// Cache-append kernels for append_check.c: one decode step into a
// contiguous cache, a ragged chunk into a paged cache, and packed tokens
// through a slot mapping.
func.func @decode_append(%kn: memref<?x8x1x128xf16>, %vn: memref<?x8x1x128xf16>,
                         %lens: memref<?xi32>, %kc: memref<?x8x?x128xf16>,
                         %vc: memref<?x8x?x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x1x128xf16>) v_new(%vn : memref<?x8x1x128xf16>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x8x?x128xf16>) v_cache(%vc : memref<?x8x?x128xf16>)
  return
}

func.func @paged_append(%kn: memref<?x2x?x64xf16>, %vn: memref<?x2x?x64xf16>,
                        %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                        %n: memref<?xi32>, %kc: memref<?x2x16x64xf16>,
                        %vc: memref<?x2x16x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x2x?x64xf16>) v_new(%vn : memref<?x2x?x64xf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                    new_lens(%n : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x16x64xf16>) v_cache(%vc : memref<?x2x16x64xf16>)
  return
}

func.func @slots_append(%kn: memref<?x4x64xf16>, %vn: memref<?x4x64xf16>,
                        %slots: memref<?xi32>, %kc: memref<?x4x16x64xf16>,
                        %vc: memref<?x4x16x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x4x64xf16>) v_new(%vn : memref<?x4x64xf16>)
                    slot_mapping(%slots : memref<?xi32>)
                 -> k_cache(%kc : memref<?x4x16x64xf16>) v_cache(%vc : memref<?x4x16x64xf16>)
  return
}
