// A causal sliding window written as a mask_mod: query q_idx sees keys
// q_idx - 256 .. q_idx, what the built-in `mask = <window 256, 0>` says
// (test/cpu/mods.mlir checks that both give the same bits). The built-in
// mask also skips the K/V tiles outside the window; the mask_mod, not yet.
func.func @sliding_window_mask_mod(%q: memref<?x8x?x64xbf16>,
                                   %k: memref<?x2x?x64xbf16>,
                                   %v: memref<?x2x?x64xbf16>,
                                   %o: memref<?x8x?x64xbf16>) {
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x2x?x64xbf16>)
                 v(%v : memref<?x2x?x64xbf16>)
              -> o(%o : memref<?x8x?x64xbf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %window = arith.constant 256 : index
    %causal = arith.cmpi sle, %kv_idx, %q_idx : index
    %back = arith.subi %q_idx, %kv_idx : index
    %near = arith.cmpi sle, %back, %window : index
    %visible = arith.andi %causal, %near : i1
    attn.yield %visible : i1
  }
  return
}
