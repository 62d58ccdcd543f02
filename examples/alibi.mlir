// ALiBi (Press et al.): a causal prefill whose scores get a per-head linear
// bias on the keys' distance, bias = slope[h] * (kv_idx - q_idx) (<= 0
// under the causal mask). The slopes are a capture: the caller passes them
// (for H heads, 2^(-8 (h + 1) / H)), so one kernel serves any slope set.
// The C functions take the slopes as capture0 (examples' C ABI: the header).
func.func @alibi(%q: memref<?x16x?x64xf16>, %k: memref<?x16x?x64xf16>,
                 %v: memref<?x16x?x64xf16>, %slopes: memref<16xf32>,
                 %o: memref<?x16x?x64xf16>) {
  attn.attention q(%q : memref<?x16x?x64xf16>) k(%k : memref<?x16x?x64xf16>)
                 v(%v : memref<?x16x?x64xf16>)
                 captures(%slopes : memref<16xf32>)
              -> o(%o : memref<?x16x?x64xf16>)
                 mask = <causal>
                 score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index,
       %slope_of: memref<16xf32>):
    %slope = memref.load %slope_of[%h] : memref<16xf32>
    %distance = arith.subi %kv_idx, %q_idx : index
    %d64 = arith.index_cast %distance : index to i64
    %d = arith.sitofp %d64 : i64 to f32
    %bias = arith.mulf %slope, %d : f32
    %biased = arith.addf %score, %bias : f32
    attn.yield %biased : f32
  }
  return
}
