// Llama-3-8B decode at one query token: 32 query heads, 8 K/V heads, D 128,
// f16, contiguous K/V of any length (Sq static 1: --msl-kernel=auto picks
// the vector decode; a dynamic Sk gets its one- and two-pass variants).
func.func @llama3_decode(%q: memref<?x32x1x128xf16>, %k: memref<?x8x?x128xf16>,
                         %v: memref<?x8x?x128xf16>, %o: memref<?x32x1x128xf16>,
                         %lse: memref<?x32x1xf32>) {
  attn.attention q(%q : memref<?x32x1x128xf16>) k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>) -> o(%o : memref<?x32x1x128xf16>)
                 lse(%lse : memref<?x32x1xf32>) mask = <causal, bottom_right>
  return
}
