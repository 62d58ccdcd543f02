// score_mod / mask_mod specs for mods.test: the regions through EmitC on
// every kernel kind (prefill, the simdgroup decode, the vector decode and
// their split-K), with captures of every element type, static and dynamic
// shapes, packed and paged forms. The reference evaluates the same regions
// (ModEval) over the captures the host drew.

// ALiBi over GQA 4 with a causal mask, f16 with LSE: a static f32 capture
// indexed by the query head.
func.func @alibi_gqa_f16(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %slopes: memref<8xf32>, %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>) v(%v : memref<?x2x?x64xf16>)
      captures(%slopes : memref<8xf32>)
      -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>) mask = <causal>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: memref<8xf32>):
    %slope = memref.load %sl[%h] : memref<8xf32>
    %d = arith.subi %j, %i : index
    %d64 = arith.index_cast %d : index to i64
    %df = arith.sitofp %d64 : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return
}

// Document ids [B, S] (a dynamic i32 capture) with ragged kv_lens, bf16.
func.func @documents_lens_bf16(%q: memref<?x4x?x64xbf16>, %k: memref<?x4x?x64xbf16>, %v: memref<?x4x?x64xbf16>, %lens: memref<?xi32>, %doc: memref<?x?xi32>, %o: memref<?x4x?x64xbf16>) {
  attn.attention q(%q : memref<?x4x?x64xbf16>) k(%k : memref<?x4x?x64xbf16>) v(%v : memref<?x4x?x64xbf16>)
      kv_lens(%lens : memref<?xi32>) captures(%doc : memref<?x?xi32>)
      -> o(%o : memref<?x4x?x64xbf16>)
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: memref<?x?xi32>):
    %di = memref.load %d[%b, %i] : memref<?x?xi32>
    %dj = memref.load %d[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    attn.yield %same : i1
  }
  return
}

// Both regions, no captures, reading h: a window per query head and a
// score scaled by the head; keys with j % 3 == 1 hidden by a -inf score
// (Metal's fast math: the constant becomes -FLT_MAX, the kernel's clamp
// hides the key). Sk = 1 leaves rows empty. f32 with LSE.
func.func @by_head_f32(%q: memref<?x4x?x32xf32>, %k: memref<?x2x?x32xf32>, %v: memref<?x2x?x32xf32>, %o: memref<?x4x?x32xf32>, %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x2x?x32xf32>) v(%v : memref<?x2x?x32xf32>)
      -> o(%o : memref<?x4x?x32xf32>) lse(%lse : memref<?x4x?xf32>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %ninf = arith.constant 0xFF800000 : f32
    %half = arith.constant 0.5 : f32
    %r = arith.remui %j, %c3 : index
    %hide = arith.cmpi eq, %r, %c1 : index
    %h64 = arith.index_cast %h : index to i64
    %hf = arith.sitofp %h64 : i64 to f32
    %w = arith.mulf %hf, %half : f32
    %e = math.exp2 %w : f32
    %t = arith.mulf %s, %e : f32
    %x = arith.select %hide, %ninf, %t : f32
    attn.yield %x : f32
  }
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %c4 = arith.constant 4 : index
    %w = arith.muli %h, %c8 : index
    %wide = arith.addi %w, %c4 : index
    %back = arith.subi %i, %j : index
    %near = arith.cmpi sle, %back, %wide : index
    %ahead = arith.cmpi sge, %back, %c4 : index
    %min = arith.minsi %back, %wide : index
    %keep = arith.cmpi ne, %min, %c3 : index
    %a = arith.andi %near, %keep : i1
    %r = arith.ori %a, %ahead : i1
    attn.yield %r : i1
  }
  return
}

// Decode (static Sq = 1, the vector kernel by default; two passes from
// 1024 keys): a T5-style bucketed bias table [32, 4] read at the query
// head, f16.
func.func @t5_decode_f16(%q: memref<?x4x1x64xf16>, %k: memref<?x1x?x64xf16>, %v: memref<?x1x?x64xf16>, %table: memref<32x4xf32>, %o: memref<?x4x1x64xf16>) {
  attn.attention q(%q : memref<?x4x1x64xf16>) k(%k : memref<?x1x?x64xf16>) v(%v : memref<?x1x?x64xf16>)
      captures(%table : memref<32x4xf32>)
      -> o(%o : memref<?x4x1x64xf16>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: memref<32x4xf32>):
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c15 = arith.constant 15 : index
    %c16 = arith.constant 16 : index
    %rel = arith.subi %j, %i : index
    %after = arith.cmpi sgt, %rel, %c0 : index
    %base = arith.select %after, %c16, %c0 : index
    %neg = arith.subi %c0, %rel : index
    %dist = arith.maxsi %rel, %neg : index
    %exact = arith.cmpi slt, %dist, %c8 : index
    %d64 = arith.index_cast %dist : index to i64
    %df = arith.sitofp %d64 : i64 to f32
    %eight = arith.constant 8.0 : f32
    %ratio = arith.divf %df, %eight : f32
    %log = math.log %ratio : f32
    %log16 = arith.constant 2.77258872 : f32
    %frac = arith.divf %log, %log16 : f32
    %scaled = arith.mulf %frac, %eight : f32
    %si = arith.fptosi %scaled : f32 to i64
    %sx = arith.index_cast %si : i64 to index
    %large = arith.addi %c8, %sx : index
    %capped = arith.minsi %large, %c15 : index
    %inner = arith.select %exact, %dist, %capped : index
    %bucket = arith.addi %base, %inner : index
    %bias = memref.load %t[%bucket, %h] : memref<32x4xf32>
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return
}

// Paged decode (blocks of 16) with per-key flags [B, Sk] as an i1 capture
// and a soft-cap attribute before a score_mod that reads an i8 capture
// [Hq] and an i64 one [B]: three captures, two with dynamic dims.
func.func @paged_flags_f16(%q: memref<?x4x1x64xf16>, %k: memref<?x2x16x64xf16>, %v: memref<?x2x16x64xf16>, %bt: memref<?x?xi32>, %lens: memref<?xi32>, %flags: memref<?x?xi1>, %per_head: memref<4xi8>, %per_seq: memref<?xi64>, %o: memref<?x4x1x64xf16>) {
  attn.attention q(%q : memref<?x4x1x64xf16>) k(%k : memref<?x2x16x64xf16>) v(%v : memref<?x2x16x64xf16>)
      block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      captures(%flags, %per_head, %per_seq : memref<?x?xi1>, memref<4xi8>, memref<?xi64>)
      -> o(%o : memref<?x4x1x64xf16>) softcap = 15.0
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %f: memref<?x?xi1>, %ph: memref<4xi8>, %ps: memref<?xi64>):
    %x = memref.load %ph[%h] : memref<4xi8>
    %y = memref.load %ps[%b] : memref<?xi64>
    %x64 = arith.extsi %x : i8 to i64
    %sum = arith.addi %x64, %y : i64
    %sf = arith.sitofp %sum : i64 to f32
    %tenth = arith.constant 0.25 : f32
    %bias = arith.mulf %sf, %tenth : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %f: memref<?x?xi1>, %ph: memref<4xi8>, %ps: memref<?xi64>):
    %c0 = arith.constant 0 : index
    %flag = memref.load %f[%b, %j] : memref<?x?xi1>
    %first = arith.cmpi eq, %j, %c0 : index
    %r = arith.ori %flag, %first : i1
    attn.yield %r : i1
  }
  return
}

// Packed Q and K/V (varlen) with a prefix-LM mask: each sequence's prefix
// length [B] as a dynamic i32 capture; positions are per sequence. f16.
func.func @packed_prefix_f16(%q: memref<?x4x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %prefix: memref<?xi32>, %o: memref<?x4x64xf16>, %lse: memref<?x4xf32>) {
  attn.attention q(%q : memref<?x4x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      captures(%prefix : memref<?xi32>)
      -> o(%o : memref<?x4x64xf16>) lse(%lse : memref<?x4xf32>)
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %p: memref<?xi32>):
    %len = memref.load %p[%b] : memref<?xi32>
    %n = arith.index_cast %len : i32 to index
    %in_prefix = arith.cmpi slt, %j, %n : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %in_prefix, %causal : i1
    attn.yield %r : i1
  }
  return
}

// Arith ops upstream's arith-to-emitc leaves to attn (remf as fmod,
// bitcast as as_type) or that arith-expand rewrites (maximumf, minnumf,
// floordivsi, ceildivsi), with shifts, xor and unsigned conversion.
func.func @arith_ops_f32(%q: memref<?x4x?x32xf32>, %k: memref<?x4x?x32xf32>, %v: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x4x?x32xf32>) v(%v : memref<?x4x?x32xf32>)
      -> o(%o : memref<?x4x?x32xf32>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.0 : f32
    %r = arith.remf %s, %c : f32
    %n = arith.negf %r : f32
    %mx = arith.maximumf %n, %s : f32
    %mn = arith.minnumf %mx, %c : f32
    %u = arith.cmpf uno, %mn, %s : f32
    %w = arith.select %u, %s, %mn : f32
    %j32 = arith.index_cast %j : index to i32
    %sh = arith.constant 2 : i32
    %x = arith.shrsi %j32, %sh : i32
    %y = arith.xori %x, %sh : i32
    %z = arith.uitofp %y : i32 to f32
    %t = arith.addf %w, %z : f32
    %bc = arith.bitcast %t : f32 to i32
    %bf = arith.bitcast %bc : i32 to f32
    %fd = arith.floordivsi %j32, %sh : i32
    %cd = arith.ceildivsi %j32, %sh : i32
    %sum = arith.addi %fd, %cd : i32
    %sf = arith.sitofp %sum : i32 to f32
    %res = arith.addf %bf, %sf : f32
    attn.yield %res : f32
  }
  return
}
