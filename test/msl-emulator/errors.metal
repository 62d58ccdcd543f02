// Kernels that break the rules; each must be reported, not hang or pass.
#include <metal_stdlib>
using namespace metal;

// Threadgroup 1 loses half of its threads before the barrier.
kernel void partial_barrier(device float *out [[buffer(0)]],
                            uint group [[threadgroup_position_in_grid]],
                            uint tid [[thread_index_in_threadgroup]]) {
  if (group == 1 && tid >= 64)
    return;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = 1.0f;
}

kernel void divergent_collectives(device float *out [[buffer(0)]],
                                  uint lane [[thread_index_in_simdgroup]]) {
  float x = float(lane);
  if (lane < 16)
    x = simd_sum(x);
  else
    x = simd_max(x);
  out[lane] = x;
}

// Same function, two call sites: the lanes do not meet.
kernel void divergent_sites(device float *out [[buffer(0)]],
                            uint lane [[thread_index_in_simdgroup]]) {
  float x = float(lane);
  if (lane % 2 == 0) {
    x = simd_sum(x);
  } else {
    x = simd_sum(x);
  }
  out[lane] = x;
}

kernel void collective_after_exit(device float *out [[buffer(0)]],
                                  uint lane [[thread_index_in_simdgroup]]) {
  if (lane >= 8)
    return;
  out[lane] = simd_sum(1.0f);
}

kernel void collective_against_barrier(device float *out [[buffer(0)]], uint tid
                                       [[thread_index_in_threadgroup]]) {
  if (tid < 16)
    out[tid] = simd_sum(1.0f);
  threadgroup_barrier(mem_flags::mem_threadgroup);
}

kernel void different_barriers(uint tid [[thread_index_in_threadgroup]]) {
  if (tid < 32)
    threadgroup_barrier(mem_flags::mem_threadgroup);
  else
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

kernel void partial_simdgroup_barrier(uint lane [[thread_index_in_simdgroup]]) {
  if (lane != 31)
    simdgroup_barrier(mem_flags::mem_none);
}

// Run with 48 threads: simdgroup 1 has lanes 0-15 only.
kernel void shuffle_missing_lane(device float *out [[buffer(0)]],
                                 uint tid [[thread_index_in_threadgroup]]) {
  out[tid] = simd_shuffle(float(tid), 20);
}

kernel void broadcast_non_uniform(device float *out [[buffer(0)]],
                                  ushort lane [[thread_index_in_simdgroup]]) {
  out[lane] = simd_broadcast(float(lane), lane / 16);
}

// Run with 16 threads: no full simdgroup for the matrix.
kernel void matrix_in_partial_simdgroup(device const float *in [[buffer(0)]]) {
  simdgroup_float8x8 m;
  simdgroup_load(m, in, 8);
}

kernel void matrix_non_uniform_pointer(device const float *in [[buffer(0)]],
                                       ushort lane
                                       [[thread_index_in_simdgroup]]) {
  simdgroup_float8x8 m;
  simdgroup_load(m, in + (lane & 1), 8);
}

kernel void reads_buffer_one(device const float *in [[buffer(0)]],
                             device float *out [[buffer(1)]],
                             uint tid [[thread_index_in_threadgroup]]) {
  out[tid] = in[tid];
}

kernel void reads_half(device const half *in [[buffer(0)]],
                       device float *out [[buffer(1)]]) {
  out[0] = in[0];
}

struct TwoFloats {
  float a, b;
};
kernel void reads_struct(constant TwoFloats &p [[buffer(0)]],
                         device float *out [[buffer(1)]]) {
  out[0] = p.a + p.b;
}

kernel void uses_threadgroup_memory(threadgroup float *scratch
                                    [[threadgroup(0)]],
                                    device float *out [[buffer(0)]],
                                    uint tid [[thread_index_in_threadgroup]]) {
  scratch[tid] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = scratch[0];
}
