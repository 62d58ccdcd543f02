// attn-to-wmma turns an L1 loop nest marked for the wmma tier (here
// attn-tile's nest of a GQA-4 causal prefill, 64 x 64 tiles, with no
// schedule: warps and stages take the selection pass's defaults) into a
// GPU kernel and its launch.
// RUN: attn-opt %s --attn-to-wmma="chip=sm_80" | FileCheck %s
// RUN: attn-opt %s --attn-to-wmma="chip=sm_75" | FileCheck %s --check-prefix=TURING
// A nest marked for another tier is left to that tier's pass.
// RUN: sed 's/#attn.tier<wmma>/#attn.tier<mma>/' %s | attn-opt --attn-to-wmma="chip=sm_80" | FileCheck %s --check-prefix=OTHER
// OTHER: scf.forall
// OTHER-NOT: gpu.launch_func

// Host: one block of 128 threads (4 warps x 16 rows) per (Q tile, K/V
// head, batch), 67584 bytes of dynamic shared memory; the attention
// operands are the kernel's arguments.
// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME: (%[[Q:.*]]: memref<?x8x?x64xf16>, %[[K:.*]]: memref<?x2x?x64xf16>, %[[V:.*]]: memref<?x2x?x64xf16>, %[[O:.*]]: memref<?x8x?x64xf16>, %[[L:.*]]: memref<?x8x?xf32>)
// CHECK: %[[B:.*]] = memref.dim %[[Q]], %c0
// CHECK: %[[TILES:.*]] = arith.ceildivsi
// CHECK: gpu.launch_func @attn_kernels::@gqa_causal_wmma blocks in (%[[TILES]], %{{.*}}, %[[B]]) threads in (%c128, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c68096_i32 args(%[[Q]] : memref<?x8x?x64xf16>, %[[K]] : memref<?x2x?x64xf16>, %[[V]] : memref<?x2x?x64xf16>, %[[O]] : memref<?x8x?x64xf16>, %[[L]] : memref<?x8x?xf32>) {attn.launch = #attn.launch<prefill, tier = wmma, threads = 128, shared = 68096, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, o, lse], block_q = 64, group = 4>}
// CHECK-NOT: scf.forall
// CHECK-NOT: attn.

// Kernel: block ids, dynamic shared memory carved into padded tiles (rows
// of 64 + 8 halves), Q and K/V copied with 16-byte cp.async (zero fill
// through the source element count), Q fragments loaded once.
// CHECK: gpu.module @attn_kernels
// CHECK: gpu.func @gqa_causal_wmma(%{{.*}}: memref<?x8x?x64xf16>, %{{.*}}: memref<?x2x?x64xf16>, %{{.*}}: memref<?x2x?x64xf16>, %{{.*}}: memref<?x8x?x64xf16>, %{{.*}}: memref<?x8x?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: gpu.block_id z
// CHECK: gpu.block_id y
// CHECK: gpu.block_id x
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[SMEM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: attn_nv.copy_tile {{.*}} plain async {{.*}} : memref<?x8x?x64xf16> -> memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: gpu.barrier
// CHECK-COUNT-4: gpu.subgroup_mma_load_matrix {{.*}} {leadDimension = 72 : index} : memref<64x72xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "AOp">
// The K/V loop carries m, l and four 16x16 accumulators.
// CHECK: scf.for {{.*}} -> (f32, f32, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">)
// CHECK: nvvm.cp.async.wait.group 0
// Q.K^T: K read transposed (column-major B).
// CHECK: gpu.subgroup_mma_load_matrix {{.*}} {leadDimension = 72 : index, transpose} : memref<64x72xf16, #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "BOp">
// CHECK: gpu.subgroup_mma_compute
// CHECK: gpu.subgroup_mma_store_matrix {{.*}} {leadDimension = 68 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.bar.warp.sync
// Mask and online softmax on the score tile: row max over a shuffle pair.
// CHECK: arith.cmpi slt
// CHECK: arith.select {{.*}} : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: arith.truncf {{.*}} : f32 to f16
// P.V: acc *= rescale elementwise, then accumulate.
// CHECK: gpu.subgroup_mma_elementwise  mulf
// CHECK: gpu.subgroup_mma_compute
// CHECK: scf.yield
// Epilogue: m, l and acc through shared memory, o = acc / l in 16-byte
// chunks, LSE.
// CHECK: gpu.subgroup_mma_store_matrix {{.*}} : !gpu.mma_matrix<16x16xf32, "COp">, memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: vector.load {{.*}} : memref<64x68xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.store {{.*}} : memref<?x8x?x64xf16>, vector<8xf16>
// CHECK: math.log2
// CHECK: memref.store {{.*}} : memref<?x8x?xf32>

// Turing has no cp.async: one K/V stage, 16-byte vector loads.
// TURING: dynamic_shared_memory_size %c49664_i32
// TURING-NOT: async thread
// TURING: attn_nv.copy_tile {{.*}} plain thread {{.*}} : memref<?x8x?x64xf16>
func.func @gqa_causal(%arg0: memref<?x8x?x64xf16>, %arg1: memref<?x2x?x64xf16>, %arg2: memref<?x2x?x64xf16>, %arg3: memref<?x8x?x64xf16>, %arg4: memref<?x8x?xf32>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x8x?x64xf16>
  %c2 = arith.constant 2 : index
  %dim_0 = memref.dim %arg0, %c2 : memref<?x8x?x64xf16>
  %c4 = arith.constant 4 : index
  %0 = arith.muli %dim_0, %c4 : index
  %c64 = arith.constant 64 : index
  %1 = arith.ceildivsi %0, %c64 : index
  %c2_1 = arith.constant 2 : index
  %dim_2 = memref.dim %arg1, %c2_1 : memref<?x2x?x64xf16>
  scf.forall (%arg5, %arg6, %arg7) in (%dim, 2, %1) {
    %c64_3 = arith.constant 64 : index
    %2 = arith.muli %arg7, %c64_3 : index
    %c0_4 = arith.constant 0 : index
    %c4_5 = arith.constant 4 : index
    %c64_6 = arith.constant 64 : index
    %3 = arith.addi %2, %c64_6 : index
    %4 = arith.minsi %3, %0 : index
    %5 = arith.divsi %2, %c4_5 : index
    %c1 = arith.constant 1 : index
    %6 = arith.subi %4, %c1 : index
    %7 = arith.divsi %6, %c4_5 : index
    %8 = arith.addi %7, %c0_4 : index
    %c1_7 = arith.constant 1 : index
    %9 = arith.addi %8, %c1_7 : index
    %10 = arith.minsi %9, %dim_2 : index
    %11 = attn.load_q %arg0[%arg5, %arg6, %2] group 4 : memref<?x8x?x64xf16> -> tensor<64x64xf16>
    %max, %sum, %acc = attn.init_state : tensor<64xf32>, tensor<64x64xf32>
    %c64_8 = arith.constant 64 : index
    %12:3 = scf.for %arg8 = %c0_4 to %10 step %c64_8 iter_args(%arg9 = %max, %arg10 = %sum, %arg11 = %acc) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
      %13 = attn.load_kv %arg1[%arg5, %arg6, %arg8] length %dim_2 : memref<?x2x?x64xf16> -> tensor<64x64xf16>
      %14 = attn.load_kv %arg2[%arg5, %arg6, %arg8] length %dim_2 : memref<?x2x?x64xf16> -> tensor<64x64xf16>
      %15 = attn.qk %11, %13 scale 1.250000e-01 : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
      %16 = attn.mask %15 rows %2 cols %arg8 q_len %dim_0 kv_len %dim_2 mask <causal> group 4 : tensor<64x64xf32>
      %probs, %new_max, %new_sum, %rescale = attn.online_softmax %16, %arg9, %arg10 : tensor<64x64xf32>, tensor<64xf32>
      %17 = attn.pv %probs, %14, %arg11, %rescale : tensor<64x64xf32>, tensor<64x64xf16>, tensor<64x64xf32>, tensor<64xf32>
      scf.yield %new_max, %new_sum, %17 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
    } {attn.kv_loop}
    %out, %lse = attn.finalize %12#0, %12#1, %12#2 : tensor<64xf32>, tensor<64x64xf32> -> tensor<64x64xf16>
    attn.store_o %out, %arg3[%arg5, %arg6, %2] group 4 : tensor<64x64xf16>, memref<?x8x?x64xf16>
    attn.store_lse %lse, %arg4[%arg5, %arg6, %2] group 4 : tensor<64xf32>, memref<?x8x?xf32>
  } {attn.tier = #attn.tier<wmma>}
  return
}
