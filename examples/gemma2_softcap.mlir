// Gemma-2-style attention with logit soft-capping (50.0) and an explicit
// scale, reading Q/K/V from [B, S, H, D] buffers through strided views:
// the memref is [B, H, S, D] but its strides walk the [B, S, H, D] memory.
func.func @gemma2_softcap(
    %q: memref<?x8x?x256xf16, strided<[?, 256, 2048, 1]>>,
    %k: memref<?x4x?x256xf16, strided<[?, 256, 1024, 1]>>,
    %v: memref<?x4x?x256xf16, strided<[?, 256, 1024, 1]>>,
    %o: memref<?x8x?x256xf16, strided<[?, 256, 2048, 1]>>) {
  attn.attention q(%q : memref<?x8x?x256xf16, strided<[?, 256, 2048, 1]>>)
                 k(%k : memref<?x4x?x256xf16, strided<[?, 256, 1024, 1]>>)
                 v(%v : memref<?x4x?x256xf16, strided<[?, 256, 1024, 1]>>)
              -> o(%o : memref<?x8x?x256xf16, strided<[?, 256, 2048, 1]>>)
                 scale = 0.0625 mask = <causal> softcap = 50.0
  return
}
