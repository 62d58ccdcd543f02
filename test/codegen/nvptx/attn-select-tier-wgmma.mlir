// With prefill=wgmma (sm_90a's default), attn-select-tier gives the wgmma
// tier the prefills it can run, with its default tile (one warpgroup of 64
// rows against 64 keys up to D128), and the mma tier the others: head
// dims that are not multiples of 64, Q tiles that are not whole
// warpgroups. attn-compile's note repeats the reason (test/compile).
// RUN: attn-opt %s "--attn-select-tier=prefill=wgmma sm=90" -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @d128
// CHECK: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 2> {attn.tier = #attn.tier<wgmma>}
func.func @d128(%q: memref<?x4x?x128xf16>, %k: memref<?x4x?x128xf16>,
                %v: memref<?x4x?x128xf16>, %o: memref<?x4x?x128xf16>) {
  attn.attention q(%q : memref<?x4x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x4x?x128xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @d96
// CHECK: attn.tier = #attn.tier<mma>
func.func @d96(%q: memref<?x4x?x96xf16>, %k: memref<?x4x?x96xf16>,
               %v: memref<?x4x?x96xf16>, %o: memref<?x4x?x96xf16>) {
  attn.attention q(%q : memref<?x4x?x96xf16>) k(%k : memref<?x4x?x96xf16>)
                 v(%v : memref<?x4x?x96xf16>) -> o(%o : memref<?x4x?x96xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @rows_32
// CHECK: attn.tier = #attn.tier<mma>
func.func @rows_32(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
                   %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 32, block_kv = 64>
  return
}
