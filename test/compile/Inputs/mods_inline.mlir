func.func @softcap_region(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                          %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask = <causal>
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cap = arith.constant 30.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
  return
}
func.func @prefix_lm_decode(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                            %v: memref<?x2x?x64xf16>, %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
              -> o(%o : memref<?x8x1x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c16 = arith.constant 16 : index
    %r = arith.cmpi slt, %j, %c16 : index
    attn.yield %r : i1
  }
  return
}
func.func @bias_region(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                       %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %c = arith.constant 0.125 : f32
    %bias = arith.mulf %df, %c : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 256 : index
    %causal = arith.cmpi sle, %j, %i : index
    %back = arith.subi %i, %j : index
    %near = arith.cmpi slt, %back, %w : index
    %r = arith.andi %causal, %near : i1
    attn.yield %r : i1
  }
  return
}
