func.func @two(%q: memref<1x4x8x64xf16>, %k: memref<1x4x8x64xf16>,
               %v: memref<1x4x8x64xf16>, %o: memref<1x4x8x64xf16>) {
  attn.attention q(%q : memref<1x4x8x64xf16>) k(%k : memref<1x4x8x64xf16>)
                 v(%v : memref<1x4x8x64xf16>) -> o(%o : memref<1x4x8x64xf16>)
  attn.attention q(%q : memref<1x4x8x64xf16>) k(%k : memref<1x4x8x64xf16>)
                 v(%v : memref<1x4x8x64xf16>) -> o(%o : memref<1x4x8x64xf16>)
  return
}
