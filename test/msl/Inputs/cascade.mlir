// Cascade attention from the msl tier's kernels (cascade.test): a prefix
// level and a causal suffix level over one paged cache, both over packed
// queries with an LSE, and the merges of their states.

func.func @prefix_f16(%q: memref<?x8x64xf16>, %k: memref<?x2x16x64xf16>, %v: memref<?x2x16x64xf16>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x8x64xf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x16x64xf16>) v(%v : memref<?x2x16x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<?x8xf32>)
  return
}

func.func @suffix_f16_causal(%q: memref<?x8x64xf16>, %k: memref<?x2x16x64xf16>, %v: memref<?x2x16x64xf16>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x8x64xf16>, %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x16x64xf16>) v(%v : memref<?x2x16x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right>
  return
}

// N dynamic: any chunk count.
func.func @merge_f16(%op: memref<?x?x8x64xf16>, %lp: memref<?x?x8xf32>, %o: memref<?x8x64xf16>, %l: memref<?x8xf32>) {
  attn.merge_states o_parts(%op : memref<?x?x8x64xf16>) lse_parts(%lp : memref<?x?x8xf32>)
                 -> o(%o : memref<?x8x64xf16>) lse(%l : memref<?x8xf32>)
  return
}

// f32 throughout, one level kernel for both (unmasked), N static.
func.func @level_f32(%q: memref<?x4x32xf32>, %k: memref<?x1x8x32xf32>, %v: memref<?x1x8x32xf32>, %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x4x32xf32>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x32xf32>) k(%k : memref<?x1x8x32xf32>) v(%v : memref<?x1x8x32xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x32xf32>) lse(%lse : memref<?x4xf32>)
  return
}

func.func @merge_f32(%op: memref<3x?x4x32xf32>, %lp: memref<3x?x4xf32>, %o: memref<?x4x32xf32>, %l: memref<?x4xf32>) {
  attn.merge_states o_parts(%op : memref<3x?x4x32xf32>) lse_parts(%lp : memref<3x?x4xf32>)
                 -> o(%o : memref<?x4x32xf32>) lse(%l : memref<?x4xf32>)
  return
}
