// Contiguous specs run by the MSL emulator tests (test/msl/*.test): every
// mask kind, GQA 1/4/8, f16/bf16/f32, soft-cap, kv_lens, LSE.

// MHA (GQA 1), no mask, f16, LSE.
func.func @mha_f16(%q: memref<?x2x?x32xf16>, %k: memref<?x2x?x32xf16>,
                   %v: memref<?x2x?x32xf16>, %o: memref<?x2x?x32xf16>,
                   %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x32xf16>) k(%k : memref<?x2x?x32xf16>)
                 v(%v : memref<?x2x?x32xf16>) -> o(%o : memref<?x2x?x32xf16>)
                 lse(%lse : memref<?x2x?xf32>)
  return
}

// GQA 4, causal bottom-right, f16, LSE (Sq > Sk leaves rows with no key).
func.func @gqa4_causal_f16(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                           %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>,
                           %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 lse(%lse : memref<?x8x?xf32>) mask = <causal, bottom_right>
  return
}

// GQA 8 (MQA), sliding window (7 left, 3 right, top-left), f32, LSE.
func.func @gqa8_window_f32(%q: memref<?x8x?x32xf32>, %k: memref<?x1x?x32xf32>,
                           %v: memref<?x1x?x32xf32>, %o: memref<?x8x?x32xf32>,
                           %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x32xf32>) k(%k : memref<?x1x?x32xf32>)
                 v(%v : memref<?x1x?x32xf32>) -> o(%o : memref<?x8x?x32xf32>)
                 lse(%lse : memref<?x8x?xf32>) mask = <window 7, 3>
  return
}

// Soft-cap with an explicit scale, causal top-left, f16, D = 64, Dv = 32.
func.func @softcap_f16(%q: memref<?x2x?x64xf16>, %k: memref<?x2x?x64xf16>,
                       %v: memref<?x2x?x32xf16>, %o: memref<?x2x?x32xf16>,
                       %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x32xf16>) -> o(%o : memref<?x2x?x32xf16>)
                 lse(%lse : memref<?x2x?xf32>)
                 scale = 0.5 mask = <causal> softcap = 2.0
  return
}

// GQA 4, bf16 inputs with an f32 output, ragged kv_lens, no LSE.
func.func @gqa4_lens_bf16(%q: memref<?x4x?x32xbf16>, %k: memref<?x1x?x32xbf16>,
                          %v: memref<?x1x?x32xbf16>, %lens: memref<?xi32>,
                          %o: memref<?x4x?x32xf32>) {
  attn.attention q(%q : memref<?x4x?x32xbf16>) k(%k : memref<?x1x?x32xbf16>)
                 v(%v : memref<?x1x?x32xbf16>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x4x?x32xf32>)
  return
}

// f32, ragged kv_lens, causal bottom-right, LSE: an empty sequence too.
func.func @lens_causal_f32(%q: memref<?x2x?x16xf32>, %k: memref<?x2x?x16xf32>,
                           %v: memref<?x2x?x16xf32>, %lens: memref<?xi32>,
                           %o: memref<?x2x?x16xf32>, %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x16xf32>) k(%k : memref<?x2x?x16xf32>)
                 v(%v : memref<?x2x?x16xf32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x2x?x16xf32>) lse(%lse : memref<?x2x?xf32>)
                 mask = <causal, bottom_right>
  return
}

// Static shapes (sizes come from the types), GQA 2, causal top-left, f32.
func.func @static_f32(%q: memref<2x4x8x16xf32>, %k: memref<2x2x24x16xf32>,
                      %v: memref<2x2x24x16xf32>, %o: memref<2x4x8x16xf32>,
                      %lse: memref<2x4x8xf32>) {
  attn.attention q(%q : memref<2x4x8x16xf32>) k(%k : memref<2x2x24x16xf32>)
                 v(%v : memref<2x2x24x16xf32>) -> o(%o : memref<2x4x8x16xf32>)
                 lse(%lse : memref<2x4x8xf32>) mask = <causal>
  return
}

// D = 24, f16: 24 halves are no power of two of 16-byte pieces, so the
// vector decode falls back to 8 lanes a key of 3 elements each, loaded
// one by one.
func.func @d24_f16(%q: memref<?x2x?x24xf16>, %k: memref<?x2x?x24xf16>,
                   %v: memref<?x2x?x24xf16>, %o: memref<?x2x?x24xf16>,
                   %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x24xf16>) k(%k : memref<?x2x?x24xf16>)
                 v(%v : memref<?x2x?x24xf16>) -> o(%o : memref<?x2x?x24xf16>)
                 lse(%lse : memref<?x2x?xf32>) mask = <causal, bottom_right>
  return
}
