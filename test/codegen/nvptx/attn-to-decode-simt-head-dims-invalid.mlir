// The head dims the split-K decode tier's SIMT kernel takes, each refusal
// naming the rule (specs that chose the tier themselves): it reads a
// key's rows in 16-byte slices, at most 32 lanes of them (multiples of 8
// up to 256 for f16), for one row a K/V head. The tensor-core kernel's:
// attn-to-decode-tc-head-dims-invalid.mlir.
// RUN: attn-opt %s "--attn-select-tier=decode-tensor-cores=false" --attn-tile --attn-to-decode -split-input-file -verify-diagnostics

func.func @d36(%q: memref<?x4x1x36xf16>, %k: memref<?x4x?x36xf16>,
               %v: memref<?x4x?x36xf16>, %o: memref<?x4x1x36xf16>) {
  // expected-error @+1 {{the split-K decode tier reads K and V in 16-byte slices: D and Dv must be multiples of 8; got D = 36, Dv = 36}}
  attn.attention q(%q : memref<?x4x1x36xf16>) k(%k : memref<?x4x?x36xf16>)
                 v(%v : memref<?x4x?x36xf16>) -> o(%o : memref<?x4x1x36xf16>)
                 {attn.tier = #attn.tier<decode>}
  return
}

// -----

func.func @dv264(%q: memref<?x4x1x64xf16>, %k: memref<?x4x?x64xf16>,
                 %v: memref<?x4x?x264xf16>, %o: memref<?x4x1x264xf16>) {
  // expected-error @+1 {{the split-K decode tier reads a key with at most 32 lanes of 16 bytes: D and Dv must be at most 256; got D = 64, Dv = 264}}
  attn.attention q(%q : memref<?x4x1x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x264xf16>) -> o(%o : memref<?x4x1x264xf16>)
                 {attn.tier = #attn.tier<decode>}
  return
}

// -----

func.func @d584(%q: memref<?x4x1x584xf16>, %k: memref<?x4x?x584xf16>,
                %v: memref<?x4x?x512xf16>, %o: memref<?x4x1x512xf16>) {
  // expected-error @+1 {{the split-K decode tier reads a key with at most 32 lanes of 16 bytes: D and Dv must be at most 256; got D = 584, Dv = 512}}
  attn.attention q(%q : memref<?x4x1x584xf16>) k(%k : memref<?x4x?x584xf16>)
                 v(%v : memref<?x4x?x512xf16>) -> o(%o : memref<?x4x1x512xf16>)
                 {attn.tier = #attn.tier<decode>}
  return
}
