// A spec naming the mma tier on sm_75 (no mma.sync / cp.async there): the
// mma pass says so at the nest, and the wmma pass still runs.
// RUN: attn-opt %s --attn-to-ptx="chip=sm_75" -verify-diagnostics

func.func @named_mma(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                     %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  // expected-error @+1 {{the mma tier needs sm_80 or newer (mma.sync, ldmatrix, cp.async); got sm_75}}
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 {attn.tier = #attn.tier<mma>}
  return
}
