// Llama-3-8B-shaped causal prefill: 32 query heads share 8 K/V heads (GQA),
// head dim 128, f16. Batch and sequence lengths are chosen at run time.
// Each func.func is one kernel; its arguments become the kernel's C ABI.
func.func @llama3_8b_prefill(%q: memref<?x32x?x128xf16>,
                             %k: memref<?x8x?x128xf16>,
                             %v: memref<?x8x?x128xf16>,
                             %o: memref<?x32x?x128xf16>,
                             %lse: memref<?x32x?xf32>) {
  attn.attention q(%q : memref<?x32x?x128xf16>)
                 k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>)
              -> o(%o : memref<?x32x?x128xf16>)
                 lse(%lse : memref<?x32x?xf32>)
                 mask = <causal, bottom_right>
  return
}
