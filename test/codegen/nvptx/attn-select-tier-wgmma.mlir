// With prefill=wgmma (sm_90a's default), attn-select-tier gives the wgmma
// tier the prefills it can run, with its default tile, and the mma tier
// the others: head dims that are not multiples of 64, Q tiles that are
// not whole warpgroups. attn-compile's note repeats the reason
// (test/compile). The default tile past D64, where TMA can read K/V, is a
// producer warpgroup's: two consumer warpgroups (128 rows, 8 warps)
// against 128 keys (64 at D256); else, and with a default schedule of
// producer=off, one warpgroup of 64 rows against 64 keys up to D128.
// The pipeline is written into the schedule, every field: what the
// kernel will do. K/V, Q and O by TMA where they can, a producer where
// there are two consumer warpgroups, Q K^T ahead under it up to D128;
// ping-pong only where asked (the last prefix: the default schedule asks).
// RUN: attn-opt %s "--attn-select-tier=prefill=wgmma sm=90" -split-input-file | FileCheck %s
// RUN: attn-opt %s "--attn-select-tier=prefill=wgmma sm=90 default-schedule=#attn.schedule<producer=off>" -split-input-file | FileCheck %s --check-prefix=ONE-ROLE
// RUN: attn-opt %s "--attn-select-tier=prefill=wgmma sm=90 default-schedule=#attn.schedule<kv_load=threads>" -split-input-file | FileCheck %s --check-prefix=NO-TMA
// RUN: attn-opt %s "--attn-select-tier=prefill=wgmma sm=90 default-schedule=#attn.schedule<ping_pong=on,qk_ahead=on>" -split-input-file | FileCheck %s --check-prefix=PINGPONG
// RUN: not attn-opt %s "--attn-select-tier=prefill=wgmma sm=90 default-schedule=#attn.tier<mma>" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: attn-select-tier: option 'default-schedule' must be an #attn.schedule<...>; got '#attn.tier<mma>'

// CHECK-LABEL: func.func @d128
// CHECK: schedule = <block_q = 128, block_kv = 128, warps = 8, stages = 2, producer = on, qk_ahead = on, ping_pong = off, kv_load = tma, q_load = tma, o_store = tma> {attn.tier = #attn.tier<wgmma>}
// ONE-ROLE-LABEL: func.func @d128
// ONE-ROLE: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 2, producer = off, qk_ahead = off, ping_pong = off, kv_load = tma, q_load = tma, o_store = tma> {attn.tier = #attn.tier<wgmma>}
// NO-TMA-LABEL: func.func @d128
// NO-TMA: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 2, producer = off, qk_ahead = off, ping_pong = off, kv_load = threads, q_load = threads, o_store = threads> {attn.tier = #attn.tier<wgmma>}
// PINGPONG-LABEL: func.func @d128
// PINGPONG: schedule = <block_q = 128, block_kv = 128, warps = 8, stages = 2, producer = on, qk_ahead = on, ping_pong = on, kv_load = tma, q_load = tma, o_store = tma> {attn.tier = #attn.tier<wgmma>}
func.func @d128(%q: memref<?x4x?x128xf16>, %k: memref<?x4x?x128xf16>,
                %v: memref<?x4x?x128xf16>, %o: memref<?x4x?x128xf16>) {
  attn.attention q(%q : memref<?x4x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x4x?x128xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @d96
// CHECK: schedule = <block_q = 128, block_kv = 64, warps = 4, stages = 2> {attn.tier = #attn.tier<mma>}
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

// -----

// D256: 128 x 64 either way; no Q K^T ahead (its second score tile
// spills), so no ping-pong.
// CHECK-LABEL: func.func @d256
// CHECK: schedule = <block_q = 128, block_kv = 64, warps = 8, stages = 2, producer = on, qk_ahead = off, ping_pong = off, kv_load = tma, q_load = tma, o_store = tma> {attn.tier = #attn.tier<wgmma>}
// ONE-ROLE-LABEL: func.func @d256
// ONE-ROLE: schedule = <block_q = 128, block_kv = 64, warps = 8, stages = 2, producer = off, qk_ahead = off, ping_pong = off, kv_load = tma, q_load = tma, o_store = tma> {attn.tier = #attn.tier<wgmma>}
// PINGPONG-LABEL: func.func @d256
// PINGPONG: ping_pong = off
func.func @d256(%q: memref<?x4x?x256xf16>, %k: memref<?x4x?x256xf16>,
                %v: memref<?x4x?x256xf16>, %o: memref<?x4x?x256xf16>) {
  attn.attention q(%q : memref<?x4x?x256xf16>) k(%k : memref<?x4x?x256xf16>)
                 v(%v : memref<?x4x?x256xf16>) -> o(%o : memref<?x4x?x256xf16>)
  return
}

// -----

// D64 keeps 64 x 64 (measured faster than a producer's 128 x 128), and
// paged K/V (no tensor map) the one role's tile.
// CHECK-LABEL: func.func @d64
// CHECK: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 2, producer = off, qk_ahead = off, ping_pong = off, kv_load = tma, q_load = tma, o_store = tma> {attn.tier = #attn.tier<wgmma>}
func.func @d64(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
               %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @paged_d128
// CHECK: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 2, producer = off, qk_ahead = off, ping_pong = off, kv_load = threads, q_load = threads, o_store = threads> {attn.tier = #attn.tier<wgmma>}
func.func @paged_d128(%q: memref<?x8x?x128xf16>, %k: memref<?x8x16x128xf16>,
                      %v: memref<?x8x16x128xf16>, %bt: memref<?x?xi32>,
                      %lens: memref<?xi32>, %o: memref<?x8x?x128xf16>) {
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x8x16x128xf16>)
                 v(%v : memref<?x8x16x128xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) -> o(%o : memref<?x8x?x128xf16>)
  return
}

// -----

// Three stages without a producer run Q K^T ahead; a spec's schedule may
// set any field, and the rest are filled in.
// CHECK-LABEL: func.func @three_stages
// CHECK: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 3, producer = off, qk_ahead = on, ping_pong = off, kv_load = threads, q_load = threads, o_store = threads> {attn.tier = #attn.tier<wgmma>}
func.func @three_stages(%q: memref<?x4x?x128xf16>, %k: memref<?x4x?x128xf16>,
                        %v: memref<?x4x?x128xf16>, %o: memref<?x4x?x128xf16>) {
  attn.attention q(%q : memref<?x4x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x4x?x128xf16>)
                 schedule = <block_q = 64, block_kv = 64, stages = 3>
  return
}
