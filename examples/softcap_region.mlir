// Gemma-2-style logit soft-capping written as a score_mod: the score
// becomes 50 * tanh(score / 50). It computes what the built-in
// `softcap = 50.0` attribute does (test/cpu/mods.mlir checks both against
// the float64 reference); the attribute stays the fast path on every target.
func.func @softcap_region(%q: memref<?x8x?x128xf16>, %k: memref<?x4x?x128xf16>,
                          %v: memref<?x4x?x128xf16>, %o: memref<?x8x?x128xf16>) {
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>)
              -> o(%o : memref<?x8x?x128xf16>)
                 scale = 0.0625 mask = <causal>
                 score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %cap = arith.constant 50.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }
  return
}
