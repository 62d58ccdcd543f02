// The MSL text of the msl tier: launch facts, kernel signatures in the
// emulator's parameter convention, simdgroup_matrix ops, barriers, masks,
// the decode merge, split-K and paging. Numerics: test/msl/.
// RUN: attn-translate --attn-to-msl %s | FileCheck %s
// RUN: attn-translate --attn-to-msl --msl-kernel=decode %s | FileCheck %s --check-prefix=DECODE
// RUN: attn-translate --attn-to-msl --msl-kernel=prefill --msl-splits=4 %s | FileCheck %s --check-prefix=SPLIT
// RUN: attn-translate --attn-to-msl %s --msl-launch-json=%t.json > /dev/null && FileCheck %s --input-file=%t.json --check-prefix=JSON
// What each kernel needs from Metal: bf16 needs MSL 3.1, else 2.3
// (simdgroup_matrix); Apple7 GPUs; correct under fast math.
// RUN: attn-translate --attn-to-msl %attn_src_root/examples/sliding_window.mlir --msl-splits=2 \
// RUN:   --msl-launch-json=%t.bf16.json | FileCheck %s --check-prefix=BF16
// RUN: FileCheck %s --input-file=%t.bf16.json --check-prefix=BF16-JSON

// CHECK: // attn.kernel causal_gqa_prefill host=causal_gqa tier=msl kind=prefill threads=128 block_q=32 block_kv=32 group=4 splits=1
// CHECK-NEXT: //   grid=(ceil(4 * Sq / 32), 2, B) threadgroup(0)=8192 bytes
// CHECK-NEXT: //   buffers: q=0 k=1 v=2 o=3 lse=4 sizes=5
// CHECK-NEXT: //   msl_version=2.3 gpu_family=apple7 math_mode=fast
// CHECK: // attn.kernel paged_decode host=paged tier=msl kind=decode threads=128 block_q=8 block_kv=32 group=4 splits=1
// CHECK-NEXT: //   grid=(ceil(4 * 1 / 8), 2, B) threadgroup(0)=4352 bytes
// CHECK-NEXT: //   buffers: q=0 k=1 v=2 block_table=3 kv_lens=4 o=5 sizes=6
// CHECK-NEXT: //   msl_version=2.3 gpu_family=apple7 math_mode=fast
// CHECK: // Needs MSL 2.3 or newer
// CHECK: #if defined(__METAL_VERSION__) && __METAL_VERSION__ < 230
// CHECK-NEXT: #error "these kernels need MSL 2.3 or newer"
// CHECK: #include <metal_stdlib>
// CHECK: struct AttnSizes {
// Metal's default fast math assumes no infinities: finite sentinels, weights
// of masked keys and empty states selected to 0, -inf LSE from its bits.
// CHECK-NOT: INFINITY
// CHECK: #define ATTN_NO_SCORE (-FLT_MAX / 2.0f)
// CHECK: const float s0 = m > ATTN_NO_SCORE ? fast::exp2(m - m_new) : 0.0f;
// CHECK-NEXT: const float s1 = m1 > ATTN_NO_SCORE ? fast::exp2(m1 - m_new) : 0.0f;
// CHECK: inline float attn_lse(float m, float l) {
// CHECK-NEXT: return as_type<float>(l > 0.0f ? as_type<uint>(M_LN2_F * (m + log2(l)))
// CHECK-NEXT: : 0xff800000u);

// CHECK-LABEL: kernel void causal_gqa_prefill(device const half *q {{\[\[}}buffer(0)]],
// CHECK-NEXT: device const half *k {{\[\[}}buffer(1)]],
// CHECK-NEXT: device const half *v {{\[\[}}buffer(2)]],
// CHECK-NEXT: device half *o {{\[\[}}buffer(3)]],
// CHECK-NEXT: device float *lse {{\[\[}}buffer(4)]],
// CHECK-NEXT: constant AttnSizes &sizes {{\[\[}}buffer(5)]],
// CHECK-NEXT: threadgroup uchar *smem {{\[\[}}threadgroup(0)]],
// CHECK-NEXT: uint3 group_id {{\[\[}}threadgroup_position_in_grid]],
// CHECK-NEXT: uint tid {{\[\[}}thread_index_in_threadgroup]],
// CHECK-NEXT: uint lane {{\[\[}}thread_index_in_simdgroup]],
// CHECK-NEXT: uint simd {{\[\[}}simdgroup_index_in_threadgroup]]) {
// CHECK: const int row0 = q_tile * 32;
// CHECK: const int q_len = sizes.Sq;
// CHECK: const int kv_len = sizes.Sk;
// CHECK: const int kv_end = min(
// CHECK: x = q[((ulong(batch) * 8 + kv_head * 4 + f % 4) * sizes.Sq + f / 4) * 64 + c];
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);
// CHECK: simdgroup_half8x8 q_frag[8];
// CHECK: simdgroup_load(q_frag[kk], q_s + row_block * 512 + kk * 8, 64);
// CHECK: float m = ATTN_NO_SCORE, l = 0.0f;
// CHECK-NEXT: simdgroup_float8x8 acc[8];
// CHECK: for (int kv_start = 0; kv_start < kv_end; kv_start += 32) {
// CHECK: x = k[((ulong(batch) * 2 + kv_head) * sizes.Sk + j) * 64 + c];
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);
// CHECK: simdgroup_load(kt, k_s + (key_block * 32 + nb * 8) * 64 + kk * 8, 64, ulong2(0, 0), true);
// CHECK-NEXT: simdgroup_multiply_accumulate(s[nb], q_frag[kk], kt, s[nb]);
// CHECK: const int diagonal = (query + (kv_len - q_len));
// CHECK: x *= 0.18033688f;
// CHECK: const bool visible = (key < kv_len) && ((key - diagonal) <= 0);
// CHECK-NEXT: x = visible ? x : ATTN_NO_SCORE;
// CHECK: row_max = max(row_max, simd_shuffle_xor(row_max, 1));
// CHECK-NEXT: row_max = max(row_max, simd_shuffle_xor(row_max, 8));
// CHECK: const float rescale = m > ATTN_NO_SCORE ? fast::exp2(m - m_new) : 0.0f;
// CHECK: const float x = s[nb].thread_elements()[e];
// CHECK-NEXT: const float pe = x > ATTN_NO_SCORE ? fast::exp2(x - m_new) : 0.0f;
// CHECK: prob[nb].thread_elements()[e] = half(pe);
// CHECK: acc[dn].thread_elements() *= rescale;
// CHECK: simdgroup_multiply_accumulate(acc[dn], prob[kk], vt, acc[dn]);
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);
// CHECK-NEXT: }
// CHECK: o[o_row + dn * 8 + frag_col + e] = half(acc[dn].thread_elements()[e] * inv_l);
// CHECK: + f / 4] = attn_lse(m, l);
func.func @causal_gqa(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                      %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>,
                      %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 lse(%lse : memref<?x8x?xf32>) mask = <causal, bottom_right>
  return
}

// Sq = 1: auto picks the decode kernel; paged loads through the table.
// CHECK-LABEL: kernel void paged_decode(
// CHECK: const int kv_len = max(
// CHECK: const int page = block_table[batch * sizes.max_blocks + j / 16];
// CHECK-NEXT: x = k[((ulong(page) * 2 + kv_head) * 16 + j % 16) * 32 + c];
// CHECK: x = 5.77078016f * precise::tanh(x * 0.0441941731f);
// CHECK: const bool visible = ((key < kv_len) && ((key - diagonal) >= (-100))) && ((key - diagonal) <= 0);
// CHECK: attn.merge of the 4 key blocks' partial states, in threadgroup memory.
// CHECK: simdgroup_store(acc[dn], part_acc + (key_block * 8 + row_block * 8) * 32 + dn * 8, 32);
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);
// CHECK: attn_merge(mr, lr, ar, part_max[b * 8 + r], part_sum[b * 8 + r], part_acc[(b * 8 + r) * 32 + c]);
// CHECK: = half(lr > 0.0f ? ar / lr : 0.0f);
// CHECK-NOT: INFINITY
func.func @paged(%q: memref<?x8x1x32xf16>, %k: memref<?x2x16x32xf16>,
                 %v: memref<?x2x16x32xf16>, %table: memref<?x?xi32>,
                 %lens: memref<?xi32>, %o: memref<?x8x1x32xf16>) {
  attn.attention q(%q : memref<?x8x1x32xf16>) k(%k : memref<?x2x16x32xf16>)
                 v(%v : memref<?x2x16x32xf16>)
                 block_table(%table : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x8x1x32xf16>)
                 mask = <window 100, 0, bottom_right> softcap = 4.0
  return
}

// DECODE: // attn.kernel causal_gqa_decode host=causal_gqa tier=msl kind=decode threads=128 block_q=8 block_kv=32
// DECODE: kernel void causal_gqa_decode(
// DECODE: const int key_block = int(simd) / 1;
// DECODE: kv_start += 32) {
// DECODE: simdgroup_load(kt, k_s + (key_block * 8 + nb * 8) * 64 + kk * 8, 64, ulong2(0, 0), true);
// DECODE: attn.merge of the 4 key blocks' partial states

// SPLIT: // attn.kernel causal_gqa_prefill_partial host=causal_gqa tier=msl kind=partial threads=128 block_q=32 block_kv=32 group=4 splits=4
// SPLIT-NEXT: //   grid=(ceil(4 * Sq / 32) * 4, 2, B) threadgroup(0)=8192 bytes
// SPLIT-NEXT: //   buffers: q=0 k=1 v=2 partials=6 sizes=5
// SPLIT: // attn.kernel causal_gqa_prefill_merge host=causal_gqa tier=msl kind=merge threads=128
// SPLIT-NEXT: //   grid=(ceil(4 * Sq / 32), 2, B)
// SPLIT-NEXT: //   buffers: o=3 lse=4 sizes=5 partials=6
// SPLIT: kernel void causal_gqa_prefill_partial(
// SPLIT: const int q_tile = int(group_id.x) / 4;
// SPLIT-NEXT: const int split = int(group_id.x) % 4;
// SPLIT: const int kv_begin = 0 + {{t[0-9]+}};
// SPLIT: const int kv_end = min(
// SPLIT: partials[record + my_row * 64 + dn * 8 + frag_col + e] = acc[dn].thread_elements()[e];
// SPLIT: kernel void causal_gqa_prefill_merge(device half *o {{\[\[}}buffer(3)]],
// SPLIT: for (int split = 0; split < 4; ++split) {
// SPLIT: attn_merge(mr, lr, ar,

// JSON: "tier": "msl",
// JSON-NEXT: "msl_version": "2.3", "gpu_family": "apple7", "math_mode": "fast",
// JSON: "name": "causal_gqa",
// JSON: "dtype": "f16", "out_dtype": "f16",
// JSON: "q_heads": 8, "kv_heads": 2, "group": 4, "head_dim": 64, "value_head_dim": 64,
// JSON: "mask": {"text": "#attn.mask<causal, bottom_right>", "left": -1, "right": 0, "bottom_right": true},
// JSON: {"name": "causal_gqa_prefill", "kind": "prefill", "pass": 1,
// JSON-NEXT: "msl_version": "2.3", "gpu_family": "apple7", "math_mode": "fast",
// JSON: "threads_per_threadgroup": [128, 1, 1], "block_q": 32, "block_kv": 32, "splits": 1,
// JSON: "threadgroups_per_grid": ["ceil(4 * Sq / 32)", "2", "B"],
// JSON: "threadgroup_memory_bytes": [8192],
// JSON: "buffers": {"q": 0, "k": 1, "v": 2, "o": 3, "lse": 4, "sizes": 5}}
// JSON: "name": "paged",
// JSON: "block_size": 16, "lse": false, "kv_lens": true, "splits": 0,

// BF16: kind=partial
// BF16: //   msl_version=3.1 gpu_family=apple7 math_mode=fast
// BF16: kind=merge
// BF16: //   msl_version=3.1 gpu_family=apple7 math_mode=fast
// BF16: // Needs MSL 3.1 or newer
// BF16: #if defined(__METAL_VERSION__) && __METAL_VERSION__ < 310
// BF16-NEXT: #error "these kernels need MSL 3.1 or newer"
// BF16-JSON: "tier": "msl",
// BF16-JSON-NEXT: "msl_version": "3.1", "gpu_family": "apple7", "math_mode": "fast",
// BF16-JSON: "kind": "partial", "pass": 1,
// BF16-JSON-NEXT: "msl_version": "3.1", "gpu_family": "apple7", "math_mode": "fast",
// BF16-JSON: "kind": "merge", "pass": 2,
// BF16-JSON-NEXT: "msl_version": "3.1", "gpu_family": "apple7", "math_mode": "fast",
