// The head dims the split-K decode tier's tensor-core kernel takes, each
// refusal naming the rule (specs that chose the tier themselves):
// multiples of 8 (padded to 16 columns in shared memory) up to 576, MLA's
// latent head (attn-select-tier-mla.mlir); past 256 a remark says its
// accumulators spill. The SIMT kernel's:
// attn-to-decode-simt-head-dims-invalid.mlir.
// RUN: attn-opt %s "--attn-select-tier=sm=90" --attn-tile --attn-to-decode=chip=sm_90 -split-input-file -verify-diagnostics

func.func @d36(%q: memref<?x4x1x36xf16>, %k: memref<?x4x?x36xf16>,
               %v: memref<?x4x?x36xf16>, %o: memref<?x4x1x36xf16>) {
  // expected-error @+1 {{the split-K decode tier's tensor-core kernel takes head dims that are multiples of 8 up to 576; got D = 36, Dv = 36}}
  attn.attention q(%q : memref<?x4x1x36xf16>) k(%k : memref<?x4x?x36xf16>)
                 v(%v : memref<?x4x?x36xf16>) -> o(%o : memref<?x4x1x36xf16>)
                 {attn.tier = #attn.tier<decode>}
  return
}

// -----

func.func @dv264(%q: memref<?x16x1x64xf16>, %k: memref<?x1x?x64xf16>,
                 %v: memref<?x1x?x264xf16>, %o: memref<?x16x1x264xf16>) {
  // expected-remark @+1 {{D 64 / Dv 264 decodes on the tensor-core split kernel with 4 K/V stage(s); each warp keeps 16 x Dv f32 accumulators, past its registers (it spills)}}
  attn.attention q(%q : memref<?x16x1x64xf16>) k(%k : memref<?x1x?x64xf16>)
                 v(%v : memref<?x1x?x264xf16>) -> o(%o : memref<?x16x1x264xf16>)
                 {attn.tier = #attn.tier<decode>}
  return
}

// -----

func.func @d584(%q: memref<?x16x1x584xf16>, %k: memref<?x1x?x584xf16>,
                %v: memref<?x1x?x512xf16>, %o: memref<?x16x1x512xf16>) {
  // expected-remark @+2 {{D 584 / Dv 512 decodes on the tensor-core split kernel with 1 K/V stage(s)}}
  // expected-error @+1 {{the split-K decode tier's tensor-core kernel takes head dims that are multiples of 8 up to 576; got D = 584, Dv = 512}}
  attn.attention q(%q : memref<?x16x1x584xf16>) k(%k : memref<?x1x?x584xf16>)
                 v(%v : memref<?x1x?x512xf16>) -> o(%o : memref<?x16x1x512xf16>)
                 {attn.tier = #attn.tier<decode>}
  return
}
