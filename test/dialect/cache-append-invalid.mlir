// Every rule of attn.cache_append's verifier, one case each, named by
// operand and rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// A k_new of rank 3.
func.func @f(%kn: memref<2x8x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_new' must have rank 4 [B, Hkv, S_new, D], got rank 3}}
  attn.cache_append k_new(%kn : memref<2x8x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A kv_lens of rank 2.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2x1xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'kv_lens' must have rank 1 [B], got rank 2}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2x1xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A block_table of rank 1.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %bt: memref<2xi32>, %lens: memref<2xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'block_table' must have rank 2 [B, max_blocks], got rank 1}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) block_table(%bt : memref<2xi32>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// Paged cache of rank 3.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %bt: memref<2x4xi32>, %lens: memref<2xi32>, %kc: memref<?x8x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_cache' must have rank 4 [num_blocks, Hkv, block_size, D], got rank 3}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) block_table(%bt : memref<2x4xi32>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<?x8x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// A cache whose head dim is not contiguous.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16, strided<[131072, 16384, 128, 2]>>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_cache' must have unit stride in its innermost dim}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16, strided<[131072, 16384, 128, 2]>>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// Integer new tokens.
func.func @f(%kn: memref<2x8x1x128xi32>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_new' element type 'i32' is not supported; expected f16, bf16 or f32}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xi32>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A cache of another element type.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf32>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'v_cache' element type 'f32' must match operand 'k_new' ('f16')}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf32>)
  return
}

// -----

// I64 lengths.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi64>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'kv_lens' element type 'i64' must be 'i32'}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi64>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// I64 new lengths.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %n: memref<2xi64>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'new_lens' element type 'i64' must be 'i32'}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) new_lens(%n : memref<2xi64>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A dynamic head count.
func.func @f(%kn: memref<2x?x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_new' head count (dim 1) must be static}}
  attn.cache_append k_new(%kn : memref<2x?x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A dynamic head dim.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x?xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'v_new' head dim (dim 3) must be static}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x?xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// Head dims past the limit.
func.func @f(%kn: memref<2x8x1x2048xf16>, %vn: memref<2x8x1x2048xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x2048xf16>, %vc: memref<2x8x128x2048xf16>) {
  // expected-error @+1 {{'attn.cache_append' op head dims must be <= 1024, got D = 2048, Dv = 2048}}
  attn.cache_append k_new(%kn : memref<2x8x1x2048xf16>) v_new(%vn : memref<2x8x1x2048xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x2048xf16>) v_cache(%vc : memref<2x8x128x2048xf16>)
  return
}

// -----

// A cache with another head dim.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x64xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op head dim (D) mismatch: operand 'k_cache' dim 3 is 64 but operand 'k_new' dim 3 is 128}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x64xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A value cache with another head dim.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{'attn.cache_append' op value head dim (Dv) mismatch: operand 'v_cache' dim 3 is 64 but operand 'v_new' dim 3 is 128}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x64xf16>)
  return
}

// -----

// A cache with other heads.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x4x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op K/V head count mismatch: operand 'k_cache' dim 1 is 4 but operand 'k_new' dim 1 is 8}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x4x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// New values with other heads.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x4x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op K/V head count mismatch: operand 'v_new' dim 1 is 4 but operand 'k_new' dim 1 is 8}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x4x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// Lengths for another batch.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<3xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op batch mismatch: operand 'kv_lens' dim 0 is 3 but operand 'k_new' dim 0 is 2}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<3xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// New lengths for another batch.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %n: memref<3xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op batch mismatch: operand 'new_lens' dim 0 is 3 but operand 'k_new' dim 0 is 2}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) new_lens(%n : memref<3xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// New values of another batch.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<3x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op batch mismatch: operand 'v_new' dim 0 is 3 but operand 'k_new' dim 0 is 2}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<3x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A contiguous cache of another batch.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<4x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op batch mismatch: operand 'k_cache' dim 0 is 4 but operand 'k_new' dim 0 is 2}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<4x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// New K and V of different lengths.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x2x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op new token count (S_new) mismatch: operand 'v_new' dim 2 is 2 but operand 'k_new' dim 2 is 1}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x2x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// K and V caches of different capacities.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>, %vc: memref<2x8x100x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op cache capacity mismatch: operand 'v_cache' dim 2 is 100 but operand 'k_cache' dim 2 is 128}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x100x128xf16>)
  return
}

// -----

// A paged cache with a dynamic block size.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %bt: memref<2x4xi32>, %lens: memref<2xi32>, %kc: memref<?x8x?x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_cache' block size (dim 2) must be static}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) block_table(%bt : memref<2x4xi32>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<?x8x?x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// Paged K and V of different block sizes.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %bt: memref<2x4xi32>, %lens: memref<2xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x32x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op paged cache block size mismatch: operand 'v_cache' dim 2 is 32 but operand 'k_cache' dim 2 is 16}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) block_table(%bt : memref<2x4xi32>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x32x128xf16>)
  return
}

// -----

// Paged K and V of different block counts.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %bt: memref<2x4xi32>, %lens: memref<2xi32>, %kc: memref<9x8x16x128xf16>, %vc: memref<10x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op paged cache block count mismatch: operand 'v_cache' dim 0 is 10 but operand 'k_cache' dim 0 is 9}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) block_table(%bt : memref<2x4xi32>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<9x8x16x128xf16>) v_cache(%vc : memref<10x8x16x128xf16>)
  return
}

// -----

// A block table of another batch.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %bt: memref<3x4xi32>, %lens: memref<2xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op batch mismatch: operand 'block_table' dim 0 is 3 but operand 'k_new' dim 0 is 2}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) block_table(%bt : memref<3x4xi32>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// F16 block table.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %bt: memref<2x4xf16>, %lens: memref<2xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'block_table' element type 'f16' must be 'i32'}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) block_table(%bt : memref<2x4xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// One buffer for both caches.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operands 'k_cache' and 'v_cache' are the same buffer; K and V need their own caches}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16>) v_cache(%kc : memref<2x8x128x128xf16>)
  return
}

// -----

// New tokens read from the cache they are written to.
func.func @f(%kn: memref<2x8x128x128xf16>, %vn: memref<2x8x128x128xf16>, %lens: memref<2xi32>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_new' is the same buffer as operand 'k_cache', which the op writes}}
  attn.cache_append k_new(%kn : memref<2x8x128x128xf16>) v_new(%vn : memref<2x8x128x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kn : memref<2x8x128x128xf16>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A cache whose rows overlap.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x128x128xf16, strided<[131072, 16384, 64, 1]>>, %vc: memref<2x8x128x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_cache' has aliasing elements: dim 2 has stride 64 but the dims with smaller strides reach offset 127; each element of an output needs its own address}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x128x128xf16, strided<[131072, 16384, 64, 1]>>) v_cache(%vc : memref<2x8x128x128xf16>)
  return
}

// -----

// A static capacity of 0.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %lens: memref<2xi32>, %kc: memref<2x8x0x128xf16>, %vc: memref<2x8x0x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_cache' dim 2 is 0; a static dim must be at least 1}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x8x0x128xf16>) v_cache(%vc : memref<2x8x0x128xf16>)
  return
}

// -----

// Neither kv_lens nor slot_mapping.
func.func @f(%kn: memref<2x8x1x128xf16>, %vn: memref<2x8x1x128xf16>, %kc: memref<2x8x64x128xf16>, %vc: memref<2x8x64x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op requires operand 'kv_lens' (each sequence's length before the append), or the packed form's 'slot_mapping'}}
  attn.cache_append k_new(%kn : memref<2x8x1x128xf16>) v_new(%vn : memref<2x8x1x128xf16>) -> k_cache(%kc : memref<2x8x64x128xf16>) v_cache(%vc : memref<2x8x64x128xf16>)
  return
}

// -----

// A slot mapping with kv_lens.
func.func @f(%kn: memref<?x8x128xf16>, %vn: memref<?x8x128xf16>, %l: memref<?xi32>, %s: memref<?xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'slot_mapping' names each token's slot; operand 'kv_lens' belongs to the batched form and cannot be given with it}}
  attn.cache_append k_new(%kn : memref<?x8x128xf16>) v_new(%vn : memref<?x8x128xf16>) kv_lens(%l : memref<?xi32>) slot_mapping(%s : memref<?xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// Batched new tokens with a slot mapping.
func.func @f(%kn: memref<?x8x1x128xf16>, %vn: memref<?x8x1x128xf16>, %s: memref<?xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'k_new' must have rank 3 [T, Hkv, D] (packed tokens), got rank 4}}
  attn.cache_append k_new(%kn : memref<?x8x1x128xf16>) v_new(%vn : memref<?x8x1x128xf16>) slot_mapping(%s : memref<?xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// An i64 slot mapping.
func.func @f(%kn: memref<?x8x128xf16>, %vn: memref<?x8x128xf16>, %s: memref<?xi64>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op operand 'slot_mapping' element type 'i64' must be 'i32'}}
  attn.cache_append k_new(%kn : memref<?x8x128xf16>) v_new(%vn : memref<?x8x128xf16>) slot_mapping(%s : memref<?xi64>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// A slot for each of 5 tokens, but 4 tokens.
func.func @f(%kn: memref<4x8x128xf16>, %vn: memref<4x8x128xf16>, %s: memref<5xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op token count (T) mismatch: operand 'slot_mapping' dim 0 is 5 but operand 'k_new' dim 0 is 4}}
  attn.cache_append k_new(%kn : memref<4x8x128xf16>) v_new(%vn : memref<4x8x128xf16>) slot_mapping(%s : memref<5xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// -----

// K and V caches with different rows per block.
func.func @f(%kn: memref<?x8x128xf16>, %vn: memref<?x8x128xf16>, %s: memref<?xi32>, %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x32x128xf16>) {
  // expected-error @+1 {{'attn.cache_append' op cache rows per block mismatch: operand 'v_cache' dim 2 is 32 but operand 'k_cache' dim 2 is 16}}
  attn.cache_append k_new(%kn : memref<?x8x128xf16>) v_new(%vn : memref<?x8x128xf16>) slot_mapping(%s : memref<?xi32>) -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x32x128xf16>)
  return
}

// -----

// A quantizing append: the caches share one quantized format.
func.func @f(%kn: memref<2x2x1x64xf16>, %vn: memref<2x2x1x64xf16>, %lens: memref<2xi32>, %kc: memref<2x2x8x64xf8E4M3FN>, %vc: memref<2x2x8x64xi8>) {
  // expected-error @+1 {{operand 'v_cache' element type 'i8' must match operand 'k_cache' ('f8E4M3FN'): a quantized K/V cache stores both in one format}}
  attn.cache_append k_new(%kn : memref<2x2x1x64xf16>) v_new(%vn : memref<2x2x1x64xf16>) kv_lens(%lens : memref<2xi32>) -> k_cache(%kc : memref<2x2x8x64xf8E4M3FN>) v_cache(%vc : memref<2x2x8x64xi8>)
  return
}

// -----

// A scale belongs to a quantized cache.
func.func @f(%kn: memref<2x2x1x64xf16>, %vn: memref<2x2x1x64xf16>, %lens: memref<2xi32>, %s: memref<f32>, %kc: memref<2x2x8x64xf16>, %vc: memref<2x2x8x64xf16>) {
  // expected-error @+1 {{operand 'k_scale' is the scale of a quantized k_cache (f8E4M3FN, f8E5M2 or i8); operand 'k_cache' has element type 'f16'}}
  attn.cache_append k_new(%kn : memref<2x2x1x64xf16>) v_new(%vn : memref<2x2x1x64xf16>) kv_lens(%lens : memref<2xi32>) k_scale(%s : memref<f32>) -> k_cache(%kc : memref<2x2x8x64xf16>) v_cache(%vc : memref<2x2x8x64xf16>)
  return
}

// -----

// Per token: the cache's shape without D.
func.func @f(%kn: memref<2x2x1x64xf16>, %vn: memref<2x2x1x64xf16>, %lens: memref<2xi32>, %s: memref<2x2x4xf32>, %kc: memref<2x2x8x64xi8>, %vc: memref<2x2x8x64xi8>) {
  // expected-error @+1 {{per-token scale [B, Hkv, capacity] mismatch: operand 'k_scale' dim 2 is 4 but operand 'k_cache' dim 2 is 8}}
  attn.cache_append k_new(%kn : memref<2x2x1x64xf16>) v_new(%vn : memref<2x2x1x64xf16>) kv_lens(%lens : memref<2xi32>) k_scale(%s : memref<2x2x4xf32>) -> k_cache(%kc : memref<2x2x8x64xi8>) v_cache(%vc : memref<2x2x8x64xi8>)
  return
}

// -----

// A per-token scale is written: a buffer of its own.
func.func @f(%kn: memref<2x2x1x64xf16>, %vn: memref<2x2x1x64xf16>, %lens: memref<2xi32>, %s: memref<2x2x8xf32>, %kc: memref<2x2x8x64xi8>, %vc: memref<2x2x8x64xi8>) {
  // expected-error @+1 {{operands 'k_scale' and 'v_scale' are the same buffer; each per-token scale the op writes needs its own}}
  attn.cache_append k_new(%kn : memref<2x2x1x64xf16>) v_new(%vn : memref<2x2x1x64xf16>) kv_lens(%lens : memref<2xi32>) k_scale(%s : memref<2x2x8xf32>) v_scale(%s : memref<2x2x8xf32>) -> k_cache(%kc : memref<2x2x8x64xi8>) v_cache(%vc : memref<2x2x8x64xi8>)
  return
}
