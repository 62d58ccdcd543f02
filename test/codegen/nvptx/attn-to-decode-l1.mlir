// attn-to-decode on its own input: attn-tile's nest of a paged GQA-4
// decode step (examples/paged_decode.mlir after attn-select-tier and
// attn-tile), marked for the decode tier. Run alone, with no other pass
// to load the LLVM dialect the kernels' ex2 builds: this used to crash.
// RUN: attn-opt %s --attn-to-decode | FileCheck %s
// A nest marked for another tier is left alone.
// RUN: sed 's/#attn.tier<decode>/#attn.tier<mma>/' %s | attn-opt --attn-to-decode | FileCheck %s --check-prefix=OTHER
// OTHER: scf.forall
// OTHER-NOT: gpu.launch_func
// The SIMT kernel's shape is its schedule's `warps`, `unroll` and
// `stages` (attn-select-tier's defaults: 4, 2, 2): 8 warps make twice the
// key groups (and shared memory for the merge); with one stage the
// kernel loads K/V slices directly, with 3 the ring's 3 x 4 keys x (K, V)
// x 256 lanes x 16 bytes outgrow the merge's states; on sm_75 (no
// cp.async) stages past one are a remark; bad values are refused.
// RUN: sed 's/block_kv = 32>/block_kv = 32, warps = 8, stages = 1, unroll = 4>/' %s | attn-opt --attn-to-decode | FileCheck %s --check-prefix=WIDE
// WIDE: #attn.launch<decode_split, tier = decode, threads = 256, shared = 33280
// WIDE: known_block_size = array<i32: 256, 1, 1>
// WIDE-NOT: nvgpu.device_async_copy
// RUN: sed 's/block_kv = 32>/block_kv = 32, warps = 8, stages = 3, unroll = 4>/' %s | attn-opt --attn-to-decode | FileCheck %s --check-prefix=RING
// RUN: sed 's/block_kv = 32>/block_kv = 32, stages = 3>/' %s | attn-opt --attn-to-decode="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=SM75
// RING: #attn.launch<decode_split, tier = decode, threads = 256, shared = 98304
// RING: memref<3x4x2x256x8xf16, #gpu.address_space<workgroup>>
// RING-COUNT-16: nvgpu.device_async_copy
// RING: scf.for
// RING: nvvm.cp.async.wait.group 2
// SM75: remark: the split-K decode tier's SIMT kernel loads K/V directly on sm_75 (no cp.async): schedule 'stages' = 3 runs as 1
// SM75: #attn.launch<decode_split, tier = decode, threads = 128, shared = 16640
// SM75-NOT: nvgpu.device_async_copy
// RUN: sed 's/block_kv = 32>/block_kv = 32, unroll = 9>/' %s | not attn-opt --attn-to-decode 2>&1 | FileCheck %s --check-prefix=BAD-UNROLL
// BAD-UNROLL: error: the split-K decode tier's SIMT kernel takes 1 to 8 keys per trip: schedule 'unroll' must be in [1, 8]; got 9
// RUN: sed 's/block_kv = 32>/block_kv = 32, warps = 3>/' %s | not attn-opt --attn-to-decode 2>&1 | FileCheck %s --check-prefix=BAD-WARPS
// BAD-WARPS: error: the split-K decode tier's SIMT kernel runs 32 to 512 threads: schedule 'warps' must be a power of two in [1, 16]; got 3

// The host function takes the workspace [B*Hq*Sq, splits, Dv + 2] and
// launches the split kernel (grid: splits, K/V heads, batch x Q tiles),
// then the combine kernel (one block per row).
// CHECK-LABEL: func.func @paged_decode
// CHECK-SAME: %[[WS:.*]]: memref<?x?x130xf32>)
// CHECK: gpu.launch_func @attn_kernels::@paged_decode_decode_split
// CHECK-SAME: #attn.launch<decode_split, tier = decode, threads = 128
// CHECK: gpu.launch_func @attn_kernels::@paged_decode_decode_combine
// CHECK-SAME: #attn.launch<decode_combine, tier = decode, threads = 128
// CHECK: gpu.func @paged_decode_decode_split(
// CHECK-SAME: memref<?x?x130xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: gpu.func @paged_decode_decode_combine(

func.func @paged_decode(%arg0: memref<?x32x1x128xf16>, %arg1: memref<?x8x16x128xf16>, %arg2: memref<?x8x16x128xf16>, %arg3: memref<?x?xi32>, %arg4: memref<?xi32>, %arg5: memref<?x32x1x128xf16>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x32x1x128xf16>
  %c2 = arith.constant 2 : index
  %dim_0 = memref.dim %arg0, %c2 : memref<?x32x1x128xf16>
  %c4 = arith.constant 4 : index
  %0 = arith.muli %dim_0, %c4 : index
  %c4_1 = arith.constant 4 : index
  %1 = arith.ceildivsi %0, %c4_1 : index
  scf.forall (%arg6, %arg7, %arg8) in (%dim, 8, %1) {
    %c4_2 = arith.constant 4 : index
    %2 = arith.muli %arg8, %c4_2 : index
    %3 = memref.load %arg4[%arg6] : memref<?xi32>
    %4 = arith.index_cast %3 : i32 to index
    %c0_3 = arith.constant 0 : index
    %5 = arith.maxsi %4, %c0_3 : index
    %c0_4 = arith.constant 0 : index
    %c4_5 = arith.constant 4 : index
    %c4_6 = arith.constant 4 : index
    %6 = arith.addi %2, %c4_6 : index
    %7 = arith.minsi %6, %0 : index
    %8 = arith.divsi %2, %c4_5 : index
    %c1 = arith.constant 1 : index
    %9 = arith.subi %7, %c1 : index
    %10 = arith.divsi %9, %c4_5 : index
    %11 = arith.subi %5, %dim_0 : index
    %12 = arith.addi %10, %11 : index
    %c1_7 = arith.constant 1 : index
    %13 = arith.addi %12, %c1_7 : index
    %14 = arith.minsi %13, %5 : index
    %15 = attn.load_q %arg0[%arg6, %arg7, %2] group 4 : memref<?x32x1x128xf16> -> tensor<4x128xf16>
    %max, %sum, %acc = attn.init_state : tensor<4xf32>, tensor<4x128xf32>
    %c32 = arith.constant 32 : index
    %16:3 = scf.for %arg9 = %c0_4 to %14 step %c32 iter_args(%arg10 = %max, %arg11 = %sum, %arg12 = %acc) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>) {
      %17 = attn.load_kv %arg1[%arg6, %arg7, %arg9] length %5 block_table %arg3 : memref<?x8x16x128xf16>, memref<?x?xi32> -> tensor<32x128xf16>
      %18 = attn.load_kv %arg2[%arg6, %arg7, %arg9] length %5 block_table %arg3 : memref<?x8x16x128xf16>, memref<?x?xi32> -> tensor<32x128xf16>
      %19 = attn.qk %15, %17 scale 0.0883883461 : tensor<4x128xf16>, tensor<32x128xf16> -> tensor<4x32xf32>
      %20 = attn.mask %19 rows %2 cols %arg9 q_len %dim_0 kv_len %5 mask <causal, bottom_right> group 4 : tensor<4x32xf32>
      %probs, %new_max, %new_sum, %rescale = attn.online_softmax %20, %arg10, %arg11 : tensor<4x32xf32>, tensor<4xf32>
      %21 = attn.pv %probs, %18, %arg12, %rescale : tensor<4x32xf32>, tensor<32x128xf16>, tensor<4x128xf32>, tensor<4xf32>
      scf.yield %new_max, %new_sum, %21 : tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>
    } {attn.kv_loop}
    %out, %lse = attn.finalize %16#0, %16#1, %16#2 : tensor<4xf32>, tensor<4x128xf32> -> tensor<4x128xf16>
    attn.store_o %out, %arg5[%arg6, %arg7, %2] group 4 : tensor<4x128xf16>, memref<?x32x1x128xf16>
  } {attn.schedule = #attn.schedule<block_q = 4, block_kv = 32>, attn.tier = #attn.tier<decode>}
  return
}
