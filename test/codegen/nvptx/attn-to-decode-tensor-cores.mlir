// A decode Q tile of more than 8 rows (here MQA: 64 query heads over one
// K/V head) gets the tensor-core split kernel: the mma tier's skeleton in
// split-K form, one block per (split, K/V head, batch x Q tile) over its
// split's 64-key tiles (mma.sync, cp.async ring), writing its rows'
// partial states to the same workspace the SIMT split kernel writes, then
// the same combine kernel; beside them the same tile writing O itself
// (decode_unsplit), which libattnrt launches alone at one split. Turing
// (no mma.sync) keeps the SIMT kernel, which has no such form.
// Four K/V stages are in flight (147456 bytes of shared memory at D128).
// A split takes every splits-th K/V tile; over a block table, one run.
// On sm_90a a Q tile of whole warpgroups with 64-column head dims gets the
// wgmma tier's parts instead (wgmma from swizzled 64-column blocks); D 96
// keeps mma.sync.
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-decode | FileCheck %s
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma sm=75" --attn-tile "--attn-to-decode=chip=sm_75" | FileCheck %s --check-prefix=TURING
// RUN: attn-opt %s "--attn-select-tier=prefill=wgmma sm=90" --attn-tile "--attn-to-decode=chip=sm_90a" | FileCheck %s --check-prefix=HOPPER
// RUN: attn-opt %s "--attn-select-tier=sm=90" --attn-tile "--attn-to-decode=chip=sm_90" | FileCheck %s --check-prefix=SM90

// CHECK-LABEL: func.func @mqa
// CHECK-SAME: %[[WS:arg[0-9]+]]: memref<?x?x130xf32>
// CHECK: gpu.launch_func @attn_kernels::@mqa_decode_split blocks in
// CHECK-SAME: args({{.*}}, %[[WS]] : memref<?x?x130xf32>)
// CHECK-SAME: #attn.launch<decode_split, tier = mma, threads = 128, shared = {{[0-9]+}}, grid = [splits, kv_heads, batch * ceildiv(group_rows, 64)], params = [q, k, v, workspace], workspace = [rows, splits, 130] : f32, block_q = 64, group = 64>
// CHECK: gpu.launch_func @attn_kernels::@mqa_decode_combine
// CHECK-SAME: #attn.launch<decode_combine, tier = decode
// CHECK: gpu.launch_func @attn_kernels::@mqa_decode_unsplit blocks in
// CHECK-SAME: args({{.*}} : memref<?x64x1x128xf16>, {{.*}} : memref<?x64x1xf32>)
// CHECK-SAME: #attn.launch<decode_unsplit, tier = mma, threads = 128, shared = 147456, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, o, lse], block_q = 64, group = 64>
// CHECK: gpu.func @mqa_decode_split(
// The split's keys: every splits-th 64-key tile, from tile block_id_x (a
// count of them; the loop walks positions 0, 1, ...).
// CHECK: %[[SPLITS:.*]] = memref.dim %{{.*}}, %c1{{.*}} : memref<?x?x130xf32>
// CHECK: %[[TILES:.*]] = arith.ceildivsi %{{.*}}, %c64
// CHECK: %[[LEFT:.*]] = arith.subi %[[TILES]], %block_id_x
// CHECK: %[[LEFT0:.*]] = arith.maxsi %[[LEFT]]
// CHECK: %[[COUNT:.*]] = arith.ceildivsi %[[LEFT0]], %[[SPLITS]]
// CHECK: attn_nv.copy_tile
// CHECK: attn_nv.ldmatrix
// CHECK: scf.for %[[X:.*]] = %{{.*}} to %[[COUNT]] step %c1
// CHECK: %[[STRIDE:.*]] = arith.muli %[[X]], %[[SPLITS]]
// CHECK: %[[TILE:.*]] = arith.addi %block_id_x, %[[STRIDE]]
// CHECK: arith.muli %[[TILE]], %c64
// CHECK: attn_nv.mma_tile
// Unnormalized accumulator pairs, then m and l, into [row, split, :].
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %block_id_x, %{{.*}}] {alignment = 8 : i64} : memref<?x?x130xf32>, vector<2xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %block_id_x, %c128{{.*}}] : memref<?x?x130xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %block_id_x, %c129{{.*}}] : memref<?x?x130xf32>
// CHECK: gpu.func @mqa_decode_combine(
// The one-split form: the whole K/V range, normalized rows of O and the
// LSE, no workspace.
// CHECK: gpu.func @mqa_decode_unsplit(%{{.*}}: memref<?x64x1x128xf16>, %{{.*}}: memref<?x1x?x128xf16>, %{{.*}}: memref<?x1x?x128xf16>, %{{.*}}: memref<?x64x1x128xf16>, %{{.*}}: memref<?x64x1xf32>)
// CHECK-NOT: memref<?x?x130xf32>
// CHECK: attn_nv.mma_tile
// CHECK-NOT: memref<?x?x130xf32>
// CHECK: gpu.func @mqa_d96_decode_split(
// Over a block table each split keeps one run of whole tiles: the block
// takes keys from block_id_x * ceildiv(ceildiv(keys, 64), splits) * 64.
// CHECK: gpu.func @mqa_paged_decode_split(
// CHECK: %[[PSPLITS:.*]] = memref.dim %{{.*}}, %c1{{.*}} : memref<?x?x130xf32>
// CHECK: %[[PER:.*]] = arith.ceildivsi %{{.*}}, %[[PSPLITS]]
// CHECK: %[[PERKEYS:.*]] = arith.muli %[[PER]], %c64
// CHECK: arith.muli %block_id_x, %[[PERKEYS]]
// CHECK: scf.for %{{.*}} step %c64
// TURING: #attn.launch<decode_split, tier = decode, threads = 128
// TURING-NOT: decode_unsplit
// HOPPER-LABEL: func.func @mqa
// HOPPER: #attn.launch<decode_split, tier = wgmma, threads = 128, shared = 147456, grid = [splits, kv_heads, batch * ceildiv(group_rows, 64)], params = [q, k, v, workspace], workspace = [rows, splits, 130] : f32, block_q = 64, group = 64>
// HOPPER: #attn.launch<decode_unsplit, tier = wgmma, threads = 128, shared = 147456
// HOPPER-LABEL: func.func @mqa_d96
// HOPPER: #attn.launch<decode_split, tier = mma, threads = 128
// HOPPER: gpu.func @mqa_decode_split(
// HOPPER: attn_nv.copy_tile
// HOPPER: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// HOPPER: attn_nv.wgmma {{.*}} : f16 -> vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>{{$}}
// HOPPER: nvvm.wgmma.wait.group.sync.aligned
// HOPPER: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %block_id_x, %c129{{.*}}] : memref<?x?x130xf32>
// HOPPER: gpu.func @mqa_d96_decode_split(
// HOPPER-NOT: wgmma
// HOPPER: gpu.func @mqa_d96_decode_combine(
// SM90-NOT: tier = wgmma
func.func @mqa(%q: memref<?x64x1x128xf16>, %k: memref<?x1x?x128xf16>,
               %v: memref<?x1x?x128xf16>, %o: memref<?x64x1x128xf16>,
               %lse: memref<?x64x1xf32>) {
  attn.attention q(%q : memref<?x64x1x128xf16>) k(%k : memref<?x1x?x128xf16>)
                 v(%v : memref<?x1x?x128xf16>) -> o(%o : memref<?x64x1x128xf16>)
                 lse(%lse : memref<?x64x1xf32>)
  return
}

func.func @mqa_d96(%q: memref<?x64x1x96xf16>, %k: memref<?x1x?x96xf16>,
                   %v: memref<?x1x?x96xf16>, %o: memref<?x64x1x96xf16>) {
  attn.attention q(%q : memref<?x64x1x96xf16>) k(%k : memref<?x1x?x96xf16>)
                 v(%v : memref<?x1x?x96xf16>) -> o(%o : memref<?x64x1x96xf16>)
  return
}

func.func @mqa_paged(%q: memref<?x64x1x128xf16>, %k: memref<?x1x16x128xf16>,
                     %v: memref<?x1x16x128xf16>, %bt: memref<?x?xi32>,
                     %lens: memref<?xi32>, %o: memref<?x64x1x128xf16>) {
  attn.attention q(%q : memref<?x64x1x128xf16>) k(%k : memref<?x1x16x128xf16>)
                 v(%v : memref<?x1x16x128xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) -> o(%o : memref<?x64x1x128xf16>)
  return
}
