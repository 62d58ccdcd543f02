// An out-of-bounds device read: the last thread reads in[256] of 256.
// RUN: %msl_emu_cc %s %S/host.cpp -o %t
// RUN: not %t 2>&1 | FileCheck %s
// CHECK: attn-msl: kernel 'kernel_under_test', threadgroup (1,0,0), thread 127 (simdgroup 3, lane 31, position (127,0,0)): out-of-bounds read of 4 bytes at index 256 (byte offset 1024) of {{\[\[}}buffer(0)]], which holds 256 float elements (1024 bytes)
//
// Built without the instrumentation, the access past the end still hits the
// guard page after the buffer, which the emulator names:
// RUN: env ATTN_MSL_CHECKS=0 %msl_emu_cc %s %S/host.cpp -o %t.unchecked
// RUN: not %t.unchecked 2>&1 | FileCheck %s --check-prefix=UNCHECKED
// UNCHECKED: attn-msl: kernel 'kernel_under_test', threadgroup (1,0,0), thread 127: memory fault at byte offset 1024 of {{\[\[}}buffer(0)]], which holds 1024 bytes: out of bounds (in code the checked accesses do not see)
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  out[i] = in[i + 1]; // the bug: i + 1 reaches 256
}
