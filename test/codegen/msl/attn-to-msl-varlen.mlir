// The MSL text of the packed (varlen) forms: the offsets are kernel
// buffers, the nest's loads of them are printed with its index arithmetic,
// Q/O/LSE rows start at q_first and K/V rows at kv_first, and the launch
// facts state the packed grid. Numerics: test/msl/varlen.test.
// RUN: attn-translate --attn-to-msl %s | FileCheck %s
// RUN: attn-translate --attn-to-msl --msl-kernel=prefill --msl-splits=2 %s | FileCheck %s --check-prefix=SPLIT

// CHECK: // attn.kernel packed_prefill host=packed tier=msl kind=prefill threads=128 block_q=32 block_kv=32 group=4 splits=1
// CHECK-NEXT: //   grid=(ceil(4 * max_q_len / 32), 2, B) threadgroup(0)=9216 bytes
// CHECK-NEXT: //   packed (varlen): q, o [total_q, Hq, D(v)], lse [total_q, Hq] by cu_seqlens_q [B + 1]; k, v [total_k, Hkv, D(v)] by cu_seqlens_k [B + 1]; max_q_len: the host's bound, at least the longest sequence's q_len; tiles past a sequence's rows exit early
// CHECK-NEXT: //   buffers: q=0 k=1 v=2 cu_seqlens_q=3 cu_seqlens_k=4 o=5 lse=6 sizes=7
// CHECK: // attn.kernel decode_q1_vector host=decode_q1 tier=msl kind=decode_vector
// CHECK-NEXT: //   grid=(ceil(4 * max_q_len / 1), 2, B)
// CHECK-NEXT: //   packed (varlen): q, o [total_q, Hq, D(v)], lse [total_q, Hq] by cu_seqlens_q [B + 1]; max_q_len: the host's bound, at least the longest sequence's q_len, at most 1; tiles past a sequence's rows exit early
// CHECK-NEXT: //   buffers: q=0 k=1 v=2 cu_seqlens_q=3 block_table=4 kv_lens=5 o=6 sizes=7

// CHECK-LABEL: kernel void packed_prefill(
// CHECK: device const int *cu_seqlens_q {{\[\[}}buffer(3)]]
// CHECK: device const int *cu_seqlens_k {{\[\[}}buffer(4)]]
// CHECK: const int q_first = int({{t[0-9]+}});
// CHECK: const int q_len = max(
// CHECK: const int kv_first = int({{t[0-9]+}});
// CHECK: const int kv_len = max(
// CHECK: x = *(device const uint4 *)(q + ulong(q_first + f / 4) * 512 + ulong(kv_head * 4 + f % 4) * 64 + c);
// CHECK: device const half *k_seq = k + (ulong(kv_first) * 128 + ulong(kv_head) * 64);
// CHECK: x = *(device const uint4 *)(k_seq + uint(j) * 128 + c);
// CHECK: const ulong o_row = ulong(q_first + f / 4) * 512 + ulong(kv_head * 4 + f % 4) * 64;
// CHECK: lse[ulong(q_first + f / 4) * 8 + ulong(kv_head * 4 + f % 4) * 1] = attn_lse(m, l);

// CHECK-LABEL: kernel void decode_q1_vector(
// CHECK: if (row0 >= q_rows)
// CHECK-NEXT: return;
// CHECK: device const half *q_row = q + (ulong(q_first + query) * 1024 + ulong(head) * 128) + piece * 8;

// Split-K without max_q_len: the workspace is indexed by the launch's tiles.
// SPLIT-LABEL: kernel void packed_prefill_partial(
// SPLIT: uint3 grid {{\[\[}}threadgroups_per_grid]]
// SPLIT: const int q_tiles = int(grid.x) / 2; // the launch's Q tiles (the host's max_q_len bound)
// SPLIT-LABEL: kernel void packed_prefill_merge(
// SPLIT: device const int *cu_seqlens_q {{\[\[}}buffer(3)]]
// SPLIT: uint3 grid {{\[\[}}threadgroups_per_grid]]
// SPLIT: const int q_tiles = int(grid.x); // the launch's Q tiles (the host's max_q_len bound)
// With a max_q_len too: the spec's is a promise the host's bound may
// undercut (2^31-1 is legal), not the launch's tile count.
// SPLIT-LABEL: kernel void decode_q1_prefill_partial(
// SPLIT: uint3 grid {{\[\[}}threadgroups_per_grid]]
// SPLIT: const int q_tiles = int(grid.x) / 2; // the launch's Q tiles (the host's max_q_len bound)
// SPLIT: const ulong record = (ulong((batch * 2 + kv_head) * q_tiles + q_tile) * 2 + split) * 4160;

func.func @packed(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>, %v: memref<?x2x64xf16>,
                  %cq: memref<?xi32>, %ck: memref<?xi32>, %o: memref<?x8x64xf16>,
                  %lse: memref<?x8xf32>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>) v(%v : memref<?x2x64xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) cu_seqlens_k(%ck : memref<?xi32>)
      -> o(%o : memref<?x8x64xf16>) lse(%lse : memref<?x8xf32>) mask = <causal, bottom_right>
  return
}

func.func @decode_q1(%q: memref<?x8x128xf16>, %k: memref<?x2x16x128xf16>, %v: memref<?x2x16x128xf16>,
                     %cq: memref<?xi32>, %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                     %o: memref<?x8x128xf16>) {
  attn.attention q(%q : memref<?x8x128xf16>) k(%k : memref<?x2x16x128xf16>) v(%v : memref<?x2x16x128xf16>)
      cu_seqlens_q(%cq : memref<?xi32>) block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
      -> o(%o : memref<?x8x128xf16>) mask = <causal, bottom_right> max_q_len = 1
  return
}
