// The online-softmax row reduction of attention: one simdgroup per row,
// 32 columns a step, running max and sum carried across steps; masked
// entries are -INFINITY and a fully masked row gives zeros and LSE -inf.
#include <metal_stdlib>
using namespace metal;

struct SoftmaxParams {
  uint rows;
  uint cols;
  float scale_log2; // softmax scale * log2(e), folded for exp2
};

kernel void online_softmax(device const float *scores [[buffer(0)]],
                           device float *probs [[buffer(1)]],
                           device float *lse [[buffer(2)]],
                           constant SoftmaxParams &p [[buffer(3)]],
                           uint group [[threadgroup_position_in_grid]],
                           uint simd [[simdgroup_index_in_threadgroup]],
                           uint simds [[simdgroups_per_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
  uint row = group * simds + simd;
  if (row >= p.rows)
    return; // the whole simdgroup leaves together
  device const float *x = scores + row * p.cols;
  float m = -INFINITY, l = 0.0f;
  for (uint c0 = 0; c0 < p.cols; c0 += 32) {
    uint c = c0 + lane;
    float s = c < p.cols ? x[c] * p.scale_log2 : -INFINITY;
    float m_new = max(m, simd_max(s));
    // Against a fully masked prefix, subtract 0 instead of -inf.
    float base = m_new == -INFINITY ? 0.0f : m_new;
    l = l * exp2(m - base) + simd_sum(exp2(s - base));
    m = m_new;
  }
  float base = m == -INFINITY ? 0.0f : m;
  float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
  for (uint c = lane; c < p.cols; c += 32)
    probs[row * p.cols + c] = exp2(x[c] * p.scale_log2 - base) * inv_l;
  if (lane == 0)
    lse[row] = l > 0.0f ? (m + log2(l)) / M_LOG2E_F : -INFINITY;
}
