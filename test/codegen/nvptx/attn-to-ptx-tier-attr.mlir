// attn-to-ptx runs both prefill tiers' passes: a spec that names the tier
// the chip does not default to is lowered by it (it once stayed at L1
// without a word, and attn-compile found no code), and one naming a tier
// the chip cannot run gets the tier's error.
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx | FileCheck %s
// CHECK: .entry named_wmma_wmma(

func.func @named_wmma(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                      %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 {attn.tier = #attn.tier<wmma>}
  return
}
