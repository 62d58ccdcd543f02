// An out-of-bounds device write below the start: thread 0 writes out[-1].
// RUN: %msl_emu_cc %s %S/host.cpp -o %t
// RUN: not %t 2>&1 | FileCheck %s
// CHECK: attn-msl: kernel 'kernel_under_test', threadgroup (0,0,0), thread 0 (simdgroup 0, lane 0, position (0,0,0)): out-of-bounds write of 4 bytes at index -1 (byte offset -4) of {{\[\[}}buffer(1)]], which holds 256 float elements (1024 bytes)
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  out[int(i) - 1] = in[i]; // the bug: -1 for thread 0
}
