// One case per rule the packed (varlen) forms of attn.attention add; each
// message names the operand and the rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// A packed Q is [total_q, Hq, D].
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' must have rank 3 [total_q, Hq, D] (packed by cu_seqlens_q), got rank 4}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// So is O.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'o' must have rank 3 [total_q, Hq, Dv] (packed by cu_seqlens_q), got rank 4}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// A packed LSE is [total_q, Hq].
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<?x8x64xf16>, %lse: memref<2x8x?xf32>) {
  // expected-error @+1 {{operand 'lse' must have rank 2 [total_q, Hq] (packed by cu_seqlens_q), got rank 3}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<2x8x?xf32>)
  return
}

// -----

// Packed K/V are [total_k, Hkv, D].
func.func @f(%q: memref<?x8x64xf16>, %k: memref<2x2x?x64xf16>, %v: memref<2x2x?x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{operand 'k' must have rank 3 [total_k, Hkv, D] (packed by cu_seqlens_k), got rank 4}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<2x2x?x64xf16>) v(%v : memref<2x2x?x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// The offsets are one rank-1 array.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3x1xi32>, %ck: memref<3xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_q' must have rank 1 [B + 1], got rank 2}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3x1xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// ... of i32.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi64>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_k' element type 'i64' must be 'i32'}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi64>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// Both offset arrays describe the same batch.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<4xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{batch mismatch: operand 'cu_seqlens_k' dim 0 is 4 (B + 1) but operand 'cu_seqlens_q' dim 0 is 3 (B + 1)}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<4xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// A packed K/V under a padded Q: B + 1 offsets for Q's B sequences.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %ck: memref<2xi32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{batch mismatch: operand 'cu_seqlens_k' dim 0 is 2 (B + 1) but operand 'q' dim 0 is 2 (B)}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_k(%ck : memref<2xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// A paged cache under a packed Q has one block-table row per sequence.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x16x64xf16>, %v: memref<?x2x16x64xf16>, %cq: memref<3xi32>, %bt: memref<3x4xi32>, %lens: memref<2xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{batch mismatch: operand 'block_table' dim 0 is 3 (B) but operand 'cu_seqlens_q' dim 0 is 3 (B + 1)}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x16x64xf16>) v(%v : memref<?x2x16x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) block_table(%bt : memref<3x4xi32>) kv_lens(%lens : memref<2xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// ... and one kv_lens entry per sequence.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<2x2x?x64xf16>, %v: memref<2x2x?x64xf16>, %cq: memref<3xi32>, %lens: memref<3xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{batch mismatch: operand 'kv_lens' dim 0 is 3 (B) but operand 'cu_seqlens_q' dim 0 is 3 (B + 1)}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<2x2x?x64xf16>) v(%v : memref<2x2x?x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) kv_lens(%lens : memref<3xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// A contiguous K/V under a packed Q has the batch as dim 0.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<3x2x?x64xf16>, %v: memref<3x2x?x64xf16>, %cq: memref<3xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{batch mismatch: operand 'k' dim 0 is 3 (B) but operand 'cu_seqlens_q' dim 0 is 3 (B + 1)}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<3x2x?x64xf16>) v(%v : memref<3x2x?x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// cu_seqlens_k gives K/V's lengths: no kv_lens with it.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %lens: memref<2xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_k' packs K/V and gives their lengths; operand 'kv_lens' cannot be given with it}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) kv_lens(%lens : memref<2xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// ... and no block table: packed K/V are not a paged cache.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %bt: memref<2x4xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_k' packs K/V and gives their lengths; operand 'block_table' cannot be given with it}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) block_table(%bt : memref<2x4xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// O holds Q's packed tokens.
func.func @f(%q: memref<10x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<12x8x64xf16>) {
  // expected-error @+1 {{packed query tokens (total_q) mismatch: operand 'o' dim 0 is 12 but operand 'q' dim 0 is 10}}
  attn.attention q(%q : memref<10x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<12x8x64xf16>)
  return
}

// -----

// ... and so does the LSE, per head.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<?x8x64xf16>, %lse: memref<?x4xf32>) {
  // expected-error @+1 {{query head count mismatch: operand 'lse' dim 1 is 4 but operand 'q' dim 1 is 8}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<?x4xf32>)
  return
}

// -----

// Packed K and V hold the same tokens.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<20x2x64xf16>, %v: memref<21x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{packed key tokens (total_k) mismatch: operand 'v' dim 0 is 21 but operand 'k' dim 0 is 20}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<20x2x64xf16>) v(%v : memref<21x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// Head dims are the last dim of a packed operand.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x32xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{head dim (D) mismatch: operand 'k' dim 2 is 32 but operand 'q' dim 2 is 64}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x32xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// max_q_len bounds a packed Q's lengths.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x32x64xf16>, %v: memref<2x2x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{attribute 'max_q_len' bounds the query lengths of a packed batch; it needs operand 'cu_seqlens_q' (a padded Q's length is its dim 2)}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x32x64xf16>) v(%v : memref<2x2x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) max_q_len = 16
  return
}

// -----

func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{attribute 'max_q_len' must be in [1, 2^31-1], got 0}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) -> o(%o : memref<?x8x64xf16>) max_q_len = 0
  return
}

// -----

// A static empty offsets array (B = -1) is no batch at all.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %cq: memref<0xi32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{operand 'cu_seqlens_q' dim 0 is 0; a static dim must be at least 1}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x?x64xf16>) v(%v : memref<?x2x?x64xf16>) cu_seqlens_q(%cq : memref<0xi32>) -> o(%o : memref<?x8x64xf16>)
  return
}
