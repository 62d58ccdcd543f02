// A pointer without an address space (MSL needs one on every pointer and reference).
// RUN: not %msl_emu_cc %s %S/host.cpp -o %t 2>&1 | FileCheck %s
// CHECK: unqualified-pointer.metal:{{[0-9]+}}: error: pointer type without an address space: MSL needs device, constant, threadgroup or thread before the type
#include <metal_stdlib>
using namespace metal;


float first(const float *p) { return p[0]; }
kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  out[i] = first(in + i);
}
