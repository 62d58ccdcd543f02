// The kernels bench/compare.py times against PyTorch SDPA: the prefill
// grid of DESIGN.md (B x S = 16k tokens, hidden 2048: 16 heads of 128, 32
// of 64 or 8 of 256; causal and not), the small prefill B1 H8 S512 D64,
// and decode with 32 query heads over 8 K/V heads of 128 (contiguous, and
// paged in 16-key blocks); MQA and speculative decode.
func.func @prefill_h16_d128(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
  return
}
func.func @prefill_h16_d128_causal(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>) mask = <causal>
  return
}
func.func @prefill_h8_d256(%q: memref<?x8x?x256xf16>, %k: memref<?x8x?x256xf16>, %v: memref<?x8x?x256xf16>, %o: memref<?x8x?x256xf16>) {
  attn.attention q(%q : memref<?x8x?x256xf16>) k(%k : memref<?x8x?x256xf16>) v(%v : memref<?x8x?x256xf16>) -> o(%o : memref<?x8x?x256xf16>)
  return
}
func.func @prefill_h8_d256_causal(%q: memref<?x8x?x256xf16>, %k: memref<?x8x?x256xf16>, %v: memref<?x8x?x256xf16>, %o: memref<?x8x?x256xf16>) {
  attn.attention q(%q : memref<?x8x?x256xf16>) k(%k : memref<?x8x?x256xf16>) v(%v : memref<?x8x?x256xf16>) -> o(%o : memref<?x8x?x256xf16>) mask = <causal>
  return
}
func.func @prefill_h32_d64(%q: memref<?x32x?x64xf16>, %k: memref<?x32x?x64xf16>, %v: memref<?x32x?x64xf16>, %o: memref<?x32x?x64xf16>) {
  attn.attention q(%q : memref<?x32x?x64xf16>) k(%k : memref<?x32x?x64xf16>) v(%v : memref<?x32x?x64xf16>) -> o(%o : memref<?x32x?x64xf16>)
  return
}
func.func @prefill_h32_d64_causal(%q: memref<?x32x?x64xf16>, %k: memref<?x32x?x64xf16>, %v: memref<?x32x?x64xf16>, %o: memref<?x32x?x64xf16>) {
  attn.attention q(%q : memref<?x32x?x64xf16>) k(%k : memref<?x32x?x64xf16>) v(%v : memref<?x32x?x64xf16>) -> o(%o : memref<?x32x?x64xf16>) mask = <causal>
  return
}
func.func @prefill_h8_d64(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>, %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>) v(%v : memref<?x8x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
  return
}
func.func @decode_h32_kv8_d128(%q: memref<?x32x1x128xf16>, %k: memref<?x8x?x128xf16>, %v: memref<?x8x?x128xf16>, %o: memref<?x32x1x128xf16>) {
  attn.attention q(%q : memref<?x32x1x128xf16>) k(%k : memref<?x8x?x128xf16>) v(%v : memref<?x8x?x128xf16>) -> o(%o : memref<?x32x1x128xf16>)
  return
}
// MQA (64 query heads over one K/V head: four 16-row Q tiles) and
// speculative decode (4 queries per sequence under GQA-8: two Q tiles),
// both on the split-K decode tier.
func.func @decode_h64_kv1_d128(%q: memref<?x64x1x128xf16>, %k: memref<?x1x?x128xf16>, %v: memref<?x1x?x128xf16>, %o: memref<?x64x1x128xf16>) {
  attn.attention q(%q : memref<?x64x1x128xf16>) k(%k : memref<?x1x?x128xf16>) v(%v : memref<?x1x?x128xf16>) -> o(%o : memref<?x64x1x128xf16>)
  return
}
func.func @decode_spec4_h32_kv4_d128(%q: memref<?x32x4x128xf16>, %k: memref<?x4x?x128xf16>, %v: memref<?x4x?x128xf16>, %o: memref<?x32x4x128xf16>) {
  attn.attention q(%q : memref<?x32x4x128xf16>) k(%k : memref<?x4x?x128xf16>) v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x32x4x128xf16>)
  return
}
// Paged decode: the same GQA-4 decode over a cache of 16-key blocks.
func.func @decode_paged16_h32_kv8_d128(%q: memref<?x32x1x128xf16>, %k: memref<?x8x16x128xf16>, %v: memref<?x8x16x128xf16>, %block_table: memref<?x?xi32>, %kv_lens: memref<?xi32>, %o: memref<?x32x1x128xf16>) {
  attn.attention q(%q : memref<?x32x1x128xf16>) k(%k : memref<?x8x16x128xf16>) v(%v : memref<?x8x16x128xf16>) block_table(%block_table : memref<?x?xi32>) kv_lens(%kv_lens : memref<?xi32>) -> o(%o : memref<?x32x1x128xf16>)
  return
}
