// Strided (token-major) Q/K/V/O specs run by the MSL emulator tests: the
// buffers are [B, S, H, D] in memory, viewed as [B, H, S, D] through
// strides, as the NVIDIA tiers take them. Dynamic strides reach the kernels
// through the AttnStrides buffer; the host leaves gaps between rows.

// Token-major Q/O [B, S, 8, 64] and K/V [B, S, 2, 64] (GQA 4), causal
// bottom-right, f16, LSE.
func.func @token_major_f16(%q: memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>,
                           %k: memref<?x2x?x64xf16, strided<[?, 64, 128, 1]>>,
                           %v: memref<?x2x?x64xf16, strided<[?, 64, 128, 1]>>,
                           %o: memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>,
                           %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>)
                 k(%k : memref<?x2x?x64xf16, strided<[?, 64, 128, 1]>>)
                 v(%v : memref<?x2x?x64xf16, strided<[?, 64, 128, 1]>>)
              -> o(%o : memref<?x8x?x64xf16, strided<[?, 64, 512, 1]>>)
                 lse(%lse : memref<?x8x?xf32>) mask = <causal, bottom_right>
  return
}

// Every stride dynamic (GQA 2, sliding window, f32, ragged kv_lens): the
// host picks head-major rows with gaps between them.
func.func @dynamic_strides_f32(%q: memref<?x4x?x32xf32, strided<[?, ?, ?, 1]>>,
                               %k: memref<?x2x?x32xf32, strided<[?, ?, ?, 1]>>,
                               %v: memref<?x2x?x32xf32, strided<[?, ?, ?, 1]>>,
                               %lens: memref<?xi32>,
                               %o: memref<?x4x?x32xf32, strided<[?, ?, ?, 1]>>) {
  attn.attention q(%q : memref<?x4x?x32xf32, strided<[?, ?, ?, 1]>>)
                 k(%k : memref<?x2x?x32xf32, strided<[?, ?, ?, 1]>>)
                 v(%v : memref<?x2x?x32xf32, strided<[?, ?, ?, 1]>>)
                 kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x4x?x32xf32, strided<[?, ?, ?, 1]>>)
                 mask = <window 30, 2>
  return
}

// Llama-3-8B's own decode layout: Q/O [B, S, 32, 128], K/V [B, S, 8, 128].
func.func @llama3_token_major(%q: memref<?x32x?x128xf16, strided<[?, 128, 4096, 1]>>,
                              %k: memref<?x8x?x128xf16, strided<[?, 128, 1024, 1]>>,
                              %v: memref<?x8x?x128xf16, strided<[?, 128, 1024, 1]>>,
                              %o: memref<?x32x?x128xf16, strided<[?, 128, 4096, 1]>>) {
  attn.attention q(%q : memref<?x32x?x128xf16, strided<[?, 128, 4096, 1]>>)
                 k(%k : memref<?x8x?x128xf16, strided<[?, 128, 1024, 1]>>)
                 v(%v : memref<?x8x?x128xf16, strided<[?, 128, 1024, 1]>>)
              -> o(%o : memref<?x32x?x128xf16, strided<[?, 128, 4096, 1]>>)
                 mask = <causal, bottom_right>
  return
}

// Rows 24 bytes apart (12 halves; D = 8): not 16-byte aligned, so the tile
// copies fall back to elements and the vector decode to 8-byte half4 loads
// (one lane a key, 32 keys a simdgroup at a time).
func.func @misaligned_f16(%q: memref<?x2x?x8xf16, strided<[?, 12, 24, 1]>>,
                          %k: memref<?x2x?x8xf16, strided<[?, 12, 24, 1]>>,
                          %v: memref<?x2x?x8xf16, strided<[?, 12, 24, 1]>>,
                          %o: memref<?x2x?x8xf16, strided<[?, 12, 24, 1]>>) {
  attn.attention q(%q : memref<?x2x?x8xf16, strided<[?, 12, 24, 1]>>)
                 k(%k : memref<?x2x?x8xf16, strided<[?, 12, 24, 1]>>)
                 v(%v : memref<?x2x?x8xf16, strided<[?, 12, 24, 1]>>)
              -> o(%o : memref<?x2x?x8xf16, strided<[?, 12, 24, 1]>>)
  return
}
