// A lambda: MSL has none.
// RUN: not %msl_emu_cc %s %S/host.cpp -o %t 2>&1 | FileCheck %s
// CHECK: lambda.metal:{{[0-9]+}}: error: lambdas are not allowed in MSL
#include <metal_stdlib>
using namespace metal;


kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  auto twice = [](float x) { return 2.0f * x; };
  out[i] = twice(in[i]);
}
