// attn-to-decode on its own input: a quantized paged cache with a scale
// per token (vLLM's fp8 layout) on the tensor-core split kernel. Each
// 16-key block's scales are loaded for the lane's four keys (through the
// block table, clamped into the sequence): K's multiply the dots, V's
// weigh p in P V (attn_nv.online_softmax's weights, after l's sum).
// RUN: attn-opt %s --attn-to-decode="chip=sm_90" | FileCheck %s

// CHECK: gpu.func @fp8_paged_token_decode_split(%{{.*}}: memref<?x8x1x128xf16>, %{{.*}}: memref<?x2x16x128xf8E4M3FN>, %{{.*}}: memref<?x2x16x128xf8E4M3FN>, %[[KS:.*]]: memref<?x2x16xf32>, %[[VS:.*]]: memref<?x2x16xf32>,
// CHECK: scf.for
// CHECK-COUNT-4: memref.load %[[VS]][%{{.*}}, %block_id_y, %{{.*}}] : memref<?x2x16xf32>
// CHECK-COUNT-4: memref.load %[[KS]][%{{.*}}, %block_id_y, %{{.*}}] : memref<?x2x16xf32>
// CHECK: attn_nv.mma_tile
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: attn_nv.online_softmax {{.*}} weights(%{{.*}}, %{{.*}})

module {
  func.func @fp8_paged_token(%arg0: memref<?x8x1x128xf16>, %arg1: memref<?x2x16x128xf8E4M3FN>, %arg2: memref<?x2x16x128xf8E4M3FN>, %arg3: memref<?x?xi32>, %arg4: memref<?xi32>, %arg5: memref<?x2x16xf32>, %arg6: memref<?x2x16xf32>, %arg7: memref<?x8x1x128xf16>) {
    %c0 = arith.constant 0 : index
    %dim = memref.dim %arg0, %c0 : memref<?x8x1x128xf16>
    %c2 = arith.constant 2 : index
    %dim_0 = memref.dim %arg0, %c2 : memref<?x8x1x128xf16>
    %c4 = arith.constant 4 : index
    %0 = arith.muli %dim_0, %c4 : index
    %c16 = arith.constant 16 : index
    %1 = arith.ceildivsi %0, %c16 : index
    scf.forall (%arg8, %arg9, %arg10) in (%dim, 2, %1) {
      %c16_1 = arith.constant 16 : index
      %2 = arith.muli %arg10, %c16_1 : index
      %3 = memref.load %arg4[%arg8] : memref<?xi32>
      %4 = arith.index_cast %3 : i32 to index
      %c0_2 = arith.constant 0 : index
      %5 = arith.maxsi %4, %c0_2 : index
      %c0_3 = arith.constant 0 : index
      %6 = attn.load_q %arg0[%arg8, %arg9, %2] group 4 : memref<?x8x1x128xf16> -> tensor<16x128xf16>
      %max, %sum, %acc = attn.init_state : tensor<16xf32>, tensor<16x128xf32>
      %c128 = arith.constant 128 : index
      %7:3 = scf.for %arg11 = %c0_3 to %5 step %c128 iter_args(%arg12 = %max, %arg13 = %sum, %arg14 = %acc) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x128xf32>) {
        %8 = attn.load_kv %arg1[%arg8, %arg9, %arg11] length %5 block_table %arg3 scale(%arg5 : memref<?x2x16xf32>) : memref<?x2x16x128xf8E4M3FN>, memref<?x?xi32> -> tensor<128x128xf32>
        %9 = attn.load_kv %arg2[%arg8, %arg9, %arg11] length %5 block_table %arg3 scale(%arg6 : memref<?x2x16xf32>) : memref<?x2x16x128xf8E4M3FN>, memref<?x?xi32> -> tensor<128x128xf32>
        %10 = attn.qk %6, %8 scale 0.0883883461 : tensor<16x128xf16>, tensor<128x128xf32> -> tensor<16x128xf32>
        %11 = attn.mask %10 rows %2 cols %arg11 q_len %dim_0 kv_len %5 mask <none> group 4 : tensor<16x128xf32>
        %probs, %new_max, %new_sum, %rescale = attn.online_softmax %11, %arg12, %arg13 : tensor<16x128xf32>, tensor<16xf32>
        %12 = attn.pv %probs, %9, %arg14, %rescale : tensor<16x128xf32>, tensor<128x128xf32>, tensor<16x128xf32>, tensor<16xf32>
        scf.yield %new_max, %new_sum, %12 : tensor<16xf32>, tensor<16xf32>, tensor<16x128xf32>
      } {attn.kv_loop}
      %out, %lse = attn.finalize %7#0, %7#1, %7#2 : tensor<16xf32>, tensor<16x128xf32> -> tensor<16x128xf16>
      attn.store_o %out, %arg7[%arg8, %arg9, %2] group 4 : tensor<16x128xf16>, memref<?x8x1x128xf16>
    } {attn.schedule = #attn.schedule<block_q = 16, block_kv = 128, warps = 4, stages = 2>, attn.tier = #attn.tier<decode>}
    return
  }
}

