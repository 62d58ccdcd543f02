func.func @with_sinks(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                      %v: memref<?x2x?x64xf16>, %s: memref<8xf32>,
                      %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>) mask = <causal>
  return
}
