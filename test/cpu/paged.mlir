// Paged K/V caches: random block tables, block sizes 1, 16 and 64,
// per-sequence lengths (0 included), with and without split-K.
// Each RUN compiles one kernel with attn-to-cpu, runs it on fresh random
// inputs with NaN-poisoned outputs and checks it against the float64
// reference: ||o - ref|| / ||ref|| <= 1e-4 (f32) or 1e-2 (f16, bf16), LSE
// within 1e-3, -inf LSE and zero output for rows that see no key, and
// every output element written (attn-run exits 1 otherwise).
// RUN: attn-run %s --func=paged_bs1_gqa4_d64_f16 --batch=3 --kv-len=70
// RUN: attn-run %s --func=paged_bs1_gqa4_d64_f16 --batch=2 --kv-len=70 --num-splits=3 --block-kv=16
// RUN: attn-run %s --func=paged_bs16_gqa8_d128_f16_causal_br --batch=4 --kv-len=300
// RUN: attn-run %s --func=paged_bs16_gqa8_d128_f16_causal_br --batch=2 --kv-len=300 --num-splits=16
// RUN: attn-run %s --func=paged_bs16_gqa8_d128_f16_causal_br --batch=3 --kv-len=100 --kv-lens=0,17,100 --num-splits=3
// RUN: attn-run %s --func=paged_bs64_mha_d32_bf16 --batch=2 --kv-len=1000 --kv-chunk=128
// RUN: attn-run %s --func=paged_bs64_mha_d32_bf16 --batch=1 --kv-len=63
// RUN: attn-run %s --func=paged_bs16_prefill_gqa4_d64_f32_causal_br --batch=2 --q-len=7 --kv-len=90
// RUN: attn-run %s --func=paged_bs16_prefill_gqa4_d64_f32_causal_br --batch=2 --q-len=33 --kv-len=90 --block-q=16 --block-kv=16
// RUN: attn-run %s --func=paged_bs16_window_gqa4_d80_f16 --batch=3 --kv-len=200
// RUN: attn-run %s --func=paged_bs16_window_gqa4_d80_f16 --batch=2 --kv-len=200 --num-splits=3 --block-kv=16

func.func @paged_bs1_gqa4_d64_f16(%q: memref<?x8x1x64xf16>, %k: memref<?x2x1x64xf16>, %v: memref<?x2x1x64xf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x8x1x64xf16>, %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x1x64xf16>) v(%v : memref<?x2x1x64xf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x1x64xf16>) lse(%lse : memref<?x8x1xf32>)
  return
}

func.func @paged_bs16_gqa8_d128_f16_causal_br(%q: memref<?x8x1x128xf16>, %k: memref<?x1x16x128xf16>, %v: memref<?x1x16x128xf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x8x1x128xf16>, %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x1x16x128xf16>) v(%v : memref<?x1x16x128xf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x1x128xf16>) lse(%lse : memref<?x8x1xf32>) mask = <causal, bottom_right>
  return
}

func.func @paged_bs64_mha_d32_bf16(%q: memref<?x2x1x32xbf16>, %k: memref<?x2x64x32xbf16>, %v: memref<?x2x64x32xbf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x2x1x32xbf16>, %lse: memref<?x2x1xf32>) {
  attn.attention q(%q : memref<?x2x1x32xbf16>) k(%k : memref<?x2x64x32xbf16>) v(%v : memref<?x2x64x32xbf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x2x1x32xbf16>) lse(%lse : memref<?x2x1xf32>)
  return
}

func.func @paged_bs16_prefill_gqa4_d64_f32_causal_br(%q: memref<?x4x?x64xf32>, %k: memref<?x1x16x64xf32>, %v: memref<?x1x16x64xf32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x4x?x64xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x1x16x64xf32>) v(%v : memref<?x1x16x64xf32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x?x64xf32>) lse(%lse : memref<?x4x?xf32>) mask = <causal, bottom_right>
  return
}

func.func @paged_bs16_window_gqa4_d80_f16(%q: memref<?x4x1x80xf16>, %k: memref<?x1x16x80xf16>, %v: memref<?x1x16x80xf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %o: memref<?x4x1x80xf16>, %lse: memref<?x4x1xf32>) {
  attn.attention q(%q : memref<?x4x1x80xf16>) k(%k : memref<?x1x16x80xf16>) v(%v : memref<?x1x16x80xf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x4x1x80xf16>) lse(%lse : memref<?x4x1xf32>) mask = <window 50, 0, bottom_right>
  return
}

