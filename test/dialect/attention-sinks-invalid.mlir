// One case per rule attn.attention's `sinks` operand adds; each message
// names the operand and the rule. (A written operand is never rank 1, so
// the rank rule already keeps sinks apart from o and lse.)
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One sink a query head: [Hq].
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %s: memref<2x8xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'sinks' must have rank 1 [Hq], got rank 2}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) sinks(%s : memref<2x8xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Read by head index, with unit stride.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %s: memref<8xf32, strided<[2]>>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'sinks' must have unit stride in its innermost dim}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) sinks(%s : memref<8xf32, strided<[2]>>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// Float logits.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %s: memref<8xi32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'sinks' element type 'i32' is not supported; expected f16, bf16 or f32}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) sinks(%s : memref<8xi32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %s: memref<8xf64>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'sinks' element type 'f64' is not supported; expected f16, bf16 or f32}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) sinks(%s : memref<8xf64>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// The head count is static, so every read is in bounds.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %s: memref<?xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'sinks' query head count (dim 0) must be static}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) sinks(%s : memref<?xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// One per query head, not per K/V head.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %s: memref<2xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{query head count mismatch: operand 'sinks' dim 0 is 2 but operand 'q' dim 1 is 8}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) sinks(%s : memref<2xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}

// -----

// The packed form too: dim 1 of a packed Q is Hq.
func.func @f(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>, %cq: memref<3xi32>, %ck: memref<3xi32>, %s: memref<16xf32>, %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{query head count mismatch: operand 'sinks' dim 0 is 16 but operand 'q' dim 1 is 8}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<3xi32>) cu_seqlens_k(%ck : memref<3xi32>) sinks(%s : memref<16xf32>) -> o(%o : memref<?x8x64xf16>)
  return
}

// -----

// A static 0 is no head count.
func.func @f(%q: memref<2x8x16x64xf16>, %k: memref<2x2x16x64xf16>, %v: memref<2x2x16x64xf16>, %s: memref<0xf32>, %o: memref<2x8x16x64xf16>) {
  // expected-error @+1 {{operand 'sinks' query head count (dim 0) must be >= 1, got 0}}
  attn.attention q(%q : memref<2x8x16x64xf16>) k(%k : memref<2x2x16x64xf16>) v(%v : memref<2x2x16x64xf16>) sinks(%s : memref<0xf32>) -> o(%o : memref<2x8x16x64xf16>)
  return
}
