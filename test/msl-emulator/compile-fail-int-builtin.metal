// EXPECT-COMPILE-ERROR: MSL built-in parameters are uint or ushort
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device float *out [[buffer(0)]],
                              int tid [[thread_index_in_threadgroup]]) {
  out[tid] = 1.0f;
}
