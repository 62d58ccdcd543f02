// EXPECT-COMPILE-ERROR: threadgroup arrays declared in a kernel body are not
// supported In C++ this array would be per thread; msl-emu-cc.sh refuses it.
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device float *out [[buffer(0)]],
                              uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float scratch[64];
  scratch[tid] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = scratch[63 - tid];
}
