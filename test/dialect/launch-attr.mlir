// #attn.launch round-trips (attributes print sorted by name): the
// roles the NVIDIA tiers emit, a programmatic combine, a tensor_map
// parameter, captures, a prefill alternative's max_kv_len, K (and
// k_scale) in V's place (v_from_k, MLA), and the contract on a
// gpu.launch_func.
// RUN: attn-opt %s | attn-opt | FileCheck %s

// CHECK: a = #attn.launch<prefill, tier = wgmma, threads = 128, shared = 65664, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, o], block_q = 64, group = 1, max_kv_len = 512>
// CHECK-SAME: c = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 16, grid = [rows, 1, 1], params = [workspace, o], workspace = [rows, splits, 130] : f32>
// CHECK-SAME: d = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 16, grid = [rows, 1, 1], params = [workspace, o], workspace = [rows, splits, 130] : f32, programmatic>
// CHECK-SAME: m = #attn.launch<decode_unsplit, tier = mma, threads = 128, shared = 157696, grid = [ceildiv(group_rows, 16), kv_heads, batch], params = [q, k, k, k_scale, k_scale, block_table, kv_lens, o], block_q = 16, group = 16>
// CHECK-SAME: p = #attn.launch<prefill, tier = mma, threads = 128, shared = 68096, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, o, lse], block_q = 64, group = 4>
// CHECK-SAME: s = #attn.launch<decode_split, tier = decode, threads = 128, shared = 16640, grid = [splits, kv_heads, batch * ceildiv(group_rows, 4)], params = [q, k, v, block_table, kv_lens, workspace], workspace = [rows, splits, 130] : f32, block_q = 4, group = 4>
// CHECK-SAME: t = #attn.launch<prefill, tier = mma, threads = 384, shared = 0, grid = [ceildiv(group_rows, 128), kv_heads, batch], params = [tensor_map(q), k, v, o]>
// CHECK-SAME: u = #attn.launch<decode_unsplit, tier = mma, threads = 128, shared = 135168, grid = [ceildiv(group_rows, 16), kv_heads, batch], params = [q, k, v, o], block_q = 16, group = 4>
// CHECK-SAME: x = #attn.launch<prefill, tier = mma, threads = 128, shared = 0, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, capture(0), capture(1), o]>
func.func @contracts() attributes {
  a = #attn.launch<prefill, tier = wgmma, threads = 128, shared = 65664,
                   grid = [ceildiv(group_rows, 64), kv_heads, batch],
                   params = [q, k, v, o], max_kv_len = 512, block_q = 64,
                   group = 1>,
  m = #attn.launch<decode_unsplit, tier = mma, threads = 128,
                   shared = 157696,
                   grid = [ceildiv(group_rows, 16), kv_heads, batch],
                   params = [q, k, k, k_scale, k_scale, block_table, kv_lens,
                             o], block_q = 16, group = 16>,
  p = #attn.launch<prefill, tier = mma, threads = 128, shared = 68096,
                   grid = [ceildiv(group_rows, 64), kv_heads, batch],
                   params = [q, k, v, o, lse], group = 4, block_q = 64>,
  s = #attn.launch<decode_split, tier = decode, threads = 128,
                   shared = 16640,
                   grid = [splits, kv_heads, batch * ceildiv(group_rows, 4)],
                   params = [q, k, v, block_table, kv_lens, workspace],
                   workspace = [rows, splits, 130] : f32, block_q = 4,
                   group = 4>,
  c = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 16,
                   grid = [ceildiv(rows, 1), 1, 1], params = [workspace, o],
                   workspace = [rows, splits, 130] : f32, block_q = 0>,
  d = #attn.launch<decode_combine, tier = decode, threads = 128, shared = 16,
                   grid = [rows, 1, 1], params = [workspace, o],
                   workspace = [rows, splits, 130] : f32, programmatic>,
  t = #attn.launch<prefill, tier = mma, threads = 384, shared = 0,
                   grid = [ceildiv(group_rows, 128), kv_heads, batch],
                   params = [tensor_map(q), k, v, o]>,
  x = #attn.launch<prefill, tier = mma, threads = 128, shared = 0,
                   grid = [ceildiv(group_rows, 64), kv_heads, batch],
                   params = [q, k, v, capture(0), capture(1), o]>,
  u = #attn.launch<decode_unsplit, tier = mma, threads = 128, shared = 135168,
                   grid = [ceildiv(group_rows, 16), kv_heads, batch],
                   params = [q, k, v, o], block_q = 16, group = 4>
} {
  return
}

// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func @kernels::@k {{.*}} {attn.launch = #attn.launch<prefill, tier = wmma, threads = 128, shared = 1024, grid = [ceildiv(group_rows, 64), kv_heads, batch], params = [q, k, v, o]>}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) kernel {
      gpu.return
    }
  }
  func.func @host(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                  %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>,
                  %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1)
        threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem
        args(%q : memref<?x8x?x64xf16>, %k : memref<?x2x?x64xf16>,
             %v : memref<?x2x?x64xf16>, %o : memref<?x8x?x64xf16>)
        {attn.launch = #attn.launch<prefill, tier = wmma, threads = 128,
           shared = 1024, grid = [ceildiv(group_rows, 64), kv_heads, batch],
           params = [q, k, v, o]>}
    return
  }
}

// The packed (varlen) forms' operands and grid size (enum values past the
// first eleven operands: the duplicate check once indexed past its flags).
// CHECK-LABEL: func.func @packed
// CHECK: #attn.launch<prefill, tier = mma, threads = 128, shared = 98304, grid = [ceildiv(packed_q_tiles, 128), kv_heads, 1], params = [q, k, v, cu_seqlens_q, cu_seqlens_k, o, lse], block_q = 128, group = 4>
func.func @packed() attributes {l = #attn.launch<prefill, tier = mma, threads = 128, shared = 98304, grid = [ceildiv(packed_q_tiles, 128), kv_heads, 1], params = [q, k, v, cu_seqlens_q, cu_seqlens_k, o, lse], block_q = 128, group = 4>} {
  return
}
