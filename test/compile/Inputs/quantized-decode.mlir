// Quantized K/V caches through attn-compile (quantized.test): an fp8
// paged decode with per-token scales (vLLM's layout), an i8 contiguous
// decode with a per-tensor K scale and per-head V scales.
func.func @fp8_paged_decode(%q: memref<?x8x1x128xf16>,
                            %k: memref<?x2x16x128xf8E4M3FN>,
                            %v: memref<?x2x16x128xf8E4M3FN>,
                            %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                            %ks: memref<?x2x16xf32>, %vs: memref<?x2x16xf32>,
                            %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>)
                 k(%k : memref<?x2x16x128xf8E4M3FN>)
                 v(%v : memref<?x2x16x128xf8E4M3FN>)
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 k_scale(%ks : memref<?x2x16xf32>) v_scale(%vs : memref<?x2x16xf32>)
              -> o(%o : memref<?x8x1x128xf16>)
  return
}

func.func @i8_decode(%q: memref<?x4x1x64xbf16>, %k: memref<?x4x?x64xi8>,
                     %v: memref<?x4x?x64xi8>, %ks: memref<f32>,
                     %vs: memref<4xf32>, %o: memref<?x4x1x64xbf16>,
                     %lse: memref<?x4x1xf32>) {
  attn.attention q(%q : memref<?x4x1x64xbf16>) k(%k : memref<?x4x?x64xi8>)
                 v(%v : memref<?x4x?x64xi8>)
                 k_scale(%ks : memref<f32>) v_scale(%vs : memref<4xf32>)
              -> o(%o : memref<?x4x1x64xbf16>) lse(%lse : memref<?x4x1xf32>)
  return
}
