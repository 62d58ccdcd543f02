// The discardable attributes attn sets on other dialects' ops: the tier
// enum prints and parses as #attn.tier<...>, and each name holds only its
// own kind of value.
// RUN: attn-opt %s -split-input-file | attn-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @marked
// CHECK: scf.for {{.*}} {
// CHECK: } {attn.kv_loop}
// CHECK: attn.schedule = #attn.schedule<block_q = 64, block_kv = 32, warps = 4, stages = 2>
// CHECK-SAME: attn.tier = #attn.tier<wmma>
// CHECK: attn.tier = #attn.tier<mma>
// CHECK: attn.tier = #attn.tier<decode>
func.func @marked(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%i) in (%n) {
    scf.for %j = %c0 to %n step %c1 {
    } {attn.kv_loop}
  } {attn.schedule = #attn.schedule<block_q = 64, block_kv = 32, warps = 4, stages = 2>,
     attn.tier = #attn.tier<wmma>}
  scf.forall (%i) in (%n) {
  } {attn.tier = #attn.tier<mma>}
  scf.forall (%i) in (%n) {
  } {attn.tier = #attn.tier<decode>}
  return
}
