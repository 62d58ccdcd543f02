// A recursive helper: MSL has no recursion.
// RUN: not %msl_emu_cc %s %S/host.cpp -o %t 2>&1 | FileCheck %s
// CHECK: recursion.metal:{{[0-9]+}}: error: recursion is not allowed in MSL: sum_to -> sum_to
#include <metal_stdlib>
using namespace metal;


float sum_to(uint n) { return n == 0 ? 0.0f : float(n) + sum_to(n - 1); }
kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  out[i] = in[i] + sum_to(tid % 4);
}
