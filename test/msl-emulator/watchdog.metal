// Thread 0 spin-waits for a flag that the other threads set only after a
// barrier thread 0 never reaches; cooperative fibers cannot run them, so
// the watchdog must end the process instead of letting it hang.
#include <metal_stdlib>
using namespace metal;

kernel void spin_wait(device volatile int *flag [[buffer(0)]],
                      uint tid [[thread_index_in_threadgroup]]) {
  if (tid == 0)
    while (flag[0] == 0) {
    }
  threadgroup_barrier(mem_flags::mem_device);
  flag[0] = 1;
}
