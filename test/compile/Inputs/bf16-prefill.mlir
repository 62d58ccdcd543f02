func.func @bf16_prefill(%q: memref<?x4x?x64xbf16>, %k: memref<?x4x?x64xbf16>,
                        %v: memref<?x4x?x64xbf16>, %o: memref<?x4x?x64xbf16>) {
  attn.attention q(%q : memref<?x4x?x64xbf16>) k(%k : memref<?x4x?x64xbf16>)
                 v(%v : memref<?x4x?x64xbf16>) -> o(%o : memref<?x4x?x64xbf16>)
  return
}
