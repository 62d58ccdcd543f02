func.func @view(%q: memref<1x4x8x64xf16>, %kv: memref<2x1x4x8x64xf16>,
                %o: memref<1x4x8x64xf16>) {
  %k = memref.subview %kv[0, 0, 0, 0, 0] [1, 1, 4, 8, 64] [1, 1, 1, 1, 1]
      : memref<2x1x4x8x64xf16> to memref<1x4x8x64xf16, strided<[2048, 512, 64, 1]>>
  %v = memref.subview %kv[1, 0, 0, 0, 0] [1, 1, 4, 8, 64] [1, 1, 1, 1, 1]
      : memref<2x1x4x8x64xf16> to memref<1x4x8x64xf16, strided<[2048, 512, 64, 1], offset: 2048>>
  attn.attention q(%q : memref<1x4x8x64xf16>)
                 k(%k : memref<1x4x8x64xf16, strided<[2048, 512, 64, 1]>>)
                 v(%v : memref<1x4x8x64xf16, strided<[2048, 512, 64, 1], offset: 2048>>)
              -> o(%o : memref<1x4x8x64xf16>)
  return
}
