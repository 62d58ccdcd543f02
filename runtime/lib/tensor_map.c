//===- tensor_map.c - TMA tensor maps -------------------------------------===//
//
// Tensor maps (cuTensorMapEncodeTiled) for Hopper's TMA copies.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver.h"

#include <stdint.h>
#include <stdio.h>

attnrt_status attnrt_encode_tensor_map(attnrt_tensor_map *map,
                                       attnrt_deviceptr data, int rank,
                                       int element_bytes,
                                       const long long *sizes,
                                       const long long *strides,
                                       const unsigned *box, int swizzle_128) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(map && sizes && strides && box,
                   "map, sizes, strides and box must not be NULL");
  REQUIRE_ARGUMENT(rank >= 1 && rank <= 5, "rank %d is not 1-5", rank);
  REQUIRE_ARGUMENT(element_bytes == 1 || element_bytes == 2 ||
                       element_bytes == 4 || element_bytes == 8,
                   "elements of %d bytes (1, 2, 4 or 8)", element_bytes);
  REQUIRE_ARGUMENT(data && data % 16 == 0,
                   "the tensor's address 0x%llx is not 16-byte aligned "
                   "(TMA needs it)",
                   data);
  REQUIRE_ARGUMENT(strides[rank - 1] == 1 || sizes[rank - 1] == 1,
                   "the innermost stride is %lld; a tensor map needs 1",
                   strides[rank - 1]);
  // The driver takes dimensions innermost first, and the byte strides of
  // all but the innermost.
  unsigned long long dims[5], byte_strides[4];
  unsigned boxes[5], element_strides[5];
  unsigned long long packed = (unsigned long long)element_bytes;
  for (int i = 0; i < rank; ++i) {
    int d = rank - 1 - i; // outermost-first index
    REQUIRE_ARGUMENT(sizes[d] >= 1 && sizes[d] <= (1LL << 32),
                     "dimension %d has size %lld (1 to 2^32)", d, sizes[d]);
    REQUIRE_ARGUMENT(box[d] >= 1 && box[d] <= 256,
                     "box dimension %d is %u (1 to 256)", d, box[d]);
    dims[i] = (unsigned long long)sizes[d];
    boxes[i] = box[d];
    element_strides[i] = 1;
    if (i > 0) {
      // A size-1 dimension's stride is never used: give it one TMA takes.
      unsigned long long bytes =
          sizes[d] == 1 ? (packed + 15) / 16 * 16
                        : (unsigned long long)strides[d] * element_bytes;
      REQUIRE_ARGUMENT(strides[d] >= 0 || sizes[d] == 1,
                       "dimension %d has a negative stride", d);
      REQUIRE_ARGUMENT(bytes % 16 == 0 && bytes < (1ULL << 40),
                       "dimension %d's stride is %llu bytes; TMA needs a "
                       "multiple of 16 below 2^40",
                       d, bytes);
      byte_strides[i - 1] = bytes;
    }
    packed = dims[i] * (i > 0 ? byte_strides[i - 1] : packed);
  }
  REQUIRE_ARGUMENT(!swizzle_128 || boxes[0] * element_bytes <= 128,
                   "the 128-byte swizzle takes boxes of at most 128 bytes a "
                   "row; the innermost box is %u bytes",
                   boxes[0] * element_bytes);
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  if (!attnrt_internal_driver.cuTensorMapEncodeTiled)
    return attnrt_internal_fail(
        ATTNRT_DRIVER_TOO_OLD, __func__,
        "the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 or "
        "newer has tensor maps)");
  static const int types[9] = {0,
                               CU_TENSOR_MAP_DATA_TYPE_UINT8,
                               CU_TENSOR_MAP_DATA_TYPE_UINT16,
                               0,
                               CU_TENSOR_MAP_DATA_TYPE_UINT32,
                               0,
                               0,
                               0,
                               CU_TENSOR_MAP_DATA_TYPE_UINT64};
  CUresult result = attnrt_internal_driver.cuTensorMapEncodeTiled(
      map->words, types[element_bytes], (unsigned)rank, (void *)(uintptr_t)data,
      dims, byte_strides, boxes, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle_128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result)
    return FAIL_DRIVER(result,
                       "cuTensorMapEncodeTiled of a rank-%d tensor at 0x%llx "
                       "failed",
                       rank, data);
  return ATTNRT_SUCCESS;
}
