// No NVIDIA tier lowers a quantized K/V cache yet: attn-select-tier (the
// first step of attn-to-ptx and attn-compile) refuses it by name, never a
// silent slow path. The CPU pipeline runs it (test/cpu/quantized.mlir).
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-select-tier --attn-to-copy
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-to-ptx="chip=sm_90a"

func.func @decode_e4m3(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf8E4M3FN>,
                       %v: memref<?x2x?x64xf8E4M3FN>, %ks: memref<f32>,
                       %o: memref<?x8x1x64xf16>) {
  // expected-error @+1 {{has a quantized K/V cache ('f8E4M3FN'), which no NVIDIA tier lowers yet; the CPU pipeline (attn-to-cpu) runs it}}
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf8E4M3FN>)
                 v(%v : memref<?x2x?x64xf8E4M3FN>) k_scale(%ks : memref<f32>)
              -> o(%o : memref<?x8x1x64xf16>)
  return
}

// -----

func.func @prefill_i8(%q: memref<?x8x?x64xbf16>, %k: memref<?x8x?x64xi8>,
                      %v: memref<?x8x?x64xi8>, %o: memref<?x8x?x64xbf16>) {
  // expected-error @+1 {{has a quantized K/V cache ('i8'), which no NVIDIA tier lowers yet; the CPU pipeline (attn-to-cpu) runs it}}
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x8x?x64xi8>)
                 v(%v : memref<?x8x?x64xi8>) -> o(%o : memref<?x8x?x64xbf16>)
                 mask = <causal>
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
