// Mistral-style sliding-window prefill: each query sees itself and the 4096
// keys before it (left 4096, right 0), bottom-right aligned so chunked
// prefill (Sq < Sk) lines up with the end of the K/V sequence. bf16, GQA 32/8.
func.func @sliding_window_prefill(%q: memref<?x32x?x128xbf16>,
                                  %k: memref<?x8x?x128xbf16>,
                                  %v: memref<?x8x?x128xbf16>,
                                  %o: memref<?x32x?x128xbf16>) {
  attn.attention q(%q : memref<?x32x?x128xbf16>)
                 k(%k : memref<?x8x?x128xbf16>)
                 v(%v : memref<?x8x?x128xbf16>)
              -> o(%o : memref<?x32x?x128xbf16>)
                 mask = <window 4096, 0, bottom_right>
  return
}
