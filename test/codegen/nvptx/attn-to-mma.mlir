// attn-to-mma turns an L1 loop nest marked for the mma tier into a GPU
// kernel and its launch. The input is what attn-select-tier (sm_90) and
// attn-tile make of a GQA-4 causal prefill at D128: 128 x 64 tiles, four
// warps of two 16-row m-tiles, two cp.async K/V stages.
// RUN: attn-opt %s --attn-to-mma="chip=sm_90" | FileCheck %s
// RUN: attn-opt %s --attn-to-mma="chip=sm_90" | FileCheck %s --check-prefix=REGISTERS
// REGISTERS-NOT: gpu.subgroup_mma
// REGISTERS-NOT: xf32, #gpu.address_space<workgroup>>
// The mma tier needs mma.sync and ldmatrix (sm_80+).
// RUN: not attn-opt %s --attn-to-mma="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=TURING
// TURING: error: the mma tier needs sm_80 or newer (mma.sync, ldmatrix, cp.async); got sm_75
// A nest marked for another tier is left to that tier's pass.
// RUN: sed 's/#attn.tier<mma>/#attn.tier<wmma>/' %s | attn-opt --attn-to-mma="chip=sm_90" | FileCheck %s --check-prefix=OTHER
// OTHER: scf.forall
// OTHER-NOT: gpu.launch_func

// Host: one block of 128 threads per (Q tile, K/V head, batch), the
// launch contract naming the tier; the kernel's symbol names it too.
// CHECK-LABEL: func.func @gqa_causal_d128
// CHECK: gpu.launch_func @attn_kernels::@gqa_causal_d128_mma
// CHECK-SAME: threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c98304_i32
// CHECK-SAME: {attn.launch = #attn.launch<prefill, tier = mma, threads = 128, shared = 98304, grid = [ceildiv(group_rows, 128), kv_heads, batch], params = [q, k, v, o, lse], block_q = 128, group = 4>}
// CHECK-NOT: scf.forall

// Kernel: Q and K/V rows of 128 elements unpadded (swizzled), copied with
// cp.async; ldmatrix and mma.sync m16n8k16 (attn_nv tile instructions);
// S and P never touch shared memory (no WMMA, no f32 score tile): each of
// the warp's two 16-row m-tiles takes one attn_nv.online_softmax on its
// 8 score tiles, the raw dots scaled by c inside (attn-nv-to-nvvm.mlir
// shows its quad shuffles and the FMA before ex2).
// CHECK: gpu.func @gqa_causal_d128_mma(
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: memref.view {{.*}} to memref<128x128xf16, #gpu.address_space<workgroup>>
// CHECK: attn_nv.copy_tile {{.*}} swizzled async {{.*}} : memref<?x8x?x128xf16> -> memref<128x128xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: attn_nv.ldmatrix {{.*}} : memref<64x128xf16, #gpu.address_space<workgroup>>
// CHECK: attn_nv.mma_tile {{.*}} : f16
// Tiles that cross the diagonal or the end of K/V take the mask, one
// attn_nv.mask_tile per m-tile; interior tiles skip it.
// CHECK: scf.if
// CHECK: } else {
// CHECK: attn_nv.mask_tile {{.*}} {group = 4 : i64, mask = #attn.mask<causal{{.*}}>}
// CHECK: attn_nv.mask_tile
// CHECK: attn_nv.online_softmax %{{.*}} state(%{{.*}}) {scale = {{.*}} : f64} : f16
// CHECK: attn_nv.online_softmax %{{.*}} state(%{{.*}}) moved %{{.*}} {scale = {{.*}} : f64} : f16
// CHECK: attn_nv.ldmatrix {{.*}} transpose
// CHECK: scf.yield
// Epilogue: O normalized in registers, staged over the warp's own Q rows,
// 16-byte stores; the LSE.
// CHECK: math.log2
// CHECK: vector.store {{.*}} : memref<?x8x?x128xf16>, vector<8xf16>

func.func @gqa_causal_d128(%arg0: memref<?x8x?x128xf16>, %arg1: memref<?x2x?x128xf16>, %arg2: memref<?x2x?x128xf16>, %arg3: memref<?x8x?x128xf16>, %arg4: memref<?x8x?xf32>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x8x?x128xf16>
  %c2 = arith.constant 2 : index
  %dim_0 = memref.dim %arg0, %c2 : memref<?x8x?x128xf16>
  %c4 = arith.constant 4 : index
  %0 = arith.muli %dim_0, %c4 : index
  %c128 = arith.constant 128 : index
  %1 = arith.ceildivsi %0, %c128 : index
  %c2_1 = arith.constant 2 : index
  %dim_2 = memref.dim %arg1, %c2_1 : memref<?x2x?x128xf16>
  scf.forall (%arg5, %arg6, %arg7) in (%dim, 2, %1) {
    %c128_3 = arith.constant 128 : index
    %2 = arith.muli %arg7, %c128_3 : index
    %c0_4 = arith.constant 0 : index
    %c4_5 = arith.constant 4 : index
    %c128_6 = arith.constant 128 : index
    %3 = arith.addi %2, %c128_6 : index
    %4 = arith.minsi %3, %0 : index
    %5 = arith.divsi %2, %c4_5 : index
    %c1 = arith.constant 1 : index
    %6 = arith.subi %4, %c1 : index
    %7 = arith.divsi %6, %c4_5 : index
    %8 = arith.addi %7, %c0_4 : index
    %c1_7 = arith.constant 1 : index
    %9 = arith.addi %8, %c1_7 : index
    %10 = arith.minsi %9, %dim_2 : index
    %11 = attn.load_q %arg0[%arg5, %arg6, %2] group 4 : memref<?x8x?x128xf16> -> tensor<128x128xf16>
    %max, %sum, %acc = attn.init_state : tensor<128xf32>, tensor<128x128xf32>
    %c64 = arith.constant 64 : index
    %12:3 = scf.for %arg8 = %c0_4 to %10 step %c64 iter_args(%arg9 = %max, %arg10 = %sum, %arg11 = %acc) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
      %13 = attn.load_kv %arg1[%arg5, %arg6, %arg8] length %dim_2 : memref<?x2x?x128xf16> -> tensor<64x128xf16>
      %14 = attn.load_kv %arg2[%arg5, %arg6, %arg8] length %dim_2 : memref<?x2x?x128xf16> -> tensor<64x128xf16>
      %15 = attn.qk %11, %13 scale 0.0883883461 : tensor<128x128xf16>, tensor<64x128xf16> -> tensor<128x64xf32>
      %16 = attn.mask %15 rows %2 cols %arg8 q_len %dim_0 kv_len %dim_2 mask <causal> group 4 : tensor<128x64xf32>
      %probs, %new_max, %new_sum, %rescale = attn.online_softmax %16, %arg9, %arg10 : tensor<128x64xf32>, tensor<128xf32>
      %17 = attn.pv %probs, %14, %arg11, %rescale : tensor<128x64xf32>, tensor<64x128xf16>, tensor<128x128xf32>, tensor<128xf32>
      scf.yield %new_max, %new_sum, %17 : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
    } {attn.kv_loop}
    %out, %lse = attn.finalize %12#0, %12#1, %12#2 : tensor<128xf32>, tensor<128x128xf32> -> tensor<128x128xf16>
    attn.store_o %out, %arg3[%arg5, %arg6, %2] group 4 : tensor<128x128xf16>, memref<?x8x?x128xf16>
    attn.store_lse %lse, %arg4[%arg5, %arg6, %2] group 4 : tensor<128xf32>, memref<?x8x?xf32>
  } {attn.schedule = #attn.schedule<block_q = 128, block_kv = 64, warps = 4, stages = 2>, attn.tier = #attn.tier<mma>}
  return
}
