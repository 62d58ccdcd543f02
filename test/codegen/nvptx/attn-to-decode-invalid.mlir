// What the split-K decode tier cannot do is refused with a diagnostic that
// names the rule (here for specs that chose the tier themselves), by both
// split kernels alike where the rule is the tier's. The head dims each
// kernel takes: attn-to-decode-head-dims-invalid.mlir.
// RUN: attn-opt %s "--attn-select-tier=sm=90" --attn-tile --attn-to-decode=chip=sm_90 -split-input-file -verify-diagnostics
// RUN: attn-opt %s "--attn-select-tier=decode-tensor-cores=false" --attn-tile --attn-to-decode -split-input-file -verify-diagnostics

// f32 inputs have no tensor-core split kernel.
func.func @rows32(%q: memref<?x8x4x64xf32>, %k: memref<?x1x?x64xf32>,
                  %v: memref<?x1x?x64xf32>, %o: memref<?x8x4x64xf32>) {
  // expected-error @+1 {{the split-K decode tier keeps at most 16 query rows per block in registers; got block_q = 32}}
  attn.attention q(%q : memref<?x8x4x64xf32>) k(%k : memref<?x1x?x64xf32>)
                 v(%v : memref<?x1x?x64xf32>) -> o(%o : memref<?x8x4x64xf32>)
                 schedule = <block_q = 32>
  return
}

// -----

// A schedule's block_q of at most 8 rows asks for the SIMT kernel, whose
// key groups take 1 to 8 keys a trip.
func.func @unroll(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                  %v: memref<?x2x?x64xf16>, %o: memref<?x8x1x64xf16>) {
  // expected-error @+1 {{the split-K decode tier's SIMT kernel takes 1 to 8 keys per trip: schedule 'unroll' must be in [1, 8]; got 12}}
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x1x64xf16>)
                 schedule = <block_q = 4, warps = 4, unroll = 12>
  return
}
