// One case per rule of attn.attention's verifier; each message names the
// operand and the rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Q must be rank 4.
func.func @f(%q: memref<8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' must have rank 4 [B, Hq, Sq, D], got rank 3}}
  attn.attention q(%q : memref<8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// K must be rank 4.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k' must have rank 4 [B, Hkv, Sk, D], got rank 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// V must be rank 4.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<1x2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'v' must have rank 4 [B, Hkv, Sk, Dv], got rank 5}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<1x2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// O must be rank 4.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<8x16x64xf16>) {
  // expected-error @+1 {{operand 'o' must have rank 4 [B, Hq, Sq, Dv], got rank 3}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<8x16x64xf16>)
  return
}

// -----

// LSE must be rank 3.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>, %lse: memref<2x8x16x1xf32>) {
  // expected-error @+1 {{operand 'lse' must have rank 3 [B, Hq, Sq], got rank 4}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) lse(%lse : memref<2x8x16x1xf32>)
  return
}

// -----

// A paged cache names its own layout.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<10x8x16xf16>, %v: memref<10x8x16x64xf16>, %o: memref<2x8x16x64xf16>, %bt: memref<2x4xi32>, %lens: memref<2xi32>) {
  // expected-error @+1 {{operand 'k' must have rank 4 [num_blocks, Hkv, block_size, D], got rank 3}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<10x8x16xf16>) v(%v : memref<10x8x16x64xf16>) block_table(%bt : memref<2x4xi32>) kv_lens(%lens : memref<2xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Block tables are 2-D i32.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<10x8x16x64xf16>, %v: memref<10x8x16x64xf16>, %o: memref<2x8x16x64xf16>, %bt: memref<2xi32>, %lens: memref<2xi32>) {
  // expected-error @+1 {{operand 'block_table' must have rank 2 [B, max_blocks], got rank 1}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<10x8x16x64xf16>) v(%v : memref<10x8x16x64xf16>) block_table(%bt : memref<2xi32>) kv_lens(%lens : memref<2xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// kv_lens is 1-D i32.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>, %lens: memref<2xi64>) {
  // expected-error @+1 {{operand 'kv_lens' element type 'i64' must be 'i32'}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) kv_lens(%lens : memref<2xi64>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Static dims must fit in int32.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x4294967296x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k' dim 2 is 4294967296, larger than 2^31-1}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x4294967296x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Layouts must be strided.
func.func @f(%q: memref<2x8x16x64xf16, affine_map<(a, b, c, d) -> (a, b, c floordiv 2, d)>>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' must have a strided layout}}
  attn.attention q(%q : memref<2x8x16x64xf16, affine_map<(a, b, c, d) -> (a, b, c floordiv 2, d)>>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// The head dim must be contiguous.
func.func @f(%q: memref<2x8x16x64xf16, strided<[8192, 1024, 64, 2]>>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' must have unit stride in its innermost dim}}
  attn.attention q(%q : memref<2x8x16x64xf16, strided<[8192, 1024, 64, 2]>>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// K's element type follows Q's.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xbf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k' element type 'bf16' must match operand 'q' ('f16')}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xbf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// V's element type follows Q's.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'v' element type 'f32' must match operand 'q' ('f16')}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Only f16, bf16 and f32.
func.func @f(%q: memref<2x8x16x64xf64>, %k: memref<2x8x32x64xf64>, %v: memref<2x8x32x64xf64>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' element type 'f64' is not supported; expected f16, bf16 or f32}}
  attn.attention q(%q : memref<2x8x16x64xf64>) k(%k : memref<2x8x32x64xf64>) v(%v : memref<2x8x32x64xf64>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// LSE is f32.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>, %lse: memref<2x8x16xf16>) {
  // expected-error @+1 {{operand 'lse' element type 'f16' must be 'f32'}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) lse(%lse : memref<2x8x16xf16>)
  return
}

// -----

// Head counts are static.
func.func @f(%q: memref<2x?x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x?x16x64xf16>) {
  // expected-error @+1 {{operand 'q' head count (dim 1) must be static}}
  attn.attention q(%q : memref<2x?x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x?x16x64xf16>)
  return
}

// -----

// K/V head counts are static.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x?x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k' head count (dim 1) must be static}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x?x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Head dims are static.
func.func @f(%q: memref<2x8x16x?xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' head dim (dim 3) must be static}}
  attn.attention q(%q : memref<2x8x16x?xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// V's head dim is static.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x?xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'v' head dim (dim 3) must be static}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x?xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Head dims are positive.
func.func @f(%q: memref<2x8x16x0xf16>, %k: memref<2x8x32x0xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' head dim (dim 3) must be >= 1, got 0}}
  attn.attention q(%q : memref<2x8x16x0xf16>) k(%k : memref<2x8x32x0xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Head counts are positive.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x0x32x64xf16>, %v: memref<2x0x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k' head count (dim 1) must be >= 1, got 0}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x0x32x64xf16>) v(%v : memref<2x0x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Head dims are bounded.
func.func @f(%q: memref<2x8x16x2048xf16>, %k: memref<2x8x32x2048xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{head dims must be <= 1024, got D = 2048, Dv = 64}}
  attn.attention q(%q : memref<2x8x16x2048xf16>) k(%k : memref<2x8x32x2048xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Q and K share the head dim.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x128xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{head dim (D) mismatch: operand 'k' dim 3 is 128 but operand 'q' dim 3 is 64}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x128xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// O takes V's head dim.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x128xf16>) {
  // expected-error @+1 {{value head dim (Dv) mismatch: operand 'o' dim 3 is 128 but operand 'v' dim 3 is 64}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x128xf16>)
  return
}

// -----

// K and V have the same heads.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x4x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{K/V head count mismatch: operand 'v' dim 1 is 4 but operand 'k' dim 1 is 8}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x4x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// O has Q's heads.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x4x16x64xf16>) {
  // expected-error @+1 {{query head count mismatch: operand 'o' dim 1 is 4 but operand 'q' dim 1 is 8}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x4x16x64xf16>)
  return
}

// -----

// GQA needs Hq % Hkv == 0.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x3x32x64xf16>, %v: memref<2x3x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{query heads (8) must be a multiple of K/V heads (3) for grouped-query attention}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x3x32x64xf16>) v(%v : memref<2x3x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// O has Q's batch.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<3x8x16x64xf16>) {
  // expected-error @+1 {{batch mismatch: operand 'o' dim 0 is 3 but operand 'q' dim 0 is 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<3x8x16x64xf16>)
  return
}

// -----

// O has Q's length.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x17x64xf16>) {
  // expected-error @+1 {{query length (Sq) mismatch: operand 'o' dim 2 is 17 but operand 'q' dim 2 is 16}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x17x64xf16>)
  return
}

// -----

// LSE has Q's batch.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>, %lse: memref<1x8x16xf32>) {
  // expected-error @+1 {{batch mismatch: operand 'lse' dim 0 is 1 but operand 'q' dim 0 is 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) lse(%lse : memref<1x8x16xf32>)
  return
}

// -----

// LSE has Q's heads.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>, %lse: memref<2x4x16xf32>) {
  // expected-error @+1 {{query head count mismatch: operand 'lse' dim 1 is 4 but operand 'q' dim 1 is 8}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) lse(%lse : memref<2x4x16xf32>)
  return
}

// -----

// LSE has Q's length.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>, %lse: memref<2x8x15xf32>) {
  // expected-error @+1 {{query length (Sq) mismatch: operand 'lse' dim 2 is 15 but operand 'q' dim 2 is 16}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) lse(%lse : memref<2x8x15xf32>)
  return
}

// -----

// kv_lens has one entry per sequence.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>, %lens: memref<3xi32>) {
  // expected-error @+1 {{batch mismatch: operand 'kv_lens' dim 0 is 3 but operand 'q' dim 0 is 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) kv_lens(%lens : memref<3xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Contiguous K has Q's batch.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<1x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{batch mismatch: operand 'k' dim 0 is 1 but operand 'q' dim 0 is 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<1x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Contiguous V has Q's batch.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<1x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{batch mismatch: operand 'v' dim 0 is 1 but operand 'q' dim 0 is 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<1x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// K and V have the same length.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x31x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{key length (Sk) mismatch: operand 'v' dim 2 is 31 but operand 'k' dim 2 is 32}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x31x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// A paged cache needs the lengths.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<10x8x16x64xf16>, %v: memref<10x8x16x64xf16>, %o: memref<2x8x16x64xf16>, %bt: memref<2x4xi32>) {
  // expected-error @+1 {{a paged K/V cache (operand 'block_table') requires operand 'kv_lens'}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<10x8x16x64xf16>) v(%v : memref<10x8x16x64xf16>) block_table(%bt : memref<2x4xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Paged block size is static.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<10x8x?x64xf16>, %v: memref<10x8x?x64xf16>, %o: memref<2x8x16x64xf16>, %bt: memref<2x4xi32>, %lens: memref<2xi32>) {
  // expected-error @+1 {{operand 'k' block size (dim 2) must be static}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<10x8x?x64xf16>) v(%v : memref<10x8x?x64xf16>) block_table(%bt : memref<2x4xi32>) kv_lens(%lens : memref<2xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Paged K and V have as many blocks.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<10x8x16x64xf16>, %v: memref<12x8x16x64xf16>, %o: memref<2x8x16x64xf16>, %bt: memref<2x4xi32>, %lens: memref<2xi32>) {
  // expected-error @+1 {{paged cache block count mismatch: operand 'v' dim 0 is 12 but operand 'k' dim 0 is 10}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<10x8x16x64xf16>) v(%v : memref<12x8x16x64xf16>) block_table(%bt : memref<2x4xi32>) kv_lens(%lens : memref<2xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Paged K and V have one block size.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<10x8x16x64xf16>, %v: memref<10x8x32x64xf16>, %o: memref<2x8x16x64xf16>, %bt: memref<2x4xi32>, %lens: memref<2xi32>) {
  // expected-error @+1 {{paged cache block size mismatch: operand 'v' dim 2 is 32 but operand 'k' dim 2 is 16}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<10x8x16x64xf16>) v(%v : memref<10x8x32x64xf16>) block_table(%bt : memref<2x4xi32>) kv_lens(%lens : memref<2xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// One block-table row per sequence.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<10x8x16x64xf16>, %v: memref<10x8x16x64xf16>, %o: memref<2x8x16x64xf16>, %bt: memref<3x4xi32>, %lens: memref<?xi32>) {
  // expected-error @+1 {{batch mismatch: operand 'block_table' dim 0 is 3 but operand 'q' dim 0 is 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<10x8x16x64xf16>) v(%v : memref<10x8x16x64xf16>) block_table(%bt : memref<3x4xi32>) kv_lens(%lens : memref<?xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Scale is positive.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be positive and finite, got -1}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) scale = -1.0
  return
}

// -----

// Scale is finite.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be positive and finite, got inf}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) scale = 0x7F800000
  return
}

// -----

// Scale is not NaN.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{attribute 'scale' must be positive and finite, got nan}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) scale = 0x7FC00000
  return
}

// -----

// Soft-cap is positive.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x32x64xf16>, %v: memref<2x8x32x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{attribute 'softcap' must be positive and finite, got 0}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x32x64xf16>) v(%v : memref<2x8x32x64xf16>) -> o(%o : memref<2x8x16x64xf16>) softcap = 0.0
  return
}
