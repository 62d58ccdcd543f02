// A D128 prefill without a mask: on sm_90a its one-role 64x64 wgmma
// alternative is launched first up to a K/V length of 512.
func.func @prefill(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>,
                   %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>)
                 v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
  return
}
