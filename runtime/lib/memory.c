//===- memory.c - Device memory -------------------------------------------===//
//
// Device memory: allocation, copies, memset.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver.h"

#include <stdint.h>
#include <stdio.h>

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

attnrt_status attnrt_malloc(attnrt_deviceptr *ptr, size_t bytes) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(ptr, "ptr is NULL");
  *ptr = 0;
  REQUIRE_ARGUMENT(bytes > 0, "cannot allocate 0 bytes");
  int device;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, &device));
  CUdeviceptr allocated = 0;
  CUresult result = attnrt_internal_driver.cuMemAlloc(&allocated, bytes);
  if (result)
    return FAIL_DRIVER(result, "cuMemAlloc_v2 of %zu bytes on device %d failed",
                       bytes, device);
  *ptr = allocated;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_free(attnrt_deviceptr ptr) {
  attnrt_internal_begin_call();
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  if (ptr == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result = attnrt_internal_driver.cuMemFree(ptr);
  if (result)
    return FAIL_DRIVER(result, "cuMemFree_v2(0x%llx) failed", ptr);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_memcpy_htod(attnrt_deviceptr dst, const void *src,
                                 size_t bytes) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(dst, "dst is a null device pointer");
  REQUIRE_ARGUMENT(src, "src is NULL");
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  if (bytes == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result = attnrt_internal_driver.cuMemcpyHtoD(dst, src, bytes);
  if (result)
    return FAIL_DRIVER(result, "cuMemcpyHtoD_v2 of %zu bytes to 0x%llx failed",
                       bytes, dst);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_memcpy_dtoh(void *dst, attnrt_deviceptr src,
                                 size_t bytes) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(dst, "dst is NULL");
  REQUIRE_ARGUMENT(src, "src is a null device pointer");
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  if (bytes == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result = attnrt_internal_driver.cuMemcpyDtoH(dst, src, bytes);
  if (result)
    return FAIL_DRIVER(
        result, "cuMemcpyDtoH_v2 of %zu bytes from 0x%llx failed", bytes, src);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_memcpy_dtod(attnrt_deviceptr dst, attnrt_deviceptr src,
                                 size_t bytes) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(dst, "dst is a null device pointer");
  REQUIRE_ARGUMENT(src, "src is a null device pointer");
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  if (bytes == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result = attnrt_internal_driver.cuMemcpyDtoD(dst, src, bytes);
  if (result)
    return FAIL_DRIVER(result,
                       "cuMemcpyDtoD_v2 of %zu bytes from 0x%llx to 0x%llx "
                       "failed",
                       bytes, src, dst);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_memset_d8(attnrt_deviceptr dst, unsigned char value,
                               size_t bytes) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(dst, "dst is a null device pointer");
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  if (bytes == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, NULL));
  CUresult result = attnrt_internal_driver.cuMemsetD8(dst, value, bytes);
  if (result)
    return FAIL_DRIVER(result, "cuMemsetD8_v2 of %zu bytes at 0x%llx failed",
                       bytes, dst);
  return ATTNRT_SUCCESS;
}
