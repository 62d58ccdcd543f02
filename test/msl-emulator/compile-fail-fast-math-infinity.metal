// EXPECT-COMPILE-ERROR: use of infinity is undefined behavior due to the currently enabled floating-point options [-Werror,-Wnan-infinity-disabled]
// EMULATOR-MATH: fast
// Under fast math (Metal's default) a kernel must not rely on infinities:
// `m == -INFINITY` may fold to false. The fast mode refuses any use.
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device float *out [[buffer(0)]]) {
  float m = -INFINITY;
  out[0] = m == -INFINITY ? 0.0f : m;
}
