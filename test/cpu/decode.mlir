// Decode (Sq = 1) and a few tokens: split-K with 1, 3 and 16 splits (some
// empty when the K/V length is short), chunked splits, per-sequence lengths.
// Each RUN compiles one kernel with attn-to-cpu, runs it on fresh random
// inputs with NaN-poisoned outputs and checks it against the float64
// reference: ||o - ref|| / ||ref|| <= 1e-4 (f32) or 1e-2 (f16, bf16), LSE
// within 1e-3, -inf LSE and zero output for rows that see no key, and
// every output element written (attn-run exits 1 otherwise).
// RUN: attn-run %s --func=decode_gqa4_d128_f16 --batch=2 --kv-len=1000 --num-splits=1
// RUN: attn-run %s --func=decode_gqa4_d128_f16 --batch=2 --kv-len=1000 --num-splits=3
// RUN: attn-run %s --func=decode_gqa4_d128_f16 --batch=1 --kv-len=300 --num-splits=16 --block-kv=32
// RUN: attn-run %s --func=decode_gqa4_d128_f16 --batch=1 --kv-len=5 --num-splits=16
// RUN: attn-run %s --func=decode_gqa4_d128_f16 --batch=3 --kv-len=777 --kv-chunk=128
// RUN: attn-run %s --func=decode_gqa4_d128_f16 --batch=1 --kv-len=64 --kv-chunk=64
// RUN: attn-run %s --func=decode_gqa8_d64_bf16_lens --batch=4 --kv-len=500 --num-splits=3
// RUN: attn-run %s --func=decode_gqa8_d64_bf16_lens --batch=3 --kv-len=500 --num-splits=3 --kv-lens=0,1,500
// RUN: attn-run %s --func=decode_mha_d32_f32 --batch=2 --kv-len=333 --num-splits=16 --block-kv=16
// RUN: attn-run %s --func=decode_mha_d32_f32 --batch=1 --kv-len=1
// RUN: attn-run %s --func=spec_decode_gqa4_d64_f16_causal_br --batch=2 --q-len=4 --kv-len=400 --num-splits=3
// RUN: attn-run %s --func=spec_decode_gqa4_d64_f16_causal_br --batch=1 --q-len=4 --kv-len=400 --kv-chunk=64 --block-kv=32
// The GPU decode tier's shapes (issue 18): MQA and speculative decode under
// GQA-8 in 16-row Q tiles, head dims that are multiples of 8, Dv != D.
// RUN: attn-run %s --func=decode_mqa64_d128_f16 --batch=2 --kv-len=700 --num-splits=5 --block-q=16
// RUN: attn-run %s --func=spec_decode_gqa8_d128_f16_causal_br --batch=2 --q-len=4 --kv-len=333 --num-splits=3 --block-q=16
// RUN: attn-run %s --func=spec_decode_gqa8_d128_f16_causal_br --batch=1 --q-len=16 --kv-len=40 --num-splits=7 --block-q=16
// RUN: attn-run %s --func=decode_gqa4_d40_dv72_bf16_lens --batch=3 --kv-len=290 --num-splits=4 --kv-lens=1,290,77
// RUN: attn-run %s --func=prefill_split_gqa4_d80_f32_window --batch=1 --q-len=130 --kv-len=130 --num-splits=3 --block-q=32 --block-kv=16

func.func @decode_gqa4_d128_f16(%q: memref<?x8x1x128xf16>, %k: memref<?x2x?x128xf16>, %v: memref<?x2x?x128xf16>, %o: memref<?x8x1x128xf16>, %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x2x?x128xf16>) v(%v : memref<?x2x?x128xf16>)
      -> o(%o : memref<?x8x1x128xf16>) lse(%lse : memref<?x8x1xf32>)
  return
}

func.func @decode_gqa8_d64_bf16_lens(%q: memref<?x8x1x64xbf16>, %k: memref<?x1x?x64xbf16>, %v: memref<?x1x?x64xbf16>, %lens: memref<?xi32>, %o: memref<?x8x1x64xbf16>, %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x64xbf16>) k(%k : memref<?x1x?x64xbf16>) v(%v : memref<?x1x?x64xbf16>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x1x64xbf16>) lse(%lse : memref<?x8x1xf32>)
  return
}

func.func @decode_mha_d32_f32(%q: memref<?x4x1x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x1x32xf32>, %lse: memref<?x4x1xf32>) {
  attn.attention q(%q : memref<?x4x1x32xf32>) k(%k : memref<?x4x?x32xf32>) v(%v : memref<?x4x?x32xf32>)
      -> o(%o : memref<?x4x1x32xf32>) lse(%lse : memref<?x4x1xf32>)
  return
}

func.func @spec_decode_gqa4_d64_f16_causal_br(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>) v(%v : memref<?x2x?x64xf16>)
      -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>) mask = <causal, bottom_right>
  return
}

func.func @prefill_split_gqa4_d80_f32_window(%q: memref<?x4x?x80xf32>, %k: memref<?x1x?x80xf32>, %v: memref<?x1x?x80xf32>, %o: memref<?x4x?x80xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x80xf32>) k(%k : memref<?x1x?x80xf32>) v(%v : memref<?x1x?x80xf32>)
      -> o(%o : memref<?x4x?x80xf32>) lse(%lse : memref<?x4x?xf32>) mask = <window 40, 8>
  return
}


func.func @decode_mqa64_d128_f16(%q: memref<?x64x1x128xf16>, %k: memref<?x1x?x128xf16>, %v: memref<?x1x?x128xf16>, %o: memref<?x64x1x128xf16>, %lse: memref<?x64x1xf32>) {
  attn.attention q(%q : memref<?x64x1x128xf16>) k(%k : memref<?x1x?x128xf16>) v(%v : memref<?x1x?x128xf16>)
      -> o(%o : memref<?x64x1x128xf16>) lse(%lse : memref<?x64x1xf32>)
  return
}

func.func @spec_decode_gqa8_d128_f16_causal_br(%q: memref<?x16x?x128xf16>, %k: memref<?x2x?x128xf16>, %v: memref<?x2x?x128xf16>, %o: memref<?x16x?x128xf16>, %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x2x?x128xf16>) v(%v : memref<?x2x?x128xf16>)
      -> o(%o : memref<?x16x?x128xf16>) lse(%lse : memref<?x16x?xf32>) mask = <causal, bottom_right>
  return
}

func.func @decode_gqa4_d40_dv72_bf16_lens(%q: memref<?x8x1x40xbf16>, %k: memref<?x2x?x40xbf16>, %v: memref<?x2x?x72xbf16>, %lens: memref<?xi32>, %o: memref<?x8x1x72xbf16>, %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x40xbf16>) k(%k : memref<?x2x?x40xbf16>) v(%v : memref<?x2x?x72xbf16>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x1x72xbf16>) lse(%lse : memref<?x8x1xf32>)
  return
}
