// On NVIDIA only the decode tier's split kernels lower a quantized K/V
// cache (attn-to-decode-quantized*.mlir): attn-select-tier (the first step
// of attn-to-ptx and attn-compile) refuses the rest by name, never a
// silent slow path (attn-to-decode-quantized-invalid.mlir: what the
// tensor-core split kernel refuses). The CPU pipeline runs them all (test/cpu/quantized.mlir).
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-select-tier --attn-to-copy
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-to-ptx="chip=sm_90a"

// fp8 Q (fp8 prefill) has no NVIDIA kernel yet.
func.func @fp8_q(%q: memref<?x8x1x64xf8E4M3FN>, %k: memref<?x2x?x64xf8E4M3FN>,
                 %v: memref<?x2x?x64xf8E4M3FN>, %o: memref<?x8x1x64xf16>) {
  // expected-error @+1 {{has an fp8 Q ('f8E4M3FN'), which no NVIDIA tier lowers yet (fp8 prefill); the CPU pipeline (attn-to-cpu) runs it}}
  attn.attention q(%q : memref<?x8x1x64xf8E4M3FN>) k(%k : memref<?x2x?x64xf8E4M3FN>)
                 v(%v : memref<?x2x?x64xf8E4M3FN>) -> o(%o : memref<?x8x1x64xf16>)
  return
}

// -----

func.func @prefill_i8(%q: memref<?x8x?x64xbf16>, %k: memref<?x8x?x64xi8>,
                      %v: memref<?x8x?x64xi8>, %o: memref<?x8x?x64xbf16>) {
  // expected-error @+1 {{has a quantized K/V cache ('i8'), which on NVIDIA only the decode tier lowers (a static q_len of at most 16 queries, D and Dv multiples of 16 up to 512); this spec would run on the}}
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x8x?x64xi8>)
                 v(%v : memref<?x8x?x64xi8>) -> o(%o : memref<?x8x?x64xbf16>)
                 mask = <causal>
  return
}

// -----

// A decode whose head dim is no multiple of 16 bytes' worth of elements
// takes a prefill tier, which refuses it.
func.func @decode_d40(%q: memref<?x8x1x40xf16>, %k: memref<?x2x?x40xf8E5M2>,
                      %v: memref<?x2x?x40xf8E5M2>, %o: memref<?x8x1x40xf16>) {
  // expected-error @+1 {{has a quantized K/V cache ('f8E5M2'), which on NVIDIA only the decode tier lowers}}
  attn.attention q(%q : memref<?x8x1x40xf16>) k(%k : memref<?x2x?x40xf8E5M2>)
                 v(%v : memref<?x2x?x40xf8E5M2>) -> o(%o : memref<?x8x1x40xf16>)
  return
}

// -----

// Nor a quantizing cache append (the copy tier, attn-to-ptx's first step
// for appends).
func.func @append_e4m3(%kn: memref<?x2x1x64xf16>, %vn: memref<?x2x1x64xf16>,
                       %lens: memref<?xi32>, %kc: memref<?x2x?x64xf8E4M3FN>,
                       %vc: memref<?x2x?x64xf8E4M3FN>) {
  // expected-error @+1 {{quantizes into a 'f8E4M3FN' cache, which the copy tier does not lower yet; the CPU pipeline (attn-to-cpu) runs it}}
  attn.cache_append k_new(%kn : memref<?x2x1x64xf16>) v_new(%vn : memref<?x2x1x64xf16>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x2x?x64xf8E4M3FN>) v_cache(%vc : memref<?x2x?x64xf8E4M3FN>)
  return
}
