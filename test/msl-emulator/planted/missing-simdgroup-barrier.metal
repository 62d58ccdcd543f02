// Lanes of one simdgroup exchange values through threadgroup memory: that
// needs a simdgroup_barrier (a threadgroup_barrier would do too). With it
// the kernel passes; without it, a race.
// RUN: %msl_emu_cc %s %S/host.cpp -o %t -DWITH_BARRIER
// RUN: %t | FileCheck %s --check-prefix=OK
// RUN: %msl_emu_cc %s %S/host.cpp -o %t.bug
// RUN: not %t.bug 2>&1 | FileCheck %s --check-prefix=RACE
// OK: launch ok
// RACE: thread 1 (simdgroup 0, lane 1, position (1,0,0)): threadgroup memory race (a missing barrier?): this thread reads byte offset 0 of {{\[\[}}threadgroup(0)]], which thread 0 wrote
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  scratch[tid] = in[i];
#ifdef WITH_BARRIER
  simdgroup_barrier(mem_flags::mem_threadgroup);
#endif
  out[i] = scratch[tid % 32 == 0 ? tid : tid - 1];
}
