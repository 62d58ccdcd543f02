// attn-split-kv leaves the attention sinks where attn-tile put them: after
// the merge of the partial states, so finalize adds each row's sink once
// and no split sees it. Input: attn-tile's nest (16 x 32 tiles) of a GQA-4
// decode step with sinks (Hq 8, Hkv 2, Sq 1, D 128).
// RUN: attn-opt %s --attn-split-kv="num-splits=3" | FileCheck %s

// CHECK-LABEL: func.func @decode_sinks
// CHECK-SAME: %[[SINKS:[^:]*]]: memref<8xf32>
// CHECK: %[[PARTS:.*]]:3 = scf.forall
// CHECK-NOT: attn.load_sink
// CHECK-NOT: attn.finalize
// CHECK: scf.forall.in_parallel
// CHECK: %[[R:.*]]:3 = scf.for
// CHECK: attn.merge
// CHECK-NOT: attn.load_sink
// CHECK: scf.yield
// CHECK: %[[ST:.*]] = attn.load_sink %[[SINKS]]
// CHECK: attn.finalize %[[R]]#0, %[[R]]#1, %[[R]]#2 sink %[[ST]]
// CHECK-NOT: attn.load_sink
// CHECK-NOT: attn.finalize
func.func @decode_sinks(%arg0: memref<?x8x1x128xf16>, %arg1: memref<?x2x?x128xf16>, %arg2: memref<?x2x?x128xf16>, %sinks: memref<8xf32>, %arg3: memref<?x8x1x128xf16>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x8x1x128xf16>
  %c2 = arith.constant 2 : index
  %dim_0 = memref.dim %arg0, %c2 : memref<?x8x1x128xf16>
  %c4 = arith.constant 4 : index
  %0 = arith.muli %dim_0, %c4 : index
  %c16 = arith.constant 16 : index
  %1 = arith.ceildivsi %0, %c16 : index
  %c2_1 = arith.constant 2 : index
  %dim_2 = memref.dim %arg1, %c2_1 : memref<?x2x?x128xf16>
  scf.forall (%arg4, %arg5, %arg6) in (%dim, 2, %1) {
    %c16_3 = arith.constant 16 : index
    %2 = arith.muli %arg6, %c16_3 : index
    %c0_4 = arith.constant 0 : index
    %3 = attn.load_q %arg0[%arg4, %arg5, %2] group 4 : memref<?x8x1x128xf16> -> tensor<16x128xf16>
    %max, %sum, %acc = attn.init_state : tensor<16xf32>, tensor<16x128xf32>
    %c32 = arith.constant 32 : index
    %4:3 = scf.for %arg7 = %c0_4 to %dim_2 step %c32 iter_args(%arg8 = %max, %arg9 = %sum, %arg10 = %acc) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x128xf32>) {
      %5 = attn.load_kv %arg1[%arg4, %arg5, %arg7] length %dim_2 : memref<?x2x?x128xf16> -> tensor<32x128xf16>
      %6 = attn.load_kv %arg2[%arg4, %arg5, %arg7] length %dim_2 : memref<?x2x?x128xf16> -> tensor<32x128xf16>
      %7 = attn.qk %3, %5 scale 0.0883883461 : tensor<16x128xf16>, tensor<32x128xf16> -> tensor<16x32xf32>
      %8 = attn.mask %7 rows %2 cols %arg7 q_len %dim_0 kv_len %dim_2 mask <none> group 4 : tensor<16x32xf32>
      %probs, %new_max, %new_sum, %rescale = attn.online_softmax %8, %arg8, %arg9 : tensor<16x32xf32>, tensor<16xf32>
      %9 = attn.pv %probs, %6, %arg10, %rescale : tensor<16x32xf32>, tensor<32x128xf16>, tensor<16x128xf32>, tensor<16xf32>
      scf.yield %new_max, %new_sum, %9 : tensor<16xf32>, tensor<16xf32>, tensor<16x128xf32>
    } {attn.kv_loop}
    %10 = attn.load_sink %sinks[%arg5, %2] group 4 : memref<8xf32> -> tensor<16xf32>
    %out, %lse = attn.finalize %4#0, %4#1, %4#2 sink %10 : tensor<16xf32>, tensor<16x128xf32>, tensor<16xf32> -> tensor<16x128xf16>
    attn.store_o %out, %arg3[%arg4, %arg5, %2] group 4 : tensor<16x128xf16>, memref<?x8x1x128xf16>
  }
  return
}
