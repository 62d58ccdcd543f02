// Prefill: ragged lengths, Sq != Sk, masks, GQA group sizes 1/2/4/8,
// head dims 32..256, Dv != D, f16/bf16/f32, LSE, tile sizes 1..256.
// Each RUN compiles one kernel with attn-to-cpu, runs it on fresh random
// inputs with NaN-poisoned outputs and checks it against the float64
// reference: ||o - ref|| / ||ref|| <= 1e-4 (all f32) or 1e-2 (any f16 or
// bf16 input or O), LSE within 1e-3 of max(1, |LSE|), -inf LSE and zero
// output for rows that see no key, and every output element written
// (attn-run exits 1 otherwise).
// RUN: attn-run %s --func=mha_d32_f32 --batch=2 --q-len=113 --kv-len=203
// RUN: attn-run %s --func=mha_d32_f32 --batch=1 --q-len=1 --kv-len=239
// RUN: attn-run %s --func=mha_d32_f32 --batch=1 --q-len=799 --kv-len=3 --block-q=32 --block-kv=16
// RUN: attn-run %s --func=mha_d32_f32 --batch=3 --q-len=64 --kv-len=64
// RUN: attn-run %s --func=gqa4_d64_f16_causal --batch=2 --q-len=113 --kv-len=203
// RUN: attn-run %s --func=gqa4_d64_f16_causal --batch=1 --q-len=203 --kv-len=113
// RUN: attn-run %s --func=gqa4_d64_f16_causal --batch=1 --q-len=257 --kv-len=257 --block-q=32 --block-kv=64
// RUN: attn-run %s --func=gqa8_d128_bf16_causal_br --batch=1 --q-len=37 --kv-len=300
// RUN: attn-run %s --func=gqa8_d128_bf16_causal_br --batch=2 --q-len=20 --kv-len=5
// RUN: attn-run %s --func=gqa8_d128_bf16_causal_br --batch=1 --q-len=1 --kv-len=1023 --block-kv=128
// RUN: attn-run %s --func=mha_d80_f16_window --batch=1 --q-len=150 --kv-len=150 --block-q=16 --block-kv=16
// RUN: attn-run %s --func=mha_d80_f16_window --batch=2 --q-len=40 --kv-len=90
// RUN: attn-run %s --func=gqa4_d64_f32_window_br --batch=1 --q-len=31 --kv-len=200 --block-q=16 --block-kv=32
// RUN: attn-run %s --func=gqa4_d64_f32_window_br --batch=1 --q-len=100 --kv-len=60
// RUN: attn-run %s --func=gqa2_d256_f16_softcap --batch=1 --q-len=67 --kv-len=67 --block-q=32 --block-kv=32
// RUN: attn-run %s --func=gqa2_d256_f16_softcap --batch=1 --q-len=1 --kv-len=130
// RUN: attn-run %s --func=mqa_d128_f16_dv64 --batch=2 --q-len=50 --kv-len=77
// RUN: attn-run %s --func=mqa_d128_f16_dv64 --batch=1 --q-len=1023 --kv-len=1024 --block-q=128 --block-kv=128
// RUN: attn-run %s --func=mha_d64_bf16_none --batch=2 --q-len=65 --kv-len=129 --block-q=1 --block-kv=8
// RUN: attn-run %s --func=mha_d64_bf16_none --batch=1 --q-len=128 --kv-len=128 --block-q=256 --block-kv=256
// RUN: attn-run %s --func=gqa4_d32_f32_lens_causal_br --batch=4 --q-len=9 --kv-len=100
// RUN: attn-run %s --func=gqa4_d32_f32_lens_causal_br --batch=3 --q-len=9 --kv-len=100 --kv-lens=0,5,100

func.func @mha_d32_f32(%q: memref<?x2x?x32xf32>, %k: memref<?x2x?x32xf32>, %v: memref<?x2x?x32xf32>, %o: memref<?x2x?x32xf32>, %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x32xf32>) k(%k : memref<?x2x?x32xf32>) v(%v : memref<?x2x?x32xf32>)
      -> o(%o : memref<?x2x?x32xf32>) lse(%lse : memref<?x2x?xf32>)
  return
}

func.func @gqa4_d64_f16_causal(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>) v(%v : memref<?x2x?x64xf16>)
      -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>) mask = <causal>
  return
}

func.func @gqa8_d128_bf16_causal_br(%q: memref<?x8x?x128xbf16>, %k: memref<?x1x?x128xbf16>, %v: memref<?x1x?x128xbf16>, %o: memref<?x8x?x128xbf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x128xbf16>) k(%k : memref<?x1x?x128xbf16>) v(%v : memref<?x1x?x128xbf16>)
      -> o(%o : memref<?x8x?x128xbf16>) lse(%lse : memref<?x8x?xf32>) mask = <causal, bottom_right>
  return
}

func.func @mha_d80_f16_window(%q: memref<?x3x?x80xf16>, %k: memref<?x3x?x80xf16>, %v: memref<?x3x?x80xf16>, %o: memref<?x3x?x80xf16>, %lse: memref<?x3x?xf32>) {
  attn.attention q(%q : memref<?x3x?x80xf16>) k(%k : memref<?x3x?x80xf16>) v(%v : memref<?x3x?x80xf16>)
      -> o(%o : memref<?x3x?x80xf16>) lse(%lse : memref<?x3x?xf32>) mask = <window 17, 4>
  return
}

func.func @gqa4_d64_f32_window_br(%q: memref<?x4x?x64xf32>, %k: memref<?x1x?x64xf32>, %v: memref<?x1x?x64xf32>, %o: memref<?x4x?x64xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x1x?x64xf32>) v(%v : memref<?x1x?x64xf32>)
      -> o(%o : memref<?x4x?x64xf32>) lse(%lse : memref<?x4x?xf32>) mask = <window 33, 0, bottom_right>
  return
}

func.func @gqa2_d256_f16_softcap(%q: memref<?x4x?x256xf16>, %k: memref<?x2x?x256xf16>, %v: memref<?x2x?x256xf16>, %o: memref<?x4x?x256xf16>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x256xf16>) k(%k : memref<?x2x?x256xf16>) v(%v : memref<?x2x?x256xf16>)
      -> o(%o : memref<?x4x?x256xf16>) lse(%lse : memref<?x4x?xf32>) scale = 0.2 mask = <causal> softcap = 30.0
  return
}

func.func @mqa_d128_f16_dv64(%q: memref<?x8x?x128xf16>, %k: memref<?x1x?x128xf16>, %v: memref<?x1x?x64xf16>, %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x1x?x128xf16>) v(%v : memref<?x1x?x64xf16>)
      -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>)
  return
}

func.func @mha_d64_bf16_none(%q: memref<?x2x?x64xbf16>, %k: memref<?x2x?x64xbf16>, %v: memref<?x2x?x64xbf16>, %o: memref<?x2x?x64xbf16>) {
  attn.attention q(%q : memref<?x2x?x64xbf16>) k(%k : memref<?x2x?x64xbf16>) v(%v : memref<?x2x?x64xbf16>)
      -> o(%o : memref<?x2x?x64xbf16>)
  return
}

func.func @gqa4_d32_f32_lens_causal_br(%q: memref<?x4x?x32xf32>, %k: memref<?x1x?x32xf32>, %v: memref<?x1x?x32xf32>, %lens: memref<?xi32>, %o: memref<?x4x?x32xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x1x?x32xf32>) v(%v : memref<?x1x?x32xf32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x?x32xf32>) lse(%lse : memref<?x4x?xf32>) mask = <causal, bottom_right>
  return
}

