// A device pointer passed where a threadgroup one is expected: address
// spaces are distinct types.
// RUN: not %msl_emu_cc %s %S/host.cpp -o %t 2>&1 | FileCheck %s
// CHECK: error: no matching function for call to 'fill'
// CHECK: note: candidate function not viable: cannot pass pointer to address space '1' as a pointer to address space '3'
#include <metal_stdlib>
using namespace metal;

void fill(threadgroup float *p, uint i) { p[i] = 1.0f; }

kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              uint tid [[thread_index_in_threadgroup]]) {
  fill(out, tid);
}
