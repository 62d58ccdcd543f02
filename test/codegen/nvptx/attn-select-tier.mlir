// attn-select-tier: few static query rows per K/V head -> decode (with a
// Q tile of those rows, rounded up to a power of two); otherwise wmma.
// RUN: attn-opt %s --attn-select-tier | FileCheck %s
// RUN: attn-opt %s --attn-select-tier=mma-tiles | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s "--attn-select-tier=mma-tiles sm=90" | FileCheck %s --check-prefix=SM90

// CHECK-LABEL: func.func @decode_gqa4
// CHECK: attn.attention {{.*}} schedule = <block_q = 4>
// CHECK-SAME: {attn.tier = "decode"}
func.func @decode_gqa4(%q: memref<?x8x1x128xf16>, %k: memref<?x2x?x128xf16>,
                       %v: memref<?x2x?x128xf16>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x2x?x128xf16>)
                 v(%v : memref<?x2x?x128xf16>) -> o(%o : memref<?x8x1x128xf16>)
  return
}

// Three queries of a GQA-4 group: 12 rows, a 16-row tile.
// CHECK-LABEL: func.func @speculative
// CHECK: schedule = <block_q = 16>
// CHECK-SAME: {attn.tier = "decode"}
func.func @speculative(%q: memref<?x8x3x64xbf16>, %k: memref<?x2x?x64xbf16>,
                       %v: memref<?x2x?x64xbf16>, %o: memref<?x8x3x64xbf16>) {
  attn.attention q(%q : memref<?x8x3x64xbf16>) k(%k : memref<?x2x?x64xbf16>)
                 v(%v : memref<?x2x?x64xbf16>) -> o(%o : memref<?x8x3x64xbf16>)
  return
}

// A dynamic query length, too many rows, or D != Dv: the wmma tier.
// CHECK-LABEL: func.func @prefill
// CHECK: -> o(%{{.*}} : memref<?x8x?x64xf16>) {attn.tier = "wmma"}
// The mma tier's measured tiles: 128 x 64 up to D64; up to D128 128 x 64
// where two blocks fit an SM's shared memory (sm_90), else 128 x 32.
// MMA-LABEL: func.func @prefill
// MMA: schedule = <block_q = 128, block_kv = 64>
// MMA-LABEL: func.func @dv_differs
// MMA: schedule = <block_q = 128, block_kv = 32>
// SM90-LABEL: func.func @prefill
// SM90: schedule = <block_q = 128, block_kv = 64>
// SM90-LABEL: func.func @dv_differs
// SM90: schedule = <block_q = 128, block_kv = 64>
// CHECK-LABEL: func.func @long_rows
// CHECK: {attn.tier = "wmma"}
// CHECK-LABEL: func.func @dv_differs
// CHECK: {attn.tier = "wmma"}
func.func @prefill(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
  return
}
func.func @long_rows(%q: memref<?x8x8x64xf16>, %k: memref<?x2x?x64xf16>,
                     %v: memref<?x2x?x64xf16>, %o: memref<?x8x8x64xf16>) {
  attn.attention q(%q : memref<?x8x8x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x8x64xf16>)
  return
}
func.func @dv_differs(%q: memref<?x8x1x64xf16>, %k: memref<?x2x?x64xf16>,
                      %v: memref<?x2x?x128xf16>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x128xf16>) -> o(%o : memref<?x8x1x128xf16>)
  return
}

// A schedule that sets only some fields keeps them; the tile sizes it
// leaves at 0 get the defaults.
// MMA-LABEL: func.func @partial_schedule
// MMA: schedule = <block_q = 32, block_kv = 64, warps = 8>
// SM90-LABEL: func.func @partial_schedule
// SM90: schedule = <block_q = 32, block_kv = 64, warps = 8>
func.func @partial_schedule(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                            %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 schedule = <block_q = 32, warps = 8>
  return
}
