// #attn.schedule round-trips with any subset of its fields; fields left
// at 0 or `auto` (the passes' choice) are not printed.
// RUN: attn-opt %s | attn-opt | FileCheck %s

// CHECK: a = #attn.schedule<block_q = 64, block_kv = 32>
// CHECK-SAME: b = #attn.schedule<block_q = 128, block_kv = 128, warps = 8, stages = 2, producer = on, qk_ahead = on, ping_pong = off, kv_load = tma, q_load = tma, o_store = threads>
// CHECK-SAME: c = #attn.schedule<block_q = 4, warps = 8, stages = 3, unroll = 4>
// CHECK-SAME: d = #attn.schedule<producer = off>
// CHECK-SAME: e = #attn.schedule<>
func.func @schedules() attributes {
    a = #attn.schedule<block_q = 64, block_kv = 32, producer = auto>,
    b = #attn.schedule<block_q = 128, block_kv = 128, warps = 8, stages = 2,
                       producer = on, qk_ahead = on, ping_pong = off,
                       kv_load = tma, q_load = tma, o_store = threads>,
    c = #attn.schedule<unroll = 4, stages = 3, warps = 8, block_q = 4>,
    d = #attn.schedule<producer = off>,
    e = #attn.schedule<>} {
  return
}
