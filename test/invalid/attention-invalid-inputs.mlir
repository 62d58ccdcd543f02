// Hostile inputs to attn.attention in its custom form: dims too large to
// parse or to launch, attribute values that overflow or have the wrong kind,
// and operands of the wrong kind or type. One case per split section;
// each was a standalone `not attn-opt | FileCheck` test before.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// A dim beyond int64 is a parse error. (was huge-dim-overflow.mlir)
// expected-error @+1 {{invalid dimension}}
func.func @f(%q: memref<1x8x99999999999999999999999999x64xf16>) {
  return
}

// -----

// Dims that parse but cannot be launched are refused by the verifier.
// (was huge-dims.mlir)
func.func @f(%q: memref<1x8x9223372036854775806x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x9223372036854775806x64xf16>) {
  // expected-error @+1 {{'attn.attention' op operand 'q' dim 2 is 9223372036854775806, larger than 2^31-1}}
  attn.attention q(%q : memref<1x8x9223372036854775806x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x9223372036854775806x64xf16>)
  return
}

// -----

// A head dim far beyond the 1024 limit. (was huge-head-dim.mlir)
func.func @f(%q: memref<1x8x4x1000000000xf16>, %k: memref<1x8x16x1000000000xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x4x64xf16>) {
  // expected-error @+1 {{'attn.attention' op head dims must be <= 1024, got D = 1000000000, Dv = 64}}
  attn.attention q(%q : memref<1x8x4x1000000000xf16>) k(%k : memref<1x8x16x1000000000xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x4x64xf16>)
  return
}

// -----

// A soft-cap that overflows f32 parses as inf; the verifier refuses it.
// (was softcap-overflow.mlir)
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op attribute 'softcap' must be positive and finite, got inf}}
  attn.attention q(%q : memref<1x8x16x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
                 softcap = 1.0e400
  return
}

// -----

// A scale written as a string is refused by the parser. (was scale-string.mlir)
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  attn.attention q(%q : memref<1x8x16x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
                 // expected-error @+1 {{custom op 'attn.attention' invalid kind of attribute specified}}
                 scale = "big"
  return
}

// -----

// attn.attention works on buffers; tensors are refused by name.
// (was tensor-operands.mlir)
func.func @f(%q: tensor<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error @+1 {{custom op 'attn.attention' invalid kind of type specified: expected builtin.memref, but found 'tensor<1x8x16x64xf16>'}}
  attn.attention q(%q : tensor<1x8x16x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
  return
}

// -----

// Unranked memrefs are refused by name. (was unranked.mlir)
func.func @f(%q: memref<*xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error @+1 {{custom op 'attn.attention' invalid kind of type specified: expected builtin.memref, but found 'memref<*xf16>'}}
  attn.attention q(%q : memref<*xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
  return
}

// -----

// The type written in the op disagrees with the value's type.
// (was type-mismatch-operand.mlir)
// expected-note @+1 {{prior use here}}
func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error @+1 {{use of value '%q' expects different type than prior uses}}
  attn.attention q(%q : memref<1x8x16x64xf32>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
  return
}

// -----

// A static dim of 0 (here the batch): a kernel that could never run.
// An empty batch is a dynamic size at run time instead. (issue 15)
func.func @f(%q: memref<0x8x16x64xf16>, %k: memref<0x8x16x64xf16>,
             %v: memref<0x8x16x64xf16>, %o: memref<0x8x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op operand 'q' dim 0 is 0; a static dim must be at least 1}}
  attn.attention q(%q : memref<0x8x16x64xf16>) k(%k : memref<0x8x16x64xf16>)
                 v(%v : memref<0x8x16x64xf16>) -> o(%o : memref<0x8x16x64xf16>)
  return
}

// -----

// The same for a static query length of 0 on O.
func.func @f(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
             %v: memref<?x8x?x64xf16>, %o: memref<?x8x0x64xf16>) {
  // expected-error @+1 {{'attn.attention' op operand 'o' dim 2 is 0; a static dim must be at least 1}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>) -> o(%o : memref<?x8x0x64xf16>)
  return
}
