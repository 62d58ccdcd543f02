// One case per rule of attn.attention's quantized K/V caches (fp8 and i8
// elements) and their dequantization scales; each message names the
// operand and the rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// K and V are one quantized format.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'v' element type 'f16' must match operand 'k' ('f8E4M3FN'): a quantized K/V cache stores both in one format}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// 
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E5M2>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'v' element type 'f8E5M2' must match operand 'k' ('f8E4M3FN'): a quantized K/V cache stores both in one format}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E5M2>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Other integer and 8-bit types are not quantized formats.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xi16>, %v: memref<2x2x16x64xi16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k' element type 'i16' must match operand 'q' ('f16')}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xi16>) v(%v : memref<2x2x16x64xi16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// 
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xui8>, %v: memref<2x2x16x64xui8>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k' element type 'ui8' must match operand 'q' ('f16')}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xui8>) v(%v : memref<2x2x16x64xui8>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// 
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3>, %v: memref<2x2x16x64xf8E4M3>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k' element type 'f8E4M3' must match operand 'q' ('f16')}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3>) v(%v : memref<2x2x16x64xf8E4M3>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// A scale dequantizes a quantized operand only.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %s: memref<f32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k_scale' is the scale of a quantized k (f8E4M3FN, f8E5M2 or i8); operand 'k' has element type 'f16'}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) k_scale(%s : memref<f32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Scales are f32.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<f16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'v_scale' element type 'f16' must be 'f32'}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) v_scale(%s : memref<f16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Scales are contiguous.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<2xf32, strided<[2]>>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k_scale' must be contiguous (identity layout), got strided<[2]>}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) k_scale(%s : memref<2xf32, strided<[2]>>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Rank 0, 1 or K/V's rank - 1.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<2x16xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k_scale' must have rank 0 (per tensor), 1 ([Hkv], per K/V head) or 3 ([B, Hkv, Sk], per token and head), got rank 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) k_scale(%s : memref<2x16xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// 
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<?x2x64xi8>, %v: memref<?x2x64xi8>, %cu: memref<3xi32>, %s: memref<?x2x1xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k_scale' must have rank 0 (per tensor), 1 ([Hkv], per K/V head) or 2 ([total_k, Hkv], per token and head), got rank 3}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<?x2x64xi8>) v(%v : memref<?x2x64xi8>) cu_seqlens_k(%cu : memref<3xi32>) k_scale(%s : memref<?x2x1xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Per K/V head: a static [Hkv].
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<4xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{K/V head count mismatch: operand 'k_scale' dim 0 is 4 but operand 'k' dim 1 is 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) k_scale(%s : memref<4xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// 
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<?xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'v_scale' K/V head count (dim 0) must be static}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) v_scale(%s : memref<?xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Per token: K/V's shape without D.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<2x2x8xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{per-token scale [B, Hkv, Sk] mismatch: operand 'k_scale' dim 2 is 8 but operand 'k' dim 2 is 16}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) k_scale(%s : memref<2x2x8xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// 
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<?x2x16x64xi8>, %v: memref<?x2x16x64xi8>, %bt: memref<2x4xi32>, %n: memref<2xi32>, %s: memref<?x4x16xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{per-token scale [num_blocks, Hkv, block_size] mismatch: operand 'v_scale' dim 1 is 4 but operand 'v' dim 1 is 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<?x2x16x64xi8>) v(%v : memref<?x2x16x64xi8>) block_table(%bt : memref<2x4xi32>) kv_lens(%n : memref<2xi32>) v_scale(%s : memref<?x4x16xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// A scale is read, never the buffer the op writes.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x8x16x64xf8E4M3FN>, %v: memref<2x8x16x64xf8E4M3FN>, %lse: memref<2x8x16xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'k_scale' is the same buffer as operand 'lse', which the op writes}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x8x16x64xf8E4M3FN>) v(%v : memref<2x8x16x64xf8E4M3FN>) k_scale(%lse : memref<2x8x16xf32>) -> o(%o : memref<2x8x16x64xf16>) lse(%lse : memref<2x8x16xf32>)
  return
}

// -----

// fp8 attention: an fp8 Q scores a quantized K/V cache only.
func.func @f(%q: memref<2x8x16x64xf8E4M3FN>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' element type 'f8E4M3FN' makes an fp8 attention, which needs a quantized K/V cache (f8E4M3FN, f8E5M2 or i8 K and V); operand 'k' has element type 'f16'}}
  attn.attention q(%q : memref<2x8x16x64xf8E4M3FN>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// An i8 Q is not taken (fp8 only).
func.func @f(%q: memref<2x8x16x64xi8>, %k: memref<2x2x16x64xi8>, %v: memref<2x2x16x64xi8>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q' element type 'i8' is not supported; expected f16, bf16 or f32}}
  attn.attention q(%q : memref<2x8x16x64xi8>) k(%k : memref<2x2x16x64xi8>) v(%v : memref<2x2x16x64xi8>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// q_scale dequantizes an fp8 Q.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<f32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q_scale' dequantizes an fp8 q (f8E4M3FN or f8E5M2); operand 'q' has element type 'f16'}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) q_scale(%s : memref<f32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Per tensor or per query head.
func.func @f(%q: memref<2x8x16x64xf8E5M2>, %k: memref<2x2x16x64xf8E5M2>, %v: memref<2x2x16x64xf8E5M2>, %s: memref<2x8xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q_scale' must have rank 0 (per tensor) or 1 ([Hq], per query head), got rank 2}}
  attn.attention q(%q : memref<2x8x16x64xf8E5M2>) k(%k : memref<2x2x16x64xf8E5M2>) v(%v : memref<2x2x16x64xf8E5M2>) q_scale(%s : memref<2x8xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

func.func @f(%q: memref<2x8x16x64xf8E4M3FN>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<2xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{query head count mismatch: operand 'q_scale' dim 0 is 2 but operand 'q' dim 1 is 8}}
  attn.attention q(%q : memref<2x8x16x64xf8E4M3FN>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) q_scale(%s : memref<2xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

func.func @f(%q: memref<2x8x16x64xf8E4M3FN>, %k: memref<2x2x16x64xf8E4M3FN>, %v: memref<2x2x16x64xf8E4M3FN>, %s: memref<bf16>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'q_scale' element type 'bf16' must be 'f32'}}
  attn.attention q(%q : memref<2x8x16x64xf8E4M3FN>) k(%k : memref<2x2x16x64xf8E4M3FN>) v(%v : memref<2x2x16x64xf8E4M3FN>) q_scale(%s : memref<bf16>) -> o(%o : memref<2x8x16x64xf16>)
  return
}
