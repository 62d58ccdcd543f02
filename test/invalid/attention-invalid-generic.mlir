// Hand-written generic forms of attn.attention that its ODS rejects:
// operand segment sizes that are wrong or missing, results, and properties
// of the wrong kind. The two empty regions are score_mod and mask_mod.
// One case per split section; each was a standalone
// `not attn-opt | FileCheck` test before.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Operand segment sizes that do not add up to the operand count.
// (was generic-bad-segments.mlir)
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op operand count (4) does not match with the total size (9) specified in attribute 'operandSegmentSizes'}}
  "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 2, 2, 0, 0, 0, 0, 1, 1, 0>}> ({}, {})
      : (memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>) -> ()
  return
}

// -----

// No operand segment sizes at all. (was generic-missing-segments.mlir)
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op operand count (4) does not match with the total size (0) specified in attribute 'operandSegmentSizes'}}
  "attn.attention"(%q, %k, %v, %o) ({}, {}) : (memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>) -> ()
  return
}

// -----

// attn.attention has no results. (was generic-results.mlir)
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op requires zero results}}
  %r = "attn.attention"(%q, %k, %v, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0>}> ({}, {})
      : (memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>) -> i32
  return
}

// -----

// Attributes of the wrong kind. (was generic-wrong-attr-kinds.mlir)
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error-re @+1 {{invalid properties {{.*}} for op attn.attention: Invalid attribute `mask` in property conversion: 42 : i32}}
  "attn.attention"(%q, %k, %v, %o) <{mask = 42 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0>}> ({}, {})
      : (memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>, memref<1x8x16x64xf16>) -> ()
  return
}
