// attn.cache_append specs for the msl tier (append.test).
func.func @contiguous_f16(%kn: memref<?x4x?x64xf16>, %vn: memref<?x4x?x64xf16>,
                          %lens: memref<?xi32>, %kc: memref<?x4x?x64xf16>,
                          %vc: memref<?x4x?x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x4x?x64xf16>) v_new(%vn : memref<?x4x?x64xf16>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x4x?x64xf16>) v_cache(%vc : memref<?x4x?x64xf16>)
  return
}

func.func @decode_ragged_f32(%kn: memref<?x2x1x128xf32>, %vn: memref<?x2x1x96xf32>,
                             %lens: memref<?xi32>, %n: memref<?xi32>,
                             %kc: memref<?x2x40x128xf32>, %vc: memref<?x2x40x96xf32>) {
  attn.cache_append k_new(%kn : memref<?x2x1x128xf32>) v_new(%vn : memref<?x2x1x96xf32>)
                    kv_lens(%lens : memref<?xi32>) new_lens(%n : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x40x128xf32>) v_cache(%vc : memref<?x2x40x96xf32>)
  return
}

func.func @paged_bs16_bf16(%kn: memref<?x2x?x64xbf16>, %vn: memref<?x2x?x64xbf16>,
                           %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                           %kc: memref<?x2x16x64xbf16>, %vc: memref<?x2x16x64xbf16>) {
  attn.cache_append k_new(%kn : memref<?x2x?x64xbf16>) v_new(%vn : memref<?x2x?x64xbf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x16x64xbf16>) v_cache(%vc : memref<?x2x16x64xbf16>)
  return
}

func.func @paged_ragged_d6_f16(%kn: memref<?x1x?x6xf16>, %vn: memref<?x1x?x6xf16>,
                               %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                               %n: memref<?xi32>,
                               %kc: memref<?x1x4x6xf16>, %vc: memref<?x1x4x6xf16>) {
  attn.cache_append k_new(%kn : memref<?x1x?x6xf16>) v_new(%vn : memref<?x1x?x6xf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                    new_lens(%n : memref<?xi32>)
                 -> k_cache(%kc : memref<?x1x4x6xf16>) v_cache(%vc : memref<?x1x4x6xf16>)
  return
}

// vLLM's reshape_and_cache: packed tokens to their slots.
func.func @slots_f16(%kn: memref<?x2x64xf16>, %vn: memref<?x2x64xf16>,
                     %slots: memref<?xi32>,
                     %kc: memref<?x2x16x64xf16>, %vc: memref<?x2x16x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x2x64xf16>) v_new(%vn : memref<?x2x64xf16>)
                    slot_mapping(%slots : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x16x64xf16>) v_cache(%vc : memref<?x2x16x64xf16>)
  return
}
