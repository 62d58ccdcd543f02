// Dynamic memory: MSL has no new or delete.
// RUN: not %msl_emu_cc %s %S/host.cpp -o %t 2>&1 | FileCheck %s
// CHECK: new-delete.metal:{{[0-9]+}}: error: new is not allowed in MSL (no dynamic memory)
// CHECK: new-delete.metal:{{[0-9]+}}: error: delete is not allowed in MSL (no dynamic memory)
#include <metal_stdlib>
using namespace metal;


kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  thread float *copy = new float[1];
  copy[0] = in[i];
  out[i] = copy[0];
  delete[] copy;
}
