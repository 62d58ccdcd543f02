// Kernels for abi_check.c: a prefill with LSE, a paged decode (workspace)
// and a prefill reading [B, S, H, D] memory through a strided layout.
func.func @prefill(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>,
                   %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 lse(%lse : memref<?x4x?xf32>) mask = <causal>
  return
}

func.func @decode(%q: memref<?x8x1x64xf16>, %k: memref<?x2x16x64xf16>,
                  %v: memref<?x2x16x64xf16>, %table: memref<?x?xi32>,
                  %lens: memref<?xi32>, %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x16x64xf16>)
                 v(%v : memref<?x2x16x64xf16>)
                 block_table(%table : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) -> o(%o : memref<?x8x1x64xf16>)
  return
}

func.func @strided(%o: memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>,
                   %q: memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>,
                   %k: memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>,
                   %v: memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>) {
  attn.attention q(%q : memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>)
                 k(%k : memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>)
                 v(%v : memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>)
              -> o(%o : memref<?x4x?x64xf16, strided<[?, 64, 256, 1]>>)
  return
}
