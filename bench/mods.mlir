// The kernels bench/mods_compare.py times against compiled FlexAttention
// with the same modifications, and against attn's built-in attributes
// where one says the same (soft-cap, causal window): score_mod / mask_mod
// regions, some reading captures (ALiBi slopes, document ids, a T5 bias
// table), 16 heads of 128, f16, dynamic batch and length.
func.func @softcap_builtin(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
      mask = <causal> softcap = 30.0
  return
}
func.func @softcap_region(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
      mask = <causal>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cap = arith.constant 30.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
  return
}
func.func @alibi_region(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
      mask = <causal>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // slope_h = 2^(-8 (h + 1) / 16); bias = slope_h * (j - i) <= 0
    %one = arith.constant 1 : index
    %h1 = arith.addi %h, %one : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %c = arith.constant -0.5 : f32
    %e = arith.mulf %hf, %c : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return
}
func.func @window_builtin(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
      mask = <window 1023, 0>
  return
}
func.func @window_causal_builtin_mask_mod(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
      mask = <causal>
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %causal = arith.cmpi sle, %j, %i : index
    %back = arith.subi %i, %j : index
    %near = arith.cmpi slt, %back, %w : index
    %r = arith.andi %causal, %near : i1
    attn.yield %r : i1
  }
  return
}
func.func @window_mask_mod(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %w = arith.constant 1024 : index
    %causal = arith.cmpi sle, %j, %i : index
    %back = arith.subi %i, %j : index
    %near = arith.cmpi slt, %back, %w : index
    %r = arith.andi %causal, %near : i1
    attn.yield %r : i1
  }
  return
}
func.func @documents_mask_mod(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) -> o(%o : memref<?x16x?x128xf16>)
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    // 8 documents of 1024 tokens: a key is visible from its own document
    %len = arith.constant 1024 : index
    %di = arith.divui %i, %len : index
    %dj = arith.divui %j, %len : index
    %r = arith.cmpi eq, %di, %dj : index
    attn.yield %r : i1
  }
  return
}
// Packed (varlen) GQA-4 with both regions inlined (prefix-LM is not a
// band, so the mask_mod stays): q_idx and kv_idx are positions within
// each sequence. Checked only (not timed).
func.func @packed_gqa_alibi_prefix(%q: memref<?x16x128xf16>, %k: memref<?x4x128xf16>, %v: memref<?x4x128xf16>, %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x16x128xf16>) {
  attn.attention q(%q : memref<?x16x128xf16>) k(%k : memref<?x4x128xf16>) v(%v : memref<?x4x128xf16>) cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>) -> o(%o : memref<?x16x128xf16>)
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1 : index
    %h1 = arith.addi %h, %one : index
    %hi = arith.index_cast %h1 : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %c = arith.constant -0.5 : f32
    %e = arith.mulf %hf, %c : f32
    %slope = math.exp2 %e : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c64 = arith.constant 64 : index
    %prefix = arith.cmpi slt, %j, %c64 : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %prefix, %causal : i1
    attn.yield %r : i1
  }
  return
}
// ALiBi with the slopes as a capture (any slope set, one kernel).
func.func @alibi_slopes(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %slopes: memref<16xf32>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) captures(%slopes : memref<16xf32>) -> o(%o : memref<?x16x?x128xf16>)
      mask = <causal>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: memref<16xf32>):
    %slope = memref.load %sl[%h] : memref<16xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return
}
// Document masking from per-token document ids [B, S] (a capture).
func.func @documents_ids(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %docs: memref<?x?xi32>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) captures(%docs : memref<?x?xi32>) -> o(%o : memref<?x16x?x128xf16>)
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %ids: memref<?x?xi32>):
    %di = memref.load %ids[%b, %i] : memref<?x?xi32>
    %dj = memref.load %ids[%b, %j] : memref<?x?xi32>
    %r = arith.cmpi eq, %di, %dj : i32
    attn.yield %r : i1
  }
  return
}
// T5-style relative bias: table[clamp(j - i + 64, 0, 127), h] (a [128, 16]
// capture), causal.
func.func @t5_table(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %table: memref<128x16xf32>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) captures(%table : memref<128x16xf32>) -> o(%o : memref<?x16x?x128xf16>)
      mask = <causal>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: memref<128x16xf32>):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c127 = arith.constant 127 : index
    %d = arith.subi %j, %i : index
    %r0 = arith.addi %d, %c64 : index
    %r1 = arith.maxsi %r0, %c0 : index
    %bucket = arith.minsi %r1, %c127 : index
    %bias = memref.load %t[%bucket, %h] : memref<128x16xf32>
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return
}
// GQA-4 (16 query heads over 4 K/V heads) with a mask_mod reading h and a
// capture: odd query heads see their own document, even ones causally.
// Its block mask has a row per batch and K/V head (checked only).
func.func @gqa_heads_documents(%q: memref<?x16x?x128xf16>, %k: memref<?x4x?x128xf16>, %v: memref<?x4x?x128xf16>, %docs: memref<?x?xi32>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x4x?x128xf16>) v(%v : memref<?x4x?x128xf16>) captures(%docs : memref<?x?xi32>) -> o(%o : memref<?x16x?x128xf16>)
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %ids: memref<?x?xi32>):
    %c2 = arith.constant 2 : index
    %c0 = arith.constant 0 : index
    %hr = arith.remui %h, %c2 : index
    %even = arith.cmpi eq, %hr, %c0 : index
    %causal = arith.cmpi sle, %j, %i : index
    %di = memref.load %ids[%b, %i] : memref<?x?xi32>
    %dj = memref.load %ids[%b, %j] : memref<?x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %r = arith.select %even, %causal, %same : i1
    attn.yield %r : i1
  }
  return
}
// The documents kernel on the wmma tier (scores in shared memory): its
// block mask only skips tiles (checked only).
func.func @documents_ids_wmma(%q: memref<?x16x?x128xf16>, %k: memref<?x16x?x128xf16>, %v: memref<?x16x?x128xf16>, %docs: memref<?x?xi32>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x16x?x128xf16>) v(%v : memref<?x16x?x128xf16>) captures(%docs : memref<?x?xi32>) -> o(%o : memref<?x16x?x128xf16>)
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %ids: memref<?x?xi32>):
    %di = memref.load %ids[%b, %i] : memref<?x?xi32>
    %dj = memref.load %ids[%b, %j] : memref<?x?xi32>
    %r = arith.cmpi eq, %di, %dj : i32
    attn.yield %r : i1
  } {attn.tier = #attn.tier<wmma>}
  return
}
// Document masking over K/V of per-sequence lengths (kv_lens), GQA-4 with
// a causal mask: the block mask gets a row per batch (each sequence's
// blocks past its kv_len are empty).
func.func @documents_kv_lens(%q: memref<?x16x?x128xf16>, %k: memref<?x4x?x128xf16>, %v: memref<?x4x?x128xf16>, %lens: memref<?xi32>, %docs: memref<?x?xi32>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x4x?x128xf16>) v(%v : memref<?x4x?x128xf16>) kv_lens(%lens : memref<?xi32>) captures(%docs : memref<?x?xi32>) -> o(%o : memref<?x16x?x128xf16>) mask = <causal>
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %ids: memref<?x?xi32>):
    %di = memref.load %ids[%b, %i] : memref<?x?xi32>
    %dj = memref.load %ids[%b, %j] : memref<?x?xi32>
    %r = arith.cmpi eq, %di, %dj : i32
    attn.yield %r : i1
  }
  return
}
// The same over a paged cache of 16-key blocks (a padded Q: prefill of
// whole sequences whose K/V sit in a paged cache).
func.func @documents_paged(%q: memref<?x16x?x128xf16>, %k: memref<?x4x16x128xf16>, %v: memref<?x4x16x128xf16>, %table: memref<?x?xi32>, %lens: memref<?xi32>, %docs: memref<?x?xi32>, %o: memref<?x16x?x128xf16>) {
  attn.attention q(%q : memref<?x16x?x128xf16>) k(%k : memref<?x4x16x128xf16>) v(%v : memref<?x4x16x128xf16>) block_table(%table : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>) captures(%docs : memref<?x?xi32>) -> o(%o : memref<?x16x?x128xf16>) mask = <causal>
      mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %ids: memref<?x?xi32>):
    %di = memref.load %ids[%b, %i] : memref<?x?xi32>
    %dj = memref.load %ids[%b, %j] : memref<?x?xi32>
    %r = arith.cmpi eq, %di, %dj : i32
    attn.yield %r : i1
  }
  return
}
