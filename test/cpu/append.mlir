// attn.cache_append on the CPU: contiguous and paged caches, ragged
// appends, tokens past the capacity or the block table, blocks outside the
// cache, negative kv_lens, and the slot-mapping form. Each RUN compiles one kernel with attn-to-cpu,
// runs it on fresh random new tokens into NaN-poisoned caches and checks
// every cache element against the reference append, exactly: the new rows
// hold the new tokens, every other element is still poison (attn-run
// prints wrong=0 clobbered=0 and exits 1 otherwise).
//
// The append_then_* kernels append and then run attn.attention over the
// appended caches with kv_lens + n (its own argument): O is checked
// against the reference attention over the old rows followed by the new.
//
// RUN: attn-run %s --func=contiguous_decode_f16 --batch=5 --kv-len=40 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=contiguous_decode_f16 --batch=3 --kv-len=40 --kv-lens=0,39,40 --seed=1 | FileCheck %s --check-prefix=EDGE
// RUN: attn-run %s --func=contiguous_decode_f16 --batch=2 --kv-len=8 --kv-lens=-5,100 | FileCheck %s --check-prefix=NEG
// RUN: attn-run %s --func=contiguous_prefill_bf16 --batch=2 --new-len=37 --kv-len=50 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=contiguous_prefill_bf16 --batch=2 --new-len=37 --kv-len=50 --kv-lens=13,30 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=ragged_f32_dv --batch=4 --new-len=9 --kv-len=20 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=ragged_f32_dv --batch=4 --new-len=9 --kv-len=20 --new-lens=0,-3,9,100 --kv-lens=0,5,15,2 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=paged_bs16_f16 --batch=3 --new-len=21 --kv-len=64 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=paged_bs16_f16 --batch=3 --new-len=21 --kv-len=64 --kv-lens=60,0,33 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=paged_bs16_f16 --batch=4 --new-len=40 --kv-len=64 --kv-lens=30,30,0,1 --invalid-blocks=4 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=paged_bs1_ragged_bf16 --batch=3 --new-len=6 --kv-len=10 --invalid-blocks=2 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=slots_paged_f16 --batch=6 --new-len=50 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=slots_paged_f16 --batch=6 --new-len=50 --invalid-blocks=3 | FileCheck %s --check-prefix=SLOTS
// RUN: attn-run %s --func=slots_contiguous_f32 --batch=3 --new-len=30 --kv-len=10 --invalid-blocks=1 | FileCheck %s --check-prefix=OK
// RUN: attn-run %s --func=append_then_decode_contiguous --batch=3 --kv-len=50 | FileCheck %s --check-prefix=ATTN
// RUN: attn-run %s --func=append_then_decode_paged --batch=4 --kv-len=70 --block-kv=16 | FileCheck %s --check-prefix=ATTN
// RUN: attn-run %s --func=append_then_decode_paged --batch=2 --kv-len=70 --kv-lens=0,69 --num-splits=3 | FileCheck %s --check-prefix=ATTN
// RUN: attn-run %s --func=append_then_prefill_paged_ragged --batch=3 --new-len=20 --q-len=20 --kv-len=90 | FileCheck %s --check-prefix=ATTN
// RUN: attn-run %s --func=append_then_prefill_paged_ragged --batch=2 --new-len=20 --q-len=20 --kv-len=90 --new-lens=20,0 --kv-lens=0,40 | FileCheck %s --check-prefix=ATTN

// OK: wrong=0 clobbered=0 PASS
// The sequence with 40 of 40 rows full writes nothing; 39 writes one row.
// EDGE: rows_written=16 elements_written=4096 wrong=0 clobbered=0 PASS
// A negative kv_lens counts as 0; a length past the capacity writes nothing.
// NEG: rows_written=8 {{.*}} wrong=0 clobbered=0 PASS
// ATTN: wrong=0 clobbered=0; attention {{.*}} unwritten=0 PASS
// Slots -1, past the cache, -1 are skipped: 47 of 50 tokens, 4 heads.
// SLOTS: T=50 slots=6x16 {{.*}} rows_written=188 {{.*}} wrong=0 clobbered=0 PASS

func.func @contiguous_decode_f16(%kn: memref<?x8x1x128xf16>, %vn: memref<?x8x1x128xf16>,
                                 %lens: memref<?xi32>, %kc: memref<?x8x?x128xf16>,
                                 %vc: memref<?x8x?x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x1x128xf16>) v_new(%vn : memref<?x8x1x128xf16>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x8x?x128xf16>) v_cache(%vc : memref<?x8x?x128xf16>)
  return
}

// New tokens as [B, S, H, D] (the layout a QKV projection writes).
func.func @contiguous_prefill_bf16(%kn: memref<?x2x?x64xbf16, strided<[?, 64, 128, 1]>>,
                                   %vn: memref<?x2x?x64xbf16, strided<[?, 64, 128, 1]>>,
                                   %lens: memref<?xi32>, %kc: memref<?x2x?x64xbf16>,
                                   %vc: memref<?x2x?x64xbf16>) {
  attn.cache_append k_new(%kn : memref<?x2x?x64xbf16, strided<[?, 64, 128, 1]>>)
                    v_new(%vn : memref<?x2x?x64xbf16, strided<[?, 64, 128, 1]>>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x?x64xbf16>) v_cache(%vc : memref<?x2x?x64xbf16>)
  return
}

func.func @ragged_f32_dv(%kn: memref<?x3x?x32xf32>, %vn: memref<?x3x?x48xf32>,
                         %lens: memref<?xi32>, %n: memref<?xi32>,
                         %kc: memref<?x3x?x32xf32>, %vc: memref<?x3x?x48xf32>) {
  attn.cache_append k_new(%kn : memref<?x3x?x32xf32>) v_new(%vn : memref<?x3x?x48xf32>)
                    kv_lens(%lens : memref<?xi32>) new_lens(%n : memref<?xi32>)
                 -> k_cache(%kc : memref<?x3x?x32xf32>) v_cache(%vc : memref<?x3x?x48xf32>)
  return
}

func.func @paged_bs16_f16(%kn: memref<?x4x?x64xf16>, %vn: memref<?x4x?x64xf16>,
                          %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                          %kc: memref<?x4x16x64xf16>, %vc: memref<?x4x16x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x4x?x64xf16>) v_new(%vn : memref<?x4x?x64xf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x4x16x64xf16>) v_cache(%vc : memref<?x4x16x64xf16>)
  return
}

func.func @paged_bs1_ragged_bf16(%kn: memref<?x1x?x16xbf16>, %vn: memref<?x1x?x16xbf16>,
                                 %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                                 %n: memref<?xi32>,
                                 %kc: memref<?x1x1x16xbf16>, %vc: memref<?x1x1x16xbf16>) {
  attn.cache_append k_new(%kn : memref<?x1x?x16xbf16>) v_new(%vn : memref<?x1x?x16xbf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                    new_lens(%n : memref<?xi32>)
                 -> k_cache(%kc : memref<?x1x1x16xbf16>) v_cache(%vc : memref<?x1x1x16xbf16>)
  return
}

// A decode step: append one token, then attend over kv_lens + 1.
func.func @append_then_decode_contiguous(
    %q: memref<?x8x1x64xf16>, %kn: memref<?x2x1x64xf16>, %vn: memref<?x2x1x64xf16>,
    %lens: memref<?xi32>, %lens1: memref<?xi32>,
    %kc: memref<?x2x?x64xf16>, %vc: memref<?x2x?x64xf16>, %o: memref<?x8x1x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x2x1x64xf16>) v_new(%vn : memref<?x2x1x64xf16>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x?x64xf16>) v_cache(%vc : memref<?x2x?x64xf16>)
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%kc : memref<?x2x?x64xf16>)
                 v(%vc : memref<?x2x?x64xf16>) kv_lens(%lens1 : memref<?xi32>)
              -> o(%o : memref<?x8x1x64xf16>)
  return
}

func.func @append_then_decode_paged(
    %q: memref<?x8x1x128xf16>, %kn: memref<?x2x1x128xf16>, %vn: memref<?x2x1x128xf16>,
    %bt: memref<?x?xi32>, %lens: memref<?xi32>, %lens1: memref<?xi32>,
    %kc: memref<?x2x16x128xf16>, %vc: memref<?x2x16x128xf16>,
    %o: memref<?x8x1x128xf16>, %lse: memref<?x8x1xf32>) {
  attn.cache_append k_new(%kn : memref<?x2x1x128xf16>) v_new(%vn : memref<?x2x1x128xf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x16x128xf16>) v_cache(%vc : memref<?x2x16x128xf16>)
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%kc : memref<?x2x16x128xf16>)
                 v(%vc : memref<?x2x16x128xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens1 : memref<?xi32>)
              -> o(%o : memref<?x8x1x128xf16>) lse(%lse : memref<?x8x1xf32>)
  return
}

// A prefill chunk of ragged length, then causal attention of the chunk's
// queries over the whole sequence (bottom-right aligned).
func.func @append_then_prefill_paged_ragged(
    %q: memref<?x4x?x64xf32>, %kn: memref<?x1x?x64xf32>, %vn: memref<?x1x?x64xf32>,
    %bt: memref<?x?xi32>, %lens: memref<?xi32>, %n: memref<?xi32>,
    %lens1: memref<?xi32>,
    %kc: memref<?x1x16x64xf32>, %vc: memref<?x1x16x64xf32>, %o: memref<?x4x?x64xf32>) {
  attn.cache_append k_new(%kn : memref<?x1x?x64xf32>) v_new(%vn : memref<?x1x?x64xf32>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                    new_lens(%n : memref<?xi32>)
                 -> k_cache(%kc : memref<?x1x16x64xf32>) v_cache(%vc : memref<?x1x16x64xf32>)
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%kc : memref<?x1x16x64xf32>)
                 v(%vc : memref<?x1x16x64xf32>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens1 : memref<?xi32>)
              -> o(%o : memref<?x4x?x64xf32>) mask = <causal, bottom_right>
  return
}

// vLLM's reshape_and_cache: packed tokens [T, Hkv, D] to the slots
// slot_mapping names, in a paged cache and in a contiguous one (slot =
// b * capacity + position).
func.func @slots_paged_f16(%kn: memref<?x4x64xf16>, %vn: memref<?x4x64xf16>,
                           %slots: memref<?xi32>,
                           %kc: memref<?x4x16x64xf16>, %vc: memref<?x4x16x64xf16>) {
  attn.cache_append k_new(%kn : memref<?x4x64xf16>) v_new(%vn : memref<?x4x64xf16>)
                    slot_mapping(%slots : memref<?xi32>)
                 -> k_cache(%kc : memref<?x4x16x64xf16>) v_cache(%vc : memref<?x4x16x64xf16>)
  return
}

func.func @slots_contiguous_f32(%kn: memref<?x2x32xf32>, %vn: memref<?x2x48xf32>,
                                %slots: memref<?xi32>,
                                %kc: memref<?x2x?x32xf32>, %vc: memref<?x2x?x48xf32>) {
  attn.cache_append k_new(%kn : memref<?x2x32xf32>) v_new(%vn : memref<?x2x48xf32>)
                    slot_mapping(%slots : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x?x32xf32>) v_cache(%vc : memref<?x2x?x48xf32>)
  return
}
