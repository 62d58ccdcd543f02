// A missing barrier: each thread reads what the thread before it wrote to
// threadgroup memory, with no threadgroup_barrier in between.
//
// The race detector reports it in any thread order:
// RUN: %msl_emu_cc %s %S/host.cpp -o %t
// RUN: not %t 2>&1 | FileCheck %s --check-prefix=RACE
// RUN: not env ATTN_MSL_SCHEDULE=reverse %t 2>&1 | FileCheck %s --check-prefix=RACE-REVERSE
// RACE: attn-msl: kernel 'kernel_under_test', threadgroup (0,0,0), thread 1 (simdgroup 0, lane 1, position (1,0,0)): threadgroup memory race (a missing barrier?): this thread reads byte offset 0 of {{\[\[}}threadgroup(0)]], which thread 0 wrote with no threadgroup_barrier(mem_flags::mem_threadgroup) (nor simdgroup_barrier in their simdgroup) between them (none passed yet in this threadgroup)
// RACE-REVERSE: attn-msl: kernel 'kernel_under_test', threadgroup (0,0,0), thread 126 (simdgroup 3, lane 30, position (126,0,0)): threadgroup memory race (a missing barrier?): this thread writes byte offset 504 of {{\[\[}}threadgroup(0)]], which thread 127 read with no threadgroup_barrier(mem_flags::mem_threadgroup) (nor simdgroup_barrier in their simdgroup) between them (none passed yet in this threadgroup) [schedule reverse]
//
// Without the checks (ATTN_MSL_CHECKS=0), thread order alone: in index
// order every thread finds its neighbour's value and the bug hides; the
// other orders read poisoned (NaN) threadgroup memory.
// RUN: env ATTN_MSL_CHECKS=0 %msl_emu_cc %s %S/host.cpp -o %t.unchecked
// RUN: %t.unchecked | FileCheck %s --check-prefix=HIDDEN
// RUN: not env ATTN_MSL_SCHEDULE=reverse %t.unchecked | FileCheck %s --check-prefix=SHOWN
// RUN: not env ATTN_MSL_SCHEDULE=simdgroups %t.unchecked | FileCheck %s --check-prefix=SHOWN
// RUN: not env ATTN_MSL_SCHEDULE=shuffle:7 %t.unchecked | FileCheck %s --check-prefix=SHOWN
// HIDDEN: launch ok
// SHOWN: FAIL: {{[0-9]+}} outputs are NaN
//
// RUN: not env ATTN_MSL_SCHEDULE=sideways %t 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-msl: kernel 'kernel_under_test': ATTN_MSL_SCHEDULE must be forward, reverse, shuffle, shuffle:SEED or simdgroups, not 'sideways'
#include <metal_stdlib>
using namespace metal;

kernel void kernel_under_test(device const float *in [[buffer(0)]],
                              device float *out [[buffer(1)]],
                              threadgroup float *scratch [[threadgroup(0)]],
                              uint group [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]]) {
  const uint i = group * 128 + tid;
  scratch[tid] = in[i];
  // the bug: threadgroup_barrier(mem_flags::mem_threadgroup) belongs here
  out[i] = scratch[tid == 0 ? 0 : tid - 1];
}
