// One small spec for planted-bugs.test: MHA (GQA 1), no mask, f16, LSE
// (mha_f16 of contiguous.mlir alone, so that each planted build is small).
func.func @mha_f16(%q: memref<?x2x?x32xf16>, %k: memref<?x2x?x32xf16>,
                   %v: memref<?x2x?x32xf16>, %o: memref<?x2x?x32xf16>,
                   %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x32xf16>) k(%k : memref<?x2x?x32xf16>)
                 v(%v : memref<?x2x?x32xf16>) -> o(%o : memref<?x2x?x32xf16>)
                 lse(%lse : memref<?x2x?xf32>)
  return
}
