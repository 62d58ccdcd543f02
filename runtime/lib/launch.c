//===- launch.c - Kernel launches -----------------------------------------===//
//
// Launches, checked against every CUDA GPU's limits and the kernel's
// own before the driver sees them.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

// Limits of every CUDA GPU since Kepler, checked before the driver sees them.
#define MAX_BLOCK_XY 1024u
#define MAX_BLOCK_Z 64u
#define MAX_BLOCK_THREADS 1024ull
#define MAX_GRID_X 2147483647u
#define MAX_GRID_YZ 65535u

// A block may use the device's default shared memory (48 KiB) without asking;
// beyond it the kernel must opt in to the dynamic amount, up to the device's
// opt-in limit, which covers static and dynamic memory together.
static attnrt_status prepare_shared_memory(struct attnrt_kernel *kernel,
                                           unsigned dynamic_bytes) {
  const char *function = "attnrt_launch";
  const attnrt_device_info *device =
      &attnrt_internal_devices[kernel->device].info;
  unsigned long long total =
      (unsigned long long)kernel->info.static_shared_bytes + dynamic_bytes;
  if (total <= (unsigned long long)device->max_shared_memory_per_block)
    return ATTNRT_SUCCESS;
  if (total > (unsigned long long)device->max_shared_memory_per_block_optin)
    return attnrt_internal_fail(
        ATTNRT_SHARED_MEMORY_TOO_LARGE, function,
        "kernel '%s' needs %llu bytes of shared memory per block "
        "(%d static + %u dynamic), but device %d (%s) allows at most "
        "%d bytes per block",
        kernel->name, total, kernel->info.static_shared_bytes, dynamic_bytes,
        kernel->device, device->name,
        device->max_shared_memory_per_block_optin);
  if (dynamic_bytes <= atomic_load(&kernel->opted_in_dynamic_shared_bytes))
    return ATTNRT_SUCCESS;

  attnrt_status status = ATTNRT_SUCCESS;
  pthread_mutex_lock(&kernel->opt_in_lock);
  // Only ever raised, so concurrent launches never lower each other's limit.
  if (dynamic_bytes > atomic_load(&kernel->opted_in_dynamic_shared_bytes)) {
    CUresult result = attnrt_internal_driver.cuFuncSetAttribute(
        kernel->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        (int)dynamic_bytes);
    if (result == CUDA_SUCCESS)
      atomic_store(&kernel->opted_in_dynamic_shared_bytes, dynamic_bytes);
    else
      status = attnrt_internal_fail_driver(
          result == CUDA_ERROR_INVALID_VALUE
              ? ATTNRT_SHARED_MEMORY_TOO_LARGE
              : attnrt_internal_status_from_result(result),
          result, function,
          "cannot opt kernel '%s' in to %u bytes of dynamic shared memory "
          "(device %d allows at most %d bytes per block, %d of them static)",
          kernel->name, dynamic_bytes, kernel->device,
          device->max_shared_memory_per_block_optin,
          kernel->info.static_shared_bytes);
  }
  pthread_mutex_unlock(&kernel->opt_in_lock);
  return status;
}

attnrt_status attnrt_kernel_resident_blocks(int *blocks, attnrt_kernel *kernel,
                                            int threads,
                                            size_t dynamic_shared_bytes) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(blocks, "blocks is NULL");
  *blocks = 0;
  REQUIRE_ARGUMENT(kernel, "kernel is NULL");
  REQUIRE_ARGUMENT(threads > 0, "threads is %d; it must be at least 1",
                   threads);
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  if (!attnrt_internal_driver.cuOccupancyMaxActiveBlocksPerMultiprocessor)
    return ATTNRT_SUCCESS; // an older driver: the caller's default
  RETURN_IF_ERROR(attnrt_internal_make_current(__func__, kernel->device));
  // Past the default 48 KiB the calculator answers only for what the
  // kernel is opted in to: the opt-in a launch of this size makes.
  RETURN_IF_ERROR(
      prepare_shared_memory(kernel, (unsigned)dynamic_shared_bytes));
  int resident = 0;
  CUresult result =
      attnrt_internal_driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
          &resident, kernel->function, threads, dynamic_shared_bytes);
  if (result)
    return FAIL_DRIVER(result,
                       "cuOccupancyMaxActiveBlocksPerMultiprocessor of kernel "
                       "'%s' failed",
                       kernel->name);
  *blocks = resident;
  return ATTNRT_SUCCESS;
}

static attnrt_status launch(const char *caller, attnrt_kernel *kernel,
                            unsigned grid_x, unsigned grid_y, unsigned grid_z,
                            unsigned block_x, unsigned block_y,
                            unsigned block_z, unsigned dynamic_shared_bytes,
                            attnrt_stream *stream, void **args,
                            int programmatic);

attnrt_status attnrt_launch(attnrt_kernel *kernel, unsigned grid_x,
                            unsigned grid_y, unsigned grid_z, unsigned block_x,
                            unsigned block_y, unsigned block_z,
                            unsigned dynamic_shared_bytes,
                            attnrt_stream *stream, void **args) {
  return launch(__func__, kernel, grid_x, grid_y, grid_z, block_x, block_y,
                block_z, dynamic_shared_bytes, stream, args, 0);
}

attnrt_status attnrt_launch_programmatic(attnrt_kernel *kernel, unsigned grid_x,
                                         unsigned grid_y, unsigned grid_z,
                                         unsigned block_x, unsigned block_y,
                                         unsigned block_z,
                                         unsigned dynamic_shared_bytes,
                                         attnrt_stream *stream, void **args) {
  return launch(__func__, kernel, grid_x, grid_y, grid_z, block_x, block_y,
                block_z, dynamic_shared_bytes, stream, args, 1);
}

static attnrt_status launch(const char *caller, attnrt_kernel *kernel,
                            unsigned grid_x, unsigned grid_y, unsigned grid_z,
                            unsigned block_x, unsigned block_y,
                            unsigned block_z, unsigned dynamic_shared_bytes,
                            attnrt_stream *stream, void **args,
                            int programmatic) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT_OF(caller, kernel, "kernel is NULL");
  REQUIRE_ARGUMENT_OF(caller, grid_x && grid_y && grid_z,
                      "grid (%u, %u, %u) has a zero dimension", grid_x, grid_y,
                      grid_z);
  REQUIRE_ARGUMENT_OF(caller, block_x && block_y && block_z,
                      "block (%u, %u, %u) has a zero dimension", block_x,
                      block_y, block_z);
  unsigned long long threads = (unsigned long long)block_x * block_y * block_z;
  REQUIRE_ARGUMENT_OF(caller,
                      block_x <= MAX_BLOCK_XY && block_y <= MAX_BLOCK_XY &&
                          block_z <= MAX_BLOCK_Z &&
                          threads <= MAX_BLOCK_THREADS,
                      "block (%u, %u, %u) is too large: CUDA allows x and y up "
                      "to 1024, z up to 64 and 1024 threads in all",
                      block_x, block_y, block_z);
  REQUIRE_ARGUMENT_OF(caller,
                      grid_x <= MAX_GRID_X && grid_y <= MAX_GRID_YZ &&
                          grid_z <= MAX_GRID_YZ,
                      "grid (%u, %u, %u) is too large: CUDA allows x up to "
                      "2^31-1, y and z up to 65535",
                      grid_x, grid_y, grid_z);
  RETURN_IF_ERROR(attnrt_internal_ensure_init(caller));

  // The driver would say only "too many resources requested"; say which.
  if (threads > (unsigned long long)kernel->info.max_threads_per_block)
    return attnrt_internal_fail(
        ATTNRT_LAUNCH_FAILED, caller,
        "kernel '%s' can run at most %d threads per block (it uses "
        "%d registers per thread), not %llu",
        kernel->name, kernel->info.max_threads_per_block,
        kernel->info.num_registers, threads);
  RETURN_IF_ERROR(attnrt_internal_make_current(caller, kernel->device));
  RETURN_IF_ERROR(prepare_shared_memory(kernel, dynamic_shared_bytes));

  CUresult result;
  if (programmatic && attnrt_internal_driver.cuLaunchKernelEx) {
    // May start once every block of the kernel before it on the stream
    // has run griddepcontrol.launch_dependents (or exited); the kernel's
    // griddepcontrol.wait then waits for that one's writes.
    CUlaunchAttribute overlap;
    memset(&overlap, 0, sizeof overlap);
    overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {.gridDimX = grid_x,
                             .gridDimY = grid_y,
                             .gridDimZ = grid_z,
                             .blockDimX = block_x,
                             .blockDimY = block_y,
                             .blockDimZ = block_z,
                             .sharedMemBytes = dynamic_shared_bytes,
                             .hStream = (CUstream)(void *)stream,
                             .attrs = &overlap,
                             .numAttrs = 1};
    result = attnrt_internal_driver.cuLaunchKernelEx(&config, kernel->function,
                                                     args, NULL);
  } else {
    // Without cuLaunchKernelEx (drivers before CUDA 12) an ordinary
    // launch, after which the kernel's wait passes at once.
    result = attnrt_internal_driver.cuLaunchKernel(
        kernel->function, grid_x, grid_y, grid_z, block_x, block_y, block_z,
        dynamic_shared_bytes, (CUstream)(void *)stream, args, NULL);
  }
  if (result)
    return attnrt_internal_fail_driver(
        attnrt_internal_status_from_result(result), result, caller,
        "%s of '%s' with grid (%u, %u, %u), block (%u, %u, %u) "
        "and %u bytes of dynamic shared memory failed",
        programmatic && attnrt_internal_driver.cuLaunchKernelEx
            ? "cuLaunchKernelEx (programmatic)"
            : "cuLaunchKernel",
        kernel->name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
        dynamic_shared_bytes);
  return ATTNRT_SUCCESS;
}
