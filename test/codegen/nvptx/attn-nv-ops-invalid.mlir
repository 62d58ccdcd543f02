// Each rule of attn_nv's verifiers, with the operand and rule it names.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @ldmatrix_global(%m: memref<64x64xf16>, %i: index) {
  // expected-error @+1 {{'attn_nv.ldmatrix' op 'src' must be in shared memory (address space 3), got 'memref<64x64xf16>'}}
  %a = attn_nv.ldmatrix %m[%i, %i] : memref<64x64xf16>
  return
}

// -----

func.func @ldmatrix_f32(%m: memref<64x64xf32, 3>, %i: index) {
  // expected-error @+1 {{operand #0 must be 2D memref of 16-bit float or bfloat16 type values}}
  %a = attn_nv.ldmatrix %m[%i, %i] : memref<64x64xf32, 3>
  return
}

// -----

func.func @ldmatrix_one_lane_offset(%m: memref<64x64xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.ldmatrix' op 'lane' takes 2 offsets (row, column), got 1}}
  %a = attn_nv.ldmatrix %m[%i, %i] lane [%i] : memref<64x64xf16, 3>
  return
}

// -----

func.func @ldmatrix_swizzle_without_lane(%m: memref<64x64xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.ldmatrix' op 'swizzle' needs 'lane': the mask applies to a lane's column in a tile}}
  %a = attn_nv.ldmatrix %m[%i, %i] swizzle %i : memref<64x64xf16, 3>
  return
}

// -----

func.func @ldmatrix_swizzle_narrow(%m: memref<64x40xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.ldmatrix' op 'swizzle' needs rows of a multiple of 64 elements (the swizzled layout's groups), got 'memref<64x40xf16, 3>'}}
  %a = attn_nv.ldmatrix %m[%i, %i] lane [%i, %i] swizzle %i : memref<64x40xf16, 3>
  return
}

// -----

func.func @mma_tile_f32_inputs(%a: vector<4xi32>, %c: vector<8xf32>) {
  // expected-error @+1 {{attribute 'inputs' failed to satisfy constraint: type attribute of 16-bit float or bfloat16 type}}
  %d = attn_nv.mma_tile %a, %a, %c : f32
  return
}

// -----

func.func @wgmma_k(%base: i64, %t: index) {
  // expected-error @+1 {{'attn_nv.wgmma' op 'k' must be a positive multiple of 16, got 24}}
  %s = attn_nv.wgmma %base a_tile %t b_tile %t {a_rows = 64 : i64, k = 24 : i64} : f16 -> vector<8xf32>
  return
}

// -----

func.func @wgmma_wide(%base: i64, %t: index) {
  // expected-error @+1 {{'attn_nv.wgmma' op must give 1 to 16 accumulators (N = 16 per accumulator, at most 256), got 17}}
  %s:17 = attn_nv.wgmma %base a_tile %t b_tile %t {a_rows = 64 : i64, k = 16 : i64} : f16 -> vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
  return
}

// -----

func.func @wgmma_no_a(%base: i64, %t: index) {
  // expected-error @+1 {{'attn_nv.wgmma' op with A in shared memory (no 'a') needs 'a_tile' and 'a_rows'}}
  %s = attn_nv.wgmma %base b_tile %t {k = 16 : i64} : f16 -> vector<8xf32>
  return
}

// -----

func.func @wgmma_shared_a_with_acc(%base: i64, %t: index, %c: vector<8xf32>) {
  // expected-error @+1 {{'attn_nv.wgmma' op with A in shared memory starts from zero: 'acc' must be empty, got 1 accumulators}}
  %s = attn_nv.wgmma %base a_tile %t acc(%c) b_tile %t {a_rows = 64 : i64, k = 16 : i64} : f16 -> vector<8xf32>
  return
}

// -----

func.func @wgmma_a_rows(%base: i64, %t: index) {
  // expected-error @+1 {{'attn_nv.wgmma' op 'a_rows' must be a positive multiple of 64 (the warpgroup's rows), got 48}}
  %s = attn_nv.wgmma %base a_tile %t b_tile %t {a_rows = 48 : i64, k = 16 : i64} : f16 -> vector<8xf32>
  return
}

// -----

func.func @wgmma_both_a(%base: i64, %t: index, %a: vector<4xi32>, %c: vector<8xf32>) {
  // expected-error @+1 {{'attn_nv.wgmma' op with A in registers ('a') takes no 'a_tile' or 'a_rows'}}
  %s = attn_nv.wgmma %base a_tile %t a(%a) acc(%c) b_tile %t {k = 16 : i64} : f16 -> vector<8xf32>
  return
}

// -----

func.func @wgmma_fragments(%base: i64, %t: index, %a: vector<4xi32>, %c: vector<8xf32>) {
  // expected-error @+1 {{'attn_nv.wgmma' op 'a' must hold k / 16 = 2 fragments, got 1}}
  %s = attn_nv.wgmma %base a(%a) acc(%c) b_tile %t {k = 32 : i64} : f16 -> vector<8xf32>
  return
}

// -----

func.func @wgmma_accumulators(%base: i64, %t: index, %a: vector<4xi32>, %c: vector<8xf32>) {
  // expected-error @+1 {{'attn_nv.wgmma' op 'acc' must hold one accumulator per result (2), got 1}}
  %s:2 = attn_nv.wgmma %base a(%a) acc(%c) b_tile %t {k = 16 : i64} : f16 -> vector<8xf32>, vector<8xf32>
  return
}

// -----

func.func @fence_mixed(%a: vector<8xf32>, %b: vector<4xi32>) {
  // expected-error @+1 {{'attn_nv.fence_registers' op values must share one type: #1 is 'vector<4xi32>', #0 is 'vector<8xf32>'}}
  %p:2 = attn_nv.fence_registers %a, %b : vector<8xf32>, vector<4xi32>
  return
}

// -----

func.func @fence_none() {
  // expected-error @+1 {{'attn_nv.fence_registers' op needs at least one value}}
  "attn_nv.fence_registers"() : () -> ()
  return
}

// -----

func.func @softmax_no_scores(%m: f32) {
  // expected-error @+1 {{'attn_nv.online_softmax' op needs at least one score tile}}
  %a, %b, %c, %d, %alpha, %moved = attn_nv.online_softmax state(%m, %m, %m, %m) : f16
  return
}

// -----

func.func @softmax_scale(%s: vector<8xf32>, %m: f32) {
  // expected-error @+1 {{'attn_nv.online_softmax' op 'scale' must be positive (the mask and the maximum work on the dots), got -1}}
  %p, %a, %b, %c, %d, %alpha, %moved = attn_nv.online_softmax %s state(%m, %m, %m, %m) {scale = -1.0 : f64} : f16
  return
}

// -----

func.func @softmax_weights(%s: vector<8xf32>, %m: f32) {
  // expected-error @+1 {{'attn_nv.online_softmax' op 'weights' must be one tile per score tile (2), got 1}}
  %p:2, %a, %b, %c, %d, %alpha, %moved = attn_nv.online_softmax %s, %s state(%m, %m, %m, %m) weights(%s) : f16
  return
}

// -----

func.func @copy_src_width(%k: memref<?x8x?x40xf16>, %t: memref<64x56xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op 'src_width' must be a multiple of 8 in (0, width = 48], got 56}}
  attn_nv.copy_tile %k -> %t plain async thread %i {rows = 64 : i64, src_width = 56 : i64, threads = 128 : i64, width = 48 : i64} : memref<?x8x?x40xf16> -> memref<64x56xf16, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_width(%k: memref<?x8x?x40xf16>, %t: memref<64x56xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op 'width' must be a positive multiple of 8 (16-byte chunks of 'f16'), got 44}}
  attn_nv.copy_tile %k -> %t plain async thread %i {rows = 64 : i64, src_width = 40 : i64, threads = 128 : i64, width = 44 : i64} : memref<?x8x?x40xf16> -> memref<64x56xf16, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_bytes_layout_f16(%k: memref<?x8x?x128xf16>, %t: memref<64x128xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op the bytes layout is the one of one-byte elements: bytes with 'f16'}}
  attn_nv.copy_tile %k -> %t bytes async thread %i {rows = 64 : i64, src_width = 128 : i64, threads = 128 : i64, width = 128 : i64} : memref<?x8x?x128xf16> -> memref<64x128xf16, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_bytes_swizzled(%k: memref<?x8x?x128xf8E4M3FN>, %t: memref<64x128xf8E4M3FN, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op the bytes layout is the one of one-byte elements: swizzled with 'f8E4M3FN'}}
  attn_nv.copy_tile %k -> %t swizzled async thread %i {rows = 64 : i64, src_width = 128 : i64, threads = 128 : i64, width = 128 : i64} : memref<?x8x?x128xf8E4M3FN> -> memref<64x128xf8E4M3FN, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_bytes_rows(%k: memref<?x8x?x96xi8>, %t: memref<64x96xi8, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op a bytes tile's rows must be a power of two of 16-byte chunks, got width 96}}
  attn_nv.copy_tile %k -> %t bytes async thread %i {rows = 64 : i64, src_width = 96 : i64, threads = 128 : i64, width = 96 : i64} : memref<?x8x?x96xi8> -> memref<64x96xi8, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_swizzled_width(%k: memref<?x8x?x48xf16>, %t: memref<64x48xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op a swizzled tile's width must be a multiple of 64 (128-byte rows), got 48}}
  attn_nv.copy_tile %k -> %t swizzled async thread %i {rows = 64 : i64, src_width = 48 : i64, threads = 128 : i64, width = 48 : i64} : memref<?x8x?x48xf16> -> memref<64x48xf16, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_blocked_shape(%k: memref<?x8x?x128xf16>, %t: memref<64x128xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op 'dst' must be 128x64 for 64 rows of 128 in the blocked layout, got 'memref<64x128xf16, 3>'}}
  attn_nv.copy_tile %k -> %t blocked async thread %i {rows = 64 : i64, src_width = 128 : i64, threads = 128 : i64, width = 128 : i64} : memref<?x8x?x128xf16> -> memref<64x128xf16, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_types(%k: memref<?x8x?x64xbf16>, %t: memref<64x64xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op 'src' and 'dst' must hold one element type, got 'bf16' and 'f16'}}
  attn_nv.copy_tile %k -> %t plain async thread %i {rows = 64 : i64, src_width = 64 : i64, threads = 128 : i64, width = 64 : i64} : memref<?x8x?x64xbf16> -> memref<64x64xf16, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_global_dst(%k: memref<?x8x?x64xf16>, %t: memref<64x64xf16>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op 'dst' must be in shared memory, got 'memref<64x64xf16>'}}
  attn_nv.copy_tile %k -> %t plain async thread %i {rows = 64 : i64, src_width = 64 : i64, threads = 128 : i64, width = 64 : i64} : memref<?x8x?x64xf16> -> memref<64x64xf16> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %row : i1, index, index, index
  }
  return
}

// -----

func.func @copy_yield(%k: memref<?x8x?x64xf16>, %t: memref<64x64xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op 'source' must yield an i1 (the row exists) and 3 indices of 'src' (all but the column), got 3 values}}
  attn_nv.copy_tile %k -> %t plain async thread %i {rows = 64 : i64, src_width = 64 : i64, threads = 128 : i64, width = 64 : i64} : memref<?x8x?x64xf16> -> memref<64x64xf16, 3> {
  ^bb0(%row: index):
    %true = arith.constant true
    attn_nv.yield %true, %i, %row : i1, index, index
  }
  return
}

// -----

func.func @copy_row_argument(%k: memref<?x8x?x64xf16>, %t: memref<64x64xf16, 3>, %i: index) {
  // expected-error @+1 {{'attn_nv.copy_tile' op 'source' must take one index (the tile's row)}}
  attn_nv.copy_tile %k -> %t plain async thread %i {rows = 64 : i64, src_width = 64 : i64, threads = 128 : i64, width = 64 : i64} : memref<?x8x?x64xf16> -> memref<64x64xf16, 3> {
  ^bb0(%row: i32):
    %true = arith.constant true
    attn_nv.yield %true, %i, %i, %i : i1, index, index, index
  }
  return
}

// -----

func.func @mask_no_scores(%i: index) {
  // expected-error @+1 {{'attn_nv.mask_tile' op needs at least one score tile}}
  attn_nv.mask_tile rows(%i) keys(%i, %i) sizes(%i, %i) {group = 1 : i64, mask = #attn.mask<causal>}
  return
}

// -----

func.func @mask_group(%s: vector<8xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.mask_tile' op 'group' must be at least 1, got 0}}
  %m = attn_nv.mask_tile %s rows(%i) keys(%i, %i) sizes(%i, %i) {group = 0 : i64, mask = #attn.mask<causal>}
  return
}

// -----

func.func @mask_not_a_mask(%s: vector<8xf32>, %i: index) {
  // expected-error @+1 {{attribute 'mask' failed to satisfy constraint: an #attn.mask}}
  %m = attn_nv.mask_tile %s rows(%i) keys(%i, %i) sizes(%i, %i) {group = 1 : i64, mask = 3 : i64}
  return
}

// -----

func.func @store_accumulator_i8(%acc: vector<8xf32>, %t: memref<64x64xi8, 3>, %i: index) {
  // expected-error @+1 {{operand #1 must be 2D memref of 32-bit float or 16-bit float or bfloat16 type values}}
  attn_nv.store_accumulator %acc -> %t[%i, %i] lanes(%i, %i) : memref<64x64xi8, 3>
  return
}

// -----

func.func @chunk_width(%i: index) {
  // expected-error @+1 {{'attn_nv.for_each_chunk' op 'width' must be a positive multiple of 'chunk' (8), got 44}}
  attn_nv.for_each_chunk thread %i of 32 rows(%i, 32) width 44 chunk 8 limit(%i, %i) {
  ^bb0(%row: index, %col: index):
    attn_nv.yield
  }
  return
}

// -----

func.func @chunk_threads(%i: index) {
  // expected-error @+1 {{'attn_nv.for_each_chunk' op 'threads', 'rows' and 'chunk' must be positive, got 0, 32 and 8}}
  attn_nv.for_each_chunk thread %i of 0 rows(%i, 32) width 40 chunk 8 limit(%i, %i) {
  ^bb0(%row: index, %col: index):
    attn_nv.yield
  }
  return
}

// -----

func.func @chunk_body(%i: index) {
  // expected-error @+1 {{'attn_nv.for_each_chunk' op 'body' must take two indices (the chunk's row and column)}}
  attn_nv.for_each_chunk thread %i of 32 rows(%i, 32) width 40 chunk 8 limit(%i, %i) {
  ^bb0(%row: index):
    attn_nv.yield
  }
  return
}

// -----

func.func @chunk_yield(%i: index) {
  // expected-error @+1 {{'attn_nv.for_each_chunk' op 'body' must end in an attn_nv.yield of nothing}}
  attn_nv.for_each_chunk thread %i of 32 rows(%i, 32) width 40 chunk 8 limit(%i, %i) {
  ^bb0(%row: index, %col: index):
    attn_nv.yield %row : index
  }
  return
}

// -----

func.func @yield_outside(%i: index) {
  // expected-error @+1 {{'attn_nv.yield' op expects parent op to be one of 'attn_nv.copy_tile, attn_nv.for_each_chunk'}}
  attn_nv.yield
}

// -----

func.func @mask_tile_at_without_region(%s: vector<8xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.mask_tile' op takes 'at(batch, kv_head)' exactly when it has a 'mask_mod' region (the region's b and h)}}
  %m = attn_nv.mask_tile %s rows(%i) keys(%i, %i) sizes(%i, %i) at(%i, %i)
      {group = 1 : i64, mask = #attn.mask<causal>}
  return
}

// -----

func.func @mask_tile_region_without_at(%s: vector<8xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.mask_tile' op takes 'at(batch, kv_head)' exactly when it has a 'mask_mod' region (the region's b and h)}}
  %m = attn_nv.mask_tile %s rows(%i) keys(%i, %i) sizes(%i, %i)
      {group = 1 : i64, mask = #attn.mask<none>} mask_mod {
  ^bb0(%bb: index, %h: index, %q: index, %k: index):
    %t = arith.cmpi ule, %k, %q : index
    attn.yield %t : i1
  }
  return
}

// -----

func.func @mask_tile_captures_without_region(%s: vector<8xf32>, %i: index, %d: memref<4xi32>) {
  // expected-error @+1 {{'attn_nv.mask_tile' op has captures but no 'mask_mod' region to read them}}
  %m = attn_nv.mask_tile %s rows(%i) keys(%i, %i) sizes(%i, %i)
      captures(%d : memref<4xi32>) {group = 1 : i64, mask = #attn.mask<none>}
  return
}

// -----

func.func @mask_tile_region_yields_f32(%s: vector<8xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.mask_tile' op region 'mask_mod' must yield 'i1', got 'f32'}}
  %m = attn_nv.mask_tile %s rows(%i) keys(%i, %i) sizes(%i, %i) at(%i, %i)
      {group = 1 : i64, mask = #attn.mask<none>} mask_mod {
  ^bb0(%bb: index, %h: index, %q: index, %k: index):
    %z = arith.constant 0.0 : f32
    attn.yield %z : f32
  }
  return
}

// -----

func.func @score_tile_negative_scale(%d: vector<8xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.score_tile' op 'scale' must be positive, got -1.000000e+00}}
  %s = attn_nv.score_tile %d rows(%i, %i, %i) keys(%i, %i) sizes(%i, %i) at(%i, %i)
      {group = 1 : i64, m_offset = 0 : i64, scale = -1.0 : f64} score_mod {
  ^bb0(%x: f32, %bb: index, %h: index, %q: index, %k: index):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @score_tile_zero_softcap(%d: vector<8xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.score_tile' op 'softcap' must be positive, got 0.000000e+00}}
  %s = attn_nv.score_tile %d rows(%i, %i, %i) keys(%i, %i) sizes(%i, %i) at(%i, %i)
      {group = 1 : i64, m_offset = 0 : i64, scale = 1.0 : f64, softcap = 0.0 : f64} score_mod {
  ^bb0(%x: f32, %bb: index, %h: index, %q: index, %k: index):
    attn.yield %x : f32
  }
  return
}

// -----

func.func @score_tile_yields_i1(%d: vector<8xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.score_tile' op region 'score_mod' must yield 'f32', got 'i1'}}
  %s = attn_nv.score_tile %d rows(%i, %i, %i) keys(%i, %i) sizes(%i, %i) at(%i, %i)
      {group = 1 : i64, m_offset = 0 : i64, scale = 1.0 : f64} score_mod {
  ^bb0(%x: f32, %bb: index, %h: index, %q: index, %k: index):
    %t = arith.cmpi ult, %q, %k : index
    attn.yield %t : i1
  }
  return
}

// -----

func.func @score_tile_group_zero(%d: vector<8xf32>, %i: index) {
  // expected-error @+1 {{'attn_nv.score_tile' op 'group' must be at least 1, got 0}}
  %s = attn_nv.score_tile %d rows(%i, %i, %i) keys(%i, %i) sizes(%i, %i) at(%i, %i)
      {group = 0 : i64, m_offset = 0 : i64, scale = 1.0 : f64} score_mod {
  ^bb0(%x: f32, %bb: index, %h: index, %q: index, %k: index):
    attn.yield %x : f32
  }
  return
}
