// Cascade (shared-prefix) attention from attn's own CPU kernels: attn-run
// --cascade runs a prefix level (every request's queries stacked into one
// sequence over the shared prefix's pages, cut into --prefix-chunks
// sequences), a suffix level (each request over its own pages) and
// attn.merge_states over the C + 1 parts, then compares O and the LSE with
// float64 attention over each request's whole sequence. Pages of the
// prefix and of every suffix are shuffled through one cache; suffixes are
// random in [0, --kv-len], so some are empty (their part is LSE -inf),
// more chunks than prefix pages leave empty chunks, and --prefix-len=0
// leaves only empty prefix parts. Levels and merge
// outputs are NaN-poisoned; every element must be written.
//
// RUN: attn-run %s --cascade=prefix_f16,suffix_f16_causal,merge_f16 --batch=5 --prefix-len=100 --kv-len=40 --q-len=3 | FileCheck %s
// RUN: attn-run %s --cascade=prefix_f16,suffix_f16_causal,merge_f16 --batch=3 --prefix-len=200 --kv-len=20 --q-len=1 --prefix-chunks=4 --kv-lens=0,20,7 | FileCheck %s
// RUN: attn-run %s --cascade=prefix_f16,suffix_f16_causal,merge_f16 --batch=2 --prefix-len=0 --kv-len=30 --q-len=4 --prefix-chunks=2 | FileCheck %s
// RUN: attn-run %s --cascade=prefix_f16,suffix_f16_causal,merge_f16 --batch=4 --prefix-len=64 --kv-len=33 --q-len=5 --prefix-chunks=6 --num-splits=3 --block-kv=16 | FileCheck %s
// RUN: attn-run %s --cascade=level_f32,level_f32,merge_f32 --batch=3 --prefix-len=77 --kv-len=9 --q-len=6 --prefix-chunks=2 | FileCheck %s --check-prefix=LSE
//
// The comparison can fail: f16 levels are not exact to 1e-9.
// RUN: not attn-run %s --cascade=prefix_f16,suffix_f16_causal,merge_f16 --batch=2 --prefix-len=50 --kv-len=10 --q-len=2 --tolerance=1e-9 | FileCheck %s --check-prefix=STRICT
//
// Levels that are not a cascade's are refused.
// RUN: not attn-run %s --cascade=suffix_f16_causal,suffix_f16_causal,merge_f16 --batch=2 --prefix-len=50 --kv-len=10 --q-len=2 2>&1 | FileCheck %s --check-prefix=MASKED
// RUN: not attn-run %s --cascade=prefix_f16,level_f32,merge_f16 --batch=2 --prefix-len=50 --kv-len=10 --q-len=2 2>&1 | FileCheck %s --check-prefix=TYPES
// RUN: not attn-run %s --cascade=prefix_f16,merge_f16 --batch=2 2>&1 | FileCheck %s --check-prefix=COUNT

// CHECK: cascade {{.*}} rel_err={{.*}} unwritten=0 PASS
// LSE: cascade {{.*}} rel_err={{.*}} lse_err={{.*}} unwritten=0 PASS
// STRICT: cascade {{.*}} FAIL
// MASKED: the prefix level must be unmasked
// TYPES: must take one Q element type
// COUNT: --cascade takes three kernels

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

func.func @merge_f16(%op: memref<?x?x8x64xf16>, %lp: memref<?x?x8xf32>, %o: memref<?x8x64xf16>) {
  attn.merge_states o_parts(%op : memref<?x?x8x64xf16>) lse_parts(%lp : memref<?x?x8xf32>)
                 -> o(%o : memref<?x8x64xf16>)
  return
}

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
