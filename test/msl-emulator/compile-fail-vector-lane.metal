// EXPECT-COMPILE-ERROR: this MSL built-in is a scalar
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device float *out [[buffer(0)]],
                              uint2 lane [[thread_index_in_simdgroup]]) {
  out[lane.x] = 1.0f;
}
