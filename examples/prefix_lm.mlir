// Prefix-LM (T5/UniLM style): the first prefix_len[b] tokens of sequence b
// (the prompt) see each other in both directions, the rest attend
// causally. The per-sequence prefix lengths are a capture [B].
func.func @prefix_lm(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                     %v: memref<?x8x?x64xf16>, %prefix_len: memref<?xi32>,
                     %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 captures(%prefix_len : memref<?xi32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index,
       %lens: memref<?xi32>):
    %len = memref.load %lens[%b] : memref<?xi32>
    %prefix = arith.index_cast %len : i32 to index
    %in_prefix = arith.cmpi slt, %kv_idx, %prefix : index
    %causal = arith.cmpi sle, %kv_idx, %q_idx : index
    %visible = arith.ori %in_prefix, %causal : i1
    attn.yield %visible : i1
  }
  return
}
