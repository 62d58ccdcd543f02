// simdgroup_load from thread memory: Metal loads matrices from device or threadgroup memory only.
// RUN: not %msl_emu_cc %s %S/host.cpp -o %t 2>&1 | FileCheck %s
// CHECK: error: static assertion failed due to requirement {{.*}}: simdgroup_load from thread memory: Metal loads a simdgroup_matrix from device or threadgroup memory only
// CHECK: matrix-load-thread.metal:[[@LINE+14]]:3: note: in instantiation of function template specialization 'metal::simdgroup_load<float, 8, 8, float, 0>' requested here
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  float tile[64];
  for (int k = 0; k < 64; ++k)
    tile[k] = in[k];
  simdgroup_float8x8 m;
  simdgroup_load(m, tile);
  out[i] = m.thread_elements()[0];
}
