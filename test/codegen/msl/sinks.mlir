// Attention sinks in the MSL kernels: the sinks buffer comes after every
// other, in the kernels that finalize (not in split-K's partial kernels),
// and each finalize folds the head's sink into the row's state through
// attn_merge as one more score with no value, in base-2 units.
// RUN: attn-translate --attn-to-msl %s | FileCheck %s
// RUN: attn-translate --attn-to-msl --msl-kernel=prefill --msl-splits=2 %s | FileCheck %s --check-prefix=SPLIT

// CHECK-LABEL: kernel void prefill_prefill(
// CHECK: device const float *sinks {{\[\[}}buffer(6)]]
// CHECK: float m_fin = m, l_fin = l, sink_scale = 1.0f;
// CHECK-NEXT: attn_merge(m_fin, l_fin, sink_scale, float(sinks[kv_head * 4 + f % 4]) * M_LOG2E_F, 1.0f, 0.0f);
// CHECK-NEXT: const float inv_l = l_fin > 0.0f ? sink_scale / l_fin : 0.0f;
// CHECK: = attn_lse(m_fin, l_fin);
// CHECK-LABEL: kernel void varlen_decode_vector(
// CHECK: device const half *sinks {{\[\[}}buffer(
// CHECK: attn_merge(m_fin, l_fin, sink_scale, float(sinks[head]) * M_LOG2E_F, 1.0f, 0.0f);
// CHECK: (l_fin > 0.0f ? a * sink_scale / l_fin : 0.0f);

// SPLIT-LABEL: kernel void prefill_prefill_partial(
// SPLIT-NOT: sinks
// SPLIT-LABEL: kernel void prefill_prefill_merge(
// SPLIT: device const float *sinks {{\[\[}}buffer(
// SPLIT: attn_merge(mr, lr, ar, float(sinks[kv_head * 4 + f % 4]) * M_LOG2E_F, 1.0f, 0.0f);
// SPLIT-NEXT: o[

func.func @prefill(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                   %v: memref<?x2x?x64xf16>, %s: memref<8xf32>,
                   %o: memref<?x8x?x64xf16>, %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) sinks(%s : memref<8xf32>)
              -> o(%o : memref<?x8x?x64xf16>) lse(%lse : memref<?x8x?xf32>)
                 mask = <causal>
  return
}

func.func @varlen_decode(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>,
                         %v: memref<?x2x64xf16>, %cq: memref<?xi32>,
                         %ck: memref<?xi32>, %s: memref<8xf16>,
                         %o: memref<?x8x64xf16>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>)
                 v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<?xi32>)
                 cu_seqlens_k(%ck : memref<?xi32>) sinks(%s : memref<8xf16>)
              -> o(%o : memref<?x8x64xf16>) max_q_len = 1
  return
}
