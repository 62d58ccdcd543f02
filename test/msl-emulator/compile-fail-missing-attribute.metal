// EXPECT-COMPILE-ERROR: missing default argument
// Every kernel parameter needs an attribute; the launcher cannot guess.
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device float *out [[buffer(0)]], uint n) {
  out[0] = float(n);
}
