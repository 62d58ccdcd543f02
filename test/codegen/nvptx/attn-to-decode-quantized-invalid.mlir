// What the decode tier's tensor-core split kernel refuses over a
// quantized K/V cache, by name.
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-to-ptx="chip=sm_90"

// The tensor-core split kernel decodes fragments for one 16-row m-tile a
// warp: a schedule of 64 rows on two warps is refused by name.
func.func @two_m_tiles(%q: memref<?x16x4x128xf16>, %k: memref<?x1x?x128xf8E4M3FN>,
                       %v: memref<?x1x?x128xf8E4M3FN>, %o: memref<?x16x4x128xf16>) {
  // expected-error @+1 {{the mma tier cannot decode the quantized K/V cache ('f8E4M3FN'): its fragments are decoded for mma.sync's register score stage with one 16-row m-tile a warp (schedule 'warps' at least block_q / 16), got 2 m-tiles a warp}}
  attn.attention q(%q : memref<?x16x4x128xf16>) k(%k : memref<?x1x?x128xf8E4M3FN>)
                 v(%v : memref<?x1x?x128xf8E4M3FN>) -> o(%o : memref<?x16x4x128xf16>)
                 schedule = <block_q = 64, warps = 2>
  return
}
