// One case per rule of the L1 op verifiers; each message names the operand
// or result and the rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @f() {
  // expected-error @+1 {{'acc' must be a static tensor of rank 2 [rows, Dv], got 'tensor<16xf32>'}}
  %m, %l, %acc = attn.init_state : tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'acc' must have f32 elements, got 'f16'}}
  %m, %l, %acc = attn.init_state : tensor<16xf32>, tensor<16x64xf16>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{row count mismatch: 'acc' dim 0 is 8 but 'max' dim 0 is 16}}
  %m, %l, %acc = attn.init_state : tensor<16xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'acc' must have no empty dim, got 'tensor<16x0xf32>'}}
  %m, %l, %acc = attn.init_state : tensor<16xf32>, tensor<16x0xf32>
  return
}

// -----

func.func @f(%q: memref<2x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{attribute 'group' (3) must divide the query head count (8)}}
  %t = attn.load_q %q[%i, %i, %i] group 3 : memref<2x8x?x64xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%q: memref<2x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{attribute 'group' must be >= 1, got 0}}
  %t = attn.load_q %q[%i, %i, %i] group 0 : memref<2x8x?x64xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%q: memref<2x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{head dim mismatch: 'tile' dim 1 is 32 but 'q' dim 3 is 64}}
  %t = attn.load_q %q[%i, %i, %i] group 1 : memref<2x8x?x64xf16> -> tensor<16x32xf16>
  return
}

// -----

func.func @f(%q: memref<2x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{'tile' element type 'f32' must match 'q' ('f16')}}
  %t = attn.load_q %q[%i, %i, %i] group 1 : memref<2x8x?x64xf16> -> tensor<16x64xf32>
  return
}

// -----

func.func @f(%q: memref<8x?x64xf16>, %i: index) {
  // expected-error @+1 {{'q' must have rank 4 [B, Hq, Sq, D], got 'memref<8x?x64xf16>'}}
  %t = attn.load_q %q[%i, %i, %i] group 1 : memref<8x?x64xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%q: memref<2x8x?x64xi8>, %i: index) {
  // expected-error @+1 {{'tile' element type 'i8' is not supported; expected f16, bf16 or f32}}
  %t = attn.load_q %q[%i, %i, %i] group 1 : memref<2x8x?x64xi8> -> tensor<16x64xi8>
  return
}

// -----

func.func @f(%k: memref<?x2x16x64xf16>, %bt: memref<?x?xi64>, %i: index) {
  // expected-error @+1 {{'block_table' must have i32 elements, got 'i64'}}
  %t = attn.load_kv %k[%i, %i, %i] length %i block_table %bt : memref<?x2x16x64xf16>, memref<?x?xi64> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%k: memref<?x2x16x64xf16>, %bt: memref<?xi32>, %i: index) {
  // expected-error @+1 {{'block_table' must have rank 2 [B, max_blocks], got 'memref<?xi32>'}}
  %t = attn.load_kv %k[%i, %i, %i] length %i block_table %bt : memref<?x2x16x64xf16>, memref<?xi32> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%k: memref<?x2x?x64xf16>, %bt: memref<?x?xi32>, %i: index) {
  // expected-error @+1 {{a paged 'src' must have a static block size (dim 2)}}
  %t = attn.load_kv %k[%i, %i, %i] length %i block_table %bt : memref<?x2x?x64xf16>, memref<?x?xi32> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%k: memref<?x16x64xf16>, %bt: memref<?x?xi32>, %i: index) {
  // expected-error @+1 {{'src' must have rank 4 [num_blocks, Hkv, block_size, D], got 'memref<?x16x64xf16>'}}
  %t = attn.load_kv %k[%i, %i, %i] length %i block_table %bt : memref<?x16x64xf16>, memref<?x?xi32> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%k: memref<?x2x?x64xf16>, %i: index) {
  // expected-error @+1 {{'tile' holds a row's first columns: its head dim (128) must be at most 'src''s static head dim (64)}}
  %t = attn.load_kv %k[%i, %i, %i] length %i : memref<?x2x?x64xf16> -> tensor<16x128xf16>
  return
}

// -----

func.func @f(%k: memref<?x2x?x?xf16>, %i: index) {
  // expected-error @+1 {{'tile' holds a row's first columns: its head dim (64) must be at most 'src''s static head dim (?)}}
  %t = attn.load_kv %k[%i, %i, %i] length %i : memref<?x2x?x?xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<16x64xf16>, %k: tensor<8x64xbf16>) {
  // expected-error @+1 {{'k' element type 'bf16' must match 'q' ('f16')}}
  %s = attn.qk %q, %k scale 1.0 : tensor<16x64xf16>, tensor<8x64xbf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%q: tensor<16x64xf16>, %k: tensor<8x32xf16>) {
  // expected-error @+1 {{head dim mismatch: 'k' dim 1 is 32 but 'q' dim 1 is 64}}
  %s = attn.qk %q, %k scale 1.0 : tensor<16x64xf16>, tensor<8x32xf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%q: tensor<16x64xf16>, %k: tensor<8x64xf16>) {
  // expected-error @+1 {{column count mismatch: 'scores' dim 1 is 16 but 'k' dim 0 is 8}}
  %s = attn.qk %q, %k scale 1.0 : tensor<16x64xf16>, tensor<8x64xf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @f(%q: tensor<16x64xf16>, %k: tensor<8x64xf16>) {
  // expected-error @+1 {{row count mismatch: 'scores' dim 0 is 32 but 'q' dim 0 is 16}}
  %s = attn.qk %q, %k scale 1.0 : tensor<16x64xf16>, tensor<8x64xf16> -> tensor<32x8xf32>
  return
}

// -----

func.func @f(%q: tensor<16x64xf16>, %k: tensor<8x64xf16>) {
  // expected-error @+1 {{'scores' must have f32 elements, got 'f16'}}
  %s = attn.qk %q, %k scale 1.0 : tensor<16x64xf16>, tensor<8x64xf16> -> tensor<16x8xf16>
  return
}

// -----

func.func @f(%q: tensor<16x64xf16>, %k: tensor<8x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be positive and finite, got -1}}
  %s = attn.qk %q, %k scale -1.0 : tensor<16x64xf16>, tensor<8x64xf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%q: tensor<16x64xf16>, %k: tensor<8x64xf16>) {
  // expected-error @+1 {{attribute 'softcap' must be positive and finite, got 0}}
  %s = attn.qk %q, %k scale 1.0 softcap 0.0 : tensor<16x64xf16>, tensor<8x64xf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%s: tensor<16x8xf32>, %i: index) {
  // expected-error @+1 {{attribute 'group' must be >= 1, got -2}}
  %r = attn.mask %s rows %i cols %i q_len %i kv_len %i mask #attn.mask<causal> group -2 : tensor<16x8xf32>
  return
}

// -----

func.func @f(%s: tensor<16x8xf16>, %i: index) {
  // expected-error @+1 {{'scores' must have f32 elements, got 'f16'}}
  %r = attn.mask %s rows %i cols %i q_len %i kv_len %i mask #attn.mask<none> group 1 : tensor<16x8xf16>
  return
}

// -----

func.func @f(%s: tensor<16x8xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{row count mismatch: 'max' dim 0 is 8 but 'scores' dim 0 is 16}}
  %p, %m1, %l1, %a = attn.online_softmax %s, %m, %m : tensor<16x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%s: tensor<16x8xf32>, %m: tensor<16x1xf32>) {
  // expected-error @+1 {{'max' must be a static tensor of rank 1 [rows], got 'tensor<16x1xf32>'}}
  %p, %m1, %l1, %a = attn.online_softmax %s, %m, %m : tensor<16x8xf32>, tensor<16x1xf32>
  return
}

// -----

func.func @f(%p: tensor<16x8xf32>, %v: tensor<4x64xf16>, %acc: tensor<16x64xf32>, %r: tensor<16xf32>) {
  // expected-error @+1 {{column count mismatch: 'v' dim 0 is 4 but 'probs' dim 1 is 8}}
  %a = attn.pv %p, %v, %acc, %r : tensor<16x8xf32>, tensor<4x64xf16>, tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @f(%p: tensor<16x8xf32>, %v: tensor<8x32xf16>, %acc: tensor<16x64xf32>, %r: tensor<16xf32>) {
  // expected-error @+1 {{value head dim mismatch: 'acc' dim 1 is 64 but 'v' dim 1 is 32}}
  %a = attn.pv %p, %v, %acc, %r : tensor<16x8xf32>, tensor<8x32xf16>, tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @f(%p: tensor<16x8xf32>, %v: tensor<8x64xf16>, %acc: tensor<16x64xf32>, %r: tensor<8xf32>) {
  // expected-error @+1 {{row count mismatch: 'rescale' dim 0 is 8 but 'acc' dim 0 is 16}}
  %a = attn.pv %p, %v, %acc, %r : tensor<16x8xf32>, tensor<8x64xf16>, tensor<16x64xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%p: tensor<8x8xf32>, %v: tensor<8x64xf16>, %acc: tensor<16x64xf32>, %r: tensor<16xf32>) {
  // expected-error @+1 {{row count mismatch: 'acc' dim 0 is 16 but 'probs' dim 0 is 8}}
  %a = attn.pv %p, %v, %acc, %r : tensor<8x8xf32>, tensor<8x64xf16>, tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @f(%m: tensor<16xf32>, %a: tensor<8x64xf32>) {
  // expected-error @+1 {{row count mismatch: 'acc0' dim 0 is 8 but 'max0' dim 0 is 16}}
  %m2, %l2, %a2 = attn.merge (%m, %m, %a), (%m, %m, %a) : tensor<16xf32>, tensor<8x64xf32>
  return
}

// -----

func.func @f(%m: tensor<16xf32>, %a: tensor<16x64xf32>) {
  // expected-error @+1 {{value head dim mismatch: 'out' dim 1 is 32 but 'acc' dim 1 is 64}}
  %o, %lse = attn.finalize %m, %m, %a : tensor<16xf32>, tensor<16x64xf32> -> tensor<16x32xf16>
  return
}

// -----

func.func @f(%m: tensor<16xf32>, %a: tensor<16x64xf32>) {
  // expected-error @+1 {{row count mismatch: 'out' dim 0 is 8 but 'acc' dim 0 is 16}}
  %o, %lse = attn.finalize %m, %m, %a : tensor<16xf32>, tensor<16x64xf32> -> tensor<8x64xf16>
  return
}

// -----

func.func @f(%m: tensor<16xf32>, %a: tensor<16x64xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{row count mismatch: 'sink' dim 0 is 8 but 'max' dim 0 is 16}}
  %o, %lse = attn.finalize %m, %m, %a sink %s : tensor<16xf32>, tensor<16x64xf32>, tensor<8xf32> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%m: tensor<16xf32>, %a: tensor<16x64xf32>, %s: tensor<16xf16>) {
  // expected-error @+1 {{'sink' must have f32 elements, got 'f16'}}
  %o, %lse = attn.finalize %m, %m, %a sink %s : tensor<16xf32>, tensor<16x64xf32>, tensor<16xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%s: memref<2x8xf32>, %i: index) {
  // expected-error @+1 {{'sinks' must have rank 1 [Hq], got 'memref<2x8xf32>'}}
  %t = attn.load_sink %s[%i, %i] group 4 : memref<2x8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%s: memref<8xi32>, %i: index) {
  // expected-error @+1 {{'sinks' element type 'i32' is not supported; expected f16, bf16 or f32}}
  %t = attn.load_sink %s[%i, %i] group 4 : memref<8xi32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%s: memref<8xf32>, %i: index) {
  // expected-error @+1 {{'tile' must have f32 elements, got 'f16'}}
  %t = attn.load_sink %s[%i, %i] group 4 : memref<8xf32> -> tensor<16xf16>
  return
}

// -----

func.func @f(%s: memref<8xf32>, %i: index) {
  // expected-error @+1 {{attribute 'group' must be >= 1, got 0}}
  %t = attn.load_sink %s[%i, %i] group 0 : memref<8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @f(%t: tensor<16x64xf16>, %o: memref<2x8x?x64xbf16>, %i: index) {
  // expected-error @+1 {{'tile' element type 'f16' must match 'o' ('bf16')}}
  attn.store_o %t, %o[%i, %i, %i] group 1 : tensor<16x64xf16>, memref<2x8x?x64xbf16>
  return
}

// -----

func.func @f(%t: tensor<16x32xf16>, %o: memref<2x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{value head dim mismatch: 'tile' dim 1 is 32 but 'o' dim 3 is 64}}
  attn.store_o %t, %o[%i, %i, %i] group 1 : tensor<16x32xf16>, memref<2x8x?x64xf16>
  return
}

// -----

func.func @f(%t: tensor<16xf32>, %l: memref<2x8x?xf16>, %i: index) {
  // expected-error @+1 {{'lse' must have f32 elements}}
  attn.store_lse %t, %l[%i, %i, %i] group 1 : tensor<16xf32>, memref<2x8x?xf16>
  return
}

// -----

func.func @f(%t: tensor<16xf32>, %l: memref<2x8x?x1xf32>, %i: index) {
  // expected-error @+1 {{'lse' must have rank 3 [B, Hq, Sq], got 'memref<2x8x?x1xf32>'}}
  attn.store_lse %t, %l[%i, %i, %i] group 1 : tensor<16xf32>, memref<2x8x?x1xf32>
  return
}

// -----

func.func @f(%q: memref<2x8x?x64xf16>, %i: index) {
  // expected-error @+1 {{'q' must have rank 3 [total_q, Hq, D] (packed by 'seq'), got 'memref<2x8x?x64xf16>'}}
  %t = attn.load_q %q[%i, %i, %i] group 1 seq(%i, %i) : memref<2x8x?x64xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%k: memref<?x2x64xf16>, %i: index) {
  // expected-error @+1 {{'src' must have rank 4 [B, Hkv, Sk, D], got 'memref<?x2x64xf16>'}}
  %t = attn.load_kv %k[%i, %i, %i] length %i : memref<?x2x64xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%k: memref<?x2x16x64xf16>, %bt: memref<?x?xi32>, %i: index) {
  // expected-error @+1 {{a K/V tile comes from a paged cache ('block_table') or from packed sequences ('seq'), not both}}
  %t = attn.load_kv %k[%i, %i, %i] length %i block_table %bt seq(%i) : memref<?x2x16x64xf16>, memref<?x?xi32> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%o: memref<?x8x64xf16>, %t: tensor<16x64xf16>, %i: index) {
  // expected-error @+1 {{'o' must have rank 4 [B, Hq, Sq, Dv], got 'memref<?x8x64xf16>'}}
  attn.store_o %t, %o[%i, %i, %i] group 1 : tensor<16x64xf16>, memref<?x8x64xf16>
  return
}

// -----

func.func @f(%l: memref<?x8x?xf32>, %t: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{'lse' must have rank 2 [total_q, Hq] (packed by 'seq'), got 'memref<?x8x?xf32>'}}
  attn.store_lse %t, %l[%i, %i, %i] group 1 seq(%i, %i) : tensor<16xf32>, memref<?x8x?xf32>
  return
}

// -----

// The generic form can name a packed start without a length.
func.func @f(%q: memref<?x8x64xf16>, %i: index) {
  // expected-error @+1 {{'seq' needs both the sequence's first row and its length}}
  %t = "attn.load_q"(%q, %i, %i, %i, %i) <{group = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}> : (memref<?x8x64xf16>, index, index, index, index) -> tensor<16x64xf16>
  return
}

// -----

// load_kv of a quantized cache: a scale belongs to a quantized src only.
func.func @f(%k: memref<?x2x?x64xf16>, %s: memref<f32>, %i: index) {
  // expected-error @+1 {{'scale' dequantizes a quantized 'src' (f8E4M3FN, f8E5M2 or i8); 'src' has element type 'f16'}}
  %t = attn.load_kv %k[%i, %i, %i] length %i scale(%s : memref<f32>) : memref<?x2x?x64xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%k: memref<?x2x?x64xf8E4M3FN>, %i: index) {
  // expected-error @+1 {{a quantized 'src' dequantizes into an f32 tile, got 'f16'}}
  %t = attn.load_kv %k[%i, %i, %i] length %i : memref<?x2x?x64xf8E4M3FN> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%k: memref<?x2x?x64xi8>, %s: memref<2xf16>, %i: index) {
  // expected-error @+1 {{'scale' must have f32 elements, got 'f16'}}
  %t = attn.load_kv %k[%i, %i, %i] length %i scale(%s : memref<2xf16>) : memref<?x2x?x64xi8> -> tensor<16x64xf32>
  return
}

// -----

func.func @f(%k: memref<?x2x?x64xi8>, %s: memref<?x2xf32>, %i: index) {
  // expected-error @+1 {{'scale' must have rank 0 (per tensor), 1 (per K/V head) or 3 (src's rank - 1, per token), got rank 2}}
  %t = attn.load_kv %k[%i, %i, %i] length %i scale(%s : memref<?x2xf32>) : memref<?x2x?x64xi8> -> tensor<16x64xf32>
  return
}

// -----

// A dequantized (f32) K tile scores any Q; other K tiles need Q's type.
func.func @f(%q: tensor<16x64xf16>, %k: tensor<16x64xbf16>) {
  // expected-error @+1 {{'k' element type 'bf16' must match 'q' ('f16')}}
  %s = attn.qk %q, %k scale 0.125 : tensor<16x64xf16>, tensor<16x64xbf16> -> tensor<16x16xf32>
  return
}

// -----

// load_q: a scale belongs to an fp8 q, which dequantizes into f32.
func.func @f(%q: memref<?x8x?x64xf16>, %s: memref<f32>, %i: index) {
  // expected-error @+1 {{'scale' dequantizes an fp8 'q'; 'q' has element type 'f16'}}
  %t = attn.load_q %q[%i, %i, %i] group 1 scale(%s : memref<f32>) : memref<?x8x?x64xf16> -> tensor<16x64xf16>
  return
}

// -----

func.func @f(%q: memref<?x8x?x64xf8E4M3FN>, %i: index) {
  // expected-error @+1 {{an fp8 'q' dequantizes into an f32 tile, got 'bf16'}}
  %t = attn.load_q %q[%i, %i, %i] group 1 : memref<?x8x?x64xf8E4M3FN> -> tensor<16x64xbf16>
  return
}
