// A pipeline choice a spec's schedule makes that the tier cannot honour
// is a remark that names the field and the rule; the schedule then says
// what the kernel does instead. Only the wgmma tier has these choices:
// on another tier they are said to be ignored, and dropped.
// RUN: attn-opt %s "--attn-select-tier=prefill=wgmma sm=90" -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @paged_producer
// CHECK: schedule = <block_q = 128, block_kv = 64, warps = 8, stages = 2, producer = off, qk_ahead = off, ping_pong = off, kv_load = threads, q_load = threads, o_store = threads>
func.func @paged_producer(%q: memref<?x8x?x128xf16>, %k: memref<?x8x16x128xf16>,
                          %v: memref<?x8x16x128xf16>, %bt: memref<?x?xi32>,
                          %lens: memref<?xi32>, %o: memref<?x8x?x128xf16>) {
  // expected-remark@+2 {{the wgmma tier cannot honour the schedule's 'producer': K/V are paged (a block table maps onto no one tensor map)}}
  // expected-remark@+1 {{the wgmma tier cannot honour the schedule's 'kv_load': K/V are paged (a block table maps onto no one tensor map)}}
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x8x16x128xf16>)
                 v(%v : memref<?x8x16x128xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) -> o(%o : memref<?x8x?x128xf16>)
                 schedule = <block_q = 128, block_kv = 64, producer = on, kv_load = tma>
  return
}

// -----

// CHECK-LABEL: func.func @one_warpgroup
// CHECK: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 2, producer = off, qk_ahead = off, ping_pong = off, kv_load = tma, q_load = tma, o_store = tma>
func.func @one_warpgroup(%q: memref<?x4x?x128xf16>, %k: memref<?x4x?x128xf16>,
                         %v: memref<?x4x?x128xf16>, %o: memref<?x4x?x128xf16>) {
  // expected-remark@+3 {{the wgmma tier cannot honour the schedule's 'producer': it takes two or more consumer warpgroups (block_q 128 or more)}}
  // expected-remark@+2 {{the wgmma tier cannot honour the schedule's 'qk_ahead': without a producer warpgroup, it takes three or more stages}}
  // expected-remark@+1 {{the wgmma tier cannot honour the schedule's 'ping_pong': there is no producer warpgroup}}
  attn.attention q(%q : memref<?x4x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x4x?x128xf16>)
                 schedule = <block_q = 64, block_kv = 64, producer = on, qk_ahead = on, ping_pong = on>
  return
}

// -----

// CHECK-LABEL: func.func @d256_ahead
// CHECK: producer = on, qk_ahead = off, ping_pong = off
func.func @d256_ahead(%q: memref<?x4x?x256xf16>, %k: memref<?x4x?x256xf16>,
                      %v: memref<?x4x?x256xf16>, %o: memref<?x4x?x256xf16>) {
  // expected-remark@+2 {{the wgmma tier cannot honour the schedule's 'qk_ahead': past D128 the second score tile spills}}
  // expected-remark@+1 {{the wgmma tier cannot honour the schedule's 'ping_pong': Q K^T is not a tile ahead}}
  attn.attention q(%q : memref<?x4x?x256xf16>) k(%k : memref<?x4x?x256xf16>)
                 v(%v : memref<?x4x?x256xf16>) -> o(%o : memref<?x4x?x256xf16>)
                 schedule = <qk_ahead = on, ping_pong = on>
  return
}

// -----

// Q's 128-row boxes would cut 3-head groups, so Q comes by cp.async, and
// O's boxes are Q's.
// CHECK-LABEL: func.func @gqa3_q
// CHECK: kv_load = tma, q_load = threads, o_store = threads
func.func @gqa3_q(%q: memref<?x12x?x128xf16>, %k: memref<?x4x?x128xf16>,
                  %v: memref<?x4x?x128xf16>, %o: memref<?x12x?x128xf16>) {
  // expected-remark@+2 {{the wgmma tier cannot honour the schedule's 'q_load': its 128-row tiles cut 3-head groups}}
  // expected-remark@+1 {{the wgmma tier cannot honour the schedule's 'o_store': its 128-row tiles cut 3-head groups}}
  attn.attention q(%q : memref<?x12x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x12x?x128xf16>)
                 schedule = <q_load = tma, o_store = tma>
  return
}

// -----

// D96 goes to the mma tier, which has none of these choices.
// CHECK-LABEL: func.func @mma_tier
// CHECK: schedule = <block_q = 128, block_kv = 64, warps = 4, stages = 2> {attn.tier = #attn.tier<mma>}
func.func @mma_tier(%q: memref<?x4x?x96xf16>, %k: memref<?x4x?x96xf16>,
                    %v: memref<?x4x?x96xf16>, %o: memref<?x4x?x96xf16>) {
  // expected-remark@+1 {{the mma tier has no TMA, producer warpgroup or Q K^T ahead: the schedule's pipeline fields are ignored}}
  attn.attention q(%q : memref<?x4x?x96xf16>) k(%k : memref<?x4x?x96xf16>)
                 v(%v : memref<?x4x?x96xf16>) -> o(%o : memref<?x4x?x96xf16>)
                 schedule = <producer = on>
  return
}

// -----

// Only the decode tier's SIMT kernel has 'unroll'.
// CHECK-LABEL: func.func @unroll_prefill
// CHECK: schedule = <block_q = 64, block_kv = 64, warps = 4, stages = 2, producer = off
func.func @unroll_prefill(%q: memref<?x4x?x128xf16>, %k: memref<?x4x?x128xf16>,
                          %v: memref<?x4x?x128xf16>, %o: memref<?x4x?x128xf16>) {
  // expected-remark@+1 {{the wgmma tier has no 'unroll' (the decode tier's SIMT kernel's): the schedule's is ignored}}
  attn.attention q(%q : memref<?x4x?x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x4x?x128xf16>)
                 schedule = <block_q = 64, block_kv = 64, unroll = 4>
  return
}

// -----

// A decode step goes to the decode tier: no pipeline fields there.
// CHECK-LABEL: func.func @decode_pipeline
// CHECK: schedule = <block_q = 16, block_kv = 64, warps = 4, stages = 4> {attn.tier = #attn.tier<decode>}
func.func @decode_pipeline(%q: memref<?x16x1x128xf16>, %k: memref<?x4x?x128xf16>,
                           %v: memref<?x4x?x128xf16>, %o: memref<?x16x1x128xf16>) {
  // expected-remark@+1 {{the decode tier has no TMA, producer warpgroup or Q K^T ahead: the schedule's pipeline fields are ignored}}
  attn.attention q(%q : memref<?x16x1x128xf16>) k(%k : memref<?x4x?x128xf16>)
                 v(%v : memref<?x4x?x128xf16>) -> o(%o : memref<?x16x1x128xf16>)
                 schedule = <kv_load = tma>
  return
}
