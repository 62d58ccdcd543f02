/*===- fake_cuda_driver.h - What the fake driver shows the tests --*- C -*-===*\
 *
 * Besides the cu* functions, the fake driver exports `fake_cuda_state`, which
 * the tests read (through dlsym) to see what attnrt asked of the driver.
 *
\*===----------------------------------------------------------------------===*/

#ifndef ATTNRT_TEST_FAKE_CUDA_DRIVER_H
#define ATTNRT_TEST_FAKE_CUDA_DRIVER_H

#define FAKE_CUDA_MAX_PARAMS 128

struct fake_cuda_state {
  int init_calls;
  int primary_context_retains;
  int set_current_calls;
  int launches; /* that reached the fake GPU */
  int set_attribute_calls;
  int max_dynamic_shared_set; /* the last value set */
  unsigned last_grid[3];
  unsigned last_block[3];
  unsigned last_shared_bytes;
  int live_allocations;
  int live_modules;
  int live_streams;
  int live_events;
  /* The last launch's parameters, as many as its PTX .entry declares, each
     read at its declared width (.u32 / .b64 ...). */
  int last_param_count;
  unsigned long long last_params[FAKE_CUDA_MAX_PARAMS];
  /* cuTensorMapEncodeTiled: calls, and the last call's arguments
     (innermost dimension first, as the driver takes them). */
  int tensor_map_calls;
  int tensor_map_type, tensor_map_rank, tensor_map_swizzle;
  unsigned long long tensor_map_address;
  unsigned long long tensor_map_dims[5], tensor_map_strides[4];
  unsigned tensor_map_box[5];
  /* cuLaunchKernelEx with programmatic stream serialization: how many, and
     whether the last launch was one. */
  int programmatic_launches, last_launch_programmatic;
};

#define FAKE_CUDA_STATE_SYMBOL "fake_cuda_state"

#endif /* ATTNRT_TEST_FAKE_CUDA_DRIVER_H */
