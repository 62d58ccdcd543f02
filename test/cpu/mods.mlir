// score_mod / mask_mod regions on the CPU. Each RUN compiles a kernel with
// attn-to-cpu, runs it on fresh random inputs (captures too: floats in
// [-1, 1), integers in [0, --capture-int-max)) with NaN-poisoned outputs,
// and checks every element of O and LSE against the float64 reference,
// which evaluates the same regions op by op (attn-run's ModEval):
// GQA, Sq != Sk, tile sizes, split-K, bottom-right masks, the packed
// (varlen) and paged forms with per-sequence positions, rows a mask_mod
// leaves empty (O = 0, LSE = -inf), and a score_mod that hides keys
// with -inf.
// RUN: attn-run %s --func=alibi_gqa4_f32_br --batch=2 --q-len=70 --kv-len=133 --block-q=16 --block-kv=32
// RUN: attn-run %s --func=alibi_gqa4_f32_br --batch=1 --q-len=133 --kv-len=70
// RUN: attn-run %s --func=alibi_gqa4_f32_br --batch=2 --q-len=5 --kv-len=300 --num-splits=3 --block-kv=16
// RUN: attn-run %s --func=alibi_gqa4_f32_br --batch=1 --q-len=40 --kv-len=200 --kv-chunk=64
// RUN: attn-run %s --func=both_mods_f16 --batch=3 --q-len=65 --kv-len=65 --block-q=32 --block-kv=16
// RUN: attn-run %s --func=both_mods_f16 --batch=1 --q-len=1 --kv-len=257 --num-splits=4
// RUN: attn-run %s --func=empty_rows_f32 --batch=2 --q-len=37 --kv-len=50
// RUN: attn-run %s --func=hide_by_score_f32 --batch=2 --q-len=30 --kv-len=90 --block-kv=16
// RUN: attn-run %s --func=varlen_doc_mask_f32 --batch=4 --q-len=60 --kv-len=90 --block-q=16 --block-kv=16
// RUN: attn-run %s --func=varlen_doc_mask_f32 --batch=3 --q-len=60 --kv-len=90 --q-lens=60,0,7 --kv-lens=90,5,7 --num-splits=2
// RUN: attn-run %s --func=paged_bias_bs16_f16 --batch=3 --q-len=4 --kv-len=150 --capture-int-max=150
// RUN: attn-run %s --func=many_ops_f32 --batch=2 --q-len=40 --kv-len=70 --block-kv=16
// RUN: attn-run %s --func=many_ops_f32 --batch=1 --q-len=70 --kv-len=40 --num-splits=2
// RUN: attn-run %s --func=paged_bias_bs16_f16 --batch=2 --q-len=4 --kv-len=300 --kv-lens=0,300 --num-splits=3 --capture-int-max=300

// The shipped examples (examples/*.mlir with regions), at small sizes.
// RUN: attn-run %attn_src_root/examples/alibi.mlir --batch=2 --q-len=100 --kv-len=100
// RUN: attn-run %attn_src_root/examples/alibi.mlir --batch=1 --q-len=64 --kv-len=200 --num-splits=2
// RUN: attn-run %attn_src_root/examples/document_mask.mlir --batch=2 --q-len=128 --kv-len=128
// RUN: attn-run %attn_src_root/examples/prefix_lm.mlir --batch=3 --q-len=90 --kv-len=90 --capture-int-max=90
// RUN: attn-run %attn_src_root/examples/t5_relative_bias.mlir --batch=1 --q-len=300 --kv-len=300 --block-q=32
// RUN: attn-run %attn_src_root/examples/softcap_region.mlir --batch=1 --q-len=100 --kv-len=140
// RUN: attn-run %attn_src_root/examples/sliding_window_mask_mod.mlir --batch=1 --q-len=400 --kv-len=400

// A region equal to a built-in attribute gives its result: the soft-cap
// region and the softcap attribute both match the reference (f32, 1e-4),
// and the mask_mods of a causal mask and a causal window give the same
// bits (O and LSE) as the built-in masks on the same inputs (--seed).
// RUN: attn-run %s --func=softcap_attr --batch=2 --q-len=50 --kv-len=90 --seed=11
// RUN: attn-run %s --func=softcap_region --batch=2 --q-len=50 --kv-len=90 --seed=11
// RUN: attn-run %s --func=causal_attr --batch=2 --q-len=100 --kv-len=80 --block-q=16 --block-kv=16 --seed=5 --save-outputs=%t.causal_attr
// RUN: attn-run %s --func=causal_mod --batch=2 --q-len=100 --kv-len=80 --block-q=16 --block-kv=16 --seed=5 --save-outputs=%t.causal_mod
// RUN: cmp %t.causal_attr %t.causal_mod
// RUN: attn-run %s --func=window_attr --batch=1 --q-len=200 --kv-len=200 --block-q=32 --block-kv=16 --seed=9 --save-outputs=%t.window_attr
// RUN: attn-run %s --func=window_mod --batch=1 --q-len=200 --kv-len=200 --block-q=32 --block-kv=16 --seed=9 --save-outputs=%t.window_mod
// RUN: cmp %t.window_attr %t.window_mod
// Nor is the soft-cap one: the same spec without the region gives other
// bits on the same inputs (were the region ignored by the kernel and the
// reference alike, they would match).
// RUN: attn-run %s --func=softcap_region --batch=2 --q-len=50 --kv-len=90 --seed=11 --save-outputs=%t.softcap_region
// RUN: attn-run %s --func=no_softcap --batch=2 --q-len=50 --kv-len=90 --seed=11 --save-outputs=%t.no_softcap
// RUN: not cmp -s %t.softcap_region %t.no_softcap
// The comparison is not vacuous: another seed gives other bits.
// RUN: attn-run %s --func=window_mod --batch=1 --q-len=200 --kv-len=200 --block-q=32 --block-kv=16 --seed=10 --save-outputs=%t.window_other
// RUN: not cmp -s %t.window_attr %t.window_other

// ALiBi under GQA 4 with a bottom-right causal mask: the slope is the
// query head's (h in [0, 8)), positions are the sequence's.
func.func @alibi_gqa4_f32_br(%q: memref<?x8x?x32xf32>, %k: memref<?x2x?x32xf32>, %v: memref<?x2x?x32xf32>, %slopes: memref<8xf32>, %o: memref<?x8x?x32xf32>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x32xf32>) k(%k : memref<?x2x?x32xf32>) v(%v : memref<?x2x?x32xf32>) captures(%slopes : memref<8xf32>) -> o(%o : memref<?x8x?x32xf32>) lse(%lse : memref<?x8x?xf32>) mask = <causal, bottom_right> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: memref<8xf32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return
}

// Both regions and two captures, with the built-in soft-cap and a window:
// the score_mod adds a per-(batch, head) bias, the mask_mod drops keys
// whose (position mod 3) is the batch's.
func.func @both_mods_f16(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>, %v: memref<?x4x?x64xf16>, %bias: memref<?x4xf32>, %drop: memref<?xi32>, %o: memref<?x4x?x64xf16>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>) v(%v : memref<?x4x?x64xf16>) captures(%bias, %drop : memref<?x4xf32>, memref<?xi32>) -> o(%o : memref<?x4x?x64xf16>) lse(%lse : memref<?x4x?xf32>) mask = <window 40, 8> softcap = 20.0 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %bi: memref<?x4xf32>, %dr: memref<?xi32>):
    %x = memref.load %bi[%b, %h] : memref<?x4xf32>
    %two = arith.constant 2.0 : f32
    %y = arith.mulf %x, %two : f32
    %r = arith.addf %s, %y : f32
    attn.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %bi: memref<?x4xf32>, %dr: memref<?xi32>):
    %c3 = arith.constant 3 : index
    %m = arith.remui %j, %c3 : index
    %d = memref.load %dr[%b] : memref<?xi32>
    %dd = arith.index_cast %d : i32 to index
    %keep = arith.cmpi ne, %m, %dd : index
    attn.yield %keep : i1
  }
  return
}

// Odd queries see no key: O = 0 and LSE = -inf there.
func.func @empty_rows_f32(%q: memref<?x2x?x32xf32>, %k: memref<?x2x?x32xf32>, %v: memref<?x2x?x32xf32>, %o: memref<?x2x?x32xf32>, %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x32xf32>) k(%k : memref<?x2x?x32xf32>) v(%v : memref<?x2x?x32xf32>) -> o(%o : memref<?x2x?x32xf32>) lse(%lse : memref<?x2x?xf32>) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c2 = arith.constant 2 : index
    %c0 = arith.constant 0 : index
    %r = arith.remui %i, %c2 : index
    %even = arith.cmpi eq, %r, %c0 : index
    attn.yield %even : i1
  }
  return
}

// A score_mod that hides keys by giving them -inf (every fourth key), and
// hides all of them from head 1's query 0.
func.func @hide_by_score_f32(%q: memref<?x2x?x32xf32>, %k: memref<?x2x?x32xf32>, %v: memref<?x2x?x32xf32>, %o: memref<?x2x?x32xf32>, %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x32xf32>) k(%k : memref<?x2x?x32xf32>) v(%v : memref<?x2x?x32xf32>) -> o(%o : memref<?x2x?x32xf32>) lse(%lse : memref<?x2x?xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c4 = arith.constant 4 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.remui %j, %c4 : index
    %fourth = arith.cmpi eq, %r, %c0 : index
    %h1 = arith.cmpi eq, %h, %c1 : index
    %q0 = arith.cmpi eq, %i, %c0 : index
    %all = arith.andi %h1, %q0 : i1
    %hide = arith.ori %fourth, %all : i1
    %x = arith.select %hide, %ninf, %s : f32
    attn.yield %x : f32
  }
  return
}

// Packed Q and K/V: q_idx and kv_idx are positions in the sequence, and
// the document ids [B, S] are read per sequence.
func.func @varlen_doc_mask_f32(%q: memref<?x4x32xf32>, %k: memref<?x2x32xf32>, %v: memref<?x2x32xf32>, %cq: memref<?xi32>, %ck: memref<?xi32>, %docs: memref<?x?xi32>, %o: memref<?x4x32xf32>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x32xf32>) k(%k : memref<?x2x32xf32>) v(%v : memref<?x2x32xf32>) cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>) captures(%docs : memref<?x?xi32>) -> o(%o : memref<?x4x32xf32>) lse(%lse : memref<?x4xf32>) mask = <causal, bottom_right> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: memref<?x?xi32>):
    %di = memref.load %d[%b, %i] : memref<?x?xi32>
    %dj = memref.load %d[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  }
  return
}

// A paged cache (block size 16) with kv_lens: a decode-shaped Q of 4
// queries under GQA 4; the score_mod reads a bias table by key position,
// the mask_mod hides keys before a per-sequence start.
func.func @paged_bias_bs16_f16(%q: memref<?x8x4x64xf16>, %k: memref<?x2x16x64xf16>, %v: memref<?x2x16x64xf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %table: memref<?xf32>, %start: memref<?xi32>, %o: memref<?x8x4x64xf16>) {
  attn.attention q(%q : memref<?x8x4x64xf16>) k(%k : memref<?x2x16x64xf16>) v(%v : memref<?x2x16x64xf16>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>) captures(%table, %start : memref<?xf32>, memref<?xi32>) -> o(%o : memref<?x8x4x64xf16>) mask = <causal, bottom_right> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: memref<?xf32>, %st: memref<?xi32>):
    %x = memref.load %t[%j] : memref<?xf32>
    %r = arith.addf %s, %x : f32
    attn.yield %r : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %t: memref<?xf32>, %st: memref<?xi32>):
    %first = memref.load %st[%b] : memref<?xi32>
    %f = arith.index_cast %first : i32 to index
    %keep = arith.cmpi sge, %j, %f : index
    attn.yield %keep : i1
  }
  return
}

func.func @softcap_attr(%q: memref<?x4x?x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %o: memref<?x4x?x64xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x2x?x64xf32>) v(%v : memref<?x2x?x64xf32>) -> o(%o : memref<?x4x?x64xf32>) lse(%lse : memref<?x4x?xf32>) scale = 4.0 softcap = 5.0
  return
}

func.func @softcap_region(%q: memref<?x4x?x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %o: memref<?x4x?x64xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x2x?x64xf32>) v(%v : memref<?x2x?x64xf32>) -> o(%o : memref<?x4x?x64xf32>) lse(%lse : memref<?x4x?xf32>) scale = 4.0 score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cap = arith.constant 5.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
  return
}

func.func @causal_attr(%q: memref<?x4x?x32xf32>, %k: memref<?x2x?x32xf32>, %v: memref<?x2x?x32xf32>, %o: memref<?x4x?x32xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x2x?x32xf32>) v(%v : memref<?x2x?x32xf32>) -> o(%o : memref<?x4x?x32xf32>) lse(%lse : memref<?x4x?xf32>) mask = <causal>
  return
}

func.func @causal_mod(%q: memref<?x4x?x32xf32>, %k: memref<?x2x?x32xf32>, %v: memref<?x2x?x32xf32>, %o: memref<?x4x?x32xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x2x?x32xf32>) v(%v : memref<?x2x?x32xf32>) -> o(%o : memref<?x4x?x32xf32>) lse(%lse : memref<?x4x?xf32>) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %causal = arith.cmpi sle, %j, %i : index
    attn.yield %causal : i1
  }
  return
}

func.func @window_attr(%q: memref<?x4x?x32xbf16>, %k: memref<?x4x?x32xbf16>, %v: memref<?x4x?x32xbf16>, %o: memref<?x4x?x32xbf16>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xbf16>) k(%k : memref<?x4x?x32xbf16>) v(%v : memref<?x4x?x32xbf16>) -> o(%o : memref<?x4x?x32xbf16>) lse(%lse : memref<?x4x?xf32>) mask = <window 50, 0>
  return
}

func.func @window_mod(%q: memref<?x4x?x32xbf16>, %k: memref<?x4x?x32xbf16>, %v: memref<?x4x?x32xbf16>, %o: memref<?x4x?x32xbf16>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xbf16>) k(%k : memref<?x4x?x32xbf16>) v(%v : memref<?x4x?x32xbf16>) -> o(%o : memref<?x4x?x32xbf16>) lse(%lse : memref<?x4x?xf32>) mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 50 : index
    %causal = arith.cmpi sle, %j, %i : index
    %back = arith.subi %i, %j : index
    %near = arith.cmpi sle, %back, %w : index
    %visible = arith.andi %causal, %near : i1
    attn.yield %visible : i1
  }
  return
}

// Many arith/math ops, in both regions, over f16, i8 and i64 captures:
// the reference evaluates each op itself, so this checks the evaluator
// against the compiled code op by op.
func.func @many_ops_f32(%q: memref<?x4x?x32xf32>, %k: memref<?x2x?x32xf32>, %v: memref<?x2x?x32xf32>, %w: memref<4x?xf16>, %n: memref<?xi8>, %big: memref<3xi64>, %o: memref<?x4x?x32xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x2x?x32xf32>) v(%v : memref<?x2x?x32xf32>) captures(%w, %n, %big : memref<4x?xf16>, memref<?xi8>, memref<3xi64>) -> o(%o : memref<?x4x?x32xf32>) lse(%lse : memref<?x4x?xf32>) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %wc: memref<4x?xf16>, %nc: memref<?xi8>, %bc: memref<3xi64>):
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %x16 = memref.load %wc[%h, %j] : memref<4x?xf16>
    %x = arith.extf %x16 : f16 to f32
    %e = math.exp %x : f32
    %l = math.log1p %e : f32
    %half = arith.constant 0.5 : f32
    %p = math.powf %l, %half : f32
    %sq = math.sqrt %p : f32
    %mx = arith.maximumf %sq, %x : f32
    %mn = arith.minnumf %mx, %half : f32
    %d = arith.subi %i, %j : index
    %fd = arith.floordivsi %d, %c3 : index
    %cd = arith.ceildivsi %d, %c7 : index
    %rs = arith.remsi %d, %c7 : index
    %sum = arith.addi %fd, %cd : index
    %sum2 = arith.addi %sum, %rs : index
    %sh = arith.shli %c1, %c2 : index
    %sum3 = arith.muli %sum2, %sh : index
    %i64 = arith.index_cast %sum3 : index to i64
    %t32 = arith.trunci %i64 : i64 to i32
    %f = arith.sitofp %t32 : i32 to f32
    %small = arith.constant 0.01 : f32
    %fs = arith.mulf %f, %small : f32
    %n8 = memref.load %nc[%j] : memref<?xi8>
    %n32 = arith.extui %n8 : i8 to i32
    %nf = arith.uitofp %n32 : i32 to f32
    %bl = memref.load %bc[%c1] : memref<3xi64>
    %blf = arith.sitofp %bl : i64 to f32
    %neg = arith.cmpf olt, %s, %mn : f32
    %pick = arith.select %neg, %nf, %blf : f32
    %t = math.tanh %pick : f32
    %a1 = arith.addf %s, %mn : f32
    %a2 = arith.addf %a1, %fs : f32
    %a3 = arith.addf %a2, %t : f32
    %fl = math.floor %a3 : f32
    %r = arith.subf %a3, %fl : f32
    %out = arith.addf %a3, %r : f32
    attn.yield %out : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %wc: memref<4x?xf16>, %nc: memref<?xi8>, %bc: memref<3xi64>):
    %c5 = arith.constant 5 : index
    %x = arith.xori %i, %j : index
    %r = arith.remui %x, %c5 : index
    %c0 = arith.constant 0 : index
    %hide = arith.cmpi eq, %r, %c0 : index
    %n8 = memref.load %nc[%i] : memref<?xi8>
    %c2i8 = arith.constant 2 : i8
    %many = arith.cmpi uge, %n8, %c2i8 : i8
    %both = arith.andi %hide, %many : i1
    %true = arith.constant true
    %keep = arith.xori %both, %true : i1
    attn.yield %keep : i1
  }
  return
}

func.func @no_softcap(%q: memref<?x4x?x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %o: memref<?x4x?x64xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x2x?x64xf32>) v(%v : memref<?x2x?x64xf32>) -> o(%o : memref<?x4x?x64xf32>) lse(%lse : memref<?x4x?xf32>) scale = 4.0
  return
}
