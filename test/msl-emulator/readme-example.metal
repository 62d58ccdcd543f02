// The example kernel of tools/msl-emulator/README.md, verbatim from here to the
// marker below, so that the documented convention stays true.
#include <metal_stdlib>
using namespace metal;

struct Params {
  uint n;
  float scale;
};

// Sums a threadgroup's slice of `in`, scaled, into out[group].
kernel void scaled_sum(device const float *in [[buffer(0)]],
                       device float *out [[buffer(1)]],
                       constant Params &p [[buffer(2)]],
                       threadgroup float *partial [[threadgroup(0)]],
                       uint group [[threadgroup_position_in_grid]],
                       uint tid [[thread_index_in_threadgroup]],
                       uint lane [[thread_index_in_simdgroup]],
                       uint simd [[simdgroup_index_in_threadgroup]],
                       uint simds [[simdgroups_per_threadgroup]],
                       uint threads [[threads_per_threadgroup]]) {
  uint i = group * threads + tid;
  float x = i < p.n ? in[i] * p.scale : 0.0f;
  float simd_total = simd_sum(x); // all 32 lanes reach this
  if (lane == 0)
    partial[simd] = simd_total;
  threadgroup_barrier(mem_flags::mem_threadgroup); // all threads reach this
  if (simd == 0) {
    float total = simd_sum(lane < simds ? partial[lane] : 0.0f);
    if (lane == 0)
      out[group] = total;
  }
}
// End of the README example.

// The other spellings of a kernel and attributes the emulator ignores.
[[kernel]] [[max_total_threads_per_threadgroup(64)]] void
attribute_spellings(device uint *out [[buffer(0)]],
                    uint gid [[thread_position_in_grid]]) {
  out[gid] = simd_product(gid % 3 == 0 ? 2u : 1u) + simd_broadcast_first(gid);
}
