// One case per rule of attn.attention's `v_from_k` (V read as the first
// Dv columns of K: MLA's latent cache); each message names the operand or
// attribute and the rule.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @f(%q: memref<?x16x1x576xf16>, %k: memref<?x1x?x576xf16>, %o: memref<?x16x1x512xf16>) {
  // expected-error @+1 {{needs operand 'v', or attribute 'v_from_k' to read V as the first Dv columns of operand 'k' (MLA's latent cache)}}
  attn.attention q(%q : memref<?x16x1x576xf16>) k(%k : memref<?x1x?x576xf16>)
              -> o(%o : memref<?x16x1x512xf16>)
  return
}

// -----

func.func @f(%q: memref<?x16x1x576xf16>, %k: memref<?x1x?x576xf16>, %v: memref<?x1x?x512xf16>, %o: memref<?x16x1x512xf16>) {
  // expected-error @+1 {{attribute 'v_from_k' reads V from operand 'k'; operand 'v' cannot be given with it}}
  attn.attention q(%q : memref<?x16x1x576xf16>) k(%k : memref<?x1x?x576xf16>)
                 v(%v : memref<?x1x?x512xf16>) v_from_k
              -> o(%o : memref<?x16x1x512xf16>)
  return
}

// -----

func.func @f(%q: memref<?x16x1x576xbf16>, %k: memref<?x1x?x576xf8E4M3FN>, %ks: memref<f32>, %vs: memref<f32>, %o: memref<?x16x1x512xbf16>) {
  // expected-error @+1 {{attribute 'v_from_k' reads V from operand 'k', which 'k_scale' dequantizes; operand 'v_scale' cannot be given with it}}
  attn.attention q(%q : memref<?x16x1x576xbf16>) k(%k : memref<?x1x?x576xf8E4M3FN>) v_from_k
                 k_scale(%ks : memref<f32>) v_scale(%vs : memref<f32>)
              -> o(%o : memref<?x16x1x512xbf16>)
  return
}

// -----

func.func @f(%q: memref<?x16x1x512xf16>, %k: memref<?x1x?x512xf16>, %o: memref<?x16x1x576xf16>) {
  // expected-error @+1 {{attribute 'v_from_k' reads V as the first Dv columns of operand 'k': operand 'o''s head dim (Dv = 576) must be at most k's (D = 512)}}
  attn.attention q(%q : memref<?x16x1x512xf16>) k(%k : memref<?x1x?x512xf16>) v_from_k
              -> o(%o : memref<?x16x1x576xf16>)
  return
}

// -----

// The rules that relate V to K still hold for K itself.
func.func @f(%q: memref<?x16x1x576xbf16>, %k: memref<?x1x?x576xf16>, %o: memref<?x16x1x512xbf16>) {
  // expected-error @+1 {{operand 'k' element type 'f16' must match operand 'q' ('bf16')}}
  attn.attention q(%q : memref<?x16x1x576xbf16>) k(%k : memref<?x1x?x576xf16>) v_from_k
              -> o(%o : memref<?x16x1x512xbf16>)
  return
}
