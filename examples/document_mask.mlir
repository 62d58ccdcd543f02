// Document masking: several documents packed into each sequence of the
// batch, each token attending only to earlier tokens of its own document.
// `doc_ids` [B, S] (a capture) gives each position's document; the
// mask_mod keeps keys of the query's document and the built-in causal mask
// keeps earlier ones (a key is visible when both say so).
func.func @document_mask(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                         %v: memref<?x8x?x64xf16>, %doc_ids: memref<?x?xi32>,
                         %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 captures(%doc_ids : memref<?x?xi32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask = <causal>
                 mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index,
       %docs: memref<?x?xi32>):
    %q_doc = memref.load %docs[%b, %q_idx] : memref<?x?xi32>
    %kv_doc = memref.load %docs[%b, %kv_idx] : memref<?x?xi32>
    %same = arith.cmpi eq, %q_doc, %kv_doc : i32
    attn.yield %same : i1
  }
  return
}
