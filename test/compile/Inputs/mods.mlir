func.func @alibi(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                 %v: memref<?x8x?x64xf16>, %slopes: memref<8xf32>,
                 %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 captures(%slopes : memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: memref<8xf32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %r = arith.addf %s, %slope : f32
    attn.yield %r : f32
  }
  return
}
