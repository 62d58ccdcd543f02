// Decode (static Sq, few rows per K/V head) on the split-K tier's SIMT
// kernel (decode-tensor-cores=false; f16 on sm_80+ takes the tensor-core
// one by default, attn-to-decode-tensor-cores.mlir): a split kernel over (split, K/V head, batch x Q tile) writing partial
// states to a workspace appended to the host function, and a combine kernel.
// RUN: attn-opt %s "--attn-select-tier=decode-tensor-cores=false" --attn-tile --attn-to-decode --attn-to-mma | FileCheck %s
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90 decode-tensor-cores=false" | attn-translate --attn-ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// The paged GQA decode: 4 query heads per K/V head, one query each, so one
// 4-row Q tile; the workspace is [B*Hq*Sq, splits, Dv + 2] f32 and its
// dim 1 (the split count, the caller's choice) is the split grid.
// CHECK-LABEL: func.func @paged_decode
// CHECK-SAME: %[[BT:[^:]*]]: memref<?x?xi32>, %[[LENS:[^:]*]]: memref<?xi32>, %[[O:[^:]*]]: memref<?x32x1x128xf16>, %[[WS:[^:]*]]: memref<?x?x130xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[WS]], %c1
// CHECK: gpu.launch_func @attn_kernels::@paged_decode_decode_split blocks in (%[[N]], %c8, %{{.*}}) threads in (%c128, {{.*}}) dynamic_shared_memory_size %c16640_i32 args({{.*}}, %[[BT]] : memref<?x?xi32>, %[[LENS]] : memref<?xi32>, %[[WS]] : memref<?x?x130xf32>) {attn.launch = #attn.launch<decode_split, tier = decode, threads = 128, shared = 16640, grid = [splits, kv_heads, batch * ceildiv(group_rows, 4)], params = [q, k, v, block_table, kv_lens, workspace], workspace = [rows, splits, 130] : f32, block_q = 4, group = 4>}
// CHECK: %[[ROWS:.*]] = memref.dim %[[WS]], %c0{{.*}}
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi %[[ROWS]], %c1{{.*}}
// CHECK: gpu.launch_func @attn_kernels::@paged_decode_decode_combine blocks in (%[[BLOCKS]],
// CHECK-SAME: args(%[[WS]] : memref<?x?x130xf32>, %[[O]] : memref<?x32x1x128xf16>)
// CHECK-SAME: {attn.launch = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 0, grid = [rows, 1, 1], params = [workspace, o], workspace = [rows, splits, 130] : f32>}

// Split kernel: 16-byte loads of Q slices (4 rows), then per key a paged
// K and V slice (block table entry j / 16), a 16-lane dot product reduced
// with shuffles, and the online softmax update; key groups merge through
// shared memory, partials go to the workspace.
// CHECK: gpu.func @paged_decode_decode_split
// CHECK-COUNT-4: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x32x1x128xf16>, vector<8xf16>
// Each lane copies its K and V slices of the next trip (2 keys) with
// cp.async into its own slots of a 2-stage ring, then waits for this
// trip's and reads them back (no barrier: the slots are the lane's own).
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref<2x2x2x128x8xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<?x?xi32>
// CHECK: nvgpu.device_async_copy %{{.*}} {bypassL1} : memref<?x8x16x128xf16> to memref<2x2x2x128x8xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: vector.load {{.*}} : memref<2x2x2x128x8xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: vector.reduction <add>
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}} : memref<?x?x130xf32>
// Combine kernel: one block per output row, one pass over the splits 16
// at a time: each slot loads its split's m, l and this thread's column of
// acc (in flight together; a slot past the last split loads nothing: -inf,
// 0 and 0), then the round merges them into the running m, l and acc in
// split order (the old state rescaled by 2^(m_old - m)). No shuffles, no
// barrier, no shared memory.
// CHECK: gpu.func @paged_decode_decode_combine(%[[CWS:[^:]*]]: memref<?x?x130xf32>, %{{.*}}: memref<?x32x1x128xf16>)
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[SPLITS:[^ ]*]] step %c16 iter_args({{.*}}) -> (f32, f32, f32)
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[SPLITS]]
// CHECK: scf.if %[[IN]] -> (f32) {
// CHECK-NEXT: memref.load %[[CWS]][%{{.*}}, %{{.*}}, %c128{{.*}}]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %cst
// CHECK-COUNT-47: scf.if %{{.*}} -> (f32)
// CHECK-NOT: llvm.nvvm.ex2
// CHECK: arith.maxnumf
// CHECK: arith.select
// CHECK: arith.subf
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: scf.yield
// CHECK-NOT: gpu.barrier
// CHECK: memref.store {{.*}} : memref<?x32x1x128xf16>

// The PTX holds 16-byte global loads and shuffles, no tensor-core instructions.
// On sm_90 the combine overlaps the split kernel's tail (programmatic
// dependent launch): the split kernel lets it start, it waits for the
// split kernel's writes, and its contract says so.
// PTX: // attn.kernel paged_decode_decode_split host=paged_decode tier=decode-split threads=128 smem=16640 block_q=4 group=4 args=6 role=decode_split grid=[splits,kv_heads,batch*ceildiv(group_rows,4)] params=[q,k,v,block_table,kv_lens,workspace] workspace=[rows,splits,130]:f32{{$}}
// PTX: // attn.kernel paged_decode_decode_combine host=paged_decode tier=decode-combine threads=128 smem=0 rows_per_block=1 programmatic=1 args=2 role=decode_combine grid=[rows,1,1] params=[workspace,o] workspace=[rows,splits,130]:f32{{$}}
// PTX-LABEL: .entry paged_decode_decode_split(
// PTX: griddepcontrol.launch_dependents;
// PTX: ld.global.v4.b32
// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// PTX: cp.async.wait_group 1;
// PTX: ld.shared.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX-NOT: wmma
// PTX-LABEL: .entry paged_decode_decode_combine(
// PTX-NOT: ld.global
// PTX: griddepcontrol.wait;
// PTX: ld.global
// On sm_80 the two launch in order (no griddepcontrol).
// RUN: attn-opt %s --attn-to-ptx="chip=sm_80" | attn-translate --attn-ptx | FileCheck %s --check-prefix=SM80
// SM80-NOT: programmatic
// SM80-NOT: griddepcontrol
func.func @paged_decode(%q: memref<?x32x1x128xf16>,
                        %k_cache: memref<?x8x16x128xf16>,
                        %v_cache: memref<?x8x16x128xf16>,
                        %block_table: memref<?x?xi32>,
                        %kv_lens: memref<?xi32>,
                        %o: memref<?x32x1x128xf16>) {
  attn.attention q(%q : memref<?x32x1x128xf16>)
                 k(%k_cache : memref<?x8x16x128xf16>)
                 v(%v_cache : memref<?x8x16x128xf16>)
                 block_table(%block_table : memref<?x?xi32>)
                 kv_lens(%kv_lens : memref<?xi32>)
              -> o(%o : memref<?x32x1x128xf16>)
                 mask = <causal, bottom_right>
  return
}
