// Decode specs that keep the SIMT split kernel on sm_90 (decode-simt.test).
func.func @f32_gqa4(%q: memref<?x8x1x64xf32>, %k: memref<?x2x?x64xf32>,
                    %v: memref<?x2x?x64xf32>, %o: memref<?x8x1x64xf32>) {
  attn.attention q(%q : memref<?x8x1x64xf32>) k(%k : memref<?x2x?x64xf32>)
                 v(%v : memref<?x2x?x64xf32>) -> o(%o : memref<?x8x1x64xf32>)
  return
}
func.func @asked_simt(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                      %v: memref<?x2x?x64xf16>, %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x1x64xf16>)
                 schedule = <block_q = 4>
  return
}
