/*===- cuda_driver_api.h - The part of the CUDA driver API attnrt uses -*- C
-*-===*                                                                        \
 *
 * attnrt builds without CUDA installed, so it declares the few driver types,
 * constants and functions it uses here instead of including cuda.h. The
 * numbers are the driver API's documented values (cuda.h); the driver's ABI
 * fixes them. The fake driver of the tests implements the same list.
 *
\*===----------------------------------------------------------------------===*/

#ifndef ATTNRT_CUDA_DRIVER_API_H
#define ATTNRT_CUDA_DRIVER_API_H

#include <stddef.h>

typedef int CUresult; /* an enum in cuda.h; enums are ints in the C ABI */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr; /* 64-bit on every platform we use */
typedef int CUdevice_attribute;
typedef int CUfunction_attribute;
typedef int CUjit_option;

/* CUresult values attnrt tells apart. */
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_JIT_COMPILATION_DISABLED = 223,
  CUDA_ERROR_INVALID_SOURCE = 300,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703,
  CUDA_ERROR_ASSERT = 710,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  CUDA_ERROR_UNKNOWN = 999,
};

/* CUdevice_attribute */
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute */
enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* CUjit_option */
enum {
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

/* Flags of cuStreamCreate and cuEventCreate. */
enum { CU_STREAM_DEFAULT = 0, CU_EVENT_DEFAULT = 0 };

/* cuLaunchKernelEx's configuration (CUDA 12), as cuda.h lays it out: an
   attribute is its id padded to 8 bytes, then a 64-byte value union. */
enum { CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
typedef struct CUlaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  union {
    char pad[64];
    int programmaticStreamSerializationAllowed;
  } value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
} CUlaunchConfig;

/* cuTensorMapEncodeTiled's enums (CUtensorMapDataType and friends). */
enum {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
};

/* The driver functions attnrt calls, as
     X(name, exported symbol, "older symbol" or NULL, required, parameters).
   The _v2 symbols are the ones cuda.h maps the plain names to (the plain
   memory functions take 32-bit device pointers). A missing optional function
   only makes messages poorer. */
/* clang-format off */
#define ATTNRT_CUDA_DRIVER_FUNCTIONS(X)                                        \
  X(cuInit, cuInit, NULL, 1, (unsigned flags))                                 \
  X(cuDriverGetVersion, cuDriverGetVersion, NULL, 1, (int *version))           \
  X(cuGetErrorName, cuGetErrorName, NULL, 0,                                   \
    (CUresult error, const char **name))                                       \
  X(cuGetErrorString, cuGetErrorString, NULL, 0,                               \
    (CUresult error, const char **string))                                     \
  X(cuDeviceGetCount, cuDeviceGetCount, NULL, 1, (int *count))                 \
  X(cuDeviceGet, cuDeviceGet, NULL, 1, (CUdevice *device, int ordinal))        \
  X(cuDeviceGetName, cuDeviceGetName, NULL, 1,                                 \
    (char *name, int length, CUdevice device))                                 \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, NULL, 1,                       \
    (int *value, CUdevice_attribute attribute, CUdevice device))               \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, NULL, 1,               \
    (CUcontext *context, CUdevice device))                                     \
  X(cuCtxGetCurrent, cuCtxGetCurrent, NULL, 1, (CUcontext *context))           \
  X(cuCtxSetCurrent, cuCtxSetCurrent, NULL, 1, (CUcontext context))            \
  X(cuCtxGetDevice, cuCtxGetDevice, NULL, 1, (CUdevice *device))               \
  X(cuCtxSynchronize, cuCtxSynchronize, NULL, 1, (void))                       \
  X(cuModuleLoadDataEx, cuModuleLoadDataEx, NULL, 1,                           \
    (CUmodule *module, const void *image, unsigned num_options,                \
     CUjit_option *options, void **option_values))                             \
  X(cuModuleUnload, cuModuleUnload, NULL, 1, (CUmodule module))                \
  X(cuModuleGetFunction, cuModuleGetFunction, NULL, 1,                         \
    (CUfunction *function, CUmodule module, const char *name))                 \
  X(cuFuncGetAttribute, cuFuncGetAttribute, NULL, 1,                           \
    (int *value, CUfunction_attribute attribute, CUfunction function))         \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor,                               \
    cuOccupancyMaxActiveBlocksPerMultiprocessor, NULL, 0,                      \
    (int *blocks, CUfunction function, int block_size,                         \
     size_t dynamic_shared_bytes))                                             \
  X(cuFuncSetAttribute, cuFuncSetAttribute, NULL, 1,                           \
    (CUfunction function, CUfunction_attribute attribute, int value))          \
  X(cuTensorMapEncodeTiled, cuTensorMapEncodeTiled, NULL, 0,                  \
    (void *map, int data_type, unsigned rank, void *address,                   \
     const unsigned long long *dims, const unsigned long long *strides,        \
     const unsigned *box, const unsigned *element_strides, int interleave,     \
     int swizzle, int l2_promotion, int oob_fill))                             \
  X(cuLaunchKernel, cuLaunchKernel, NULL, 1,                                   \
    (CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,   \
     unsigned block_x, unsigned block_y, unsigned block_z,                     \
     unsigned shared_bytes, CUstream stream, void **params, void **extra))     \
  X(cuLaunchKernelEx, cuLaunchKernelEx, NULL, 0,                              \
    (const CUlaunchConfig *config, CUfunction function, void **params,         \
     void **extra))                                                            \
  X(cuMemAlloc, cuMemAlloc_v2, NULL, 1, (CUdeviceptr *ptr, size_t bytes))      \
  X(cuMemFree, cuMemFree_v2, NULL, 1, (CUdeviceptr ptr))                       \
  X(cuMemcpyHtoD, cuMemcpyHtoD_v2, NULL, 1,                                    \
    (CUdeviceptr dst, const void *src, size_t bytes))                          \
  X(cuMemcpyDtoH, cuMemcpyDtoH_v2, NULL, 1,                                    \
    (void *dst, CUdeviceptr src, size_t bytes))                                \
  X(cuMemcpyDtoD, cuMemcpyDtoD_v2, NULL, 1,                                    \
    (CUdeviceptr dst, CUdeviceptr src, size_t bytes))                          \
  X(cuMemsetD8, cuMemsetD8_v2, NULL, 1,                                        \
    (CUdeviceptr dst, unsigned char value, size_t count))                      \
  X(cuStreamCreate, cuStreamCreate, NULL, 1,                                   \
    (CUstream *stream, unsigned flags))                                        \
  X(cuStreamDestroy, cuStreamDestroy_v2, "cuStreamDestroy", 1,                 \
    (CUstream stream))                                                         \
  X(cuStreamSynchronize, cuStreamSynchronize, NULL, 1, (CUstream stream))      \
  X(cuEventCreate, cuEventCreate, NULL, 1, (CUevent *event, unsigned flags))   \
  X(cuEventDestroy, cuEventDestroy_v2, "cuEventDestroy", 1, (CUevent event))   \
  X(cuEventRecord, cuEventRecord, NULL, 1, (CUevent event, CUstream stream))   \
  X(cuEventSynchronize, cuEventSynchronize, NULL, 1, (CUevent event))          \
  X(cuEventElapsedTime, cuEventElapsedTime_v2, "cuEventElapsedTime", 1,        \
    (float *milliseconds, CUevent start, CUevent end))
/* clang-format on */

#endif /* ATTNRT_CUDA_DRIVER_API_H */
