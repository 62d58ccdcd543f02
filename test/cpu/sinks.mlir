// Attention sinks (GPT-OSS `sinks`, FlashAttention's `s_aux`) on the CPU:
// one logit per query head joins each row's softmax denominator (and its
// LSE) with no value. attn-run fills the sinks with fresh values in
// [-2, 4) (so a sink sometimes dominates its row), poisons the outputs
// with NaN and checks O and LSE against the float64 reference, which
// computes the sinks from their definition; it exits 1 otherwise. A row
// that sees no key must give O = 0 and LSE = its sink (empty_rows counts
// them: bottom-right causal masks with q_len > kv_len, and kv_lens of 0).
// Split-K runs check that the sink is added once, at the merge's finalize.
//
// MHA, f32, causal (top-left, every query sees key 0), f32 sinks.
// RUN: attn-run %s --func=mha_f32_causal --batch=2 --q-len=37 --kv-len=70 --block-q=16 --block-kv=16 | FileCheck %s
// RUN: attn-run %s --func=mha_f32_causal --batch=1 --q-len=90 --kv-len=40 --num-splits=3 --block-kv=16 | FileCheck %s
// GQA 8/2, f16 with f16 sinks, bottom-right causal with q_len > kv_len:
// the first queries see no key.
// RUN: attn-run %s --func=gqa4_f16_causal_br --batch=2 --q-len=70 --kv-len=50 | FileCheck %s --check-prefixes=CHECK,EMPTY
// RUN: attn-run %s --func=gqa4_f16_causal_br --batch=2 --q-len=70 --kv-len=50 --num-splits=4 --block-kv=16 | FileCheck %s --check-prefixes=CHECK,EMPTY
// RUN: attn-run %s --func=gqa4_f16_causal_br --batch=1 --q-len=40 --kv-len=300 --kv-chunk=64 --block-q=32 --block-kv=32 | FileCheck %s
// GQA 8/2, bf16 with bf16 sinks, a sliding window.
// RUN: attn-run %s --func=gqa4_bf16_window --batch=2 --q-len=100 --kv-len=160 --block-q=32 --block-kv=16 | FileCheck %s
// RUN: attn-run %s --func=gqa4_bf16_window --batch=1 --q-len=64 --kv-len=200 --num-splits=5 --block-kv=16 | FileCheck %s
// MQA decode over kv_lens with split-K: a sequence of 0 keys has only its
// sinks.
// RUN: attn-run %s --func=mqa_decode_lens --batch=4 --q-len=1 --kv-len=500 --kv-lens=0,1,250,500 --num-splits=4 --block-kv=32 | FileCheck %s --check-prefixes=CHECK,EMPTY
// RUN: attn-run %s --func=mqa_decode_lens --batch=3 --q-len=1 --kv-len=300 --kv-chunk=64 | FileCheck %s
// Packed (varlen) Q and K/V, bottom-right causal, with empty sequences and
// q_len > kv_len, with and without split-K.
// RUN: attn-run %s --func=varlen_gqa2_f16_causal_br --batch=4 --q-len=60 --kv-len=90 --q-lens=60,1,0,30 --kv-lens=20,90,5,0 --block-q=16 --block-kv=16 | FileCheck %s --check-prefixes=CHECK,EMPTY
// RUN: attn-run %s --func=varlen_gqa2_f16_causal_br --batch=3 --q-len=50 --kv-len=200 --num-splits=3 --block-kv=16 | FileCheck %s
// A paged cache, decode with split-K.
// RUN: attn-run %s --func=paged_gqa4_f16 --batch=3 --q-len=1 --kv-len=300 --kv-lens=300,17,0 --num-splits=3 | FileCheck %s --check-prefixes=CHECK,EMPTY
// The shipped example (GPT-OSS's sliding-window layer), chunked prefill
// (Sq < Sk) and split-K decode.
// RUN: attn-run %attn_src_root/examples/sinks.mlir --batch=1 --q-len=64 --kv-len=300 | FileCheck %s
// RUN: attn-run %attn_src_root/examples/sinks.mlir --batch=2 --q-len=1 --kv-len=400 --num-splits=3 | FileCheck %s
//
// CHECK: sinks seed={{[0-9]+}}: rel_err={{.*}} lse_err=
// EMPTY-SAME: empty_rows={{[1-9][0-9]*}}
// CHECK-SAME: unwritten=0 PASS

func.func @mha_f32_causal(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>,
                          %v: memref<?x4x?x32xf32>, %s: memref<4xf32>,
                          %o: memref<?x4x?x32xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x4x?x32xf32>)
                 v(%v : memref<?x4x?x32xf32>) sinks(%s : memref<4xf32>)
              -> o(%o : memref<?x4x?x32xf32>) lse(%lse : memref<?x4x?xf32>)
                 mask = <causal>
  return
}

func.func @gqa4_f16_causal_br(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                              %v: memref<?x2x?x64xf16>, %s: memref<8xf16>,
                              %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xf16>)
              -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>)
                 mask = <causal, bottom_right>
  return
}

func.func @gqa4_bf16_window(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xbf16>,
                            %v: memref<?x2x?x64xbf16>, %s: memref<8xbf16>,
                            %o: memref<?x8x?x64xbf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x2x?x64xbf16>)
                 v(%v : memref<?x2x?x64xbf16>) sinks(%s : memref<8xbf16>)
              -> o(%o : memref<?x8x?x64xbf16>) lse(%lse : memref<?x8x?xf32>)
                 mask = <window 24, 0>
  return
}

func.func @mqa_decode_lens(%q: memref<?x8x1x64xf16>, %k: memref<?x1x?x64xf16>,
                           %v: memref<?x1x?x64xf16>, %lens: memref<?xi32>,
                           %s: memref<8xf32>, %o: memref<?x8x1x64xf16>,
                           %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x1x?x64xf16>)
                 v(%v : memref<?x1x?x64xf16>) kv_lens(%lens : memref<?xi32>)
                 sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x1x64xf16>) lse(%lse : memref<?x8x1xf32>)
  return
}

func.func @varlen_gqa2_f16_causal_br(%q: memref<?x4x64xf16>, %k: memref<?x2x64xf16>,
                                     %v: memref<?x2x64xf16>, %cq: memref<?xi32>,
                                     %ck: memref<?xi32>, %s: memref<4xf32>,
                                     %o: memref<?x4x64xf16>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x64xf16>) k(%k : memref<?x2x64xf16>)
                 v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<?xi32>)
                 cu_seqlens_k(%ck : memref<?xi32>) sinks(%s : memref<4xf32>)
              -> o(%o : memref<?x4x64xf16>) lse(%lse : memref<?x4xf32>)
                 mask = <causal, bottom_right>
  return
}

func.func @paged_gqa4_f16(%q: memref<?x8x1x64xf16>, %k: memref<?x2x16x64xf16>,
                          %v: memref<?x2x16x64xf16>, %bt: memref<?x?xi32>,
                          %lens: memref<?xi32>, %s: memref<8xf32>,
                          %o: memref<?x8x1x64xf16>, %lse: memref<?x8x1xf32>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x16x64xf16>)
                 v(%v : memref<?x2x16x64xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x1x64xf16>) lse(%lse : memref<?x8x1xf32>)
  return
}
