// EXPECT-COMPILE-ERROR: read-only variable is not assignable
// constant memory is read-only.
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(constant float *params [[buffer(0)]]) {
  params[0] = 1.0f;
}
