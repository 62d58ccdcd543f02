// Threadgroup memory shared by the threads of a threadgroup, barriers, and
// every built-in parameter in a shuffled parameter order.
#include <metal_stdlib>
using namespace metal;

struct ReduceParams {
  uint n;
  float scale;
};

// Tree reduction of a threadgroup's slice of `in` through threadgroup
// memory; a 2D grid of 2D threadgroups.
kernel void threadgroup_sum(constant ReduceParams &params [[buffer(2)]],
                            uint2 group [[threadgroup_position_in_grid]],
                            uint2 groups [[threadgroups_per_grid]],
                            device const float *in [[buffer(0)]],
                            threadgroup float *partial [[threadgroup(0)]],
                            uint tid [[thread_index_in_threadgroup]],
                            uint size_x [[threads_per_threadgroup]],
                            uint2 size [[threads_per_threadgroup]],
                            device float *out [[buffer(1)]]) {
  uint threads = size.x * size.y;
  uint group_index = group.y * groups.x + group.x;
  uint i = group_index * threads + tid;
  partial[tid] = i < params.n ? in[i] * params.scale : 0.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint stride = threads / 2; stride > 0; stride /= 2) {
    if (tid < stride)
      partial[tid] += partial[tid + stride];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (tid == 0)
    out[group_index] = partial[0];
  // Every thread reads the result back after the last barrier.
  out[groups.x * groups.y + group_index * threads + tid] =
      partial[0] + float(size_x - size.x);
}

// Reverses a threadgroup's values through two threadgroup buffers of
// different types; the second is read before any thread wrote it, to see
// the poison.
kernel void threadgroup_reverse(device const int *in [[buffer(0)]],
                                device int *out [[buffer(1)]],
                                device uint *poison [[buffer(2)]],
                                threadgroup int *values [[threadgroup(0)]],
                                threadgroup uint *unwritten [[threadgroup(1)]],
                                uint tid [[thread_index_in_threadgroup]],
                                uint n [[threads_per_threadgroup]],
                                uint gid [[thread_position_in_grid]]) {
  values[tid] = in[gid];
  poison[gid] = unwritten[tid];
  threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
  out[gid] = values[n - 1 - tid];
}

// Writes every built-in of every thread.
kernel void builtins(device uint *out [[buffer(0)]],
                     ushort simd_lane [[thread_index_in_simdgroup]],
                     uint3 tg_pos [[threadgroup_position_in_grid]],
                     uint3 t_pos [[thread_position_in_threadgroup]],
                     uint3 grid_pos [[thread_position_in_grid]],
                     ushort3 tg_size [[threads_per_threadgroup]],
                     uint3 grid_groups [[threadgroups_per_grid]],
                     uint3 grid_threads [[threads_per_grid]],
                     uint t_index [[thread_index_in_threadgroup]],
                     uint simd_index [[simdgroup_index_in_threadgroup]],
                     uint simd_width [[threads_per_simdgroup]],
                     uint simd_count [[simdgroups_per_threadgroup]]) {
  uint linear_group =
      (tg_pos.z * grid_groups.y + tg_pos.y) * grid_groups.x + tg_pos.x;
  uint threads = uint(tg_size.x) * tg_size.y * tg_size.z;
  device uint *o = out + (linear_group * threads + t_index) * 20;
  o[0] = tg_pos.x, o[1] = tg_pos.y, o[2] = tg_pos.z;
  o[3] = t_pos.x, o[4] = t_pos.y, o[5] = t_pos.z;
  o[6] = grid_pos.x, o[7] = grid_pos.y, o[8] = grid_pos.z;
  o[9] = tg_size.x, o[10] = tg_size.y, o[11] = tg_size.z;
  o[12] = grid_groups.x * 100 + grid_groups.y * 10 + grid_groups.z;
  o[13] = grid_threads.x * 10000 + grid_threads.y * 100 + grid_threads.z;
  o[14] = t_index, o[15] = simd_index, o[16] = simd_lane;
  o[17] = simd_width, o[18] = simd_count, o[19] = 7;
}
