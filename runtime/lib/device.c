//===- device.c - Devices and their primary contexts ----------------------===//
//
// The devices, their primary contexts (retained once) and the calling
// thread's current device.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver.h"

#include <stdio.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Devices and their primary contexts
//===----------------------------------------------------------------------===//

static attnrt_status check_ordinal(const char *function, int ordinal) {
  if (attnrt_internal_device_count == 0)
    return attnrt_internal_fail(
        ATTNRT_NO_DEVICE, function,
        "the CUDA driver (version %d) reports no device",
        attnrt_internal_driver_version);
  if (ordinal < 0 || ordinal >= attnrt_internal_device_count)
    return attnrt_internal_fail(
        ATTNRT_INVALID_ARGUMENT, function,
        "device %d does not exist: the CUDA driver reports %d "
        "device%s",
        ordinal, attnrt_internal_device_count,
        attnrt_internal_device_count == 1 ? "" : "s");
  return ATTNRT_SUCCESS;
}

static attnrt_status query_device_info(const char *function, int ordinal,
                                       struct device *device) {
  CUresult result =
      attnrt_internal_driver.cuDeviceGet(&device->handle, ordinal);
  if (result)
    return attnrt_internal_fail_driver(
        attnrt_internal_status_from_result(result), result, function,
        "cuDeviceGet(%d) failed", ordinal);
  attnrt_device_info *info = &device->info;
  result = attnrt_internal_driver.cuDeviceGetName(
      info->name, (int)sizeof info->name, device->handle);
  if (result)
    return attnrt_internal_fail_driver(
        attnrt_internal_status_from_result(result), result, function,
        "cuDeviceGetName of device %d failed", ordinal);
  info->name[sizeof info->name - 1] = '\0';

  const struct {
    CUdevice_attribute attribute;
    int *value;
    const char *what;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
       &info->compute_capability_major, "compute capability"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
       &info->compute_capability_minor, "compute capability"},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->multiprocessor_count,
       "multiprocessor count"},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info->max_threads_per_block,
       "threads per block"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
       &info->max_shared_memory_per_block, "shared memory per block"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &info->max_shared_memory_per_block_optin,
       "opt-in shared memory per block"},
  };
  for (size_t i = 0; i < sizeof attributes / sizeof attributes[0]; ++i) {
    result = attnrt_internal_driver.cuDeviceGetAttribute(
        attributes[i].value, attributes[i].attribute, device->handle);
    if (result)
      return attnrt_internal_fail_driver(
          attnrt_internal_status_from_result(result), result, function,
          "cuDeviceGetAttribute(%d: %s) of device %d failed",
          attributes[i].attribute, attributes[i].what, ordinal);
  }
  // Drivers before opt-in existed (and odd ones) report 0: no opt-in then.
  if (info->max_shared_memory_per_block_optin <
      info->max_shared_memory_per_block)
    info->max_shared_memory_per_block_optin = info->max_shared_memory_per_block;
  return ATTNRT_SUCCESS;
}

// Fills devices[ordinal].info once. `ordinal` must be valid.
static attnrt_status load_device_info(const char *function, int ordinal) {
  struct device *device = &attnrt_internal_devices[ordinal];
  if (atomic_load_explicit(&device->has_info, memory_order_acquire))
    return ATTNRT_SUCCESS;
  pthread_mutex_lock(&attnrt_internal_device_lock);
  attnrt_status status = ATTNRT_SUCCESS;
  if (!atomic_load_explicit(&device->has_info, memory_order_relaxed)) {
    status = query_device_info(function, ordinal, device);
    if (status == ATTNRT_SUCCESS)
      atomic_store_explicit(&device->has_info, true, memory_order_release);
  }
  pthread_mutex_unlock(&attnrt_internal_device_lock);
  return status;
}

// The device's primary context, retained at the first use. Retaining creates
// it, which takes a while and device memory, so only devices used pay.
static attnrt_status device_context(const char *function, int ordinal,
                                    CUcontext *context) {
  struct device *device = &attnrt_internal_devices[ordinal];
  *context = atomic_load_explicit(&device->context, memory_order_acquire);
  if (*context)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(load_device_info(function, ordinal));
  pthread_mutex_lock(&attnrt_internal_device_lock);
  attnrt_status status = ATTNRT_SUCCESS;
  *context = atomic_load_explicit(&device->context, memory_order_relaxed);
  if (!*context) {
    CUresult result = attnrt_internal_driver.cuDevicePrimaryCtxRetain(
        context, device->handle);
    if (result == CUDA_SUCCESS)
      atomic_store_explicit(&device->context, *context, memory_order_release);
    else
      status = attnrt_internal_fail_driver(
          attnrt_internal_status_from_result(result), result, function,
          "cuDevicePrimaryCtxRetain of device %d failed", ordinal);
  }
  pthread_mutex_unlock(&attnrt_internal_device_lock);
  return status;
}

// Makes the device's primary context current on this thread. Asks the driver
// rather than remembering: other CUDA code may have changed it meanwhile.
attnrt_status attnrt_internal_make_current(const char *function, int ordinal) {
  CUcontext context;
  RETURN_IF_ERROR(device_context(function, ordinal, &context));
  CUcontext current = NULL;
  CUresult result = attnrt_internal_driver.cuCtxGetCurrent(&current);
  if (result)
    return attnrt_internal_fail_driver(
        attnrt_internal_status_from_result(result), result, function,
        "cuCtxGetCurrent failed");
  if (current == context)
    return ATTNRT_SUCCESS;
  if ((result = attnrt_internal_driver.cuCtxSetCurrent(context)))
    return attnrt_internal_fail_driver(
        attnrt_internal_status_from_result(result), result, function,
        "cuCtxSetCurrent for device %d failed", ordinal);
  return ATTNRT_SUCCESS;
}

// Initializes, then makes the thread's current device (0 unless set) current.
attnrt_status attnrt_internal_enter_current_device(const char *function,
                                                   int *ordinal) {
  RETURN_IF_ERROR(attnrt_internal_ensure_init(function));
  int device =
      attnrt_internal_current_device >= 0 ? attnrt_internal_current_device : 0;
  RETURN_IF_ERROR(check_ordinal(function, device));
  RETURN_IF_ERROR(attnrt_internal_make_current(function, device));
  if (ordinal)
    *ordinal = device;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_init(void) {
  attnrt_internal_begin_call();
  return attnrt_internal_ensure_init(__func__);
}

attnrt_status attnrt_driver_version(int *version) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(version, "version is NULL");
  *version = 0;
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  *version = attnrt_internal_driver_version;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_get_device_count(int *count) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(count, "count is NULL");
  *count = 0;
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  *count = attnrt_internal_device_count;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_get_device_info(attnrt_device_info *info, int ordinal) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(info, "info is NULL");
  memset(info, 0, sizeof *info);
  REQUIRE_ARGUMENT(ordinal >= 0, "device ordinal %d is negative", ordinal);
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  RETURN_IF_ERROR(check_ordinal(__func__, ordinal));
  RETURN_IF_ERROR(load_device_info(__func__, ordinal));
  *info = attnrt_internal_devices[ordinal].info;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_set_device(int ordinal) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(ordinal >= 0, "device ordinal %d is negative", ordinal);
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  RETURN_IF_ERROR(check_ordinal(__func__, ordinal));
  RETURN_IF_ERROR(attnrt_internal_make_current(__func__, ordinal));
  attnrt_internal_current_device = ordinal;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_get_device(int *ordinal) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(ordinal, "ordinal is NULL");
  *ordinal = 0;
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  int device =
      attnrt_internal_current_device >= 0 ? attnrt_internal_current_device : 0;
  RETURN_IF_ERROR(check_ordinal(__func__, device));
  *ordinal = device;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_get_context_device(int *ordinal) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(ordinal, "ordinal is NULL");
  *ordinal = 0;
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  CUcontext current = NULL;
  CUresult result = attnrt_internal_driver.cuCtxGetCurrent(&current);
  if (result)
    return FAIL_DRIVER(result, "cuCtxGetCurrent failed");
  if (!current) {
    int device = attnrt_internal_current_device >= 0
                     ? attnrt_internal_current_device
                     : 0;
    RETURN_IF_ERROR(check_ordinal(__func__, device));
    *ordinal = device;
    return ATTNRT_SUCCESS;
  }
  CUdevice handle;
  if ((result = attnrt_internal_driver.cuCtxGetDevice(&handle)))
    return FAIL_DRIVER(result, "cuCtxGetDevice failed");
  // Ordinals and handles agree for every driver so far; ask rather than
  // assume.
  for (int i = 0; i < attnrt_internal_device_count; ++i) {
    CUdevice candidate;
    if (attnrt_internal_driver.cuDeviceGet(&candidate, i) == CUDA_SUCCESS &&
        candidate == handle) {
      *ordinal = i;
      return ATTNRT_SUCCESS;
    }
  }
  return attnrt_internal_fail(
      ATTNRT_DRIVER_ERROR, __func__,
      "the current context's device %d is not among the %d devices",
      (int)handle, attnrt_internal_device_count);
}

attnrt_status attnrt_synchronize(void) {
  attnrt_internal_begin_call();
  int device;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, &device));
  CUresult result = attnrt_internal_driver.cuCtxSynchronize();
  if (result)
    return FAIL_DRIVER(result, "cuCtxSynchronize on device %d failed", device);
  return ATTNRT_SUCCESS;
}
