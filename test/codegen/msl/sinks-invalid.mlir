// Attention sinks are built for the CPU lowering only so far: the msl tier
// refuses a spec with `sinks` (prefill, decode or packed alike).
// RUN: attn-translate --attn-to-msl %s -split-input-file -verify-diagnostics

func.func @prefill(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %s: memref<8xf32>,
                   %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{attention sinks are built for the CPU lowering only so far; the msl tier does not take `sinks`}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>) mask = <causal>
  return
}

// -----

func.func @varlen_decode(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>,
                         %v: memref<?x2x64xf16>, %cq: memref<?xi32>,
                         %ck: memref<?xi32>, %s: memref<8xf16>,
                         %o: memref<?x8x64xf16>) {
  // expected-error @+1 {{attention sinks are built for the CPU lowering only so far; the msl tier does not take `sinks`}}
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>)
                 v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<?xi32>)
                 cu_seqlens_k(%ck : memref<?xi32>) sinks(%s : memref<8xf16>)
              -> o(%o : memref<?x8x64xf16>) max_q_len = 1
  return
}
