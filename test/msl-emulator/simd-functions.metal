// SIMD-group functions over full and partial simdgroups.
#include <metal_stdlib>
using namespace metal;

constant uint kOutputsPerThread = 12;

kernel void simd_functions(device const float *in [[buffer(0)]],
                           device float *out [[buffer(1)]],
                           uint gid [[thread_position_in_grid]],
                           ushort lane [[thread_index_in_simdgroup]]) {
  float x = in[gid];
  device float *o = out + gid * kOutputsPerThread;
  o[0] = simd_sum(x);
  o[1] = simd_max(x);
  o[2] = simd_min(x);
  o[3] = simd_shuffle(x, (lane * 7 + 3) % 32);
  o[4] = simd_shuffle_xor(x, 5);
  o[5] = simd_shuffle_down(x, 3);
  o[6] = simd_shuffle_up(x, 2);
  o[7] = simd_broadcast(x, 17);
  o[8] = simd_prefix_exclusive_sum(x);
  o[9] = simd_prefix_inclusive_sum(x);
  // The butterfly an emitter writes for a row max.
  float m = x;
  for (ushort offset = 16; offset > 0; offset /= 2)
    m = max(m, simd_shuffle_xor(m, offset));
  o[10] = m;
  o[11] = float(simd_sum(int(lane)) + (simd_any(x > 0.9f) ? 1000 : 0) +
                (simd_all(x > -2.0f) ? 10000 : 0));
}

// Vector and half operands; a threadgroup of 48 threads has a partial
// second simdgroup of 16 lanes.
kernel void simd_vectors(device const float *in [[buffer(0)]],
                         device float4 *sums [[buffer(1)]],
                         device half *maxima [[buffer(2)]],
                         uint gid [[thread_position_in_grid]]) {
  float4 v = float4(in[gid], 2.0f * in[gid], float2(1.0f, in[gid] * in[gid]));
  sums[gid] = simd_sum(v);
  maxima[gid] = simd_max(half(in[gid]));
}
