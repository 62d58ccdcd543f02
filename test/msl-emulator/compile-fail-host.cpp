// Host for the compile-fail-*.metal kernels: it names kernel_under_test so
// that errors that only show when the kernel is called (its parameters are
// default arguments) surface. None of these may compile.
#include "test_util.h"
#include ATTN_MSL_KERNEL_SOURCE

int main() {
  attn_msl::Kernel k = ATTN_MSL_KERNEL(kernel_under_test);
  return k.name != nullptr;
}
