// A decode Q tile of more than 8 rows (here MQA: 64 query heads over one
// K/V head) gets the tensor-core split kernel: the mma tier's skeleton in
// split-K form, one block per (split, K/V head, batch x Q tile) over its
// split's 64-key tiles (mma.sync, cp.async ring), writing its rows'
// partial states to the same workspace the SIMT split kernel writes, then
// the same combine kernel. Turing (no mma.sync) keeps the SIMT kernel.
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-decode | FileCheck %s
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma sm=75" --attn-tile "--attn-to-decode=chip=sm_75" | FileCheck %s --check-prefix=TURING

// CHECK-LABEL: func.func @mqa
// CHECK-SAME: %[[WS:arg[0-9]+]]: memref<?x?x130xf32>
// CHECK: gpu.launch_func @attn_kernels::@mqa_decode_split blocks in
// CHECK-SAME: args({{.*}}, %[[WS]] : memref<?x?x130xf32>)
// CHECK-SAME: #attn.launch<decode_split, tier = mma, threads = 128, shared = {{[0-9]+}}, grid = [splits, kv_heads, batch * ceildiv(group_rows, 64)], params = [q, k, v, workspace], workspace = [rows, splits, 130] : f32, block_q = 64, group = 64>
// CHECK: gpu.launch_func @attn_kernels::@mqa_decode_combine
// CHECK-SAME: #attn.launch<decode_combine, tier = decode
// CHECK: gpu.func @mqa_decode_split(
// The split's range: whole 64-key tiles per split.
// CHECK: memref.dim %{{.*}}, %c1{{.*}} : memref<?x?x130xf32>
// CHECK: arith.ceildivsi
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync
// Unnormalized accumulator pairs, then m and l, into [row, split, :].
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %block_id_x, %{{.*}}] {alignment = 8 : i64} : memref<?x?x130xf32>, vector<2xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %block_id_x, %c128{{.*}}] : memref<?x?x130xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %block_id_x, %c129{{.*}}] : memref<?x?x130xf32>
// CHECK: gpu.func @mqa_decode_combine(
// TURING: #attn.launch<decode_split, tier = decode, threads = 128
func.func @mqa(%q: memref<?x64x1x128xf16>, %k: memref<?x1x?x128xf16>,
               %v: memref<?x1x?x128xf16>, %o: memref<?x64x1x128xf16>,
               %lse: memref<?x64x1xf32>) {
  attn.attention q(%q : memref<?x64x1x128xf16>) k(%k : memref<?x1x?x128xf16>)
                 v(%v : memref<?x1x?x128xf16>) -> o(%o : memref<?x64x1x128xf16>)
                 lse(%lse : memref<?x64x1xf32>)
  return
}
