// attn-to-wmma turns the L1 loop nest into a GPU kernel and its launch.
// RUN: attn-opt %s --attn-tile="block-q=64 block-kv=64" --attn-to-wmma="chip=sm_80" | FileCheck %s
// RUN: attn-opt %s --attn-tile="block-q=64 block-kv=64" --attn-to-wmma="chip=sm_75" | FileCheck %s --check-prefix=TURING

// Host: one block of 128 threads (4 warps x 16 rows) per (Q tile, K/V
// head, batch), 67584 bytes of dynamic shared memory; the attention
// operands are the kernel's arguments.
// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @gqa_causal
// CHECK-SAME: (%[[Q:.*]]: memref<?x8x?x64xf16>, %[[K:.*]]: memref<?x2x?x64xf16>, %[[V:.*]]: memref<?x2x?x64xf16>, %[[O:.*]]: memref<?x8x?x64xf16>, %[[L:.*]]: memref<?x8x?xf32>)
// CHECK: %[[B:.*]] = memref.dim %[[Q]], %c0
// CHECK: %[[TILES:.*]] = arith.ceildivsi
// CHECK: gpu.launch_func @attn_kernels::@gqa_causal_wmma blocks in (%[[TILES]], %{{.*}}, %[[B]]) threads in (%c128, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c68096_i32 args(%[[Q]] : memref<?x8x?x64xf16>, %[[K]] : memref<?x2x?x64xf16>, %[[V]] : memref<?x2x?x64xf16>, %[[O]] : memref<?x8x?x64xf16>, %[[L]] : memref<?x8x?xf32>) {attn.launch = #attn.launch<prefill, tier = "wmma", threads = 128, shared = 68096, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, o, lse], block_q = 64, group = 4>}
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
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1} : memref<?x8x?x64xf16> to memref<64x72xf16, #gpu.address_space<workgroup>>
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
// TURING-NOT: nvgpu.device_async_copy
// TURING: vector.load {{.*}} {alignment = 16 : i64} : memref<?x8x?x64xf16>, vector<8xf16>
func.func @gqa_causal(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                      %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>,
                      %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 lse(%lse : memref<?x8x?xf32>) mask = <causal>
  return
}
