// Two helpers that call each other: recursion through a cycle.
// RUN: not %msl_emu_cc %s %S/host.cpp -o %t 2>&1 | FileCheck %s
// CHECK: mutual-recursion.metal:{{[0-9]+}}: error: recursion is not allowed in MSL: is_even -> is_odd -> is_even
#include <metal_stdlib>
using namespace metal;


bool is_odd(uint n);
bool is_even(uint n) { return n == 0 ? true : is_odd(n - 1); }
bool is_odd(uint n) { return n == 0 ? false : is_even(n - 1); }
kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  out[i] = is_even(tid) ? in[i] : -in[i];
}
