// GPT-OSS-style attention with sinks: each query head has a learned logit
// (`sinks`, FlashAttention's `s_aux`) that joins the softmax denominator
// and carries no value, so a head can put weight on "nothing"; the LSE
// counts it. GQA 64/8, head dim 64, bf16, the sliding-window layer (the
// query and the 127 keys before it, bottom-right aligned for chunked
// prefill). Every backend takes it: the CPU lowering, the Metal emitter
// and attn-compile (the NVIDIA tiers; its C functions take `sinks`).
func.func @gpt_oss_sinks(%q: memref<?x64x?x64xbf16>,
                         %k: memref<?x8x?x64xbf16>,
                         %v: memref<?x8x?x64xbf16>,
                         %sinks: memref<64xf32>,
                         %o: memref<?x64x?x64xbf16>,
                         %lse: memref<?x64x?xf32>) {
  attn.attention q(%q : memref<?x64x?x64xbf16>)
                 k(%k : memref<?x8x?x64xbf16>)
                 v(%v : memref<?x8x?x64xbf16>)
                 sinks(%sinks : memref<64xf32>)
              -> o(%o : memref<?x64x?x64xbf16>)
                 lse(%lse : memref<?x64x?xf32>)
                 mask = <window 127, 0, bottom_right>
  return
}
