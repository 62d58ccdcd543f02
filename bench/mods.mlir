// The kernels bench/mods_compare.py times against compiled FlexAttention
// with the same modifications, and against attn's built-in attributes
// where one says the same (soft-cap, causal window): score_mod / mask_mod
// regions without captures (the NVIDIA tiers cannot take captures yet),
// 16 heads of 128, f16, dynamic batch and length.
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
