func.func @fp8_prefill(%q: memref<?x8x?x64xf8E4M3FN>, %k: memref<?x2x?x64xf8E4M3FN>,
                       %v: memref<?x2x?x64xf8E4M3FN>, %qs: memref<f32>,
                       %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf8E4M3FN>) k(%k : memref<?x2x?x64xf8E4M3FN>)
                 v(%v : memref<?x2x?x64xf8E4M3FN>) q_scale(%qs : memref<f32>)
              -> o(%o : memref<?x8x?x64xf16>)
  return
}
