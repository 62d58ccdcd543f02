// The soft-cap's tanh: one tanh.approx.f32 per score on every tier (all
// need sm_75+, which has it), no IEEE divide.
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s --attn-to-ptx="chip=sm_75" | attn-translate --attn-ptx | FileCheck %s --check-prefix=SM75
// SM90-LABEL: .entry softcap_mma(
// SM90: tanh.approx.f32
// SM90-LABEL: .entry softcap_decode_decode_split(
// SM90: tanh.approx.f32
// SM90-NOT: div.rn.f32
// SM75-LABEL: .entry softcap_wmma(
// SM75: tanh.approx.f32
func.func @softcap(%q: memref<?x8x?x64xf16>, %k: memref<?x8x?x64xf16>,
                   %v: memref<?x8x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x8x?x64xf16>)
                 v(%v : memref<?x8x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 mask = <causal> softcap = 30.0
  return
}
func.func @softcap_decode(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                          %v: memref<?x2x?x64xf16>, %o: memref<?x8x1x64xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x1x64xf16>)
                 softcap = 50.0
  return
}
