// Attention sinks on Metal (sinks.test): a GQA prefill with f32 sinks and
// the LSE, a paged bf16 decode with bf16 sinks, and a packed f32 batch
// under a window with f16 sinks.
func.func @prefill_gqa_f16(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %s: memref<8xf32>, %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>) v(%v : memref<?x2x?x64xf16>)
      sinks(%s : memref<8xf32>)
      -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>) mask = <causal, bottom_right>
  return
}

func.func @decode_paged_bf16(%q: memref<?x8x1x128xbf16>, %k: memref<?x2x16x128xbf16>, %v: memref<?x2x16x128xbf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %s: memref<8xbf16>, %o: memref<?x8x1x128xbf16>, %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x128xbf16>) k(%k : memref<?x2x16x128xbf16>) v(%v : memref<?x2x16x128xbf16>)
      block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>) sinks(%s : memref<8xbf16>)
      -> o(%o : memref<?x8x1x128xbf16>) lse(%lse : memref<?x8x1xf32>) mask = <causal, bottom_right>
  return
}

func.func @packed_window_f32(%q: memref<?x4x64xf32>, %k: memref<?x4x64xf32>, %v: memref<?x4x64xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>, %s: memref<4xf16>, %o: memref<?x4x64xf32>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x64xf32>) k(%k : memref<?x4x64xf32>) v(%v : memref<?x4x64xf32>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>) sinks(%s : memref<4xf16>)
      -> o(%o : memref<?x4x64xf32>) lse(%lse : memref<?x4xf32>) mask = <window 40, 0, bottom_right>
  return
}
