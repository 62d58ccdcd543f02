// The limits that keep every backend's index and score arithmetic in range
// (issue 15; AttnOps.td lists them): window extents, static strides and the
// span they address, the f32 score factors, and outputs whose elements
// alias. Each section is one of the issue's reproducers, or a rule beside
// one.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

// A window extent of 2^63-1 overflowed the window arithmetic (rel_err 1.0).
func.func @f(%q: memref<1x2x9x64xf16>, %k: memref<1x2x16x64xf16>,
             %v: memref<1x2x16x64xf16>, %o: memref<1x2x9x64xf16>) {
  // expected-error @+3 {{mask 'window' extents must be <= 2^31-1 (2147483647), the longest sequence; got left = 0, right = 9223372036854775807}}
  attn.attention q(%q : memref<1x2x9x64xf16>) k(%k : memref<1x2x16x64xf16>)
                 v(%v : memref<1x2x16x64xf16>) -> o(%o : memref<1x2x9x64xf16>)
                 mask = <window 0, 9223372036854775807>
  return
}

// -----

func.func @f(%q: memref<1x2x9x64xf16>, %k: memref<1x2x1x64xf16>,
             %v: memref<1x2x1x64xf16>, %o: memref<1x2x9x64xf16>) {
  // expected-error @+3 {{mask 'window' extents must be <= 2^31-1 (2147483647), the longest sequence; got left = 9223372036854775807, right = 0}}
  attn.attention q(%q : memref<1x2x9x64xf16>) k(%k : memref<1x2x1x64xf16>)
                 v(%v : memref<1x2x1x64xf16>) -> o(%o : memref<1x2x9x64xf16>)
                 mask = <window 9223372036854775807, 0, bottom_right>
  return
}

// -----

// One past the limit is refused too.
// expected-error @+1 {{mask 'window' extents must be <= 2^31-1}}
#m = #attn.mask<window 2147483648, 2147483648>

// -----

// A static stride of 2^63-1 made attn-run's buffer size overflow.
func.func @f(%q: memref<?x8x?x64xf16, strided<[?, 9223372036854775807, ?, 1]>>,
             %k: memref<?x8x?x64xf16>, %v: memref<?x8x?x64xf16>,
             %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{'attn.attention' op operand 'q' stride 1 is 9223372036854775807; static strides must be in [0, 2^40]}}
  attn.attention q(%q : memref<?x8x?x64xf16, strided<[?, 9223372036854775807, ?, 1]>>)
                 k(%k : memref<?x8x?x64xf16>) v(%v : memref<?x8x?x64xf16>)
                 -> o(%o : memref<?x8x?x64xf16>)
  return
}

// -----

func.func @f(%q: memref<?x8x?x64xf16, strided<[?, -64, ?, 1]>>,
             %k: memref<?x8x?x64xf16>, %v: memref<?x8x?x64xf16>,
             %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{'attn.attention' op operand 'q' stride 1 is -64; static strides must be in [0, 2^40]}}
  attn.attention q(%q : memref<?x8x?x64xf16, strided<[?, -64, ?, 1]>>)
                 k(%k : memref<?x8x?x64xf16>) v(%v : memref<?x8x?x64xf16>)
                 -> o(%o : memref<?x8x?x64xf16>)
  return
}

// -----

// Strides within the limit whose static dims still span 2^48 elements.
func.func @f(%q: memref<?x8x?x64xf16>, %k: memref<65536x8x4096x64xf16, strided<[1099511627776, 64, 512, 1]>>,
             %v: memref<65536x8x4096x64xf16, strided<[1099511627776, 64, 512, 1]>>,
             %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{'attn.attention' op operand 'k' addresses 72056494528397311 elements past its first through its static sizes and strides; the limit is 2^48}}
  attn.attention q(%q : memref<?x8x?x64xf16>)
                 k(%k : memref<65536x8x4096x64xf16, strided<[1099511627776, 64, 512, 1]>>)
                 v(%v : memref<65536x8x4096x64xf16, strided<[1099511627776, 64, 512, 1]>>)
                 -> o(%o : memref<?x8x?x64xf16>)
  return
}

// -----

// O's heads overlapped its rows (Hq 24, head stride 256, row stride 2048):
// accepted before, with garbage results.
func.func @f(%q: memref<?x24x?x64xf16>, %k: memref<?x8x?x64xf16>,
             %v: memref<?x8x?x64xf16>,
             %o: memref<?x24x?x64xf16, strided<[?, 256, 2048, 1]>>) {
  // expected-error @+1 {{'attn.attention' op operand 'o' has aliasing elements: dim 2 has stride 2048 but the dims with smaller strides reach offset 5951; each element of an output needs its own address}}
  attn.attention q(%q : memref<?x24x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 -> o(%o : memref<?x24x?x64xf16, strided<[?, 256, 2048, 1]>>)
  return
}

// -----

// A head stride smaller than a row: heads overlap within a row.
func.func @f(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
             %v: memref<?x8x?x64xf16>,
             %o: memref<?x8x?x64xf16, strided<[?, 32, 512, 1]>>) {
  // expected-error @+1 {{'attn.attention' op operand 'o' has aliasing elements: dim 1 has stride 32 but the dims with smaller strides reach offset 63}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 -> o(%o : memref<?x8x?x64xf16, strided<[?, 32, 512, 1]>>)
  return
}

// -----

// A broadcast (stride 0) output: every head is the same memory.
func.func @f(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
             %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>,
             %lse: memref<2x8x16xf32, strided<[16, 0, 1]>>) {
  // expected-error @+1 {{'attn.attention' op operand 'lse' has aliasing elements: dim 1 has stride 0 but the dims with smaller strides reach offset 0}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>)
                 -> o(%o : memref<?x8x?x64xf16>)
                 lse(%lse : memref<2x8x16xf32, strided<[16, 0, 1]>>)
  return
}

// -----

// scale = 3.4e38 gave rel_err 1.0 and an infinite LSE: scale * log2(e)
// overflows f32; so did 1e38 (the f32 scores scale * <q, k> overflow for
// |<q, k>| > 3.4). Scales are at most 2^64: f16 scores cannot overflow.
func.func @f(%q: memref<1x2x16x64xf32>, %k: memref<1x2x16x64xf32>,
             %v: memref<1x2x16x64xf32>, %o: memref<1x2x16x64xf32>) {
  // expected-error @+1 {{'attn.attention' op attribute 'scale' (3.400000e+38) must be at most 2^64 (1.844674e+19), so that the f32 scores scale * <q, k> stay finite}}
  attn.attention q(%q : memref<1x2x16x64xf32>) k(%k : memref<1x2x16x64xf32>)
                 v(%v : memref<1x2x16x64xf32>) -> o(%o : memref<1x2x16x64xf32>)
                 scale = 3.4e38
  return
}

// -----

func.func @f(%q: memref<1x2x16x64xf16>, %k: memref<1x2x16x64xf16>,
             %v: memref<1x2x16x64xf16>, %o: memref<1x2x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op attribute 'scale' (1.000000e+38) must be at most 2^64}}
  attn.attention q(%q : memref<1x2x16x64xf16>) k(%k : memref<1x2x16x64xf16>)
                 v(%v : memref<1x2x16x64xf16>) -> o(%o : memref<1x2x16x64xf16>)
                 scale = 1.0e38
  return
}

// -----

func.func @f(%q: memref<1x2x16x64xf16>, %k: memref<1x2x16x64xf16>,
             %v: memref<1x2x16x64xf16>, %o: memref<1x2x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op attribute 'softcap' (3.400000e+38) times log2(e) overflows f32; softcap must be below 2.358657e+38}}
  attn.attention q(%q : memref<1x2x16x64xf16>) k(%k : memref<1x2x16x64xf16>)
                 v(%v : memref<1x2x16x64xf16>) -> o(%o : memref<1x2x16x64xf16>)
                 softcap = 3.4e38
  return
}

// -----

// A tiny soft-cap under a large scale: scale / softcap overflows.
func.func @f(%q: memref<1x2x16x64xf16>, %k: memref<1x2x16x64xf16>,
             %v: memref<1x2x16x64xf16>, %o: memref<1x2x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op attribute 'scale' (1.000000e+19) divided by 'softcap' (1.000000e-30) overflows f32}}
  attn.attention q(%q : memref<1x2x16x64xf16>) k(%k : memref<1x2x16x64xf16>)
                 v(%v : memref<1x2x16x64xf16>) -> o(%o : memref<1x2x16x64xf16>)
                 scale = 1.0e19 softcap = 1.0e-30
  return
}
