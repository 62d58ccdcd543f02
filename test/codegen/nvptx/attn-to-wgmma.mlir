// attn-to-wgmma turns an L1 loop nest marked for the wgmma tier into a GPU
// kernel and its launch. The input is what attn-select-tier (prefill=wgmma)
// and attn-tile make of a causal prefill at D128 with its LSE: 128 x 128
// tiles, eight warps (two warpgroups of 64 rows), two cp.async K/V stages,
// which the tier's staggered copies make two K stages and one V buffer.
// The nest's schedule says how the tiles move (attn-select-tier writes
// every field; here the auto ones take the tier's defaults). With
// kv_load = threads the K/V tiles come by cp.async (CHECK); by default by
// TMA from a producer warpgroup with Q K^T a tile ahead (WS-AHEAD, below;
// WS with qk_ahead = off), or with producer = off by TMA from thread 0 of
// the compute warps (TMA). Q comes by TMA wherever K/V do (WS runs with
// q_load = threads: Q by cp.async).
// RUN: sed 's/stages = 2>/stages = 2, kv_load = threads>/' %s | attn-opt --attn-to-wgmma="chip=sm_90a" | FileCheck %s
// RUN: sed 's/stages = 2>/stages = 2, producer = off>/' %s | attn-opt --attn-to-wgmma="chip=sm_90a" | FileCheck %s --check-prefix=TMA
// RUN: sed 's/stages = 2>/stages = 2, qk_ahead = off, q_load = threads>/' %s | attn-opt --attn-to-wgmma="chip=sm_90a" | FileCheck %s --check-prefix=WS
// RUN: attn-opt %s --attn-to-wgmma="chip=sm_90a" | FileCheck %s --check-prefix=WS-AHEAD
// RUN: sed 's/stages = 2>/stages = 2, ping_pong = on>/' %s | attn-opt --attn-to-wgmma="chip=sm_90a" | FileCheck %s --check-prefix=PP
// A choice the nest's schedule makes that the tier cannot honour is a
// remark: without a producer, TMA takes the staggered two stages only.
// RUN: sed 's/stages = 2>/stages = 3, producer = off, kv_load = tma>/' %s | attn-opt --attn-to-wgmma="chip=sm_90a" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// REMARK: remark: the wgmma tier cannot honour the schedule's 'kv_load': its K/V stages are neither the staggered two nor a producer warpgroup's ring
// wgmma exists only in the arch-specific sm_90a.
// RUN: not attn-opt %s --attn-to-wgmma="chip=sm_90" 2>&1 | FileCheck %s --check-prefix=NOT-A
// NOT-A: error: the wgmma tier needs an arch-specific chip (sm_90a: wgmma is not in sm_90); got sm_90
// RUN: not attn-opt %s --attn-to-wgmma="chip=sm_80a" 2>&1 | FileCheck %s --check-prefix=AMPERE
// AMPERE: error: the wgmma tier needs sm_90 or newer (wgmma, in the arch-specific sm_90a); got sm_80a
// Three stages: Q K^T runs a tile ahead. Tile 0's scores before the loop
// (Q and tile 0 waited for, tile 1 may still be coming); in the loop the
// top waits for tile j + 1, the next tile's chain is issued before this
// tile's softmax, and one wait after P V completes both. The loop carries
// the scores (8 more vector<8xf32>).
// RUN: sed 's/stages = 2>/stages = 3, producer = off>/' %s | attn-opt --attn-to-wgmma="chip=sm_90a" | FileCheck %s --check-prefix=AHEAD
// AHEAD: nvvm.cp.async.wait.group 1
// AHEAD: attn_nv.wgmma {{.*}} a_tile
// AHEAD: nvvm.wgmma.wait.group.sync.aligned 0
// AHEAD: scf.for {{.*}} -> (f32, f32, f32, f32, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AHEAD: nvvm.cp.async.wait.group 0
// AHEAD: attn_nv.wgmma {{.*}} a_tile
// AHEAD-NOT: nvvm.wgmma.wait.group
// AHEAD: attn_nv.online_softmax
// AHEAD: attn_nv.wgmma {{.*}} a(
// AHEAD-NOT: attn_nv.wgmma
// AHEAD: nvvm.wgmma.wait.group.sync.aligned 0
// AHEAD: scf.yield
// A nest marked for another tier is left to that tier's pass.
// RUN: sed 's/#attn.tier<wgmma>/#attn.tier<mma>/' %s | attn-opt --attn-to-wgmma="chip=sm_90a" | FileCheck %s --check-prefix=OTHER
// OTHER: scf.forall
// OTHER-NOT: gpu.launch_func

// By TMA, the tensor maps of Q, K, V and O come first, cast on the host
// from the operands (libattnrt encodes them), marked on the kernel for
// attn-tensor-map-params; the contract says tensor_map(q), tensor_map(k),
// tensor_map(v), tensor_map(o). Four mbarriers follow the V buffer
// (131072 + 128 bytes).
// TMA-LABEL: func.func @causal_d128
// TMA: %[[QMAP:.*]] = builtin.unrealized_conversion_cast %arg0 : memref<?x8x?x128xf16> to !llvm.ptr
// TMA: %[[KMAP:.*]] = builtin.unrealized_conversion_cast %arg1 : memref<?x8x?x128xf16> to !llvm.ptr
// TMA: %[[VMAP:.*]] = builtin.unrealized_conversion_cast %arg2 : memref<?x8x?x128xf16> to !llvm.ptr
// TMA: %[[OMAP:.*]] = builtin.unrealized_conversion_cast %arg3 : memref<?x8x?x128xf16> to !llvm.ptr
// TMA: gpu.launch_func @attn_kernels::@causal_d128_wgmma {{.*}} args(%[[QMAP]] : !llvm.ptr, %[[KMAP]] : !llvm.ptr, %[[VMAP]] : !llvm.ptr, %[[OMAP]] : !llvm.ptr, %arg0
// TMA-SAME: shared = 131200, {{.*}} params = [tensor_map(q), tensor_map(k), tensor_map(v), tensor_map(o), q, k, v, o, lse]
// TMA: gpu.func @causal_d128_wgmma(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr,
// TMA-SAME: attn.tensor_map_params = 4 : i64
// Thread 0 makes the four mbarriers and sends Q, then K_0. Q is two
// boxes of 64 columns by 128 rows (group 1: 1 head by 128 queries) at
// (column, head in group, query, K/V head, batch), 32 KiB expected on
// the last mbarrier. K_0 is four 64 x 64 boxes (two 64-column blocks of
// two 64-row boxes), 32 KiB expected on K stage 0's mbarrier. No
// cp.async: every thread waits for Q's mbarrier after the barrier.
// TMA-NOT: attn_nv.copy_tile
// TMA-NOT: nvvm.cp.async.commit.group
// TMA-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32
// TMA: nvvm.fence.mbarrier.init
// TMA: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%c0_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%c64_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// TMA: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// TMA-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1
// TMA-NOT: nvvm.cp.async.wait.group
// TMA: gpu.barrier
// TMA: nvvm.mbarrier.try_wait.parity %{{.*}}, %c0_i32
// Step j: every thread waits for K_j on its stage's mbarrier, then the
// barrier; thread 0 sends V_j and, if there is one, K_{j+1}.
// TMA: scf.for
// TMA: nvvm.mbarrier.try_wait.parity
// TMA-NEXT: gpu.barrier
// TMA: nvvm.mbarrier.arrive.expect_tx
// TMA-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA: nvvm.mbarrier.arrive.expect_tx
// TMA-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA: attn_nv.wgmma
// P V waits for V_j's mbarrier alone: no cp.async wait, no barrier.
// TMA: attn_nv.online_softmax
// TMA-NOT: nvvm.cp.async.wait.group
// TMA-NOT: gpu.barrier
// TMA: nvvm.mbarrier.try_wait.parity
// TMA-NOT: gpu.barrier
// TMA: attn_nv.wgmma
// TMA: scf.yield
// The epilogue stages O (swizzled, in Q's 64-column blocks), each thread
// fences its writes for the async proxy, the block meets, and thread 0
// stores both blocks through O's map (%arg3) and waits until TMA has read
// them.
// TMA: gpu.barrier
// TMA: attn_nv.store_accumulator {{.*}} swizzled : memref<256x64xf16, #gpu.address_space<workgroup>>
// TMA: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// TMA-NEXT: gpu.barrier
// TMA-NOT: {{vector.store|attn_nv.store_accumulator}}
// TMA: nvvm.cp.async.bulk.tensor.global.shared.cta %arg3, %{{.*}}, box[%c0_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// TMA: nvvm.cp.async.bulk.tensor.global.shared.cta %arg3, %{{.*}}, box[%c64_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// TMA-NEXT: nvvm.cp.async.bulk.commit.group
// TMA-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// TMA-NOT: vector.store
// TMA: gpu.return

// A producer warpgroup: 384 threads, warpgroup 0 the producer, capped at
// one block an SM so that setmaxnreg can move registers. K and V each get
// a ring of two stages (Q 32 KiB, K and V 64 KiB each) and 16 mbarriers
// follow: full K, full V (one arrival: the producer's, with the bytes),
// empty K, empty V (one arrival per consumer warp).
// WS-LABEL: func.func @causal_d128
// WS: gpu.launch_func @attn_kernels::@causal_d128_wgmma {{.*}} threads in (%c384
// WS-SAME: threads = 384, shared = 163968, {{.*}} params = [tensor_map(k), tensor_map(v), q, k, v, o, lse]
// WS: gpu.func @causal_d128_wgmma(
// WS-SAME: known_block_size = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// WS-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32
// WS-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c8_i32
// WS: nvvm.fence.mbarrier.init
// WS: gpu.barrier
// The producer gives up registers; its thread 0 walks the tiles: waits
// for the stage's empty K mbarrier, sends K (32 KiB, four boxes), then
// the same for V.
// WS: nvvm.setmaxregister  decrease 24
// WS: scf.for
// WS: nvvm.mbarrier.try_wait.parity
// WS: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// WS-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0,
// WS: nvvm.mbarrier.try_wait.parity
// WS: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// WS-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1,
// The consumers take the registers, copy Q and meet on named barrier 1
// (their 256 threads), never the block's barrier 0.
// WS: nvvm.setmaxregister  increase 240
// WS-NOT: cp.async.bulk.tensor
// WS-NOT: gpu.barrier
// WS: attn_nv.copy_tile
// WS: nvvm.cp.async.wait.group 0
// WS: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// Step j: wait for K's full mbarrier, Q K^T, softmax, wait for V's, P V;
// then V's wait again (a no-op unless P V was skipped) and lane 0 of each
// warp releases both stages.
// WS: scf.for
// WS: nvvm.mbarrier.try_wait.parity
// WS: nvvm.wgmma.wait.group.sync.aligned 0
// WS: attn_nv.online_softmax
// WS: nvvm.mbarrier.try_wait.parity
// WS: nvvm.wgmma.wait.group.sync.aligned 0
// WS: nvvm.mbarrier.try_wait.parity
// WS: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// WS: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// WS: scf.yield
// WS-NOT: gpu.barrier
// WS: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// WS-NOT: gpu.barrier

// Q K^T a tile ahead under the producer: tile 0's scores before the loop,
// once K stage 0 is full (when there is a tile), which then goes back.
// In step j: wait for K_{j+1} (when there is one), issue its product,
// tile j's softmax, wait for V_j, P V, one wait for both; then V_j's
// stage goes back, and K_{j+1}'s.
// Q by TMA under the producer: thread 0 makes the 17 mbarriers (Q's
// last, one arrival) and sends Q's two boxes before the roles part; the
// consumers copy nothing and wait for Q's mbarrier after their barrier.
// WS-AHEAD-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32
// WS-AHEAD-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c8_i32
// WS-AHEAD: nvvm.mbarrier.init %{{.*}}, %c1_i32
// WS-AHEAD: nvvm.fence.mbarrier.init
// WS-AHEAD: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// WS-AHEAD-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0,
// WS-AHEAD-NEXT: }
// WS-AHEAD-NEXT: gpu.barrier
// WS-AHEAD: nvvm.setmaxregister  increase 240
// WS-AHEAD-NOT: attn_nv.copy_tile
// WS-AHEAD: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// WS-AHEAD-NOT: {{nvvm.wgmma|attn_nv.wgmma}}
// WS-AHEAD: nvvm.mbarrier.try_wait.parity %{{.*}}, %c0_i32
// WS-AHEAD: scf.if
// WS-AHEAD: nvvm.mbarrier.try_wait.parity %{{.*}}, %c0_i32
// WS-AHEAD: nvvm.wgmma.wait.group.sync.aligned 0
// WS-AHEAD: scf.if
// WS-AHEAD: nvvm.mbarrier.arrive
// WS-AHEAD: scf.for {{.*}} -> (f32, f32, f32, f32, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// WS-AHEAD: scf.if
// WS-AHEAD: nvvm.mbarrier.try_wait.parity
// WS-AHEAD: attn_nv.wgmma
// WS-AHEAD-NOT: nvvm.wgmma.wait.group
// WS-AHEAD: attn_nv.online_softmax
// WS-AHEAD: nvvm.mbarrier.try_wait.parity
// WS-AHEAD: attn_nv.wgmma
// WS-AHEAD: nvvm.wgmma.wait.group.sync.aligned 0
// WS-AHEAD: nvvm.mbarrier.try_wait.parity
// WS-AHEAD: nvvm.mbarrier.arrive
// WS-AHEAD: scf.if
// WS-AHEAD: nvvm.mbarrier.arrive
// WS-AHEAD: scf.yield

// Ping-pong: consumer warpgroup 1 ends a turn it never had (bar.arrive on
// warpgroup 0's barrier, 2), then each awaits its own (bar.sync 2 + its
// index, 256 threads: its 128 and the other's arrival) before tile 0's
// Q K^T. In step j the turn ends after K_{j+1}'s product is issued and
// the next one opens before P V; after the loop the last ends and
// warpgroup 0 takes the one warpgroup 1 ended last.
// PP: nvvm.setmaxregister  increase 240
// PP: scf.if
// PP: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// PP: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// PP: nvvm.wgmma.wait.group.sync.aligned 0
// PP: scf.for
// PP: attn_nv.wgmma
// PP: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// PP: attn_nv.online_softmax
// PP: nvvm.mbarrier.try_wait.parity
// PP: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// PP: nvvm.wgmma.wait.group.sync.aligned 0
// PP: scf.yield
// PP: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// PP: scf.if
// PP: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32

// Host: one block of 256 threads per (Q tile, head, batch); Q (32 KiB),
// two stages of K and one V buffer (32 KiB each).
// CHECK-LABEL: func.func @causal_d128
// CHECK: gpu.launch_func @attn_kernels::@causal_d128_wgmma
// CHECK-SAME: dynamic_shared_memory_size %c131072_i32
// CHECK-SAME: {attn.launch = #attn.launch<prefill, tier = wgmma, threads = 256, shared = 131072, grid = [ceildiv(group_rows, 128), kv_heads, batch], params = [q, k, v, o, lse], block_q = 128, group = 1>}

// Kernel: Q/K/V tiles as two 64-column blocks of 128-byte rows ([256, 64]
// for 128 rows), copied with cp.async and handed to the async proxy with
// fence.proxy.async before the barrier.
// CHECK: gpu.func @causal_d128_wgmma(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: memref.view {{.*}} to memref<256x64xf16, #gpu.address_space<workgroup>>
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: attn_nv.copy_tile {{.*}} blocked async {{.*}} -> memref<256x64xf16, #gpu.address_space<workgroup>>
// The prologue copies Q and K_0, two groups, and waits for Q.
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// Step j: wait for K_j, the one group in flight; then V_j into the one V
// buffer and K_{j+1} into the other K stage, a group each.
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// S = Q K^T: one wgmma group over k = D, Q and K both K-major in shared
// memory (attn-nv-to-nvvm makes it a chain of 8 through descriptors),
// eight 16-column accumulator tiles, waited for and pinned.
// CHECK: attn_nv.wgmma %{{.*}} a_tile %{{.*}} b_tile %{{.*}} {a_rows = 128 : i64, k = 128 : i64} : f16 -> vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: attn_nv.fence_registers
// The register score stage: each warp's 16 rows of the warpgroup's
// 64 x 128 scores in one online-softmax step.
// CHECK: attn_nv.online_softmax {{.*}} : f16
// O += P V: P from registers, V MN-major (transposed) through a descriptor,
// once V_j is in (K_{j+1} may still be coming).
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// The accumulators and P pinned before the group, which takes P's 8 A
// fragments (k = 128 keys) and adds to O's 8 tiles.
// CHECK: attn_nv.fence_registers {{.*}} : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
// CHECK: attn_nv.fence_registers {{.*}} : vector<4xi32>, vector<4xi32>, vector<4xi32>, vector<4xi32>, vector<4xi32>, vector<4xi32>, vector<4xi32>, vector<4xi32>
// CHECK: attn_nv.wgmma %{{.*}} a(%{{.*}}) acc(%{{.*}}) b_tile %{{.*}} {k = 128 : i64} : f16
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.yield
// Epilogue: the LSE, then O staged through shared memory after a barrier
// (a blocked Q's rows are not the warp's own), 16-byte stores.
// CHECK: math.log2
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}} : memref<?x8x?x128xf16>, vector<8xf16>


func.func @causal_d128(%arg0: memref<?x8x?x128xf16>, %arg1: memref<?x8x?x128xf16>, %arg2: memref<?x8x?x128xf16>, %arg3: memref<?x8x?x128xf16>, %arg4: memref<?x8x?xf32>) {
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x8x?x128xf16>
  %c2 = arith.constant 2 : index
  %dim_0 = memref.dim %arg0, %c2 : memref<?x8x?x128xf16>
  %c1 = arith.constant 1 : index
  %0 = arith.muli %dim_0, %c1 : index
  %c128 = arith.constant 128 : index
  %1 = arith.ceildivsi %0, %c128 : index
  %c2_1 = arith.constant 2 : index
  %dim_2 = memref.dim %arg1, %c2_1 : memref<?x8x?x128xf16>
  scf.forall (%arg5, %arg6, %arg7) in (%dim, 8, %1) {
    %c128_3 = arith.constant 128 : index
    %2 = arith.muli %arg7, %c128_3 : index
    %c0_4 = arith.constant 0 : index
    %c1_5 = arith.constant 1 : index
    %c128_6 = arith.constant 128 : index
    %3 = arith.addi %2, %c128_6 : index
    %4 = arith.minsi %3, %0 : index
    %5 = arith.divsi %2, %c1_5 : index
    %c1_7 = arith.constant 1 : index
    %6 = arith.subi %4, %c1_7 : index
    %7 = arith.divsi %6, %c1_5 : index
    %c0_8 = arith.constant 0 : index
    %8 = arith.addi %7, %c0_8 : index
    %c1_9 = arith.constant 1 : index
    %9 = arith.addi %8, %c1_9 : index
    %10 = arith.minsi %9, %dim_2 : index
    %11 = attn.load_q %arg0[%arg5, %arg6, %2] group 1 : memref<?x8x?x128xf16> -> tensor<128x128xf16>
    %max, %sum, %acc = attn.init_state : tensor<128xf32>, tensor<128x128xf32>
    %c128_10 = arith.constant 128 : index
    %12:3 = scf.for %arg8 = %c0_4 to %10 step %c128_10 iter_args(%arg9 = %max, %arg10 = %sum, %arg11 = %acc) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
      %13 = attn.load_kv %arg1[%arg5, %arg6, %arg8] length %dim_2 : memref<?x8x?x128xf16> -> tensor<128x128xf16>
      %14 = attn.load_kv %arg2[%arg5, %arg6, %arg8] length %dim_2 : memref<?x8x?x128xf16> -> tensor<128x128xf16>
      %15 = attn.qk %11, %13 scale 0.0883883461 : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf32>
      %16 = attn.mask %15 rows %2 cols %arg8 q_len %dim_0 kv_len %dim_2 mask <causal> group 1 : tensor<128x128xf32>
      %probs, %new_max, %new_sum, %rescale = attn.online_softmax %16, %arg9, %arg10 : tensor<128x128xf32>, tensor<128xf32>
      %17 = attn.pv %probs, %14, %arg11, %rescale : tensor<128x128xf32>, tensor<128x128xf16>, tensor<128x128xf32>, tensor<128xf32>
      scf.yield %new_max, %new_sum, %17 : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
    } {attn.kv_loop}
    %out, %lse = attn.finalize %12#0, %12#1, %12#2 : tensor<128xf32>, tensor<128x128xf32> -> tensor<128x128xf16>
    attn.store_o %out, %arg3[%arg5, %arg6, %2] group 1 : tensor<128x128xf16>, memref<?x8x?x128xf16>
    attn.store_lse %lse, %arg4[%arg5, %arg6, %2] group 1 : tensor<128xf32>, memref<?x8x?xf32>
  } {attn.schedule = #attn.schedule<block_q = 128, block_kv = 128, warps = 8, stages = 2>, attn.tier = #attn.tier<wgmma>}
  return
}
