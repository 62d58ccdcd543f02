// attn-to-decode on its own input, quantized caches: attn-tile's nests
// (after attn-select-tier, which sends them to the SIMT split kernel) of
// an fp8 paged decode with per-token scales and an i8 decode with a
// per-tensor K scale and per-head V scales. The split kernel passes the
// scales after V (k_scale, v_scale in its launch contract), copies 16
// bytes of a row a lane (16 elements) through a ring of the cache's
// element type, and decodes them on the way to f32: cvt.f16x2 from fp8 on
// sm_89+ (nvvm.convert.f8x2.to.f16x2), bit operations below (an e4m3
// byte as the f16 S.0EEEE.MMM0000000 times 256, its NaN 0x7E00), i8 by
// sitofp. A per-token scale is loaded per key beside its slices, a
// uniform one once before the key loop.
// RUN: attn-opt %s --attn-to-decode="chip=sm_90" | FileCheck %s
// RUN: attn-opt %s --attn-to-decode="chip=sm_80" | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: func.func @fp8_paged
// CHECK: gpu.launch_func @attn_kernels::@fp8_paged_decode_split
// CHECK-SAME: params = [q, k, v, k_scale, v_scale, block_table, kv_lens, workspace]
// CHECK-LABEL: func.func @i8_head
// CHECK: gpu.launch_func @attn_kernels::@i8_head_decode_split
// CHECK-SAME: params = [q, k, v, k_scale, v_scale, workspace]
// CHECK: gpu.func @fp8_paged_decode_split(%{{.*}}: memref<?x8x1x64xf16>, %{{.*}}: memref<?x2x16x64xf8E4M3FN>, %{{.*}}: memref<?x2x16x64xf8E4M3FN>, %[[KS:.*]]: memref<?x2x16xf32>, %[[VS:.*]]: memref<?x2x16xf32>,
// CHECK: memref<2x2x2x128x16xf8E4M3FN, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 16 {bypassL1} : memref<?x2x16x64xf8E4M3FN>
// CHECK: scf.for
// CHECK: memref.load %[[KS]][
// CHECK: memref.load %[[VS]][
// CHECK: vector.load {{.*}} vector<16xf8E4M3FN>
// CHECK-COUNT-8: nvvm.convert.f8x2.to.f16x2 {{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: gpu.func @i8_head_decode_split(%{{.*}}: memref<?x4x1x64xbf16>, %{{.*}}: memref<?x4x?x64xi8>, %{{.*}}: memref<?x4x?x64xi8>, %[[KS1:.*]]: memref<f32>, %[[VS1:.*]]: memref<4xf32>,
// CHECK: memref.load %[[KS1]][] : memref<f32>
// CHECK: memref.load %[[VS1]][%block_id_y] : memref<4xf32>
// CHECK: scf.for
// CHECK: arith.sitofp {{.*}} : vector<16xi8> to vector<16xf32>
// CHECK-NOT: nvvm.convert

// SM80-NOT: nvvm.convert.f8x2
// SM80: gpu.func @fp8_paged_decode_split(
// SM80: arith.extui {{.*}} : vector<16xi8> to vector<16xi16>
// SM80: arith.constant dense<32256> : vector<16xi16>
// SM80: arith.select {{.*}} : vector<16xi1>, vector<16xi16>
// SM80: arith.bitcast {{.*}} : vector<16xi16> to vector<16xf16>
// SM80: arith.constant dense<2.560000e+02> : vector<16xf32>

module {
  func.func @fp8_paged(%arg0: memref<?x8x1x64xf16>, %arg1: memref<?x2x16x64xf8E4M3FN>, %arg2: memref<?x2x16x64xf8E4M3FN>, %arg3: memref<?x?xi32>, %arg4: memref<?xi32>, %arg5: memref<?x2x16xf32>, %arg6: memref<?x2x16xf32>, %arg7: memref<?x8x1x64xf16>) {
    %c0 = arith.constant 0 : index
    %dim = memref.dim %arg0, %c0 : memref<?x8x1x64xf16>
    %c2 = arith.constant 2 : index
    %dim_0 = memref.dim %arg0, %c2 : memref<?x8x1x64xf16>
    %c4 = arith.constant 4 : index
    %0 = arith.muli %dim_0, %c4 : index
    %c4_1 = arith.constant 4 : index
    %1 = arith.ceildivsi %0, %c4_1 : index
    scf.forall (%arg8, %arg9, %arg10) in (%dim, 2, %1) {
      %c4_2 = arith.constant 4 : index
      %2 = arith.muli %arg10, %c4_2 : index
      %3 = memref.load %arg4[%arg8] : memref<?xi32>
      %4 = arith.index_cast %3 : i32 to index
      %c0_3 = arith.constant 0 : index
      %5 = arith.maxsi %4, %c0_3 : index
      %c0_4 = arith.constant 0 : index
      %6 = attn.load_q %arg0[%arg8, %arg9, %2] group 4 : memref<?x8x1x64xf16> -> tensor<4x64xf16>
      %max, %sum, %acc = attn.init_state : tensor<4xf32>, tensor<4x64xf32>
      %c32 = arith.constant 32 : index
      %7:3 = scf.for %arg11 = %c0_4 to %5 step %c32 iter_args(%arg12 = %max, %arg13 = %sum, %arg14 = %acc) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>) {
        %8 = attn.load_kv %arg1[%arg8, %arg9, %arg11] length %5 block_table %arg3 scale(%arg5 : memref<?x2x16xf32>) : memref<?x2x16x64xf8E4M3FN>, memref<?x?xi32> -> tensor<32x64xf32>
        %9 = attn.load_kv %arg2[%arg8, %arg9, %arg11] length %5 block_table %arg3 scale(%arg6 : memref<?x2x16xf32>) : memref<?x2x16x64xf8E4M3FN>, memref<?x?xi32> -> tensor<32x64xf32>
        %10 = attn.qk %6, %8 scale 1.250000e-01 : tensor<4x64xf16>, tensor<32x64xf32> -> tensor<4x32xf32>
        %11 = attn.mask %10 rows %2 cols %arg11 q_len %dim_0 kv_len %5 mask <none> group 4 : tensor<4x32xf32>
        %probs, %new_max, %new_sum, %rescale = attn.online_softmax %11, %arg12, %arg13 : tensor<4x32xf32>, tensor<4xf32>
        %12 = attn.pv %probs, %9, %arg14, %rescale : tensor<4x32xf32>, tensor<32x64xf32>, tensor<4x64xf32>, tensor<4xf32>
        scf.yield %new_max, %new_sum, %12 : tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>
      } {attn.kv_loop}
      %out, %lse = attn.finalize %7#0, %7#1, %7#2 : tensor<4xf32>, tensor<4x64xf32> -> tensor<4x64xf16>
      attn.store_o %out, %arg7[%arg8, %arg9, %2] group 4 : tensor<4x64xf16>, memref<?x8x1x64xf16>
    } {attn.schedule = #attn.schedule<block_q = 4, block_kv = 32, warps = 4, stages = 2, unroll = 2>, attn.tier = #attn.tier<decode>}
    return
  }
  func.func @i8_head(%arg0: memref<?x4x1x64xbf16>, %arg1: memref<?x4x?x64xi8>, %arg2: memref<?x4x?x64xi8>, %arg3: memref<f32>, %arg4: memref<4xf32>, %arg5: memref<?x4x1x64xbf16>) {
    %c0 = arith.constant 0 : index
    %dim = memref.dim %arg0, %c0 : memref<?x4x1x64xbf16>
    %c2 = arith.constant 2 : index
    %dim_0 = memref.dim %arg0, %c2 : memref<?x4x1x64xbf16>
    %c1 = arith.constant 1 : index
    %0 = arith.muli %dim_0, %c1 : index
    %c1_1 = arith.constant 1 : index
    %1 = arith.ceildivsi %0, %c1_1 : index
    %c2_2 = arith.constant 2 : index
    %dim_3 = memref.dim %arg1, %c2_2 : memref<?x4x?x64xi8>
    scf.forall (%arg6, %arg7, %arg8) in (%dim, 4, %1) {
      %c1_4 = arith.constant 1 : index
      %2 = arith.muli %arg8, %c1_4 : index
      %c0_5 = arith.constant 0 : index
      %3 = attn.load_q %arg0[%arg6, %arg7, %2] group 1 : memref<?x4x1x64xbf16> -> tensor<1x64xbf16>
      %max, %sum, %acc = attn.init_state : tensor<1xf32>, tensor<1x64xf32>
      %c32 = arith.constant 32 : index
      %4:3 = scf.for %arg9 = %c0_5 to %dim_3 step %c32 iter_args(%arg10 = %max, %arg11 = %sum, %arg12 = %acc) -> (tensor<1xf32>, tensor<1xf32>, tensor<1x64xf32>) {
        %5 = attn.load_kv %arg1[%arg6, %arg7, %arg9] length %dim_3 scale(%arg3 : memref<f32>) : memref<?x4x?x64xi8> -> tensor<32x64xf32>
        %6 = attn.load_kv %arg2[%arg6, %arg7, %arg9] length %dim_3 scale(%arg4 : memref<4xf32>) : memref<?x4x?x64xi8> -> tensor<32x64xf32>
        %7 = attn.qk %3, %5 scale 1.250000e-01 : tensor<1x64xbf16>, tensor<32x64xf32> -> tensor<1x32xf32>
        %8 = attn.mask %7 rows %2 cols %arg9 q_len %dim_0 kv_len %dim_3 mask <none> group 1 : tensor<1x32xf32>
        %probs, %new_max, %new_sum, %rescale = attn.online_softmax %8, %arg10, %arg11 : tensor<1x32xf32>, tensor<1xf32>
        %9 = attn.pv %probs, %6, %arg12, %rescale : tensor<1x32xf32>, tensor<32x64xf32>, tensor<1x64xf32>, tensor<1xf32>
        scf.yield %new_max, %new_sum, %9 : tensor<1xf32>, tensor<1xf32>, tensor<1x64xf32>
      } {attn.kv_loop}
      %out, %lse = attn.finalize %4#0, %4#1, %4#2 : tensor<1xf32>, tensor<1x64xf32> -> tensor<1x64xbf16>
      attn.store_o %out, %arg5[%arg6, %arg7, %2] group 1 : tensor<1x64xbf16>, memref<?x4x1x64xbf16>
    } {attn.schedule = #attn.schedule<block_q = 1, block_kv = 32, warps = 4, stages = 2, unroll = 2>, attn.tier = #attn.tier<decode>}
    return
  }
}

