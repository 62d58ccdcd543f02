// One kernel per reason attn-compile gives for a tier and tile: the
// defaults of a dynamic-Sq prefill, decode for few query rows per K/V
// head, and a schedule from the spec.
func.func @prefill_d128(%q: memref<?x4x?x128xf16>, %k: memref<?x4x?x128xf16>,
                        %v: memref<?x4x?x128xf16>, %o: memref<?x4x?x128xf16>) {
  attn.attention q(%q : memref<?x4x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x4x?x128xf16>)
                 mask = <causal>
  return
}

func.func @decode_gqa4(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                       %v: memref<?x2x?x64xf16>, %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x1x64xf16>)
  return
}

func.func @scheduled(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                     %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 64, block_kv = 32>
  return
}
