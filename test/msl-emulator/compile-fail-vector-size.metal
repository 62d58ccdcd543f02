// EXPECT-COMPILE-ERROR: do not add up to the vector's size
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device float4 *out [[buffer(0)]]) {
  out[0] = float4(1.0f, float2(2.0f, 3.0f));
}
