// attn-to-decode on its own input, quantized caches on the tensor-core
// split kernel: attn-tile's nests (after attn-select-tier, which gives a
// cache with per-tensor or per-head scales 16-row Q tiles, 128-key tiles
// and two stages) of an fp8 GQA-4 decode with per-tensor scales and an i8
// GQA-16 bf16 decode with per-head scales. The K/V tiles hold the stored
// bytes (copy_tile's bytes layout); the products decode each 16 keys'
// bytes into mma.sync fragments in registers (ByteFragments.h): fp8 by
// cvt.f16x2 on sm_89+, bit operations below; i8 as the f16 0x64XX (each
// 32-bit word xor 0x80808080, then one prmt a byte pair under 0x64)
// minus 1152; bf16 fragments by rounding the exact f16. The scales
// are loaded once, k_scale multiplies the dots, v_scale the O columns.
// RUN: attn-opt %s --attn-to-decode="chip=sm_90" | FileCheck %s
// RUN: attn-opt %s --attn-to-decode="chip=sm_80" | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: func.func @fp8_tensor
// CHECK: gpu.launch_func @attn_kernels::@fp8_tensor_decode_split
// CHECK-SAME: params = [q, k, v, k_scale, v_scale, workspace]
// CHECK-LABEL: func.func @i8_head_bf16
// CHECK: gpu.launch_func @attn_kernels::@i8_head_bf16_decode_split
// CHECK-SAME: params = [q, k, v, k_scale, v_scale, workspace]
// CHECK: gpu.func @fp8_tensor_decode_split(%{{.*}}: memref<?x8x1x128xf16>, %{{.*}}: memref<?x2x?x128xf8E4M3FN>, %{{.*}}: memref<?x2x?x128xf8E4M3FN>, %[[KS:.*]]: memref<f32>, %[[VS:.*]]: memref<f32>,
// CHECK: attn_nv.copy_tile %{{.*}} -> %{{.*}} bytes async {{.*}} -> memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>
// CHECK: memref.load %[[KS]][] : memref<f32>
// CHECK: memref.load %[[VS]][] : memref<f32>
// CHECK: scf.for
// CHECK: vector.load {{.*}} vector<16xf8E4M3FN>
// CHECK: nvvm.convert.f8x2.to.f16x2 {{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: attn_nv.mma_tile {{.*}} : f16
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: vector.load {{.*}} vector<4xf8E4M3FN>
// CHECK: gpu.func @i8_head_bf16_decode_split(%{{.*}}: memref<?x16x1x64xbf16>, %{{.*}}: memref<?x1x?x64xi8>, %{{.*}}: memref<?x1x?x64xi8>, %[[KS1:.*]]: memref<1xf32>, %[[VS1:.*]]: memref<1xf32>,
// CHECK: memref.load %[[KS1]][%block_id_y] : memref<1xf32>
// CHECK: scf.for
// CHECK: arith.constant -2139062144 : i32
// CHECK: arith.xori {{.*}} : i32
// CHECK: arith.constant 1684300900 : i32
// CHECK: nvvm.prmt <default>
// CHECK: arith.constant dense<1.152000e+03> : vector<2xf16>
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: attn_nv.mma_tile {{.*}} : bf16
// CHECK-NOT: arith.sitofp

// SM80-NOT: nvvm.convert.f8x2
// SM80: gpu.func @fp8_tensor_decode_split(
// SM80: arith.constant dense<32256> : vector<2xi16>
// SM80: arith.constant dense<2.560000e+02> : vector<2xf16>
// SM80: attn_nv.mma_tile {{.*}} : f16

module {
  func.func @fp8_tensor(%arg0: memref<?x8x1x128xf16>, %arg1: memref<?x2x?x128xf8E4M3FN>, %arg2: memref<?x2x?x128xf8E4M3FN>, %arg3: memref<f32>, %arg4: memref<f32>, %arg5: memref<?x8x1x128xf16>) {
    %c0 = arith.constant 0 : index
    %dim = memref.dim %arg0, %c0 : memref<?x8x1x128xf16>
    %c2 = arith.constant 2 : index
    %dim_0 = memref.dim %arg0, %c2 : memref<?x8x1x128xf16>
    %c4 = arith.constant 4 : index
    %0 = arith.muli %dim_0, %c4 : index
    %c16 = arith.constant 16 : index
    %1 = arith.ceildivsi %0, %c16 : index
    %c2_1 = arith.constant 2 : index
    %dim_2 = memref.dim %arg1, %c2_1 : memref<?x2x?x128xf8E4M3FN>
    scf.forall (%arg6, %arg7, %arg8) in (%dim, 2, %1) {
      %c16_3 = arith.constant 16 : index
      %2 = arith.muli %arg8, %c16_3 : index
      %c0_4 = arith.constant 0 : index
      %3 = attn.load_q %arg0[%arg6, %arg7, %2] group 4 : memref<?x8x1x128xf16> -> tensor<16x128xf16>
      %max, %sum, %acc = attn.init_state : tensor<16xf32>, tensor<16x128xf32>
      %c128 = arith.constant 128 : index
      %4:3 = scf.for %arg9 = %c0_4 to %dim_2 step %c128 iter_args(%arg10 = %max, %arg11 = %sum, %arg12 = %acc) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x128xf32>) {
        %5 = attn.load_kv %arg1[%arg6, %arg7, %arg9] length %dim_2 scale(%arg3 : memref<f32>) : memref<?x2x?x128xf8E4M3FN> -> tensor<128x128xf32>
        %6 = attn.load_kv %arg2[%arg6, %arg7, %arg9] length %dim_2 scale(%arg4 : memref<f32>) : memref<?x2x?x128xf8E4M3FN> -> tensor<128x128xf32>
        %7 = attn.qk %3, %5 scale 0.0883883461 : tensor<16x128xf16>, tensor<128x128xf32> -> tensor<16x128xf32>
        %8 = attn.mask %7 rows %2 cols %arg9 q_len %dim_0 kv_len %dim_2 mask <none> group 4 : tensor<16x128xf32>
        %probs, %new_max, %new_sum, %rescale = attn.online_softmax %8, %arg10, %arg11 : tensor<16x128xf32>, tensor<16xf32>
        %9 = attn.pv %probs, %6, %arg12, %rescale : tensor<16x128xf32>, tensor<128x128xf32>, tensor<16x128xf32>, tensor<16xf32>
        scf.yield %new_max, %new_sum, %9 : tensor<16xf32>, tensor<16xf32>, tensor<16x128xf32>
      } {attn.kv_loop}
      %out, %lse = attn.finalize %4#0, %4#1, %4#2 : tensor<16xf32>, tensor<16x128xf32> -> tensor<16x128xf16>
      attn.store_o %out, %arg5[%arg6, %arg7, %2] group 4 : tensor<16x128xf16>, memref<?x8x1x128xf16>
    } {attn.schedule = #attn.schedule<block_q = 16, block_kv = 128, warps = 4, stages = 2>, attn.tier = #attn.tier<decode>}
    return
  }
  func.func @i8_head_bf16(%arg0: memref<?x16x1x64xbf16>, %arg1: memref<?x1x?x64xi8>, %arg2: memref<?x1x?x64xi8>, %arg3: memref<1xf32>, %arg4: memref<1xf32>, %arg5: memref<?x16x1x64xbf16>) {
    %c0 = arith.constant 0 : index
    %dim = memref.dim %arg0, %c0 : memref<?x16x1x64xbf16>
    %c2 = arith.constant 2 : index
    %dim_0 = memref.dim %arg0, %c2 : memref<?x16x1x64xbf16>
    %c16 = arith.constant 16 : index
    %0 = arith.muli %dim_0, %c16 : index
    %c16_1 = arith.constant 16 : index
    %1 = arith.ceildivsi %0, %c16_1 : index
    %c2_2 = arith.constant 2 : index
    %dim_3 = memref.dim %arg1, %c2_2 : memref<?x1x?x64xi8>
    scf.forall (%arg6, %arg7, %arg8) in (%dim, 1, %1) {
      %c16_4 = arith.constant 16 : index
      %2 = arith.muli %arg8, %c16_4 : index
      %c0_5 = arith.constant 0 : index
      %3 = attn.load_q %arg0[%arg6, %arg7, %2] group 16 : memref<?x16x1x64xbf16> -> tensor<16x64xbf16>
      %max, %sum, %acc = attn.init_state : tensor<16xf32>, tensor<16x64xf32>
      %c128 = arith.constant 128 : index
      %4:3 = scf.for %arg9 = %c0_5 to %dim_3 step %c128 iter_args(%arg10 = %max, %arg11 = %sum, %arg12 = %acc) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
        %5 = attn.load_kv %arg1[%arg6, %arg7, %arg9] length %dim_3 scale(%arg3 : memref<1xf32>) : memref<?x1x?x64xi8> -> tensor<128x64xf32>
        %6 = attn.load_kv %arg2[%arg6, %arg7, %arg9] length %dim_3 scale(%arg4 : memref<1xf32>) : memref<?x1x?x64xi8> -> tensor<128x64xf32>
        %7 = attn.qk %3, %5 scale 1.250000e-01 : tensor<16x64xbf16>, tensor<128x64xf32> -> tensor<16x128xf32>
        %8 = attn.mask %7 rows %2 cols %arg9 q_len %dim_0 kv_len %dim_3 mask <none> group 16 : tensor<16x128xf32>
        %probs, %new_max, %new_sum, %rescale = attn.online_softmax %8, %arg10, %arg11 : tensor<16x128xf32>, tensor<16xf32>
        %9 = attn.pv %probs, %6, %arg12, %rescale : tensor<16x128xf32>, tensor<128x64xf32>, tensor<16x64xf32>, tensor<16xf32>
        scf.yield %new_max, %new_sum, %9 : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
      } {attn.kv_loop}
      %out, %lse = attn.finalize %4#0, %4#1, %4#2 : tensor<16xf32>, tensor<16x64xf32> -> tensor<16x64xbf16>
      attn.store_o %out, %arg5[%arg6, %arg7, %2] group 16 : tensor<16x64xbf16>, memref<?x16x1x64xbf16>
    } {attn.schedule = #attn.schedule<block_q = 16, block_kv = 128, warps = 4, stages = 2>, attn.tier = #attn.tier<decode>}
    return
  }
}

