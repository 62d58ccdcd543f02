// Host for the planted-bug kernels of this folder: launches
// kernel_under_test over 2 threadgroups of 128 threads with
//   [[buffer(0)]]      256 floats in [1, 2)   (input)
//   [[buffer(1)]]      256 floats, NaN        (output)
//   [[threadgroup(0)]] 256 floats (1024 bytes)
// It exits 1 when the emulator reports an error (printed to stderr) or an
// output is still NaN (unwritten, or read from poisoned threadgroup
// memory), else prints "launch ok" and exits 0.
#include "../test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

int main() {
  std::vector<float> in(256), out(256, NAN);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = 1.0f + float(i) / 256.0f;
  attn_msl::LaunchResult result = attn_msl::launch(
      ATTN_MSL_KERNEL(kernel_under_test), {2, 1, 1}, {128, 1, 1},
      {attn_msl::bind_buffer(0, in.data(), in.size()),
       attn_msl::bind_buffer(1, out.data(), out.size())},
      {256 * sizeof(float)});
  if (!result)
    return 1;
  int nans = 0;
  for (float x : out)
    nans += std::isnan(x);
  if (nans) {
    std::printf("FAIL: %d outputs are NaN\n", nans);
    return 1;
  }
  std::printf("launch ok\n");
  return 0;
}
