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
// CHECK-NEXT: //   grid=(ceil(4 * Sq / 32), 2, B) threadgroup(0)=9216 bytes
// CHECK-NEXT: //   buffers: q=0 k=1 v=2 o=3 lse=4 sizes=5
// CHECK-NEXT: //   msl_version=2.3 gpu_family=apple7 math_mode=fast
// CHECK-NEXT: //   cost: 128 threads/threadgroup, 2 threadgroups at B=1 (Sq=1 if dynamic), 9216 threadgroup bytes; per key: 1 threadgroup(s) read 256 bytes of K+V each, in 16 loads of 16 bytes
// CHECK: // attn.kernel paged_vector host=paged tier=msl kind=decode_vector threads=1024 block_q=1 block_kv=32 group=4 splits=1
// CHECK-NEXT: //   grid=(ceil(4 * 1 / 1), 2, B) threadgroup(0)=4480 bytes
// CHECK-NEXT: //   buffers: q=0 k=1 v=2 block_table=3 kv_lens=4 o=5 sizes=6
// CHECK-NEXT: //   msl_version=2.3 gpu_family=apple7 math_mode=fast variant=one_pass
// CHECK-NEXT: //   cost: 1024 threads/threadgroup, 8 threadgroups at B=1 (Sq=1 if dynamic), 4480 threadgroup bytes; per key: 4 threadgroup(s) read 128 bytes of K+V each, in 8 loads of 16 bytes
// CHECK: // attn.kernel paged_vector_partial host=paged tier=msl kind=partial_vector threads=1024 block_q=1 block_kv=32 group=4 splits=32
// CHECK-NEXT: //   grid=(ceil(4 * 1 / 1) * 32, 2, B) threadgroup(0)=4480 bytes
// CHECK-NEXT: //   buffers: q=0 k=1 v=2 block_table=3 kv_lens=4 partials=7 sizes=6
// CHECK-NEXT: //   msl_version=2.3 gpu_family=apple7 math_mode=fast variant=two_pass
// CHECK: // attn.kernel paged_vector_merge host=paged tier=msl kind=merge
// CHECK: // dispatch paged: the one_pass kernel while Sk < 1024, else the two_pass kernels (32 splits)
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
// Tiles are copied in 16-byte pieces into rows padded by 16 bytes (64 + 8
// halves); fragment loops are unrolled.
// CHECK: x = *(device const uint4 *)(q + ulong(batch) * (512 * sizes.Sq) + ulong(kv_head * 4 + f % 4) * (64 * sizes.Sq) + ulong(f / 4) * 64 + c);
// CHECK-NEXT: *(threadgroup uint4 *)(q_s + r * 72 + c) = x;
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);
// CHECK: simdgroup_half8x8 q_frag[8];
// CHECK: #pragma clang loop unroll(full)
// CHECK-NEXT: for (int kk = 0; kk < 8; ++kk)
// CHECK-NEXT: simdgroup_load(q_frag[kk], q_s + row_block * 576 + kk * 8, 72);
// CHECK: float m = ATTN_NO_SCORE, l = 0.0f;
// CHECK-NEXT: simdgroup_float8x8 acc[8];
// CHECK: for (int kv_start = 0; kv_start < kv_end; kv_start += 32) {
// CHECK: device const half *k_seq = k + (ulong(batch) * (128 * sizes.Sk) + ulong(kv_head) * (64 * sizes.Sk));
// CHECK: x = *(device const uint4 *)(k_seq + uint(j) * 64 + c);
// CHECK: *(threadgroup uint4 *)(k_s + (i / 8) * 72 + c) = x;
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);
// CHECK: simdgroup_load(kt, k_s + (key_block * 32 + nb * 8) * 72 + kk * 8, 72, ulong2(0, 0), true);
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

// Sq = 1: auto picks the vector decode (one row per threadgroup, 32
// simdgroups, 4 lanes a key of D 32: 16 bytes a lane), and, Sk being
// dynamic, its two-pass variant too; paged loads through the table.
// CHECK-LABEL: kernel void paged_vector(
// CHECK: const int kv_len = max(
// CHECK: const int piece = int(lane) % 4;
// CHECK-NEXT: const int key_slot = int(simd) * 8 + int(lane) / 4;
// CHECK: const uint4 raw = *((device const uint4 *)(q_row) + i);
// CHECK-NEXT: const float4 lo = float4(as_type<half4>(raw.xy));
// CHECK: for (int j0 = kv_begin; j0 < key_stop; j0 += 256) {
// CHECK: const int page = in_range ? block_table[batch * sizes.max_blocks + key / 16] : 0;
// CHECK-NEXT: const uint in_page = uint(key % 16);
// CHECK: device const half *k_row = k + (ulong(page) * 1024 + ulong(kv_head) * 512) + in_page * 32 + piece * 8;
// CHECK: dot += simd_shuffle_xor(dot, 1);
// CHECK-NEXT: dot += simd_shuffle_xor(dot, 2);
// CHECK: x = 5.77078016f * precise::tanh(x * 0.0441941731f);
// CHECK: const bool visible = key < key_stop && (((key < kv_len) && ((key - diagonal) >= (-100))) && ((key - diagonal) <= 0));
// CHECK: attn.merge of the 8 lane groups of this simdgroup
// CHECK: const float m1 = simd_shuffle_xor(m, 4), l1 = simd_shuffle_xor(l, 4);
// CHECK: const float m1 = simd_shuffle_xor(m, 16), l1 = simd_shuffle_xor(l, 16);
// CHECK: attn.merge of the 32 simdgroups in threadgroup memory
// CHECK: const float m_all = simd_max(m_t);
// CHECK: const float a = e < 32 ? simd_sum(sg_acc[simd * 33 + lane] * w_t) : 0.0f;
// CHECK: o[o_row + e] = half(l_all > 0.0f ? a / l_all : 0.0f);
// CHECK-LABEL: kernel void paged_vector_partial(
// CHECK: partials[record + e] = a;
// CHECK: partials[record + 32] = m_all;
// CHECK-LABEL: kernel void paged_vector_merge(
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
// DECODE: simdgroup_load(kt, k_s + (key_block * 8 + nb * 8) * 72 + kk * 8, 72, ulong2(0, 0), true);
// DECODE: attn.merge of the 4 key blocks' partial states
// The simdgroup_matrix decode of the paged spec (--msl-kernel=decode).
// DECODE-LABEL: kernel void paged_decode(
// DECODE: const int page = block_table[batch * sizes.max_blocks + j / 16];
// DECODE-NEXT: x = *(device const uint4 *)(k + (ulong(page) * 1024 + ulong(kv_head) * 512) + uint(j % 16) * 32 + c);
// DECODE: simdgroup_store(acc[dn], part_acc + (key_block * 8 + row_block * 8) * 32 + dn * 8, 32);
// DECODE: attn_merge(mr, lr, ar, part_max[b * 8 + r], part_sum[b * 8 + r], part_acc[(b * 8 + r) * 32 + c]);

// SPLIT: // attn.kernel causal_gqa_prefill_partial host=causal_gqa tier=msl kind=partial threads=128 block_q=32 block_kv=32 group=4 splits=4
// SPLIT-NEXT: //   grid=(ceil(4 * Sq / 32) * 4, 2, B) threadgroup(0)=9216 bytes
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
// JSON: "threadgroup_memory_bytes": [9216],
// JSON-NEXT: "cost": {"threadgroups_at_b1": 2, "threadgroups_reading_each_key": 1, "bytes_per_key": 256, "loads_per_key": 16, "load_bytes": 16},
// JSON: "buffers": {"q": 0, "k": 1, "v": 2, "o": 3, "lse": 4, "sizes": 5}}
// JSON: "name": "paged",
// JSON: "block_size": 16, "lse": false, "kv_lens": true, "splits": 32,
// JSON: "dispatch": {"two_pass_from_sk": 1024},
// JSON: {"name": "paged_vector", "kind": "decode_vector", "pass": 1,
// JSON-NEXT: "msl_version": "2.3", "gpu_family": "apple7", "math_mode": "fast", "variant": "one_pass",
// JSON: "cost": {"threadgroups_at_b1": 8, "threadgroups_reading_each_key": 4, "bytes_per_key": 128, "loads_per_key": 8, "load_bytes": 16},

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
