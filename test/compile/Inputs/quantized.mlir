func.func @fp8_decode(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf8E4M3FN>,
                      %v: memref<?x2x?x64xf8E4M3FN>, %ks: memref<f32>,
                      %vs: memref<f32>, %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf8E4M3FN>)
                 v(%v : memref<?x2x?x64xf8E4M3FN>)
                 k_scale(%ks : memref<f32>) v_scale(%vs : memref<f32>)
              -> o(%o : memref<?x8x1x64xf16>)
  return
}
