// Every rule of attn.merge_states's verifier, one case each, named by
// operand and rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// An o_parts of rank 3.
func.func @f(%op: memref<2x4x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o_parts' must have rank 4 [N, T, H, Dv], got rank 3}}
  attn.merge_states o_parts(%op : memref<2x4x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x128xf16>)
  return
}

// -----

// An lse_parts of rank 2.
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4xf32>, %o: memref<4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'lse_parts' must have rank 3 [N, T, H], got rank 2}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4xf32>) -> o(%o : memref<4x8x128xf16>)
  return
}

// -----

// An o of rank 4.
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<1x4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o' must have rank 3 [T, H, Dv], got rank 4}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<1x4x8x128xf16>)
  return
}

// -----

// An lse of rank 3.
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x128xf16>, %l: memref<4x8x1xf32>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'lse' must have rank 2 [T, H], got rank 3}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x128xf16>) lse(%l : memref<4x8x1xf32>)
  return
}

// -----

// Integer parts.
func.func @f(%op: memref<2x4x8x128xi16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o_parts' element type 'i16' is not supported; expected f16, bf16 or f32}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xi16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x128xf16>)
  return
}

// -----

// An f64 o.
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x128xf64>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o' element type 'f64' is not supported; expected f16, bf16 or f32}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x128xf64>)
  return
}

// -----

// f16 LSEs.
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf16>, %o: memref<4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'lse_parts' element type 'f16' must be 'f32'}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf16>) -> o(%o : memref<4x8x128xf16>)
  return
}

// -----

// A dynamic head count.
func.func @f(%op: memref<2x4x?x128xf16>, %lp: memref<2x4x?xf32>, %o: memref<4x?x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o_parts' head count (H) (dim 2) must be static}}
  attn.merge_states o_parts(%op : memref<2x4x?x128xf16>) lse_parts(%lp : memref<2x4x?xf32>) -> o(%o : memref<4x?x128xf16>)
  return
}

// -----

// A dynamic head dim.
func.func @f(%op: memref<2x4x8x?xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x?xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o_parts' value head dim (Dv) (dim 3) must be static}}
  attn.merge_states o_parts(%op : memref<2x4x8x?xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x?xf16>)
  return
}

// -----

// A head dim past 1024.
func.func @f(%op: memref<2x4x8x2048xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x2048xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o_parts' value head dim (dim 3) must be <= 1024, got 2048}}
  attn.merge_states o_parts(%op : memref<2x4x8x2048xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x2048xf16>)
  return
}

// -----

// Part counts that disagree.
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<3x4x8xf32>, %o: memref<4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op part count (N) mismatch: operand 'lse_parts' dim 0 is 3 but operand 'o_parts' dim 0 is 2}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<3x4x8xf32>) -> o(%o : memref<4x8x128xf16>)
  return
}

// -----

// Row counts that disagree (lse_parts).
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x5x8xf32>, %o: memref<4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op row count (T) mismatch: operand 'lse_parts' dim 1 is 5 but operand 'o_parts' dim 1 is 4}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x5x8xf32>) -> o(%o : memref<4x8x128xf16>)
  return
}

// -----

// Head counts that disagree (lse_parts).
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x4xf32>, %o: memref<4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op head count (H) mismatch: operand 'lse_parts' dim 2 is 4 but operand 'o_parts' dim 2 is 8}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x4xf32>) -> o(%o : memref<4x8x128xf16>)
  return
}

// -----

// Row counts that disagree (o).
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<3x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op row count (T) mismatch: operand 'o' dim 0 is 3 but operand 'o_parts' dim 1 is 4}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<3x8x128xf16>)
  return
}

// -----

// Head counts that disagree (o).
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x2x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op head count (H) mismatch: operand 'o' dim 1 is 2 but operand 'o_parts' dim 2 is 8}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x2x128xf16>)
  return
}

// -----

// Head dims that disagree (o).
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x64xf16>) {
  // expected-error @+1 {{'attn.merge_states' op value head dim (Dv) mismatch: operand 'o' dim 2 is 64 but operand 'o_parts' dim 3 is 128}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x64xf16>)
  return
}

// -----

// Row counts that disagree (lse).
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x128xf16>, %l: memref<5x8xf32>) {
  // expected-error @+1 {{'attn.merge_states' op row count (T) mismatch: operand 'lse' dim 0 is 5 but operand 'o_parts' dim 1 is 4}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x128xf16>) lse(%l : memref<5x8xf32>)
  return
}

// -----

// Head counts that disagree (lse).
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x128xf16>, %l: memref<4x1xf32>) {
  // expected-error @+1 {{'attn.merge_states' op head count (H) mismatch: operand 'lse' dim 1 is 1 but operand 'o_parts' dim 2 is 8}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x128xf16>) lse(%l : memref<4x1xf32>)
  return
}

// -----

// An o that aliases itself.
func.func @f(%op: memref<2x4x8x128xf16>, %lp: memref<2x4x8xf32>, %o: memref<4x8x128xf16, strided<[128, 128, 1]>>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o' has aliasing elements: dim 1 has stride 128 but the dims with smaller strides reach offset 511; each element of an output needs its own address}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x128xf16, strided<[128, 128, 1]>>)
  return
}

// -----

// A static zero row count.
func.func @f(%op: memref<2x0x8x128xf16>, %lp: memref<2x0x8xf32>, %o: memref<0x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o_parts' dim 1 is 0; a static dim must be at least 1}}
  attn.merge_states o_parts(%op : memref<2x0x8x128xf16>) lse_parts(%lp : memref<2x0x8xf32>) -> o(%o : memref<0x8x128xf16>)
  return
}

// -----

// Parts with a non-unit inner stride.
func.func @f(%op: memref<2x4x8x128xf16, strided<[8192, 2048, 256, 2]>>, %lp: memref<2x4x8xf32>, %o: memref<4x8x128xf16>) {
  // expected-error @+1 {{'attn.merge_states' op operand 'o_parts' must have unit stride in its innermost dim}}
  attn.merge_states o_parts(%op : memref<2x4x8x128xf16, strided<[8192, 2048, 256, 2]>>) lse_parts(%lp : memref<2x4x8xf32>) -> o(%o : memref<4x8x128xf16>)
  return
}
