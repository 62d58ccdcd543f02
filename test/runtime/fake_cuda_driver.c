//===- fake_cuda_driver.c - A CUDA driver for tests without a GPU ---------===//
//
// Implements the cu* functions attnrt uses, on the host, so that the error
// paths of the runtime run in CI. attnrt loads it through ATTNRT_CUDA_DRIVER.
// It behaves like the real driver where attnrt depends on it: calls before
// cuInit fail, memory and modules need a current context, launches beyond
// 48 KiB of shared memory need the kernel's opt-in, bad PTX fails with a JIT
// log.
//
// Environment variables, read at each call so one test can switch them:
//   FAKE_CUDA_INIT_RESULT       what cuInit returns (0)
//   FAKE_CUDA_DEVICE_COUNT      devices (1)
//   FAKE_CUDA_OPTIN_SMEM        opt-in shared memory per block (102400)
//   FAKE_CUDA_MEMORY_BYTES      the largest allocation (1 GiB)
//   FAKE_CUDA_LAUNCH_RESULT     what cuLaunchKernel returns (0)
//   FAKE_CUDA_SYNC_RESULT       what the synchronizations return (0)
//   FAKE_CUDA_KERNEL_STATIC_SMEM, FAKE_CUDA_KERNEL_MAX_THREADS
//                               attributes of kernels looked up after (0, 1024)
//
// A module is PTX-like text with a kernel per ".entry NAME"; text without
// ".version" is bad PTX. The kernel fake_fill_u32(u32 *out, u32 first,
// u32 count) runs: out[i] = first + i for each thread i < count.
//
// Built twice: with FAKE_CUDA_WITHOUT_CUINIT it lacks cuInit, like a library
// that is not the driver.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fake_cuda_driver.h"
#include "cuda_driver_api.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_API __attribute__((visibility("default")))

// Prototypes from the list attnrt resolves, so signatures cannot drift.
#define DECLARE_FUNCTION(name, symbol, fallback, required, params)             \
  FAKE_API CUresult symbol params;
ATTNRT_CUDA_DRIVER_FUNCTIONS(DECLARE_FUNCTION)
#undef DECLARE_FUNCTION

FAKE_API struct fake_cuda_state fake_cuda_state;

#define MAX_DEVICES 8
#define MAX_KERNELS 16
#define MAX_NAME 64
#define DEFAULT_SHARED_PER_BLOCK 49152

static long long setting(const char *name, long long default_value) {
  const char *text = getenv(name);
  return text && *text ? strtoll(text, NULL, 0) : default_value;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;

struct CUctx_st {
  int device;
};
static struct CUctx_st contexts[MAX_DEVICES];
static _Thread_local CUcontext current_context;

struct CUfunc_st {
  char name[MAX_NAME];
  CUmodule module;
  int static_shared_bytes;
  int max_threads;
  int max_dynamic_shared_bytes;
  int param_count;                              // declared by the .entry
  unsigned char param_bytes[FAKE_CUDA_MAX_PARAMS]; // 4 or 8
};

struct CUmod_st {
  CUcontext context;
  int kernel_count;
  struct CUfunc_st kernels[MAX_KERNELS];
};

#define STREAM_MAGIC 0x57AEA4u
#define EVENT_MAGIC 0xE7E4Du

struct CUstream_st {
  unsigned magic;
};

struct CUevent_st {
  unsigned magic;
  int recorded;
  struct timespec time;
};

struct allocation {
  struct allocation *next;
  CUdeviceptr base;
  size_t size;
};
static struct allocation *allocations;

static int device_count(void) {
  long long count = setting("FAKE_CUDA_DEVICE_COUNT", 1);
  return count < 0 ? 0 : count > MAX_DEVICES ? MAX_DEVICES : (int)count;
}

// What most functions check first, like the driver.
static CUresult check_context(void) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  return current_context ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

//===----------------------------------------------------------------------===//
// Initialization, errors, devices, contexts
//===----------------------------------------------------------------------===//

#ifndef FAKE_CUDA_WITHOUT_CUINIT
CUresult cuInit(unsigned flags) {
  ++fake_cuda_state.init_calls;
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult result = (CUresult)setting("FAKE_CUDA_INIT_RESULT", 0);
  if (result == CUDA_SUCCESS)
    initialized = 1;
  return result;
}
#endif

CUresult cuDriverGetVersion(int *version) {
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  *version = 12080;
  return CUDA_SUCCESS;
}

static const struct {
  CUresult result;
  const char *name;
  const char *description;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY",
     "CUDA driver is a stub library"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static int find_error(CUresult result) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; ++i)
    if (errors[i].result == result)
      return (int)i;
  return -1;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  int index = find_error(error);
  if (!name || index < 0)
    return CUDA_ERROR_INVALID_VALUE;
  *name = errors[index].name;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char **string) {
  int index = find_error(error);
  if (!string || index < 0)
    return CUDA_ERROR_INVALID_VALUE;
  *string = errors[index].description;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = device_count();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= device_count())
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!name || length <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (device < 0 || device >= device_count())
    return CUDA_ERROR_INVALID_DEVICE;
  snprintf(name, (size_t)length, "Fake CUDA Device %d", device);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice device) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!value)
    return CUDA_ERROR_INVALID_VALUE;
  if (device < 0 || device >= device_count())
    return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *value = DEFAULT_SHARED_PER_BLOCK;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = 108 + device; // tell devices apart
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: // FAKE_CUDA_CC, 86
    *value = (int)(setting("FAKE_CUDA_CC", 86) / 10);
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = (int)(setting("FAKE_CUDA_CC", 86) % 10);
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = (int)setting("FAKE_CUDA_OPTIN_SMEM", 102400);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!context)
    return CUDA_ERROR_INVALID_VALUE;
  if (device < 0 || device >= device_count())
    return CUDA_ERROR_INVALID_DEVICE;
  ++fake_cuda_state.primary_context_retains;
  contexts[device].device = device;
  *context = &contexts[device];
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *context) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!context)
    return CUDA_ERROR_INVALID_VALUE;
  *context = current_context;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (context && (context < contexts || context >= contexts + MAX_DEVICES))
    return CUDA_ERROR_INVALID_CONTEXT;
  ++fake_cuda_state.set_current_calls;
  current_context = context;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  *device = current_context->device;
  return CUDA_SUCCESS;
}

static CUresult synchronize(void) {
  CUresult result = check_context();
  if (result)
    return result;
  return (CUresult)setting("FAKE_CUDA_SYNC_RESULT", 0);
}

CUresult cuCtxSynchronize(void) { return synchronize(); }

//===----------------------------------------------------------------------===//
// Modules and functions
//===----------------------------------------------------------------------===//

static void write_jit_log(unsigned num_options, CUjit_option *options,
                          void **values, const char *text) {
  char *log = NULL;
  size_t size = 0;
  unsigned size_index = 0;
  for (unsigned i = 0; i < num_options; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      log = values[i];
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
      size = (size_t)(uintptr_t)values[i];
      size_index = i;
    }
  }
  if (!log || size == 0)
    return;
  snprintf(log, size, "%s", text);
  // The driver reports how much it wrote in the size's slot.
  values[size_index] = (void *)(uintptr_t)(strlen(log) + 1);
}

static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '$';
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned num_options, CUjit_option *options,
                            void **option_values) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!module || !image || (num_options && (!options || !option_values)))
    return CUDA_ERROR_INVALID_VALUE;
  const char *text = image;
  if (strncmp(text,
              "\x7f"
              "ELF",
              4) == 0)
    return CUDA_ERROR_NO_BINARY_FOR_GPU; // the fake GPU runs no cubin
  if (!strstr(text, ".version")) {
    write_jit_log(num_options, options, option_values,
                  "ptxas application ptx input, line 1; fatal   : Missing "
                  ".version directive at start of file\n"
                  "ptxas fatal   : Ptx assembly aborted due to errors\n");
    return CUDA_ERROR_INVALID_PTX;
  }

  CUmodule loaded = calloc(1, sizeof *loaded);
  if (!loaded)
    return CUDA_ERROR_OUT_OF_MEMORY;
  loaded->context = current_context;
  for (const char *entry = strstr(text, ".entry"); entry;
       entry = strstr(entry + 1, ".entry")) {
    const char *name = entry + strlen(".entry");
    while (*name == ' ' || *name == '\t' || *name == '\n')
      ++name;
    size_t length = 0;
    while (is_name_char(name[length]))
      ++length;
    if (length == 0 || length >= MAX_NAME ||
        loaded->kernel_count == MAX_KERNELS)
      continue;
    struct CUfunc_st *kernel = &loaded->kernels[loaded->kernel_count++];
    memcpy(kernel->name, name, length);
    kernel->module = loaded;
    // The parameter list: ".param .u64 NAME, ..." between the parentheses.
    const char *open = name + length;
    while (*open == ' ' || *open == '\t' || *open == '\n')
      ++open;
    const char *close = *open == '(' ? strchr(open, ')') : NULL;
    for (const char *param = close ? strstr(open, ".param") : NULL;
         param && param < close && kernel->param_count < FAKE_CUDA_MAX_PARAMS;
         param = strstr(param + 1, ".param")) {
      const char *type = param + strlen(".param");
      while (*type == ' ' || *type == '\t')
        ++type;
      kernel->param_bytes[kernel->param_count++] =
          strncmp(type + 2, "32", 2) == 0 ? 4 : 8;
    }
  }
  ++fake_cuda_state.live_modules;
  *module = loaded;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  --fake_cuda_state.live_modules;
  free(module);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!function || !module || !name)
    return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < module->kernel_count; ++i) {
    struct CUfunc_st *kernel = &module->kernels[i];
    if (strcmp(kernel->name, name) != 0)
      continue;
    kernel->static_shared_bytes =
        (int)setting("FAKE_CUDA_KERNEL_STATIC_SMEM", 0);
    kernel->max_threads = (int)setting("FAKE_CUDA_KERNEL_MAX_THREADS", 1024);
    kernel->max_dynamic_shared_bytes =
        DEFAULT_SHARED_PER_BLOCK - kernel->static_shared_bytes;
    *function = kernel;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                            CUfunction function) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!value || !function)
    return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = function->max_threads;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *value = function->static_shared_bytes;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
    *value = 0;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *value = 40;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *value = function->max_dynamic_shared_bytes;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute,
                            int value) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!function || attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    return CUDA_ERROR_INVALID_VALUE;
  ++fake_cuda_state.set_attribute_calls;
  long long limit = setting("FAKE_CUDA_OPTIN_SMEM", 102400);
  if (value < 0 || value + function->static_shared_bytes > limit)
    return CUDA_ERROR_INVALID_VALUE;
  function->max_dynamic_shared_bytes = value;
  fake_cuda_state.max_dynamic_shared_set = value;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// The allocation holding [ptr, ptr + bytes), or NULL.
static struct allocation *find_allocation(CUdeviceptr ptr, size_t bytes) {
  for (struct allocation *a = allocations; a; a = a->next)
    if (ptr >= a->base && ptr - a->base <= a->size &&
        bytes <= a->size - (ptr - a->base))
      return a;
  return NULL;
}

static void *host_address(CUdeviceptr ptr) { return (void *)(uintptr_t)ptr; }

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!ptr || bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if ((long long)bytes > setting("FAKE_CUDA_MEMORY_BYTES", 1LL << 30))
    return CUDA_ERROR_OUT_OF_MEMORY;
  struct allocation *a = malloc(sizeof *a);
  void *memory = malloc(bytes);
  if (!a || !memory) {
    free(a);
    free(memory);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a->base = (CUdeviceptr)(uintptr_t)memory;
  a->size = bytes;
  pthread_mutex_lock(&lock);
  a->next = allocations;
  allocations = a;
  ++fake_cuda_state.live_allocations;
  pthread_mutex_unlock(&lock);
  *ptr = a->base;
  return CUDA_SUCCESS;
}

/* Records what attnrt asks for and writes the address into the map's
   first word; the fake GPU never reads the map. */
CUresult cuTensorMapEncodeTiled(void *map, int data_type, unsigned rank,
                                void *address, const unsigned long long *dims,
                                const unsigned long long *strides,
                                const unsigned *box,
                                const unsigned *element_strides,
                                int interleave, int swizzle, int l2_promotion,
                                int oob_fill) {
  (void)element_strides;
  (void)interleave;
  (void)l2_promotion;
  (void)oob_fill;
  if (!map || !address || rank < 1 || rank > 5)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  ++fake_cuda_state.tensor_map_calls;
  fake_cuda_state.tensor_map_type = data_type;
  fake_cuda_state.tensor_map_rank = (int)rank;
  fake_cuda_state.tensor_map_swizzle = swizzle;
  fake_cuda_state.tensor_map_address = (unsigned long long)(uintptr_t)address;
  for (unsigned i = 0; i < rank; ++i) {
    fake_cuda_state.tensor_map_dims[i] = dims[i];
    fake_cuda_state.tensor_map_box[i] = box[i];
    if (i + 1 < rank)
      fake_cuda_state.tensor_map_strides[i] = strides[i];
  }
  pthread_mutex_unlock(&lock);
  memcpy(map, &fake_cuda_state.tensor_map_address, 8);
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
  CUresult result = check_context();
  if (result)
    return result;
  pthread_mutex_lock(&lock);
  for (struct allocation **link = &allocations; *link; link = &(*link)->next) {
    struct allocation *a = *link;
    if (a->base != ptr)
      continue;
    *link = a->next;
    --fake_cuda_state.live_allocations;
    pthread_mutex_unlock(&lock);
    free(host_address(a->base));
    free(a);
    return CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&lock);
  return CUDA_ERROR_INVALID_VALUE;
}

// Checks a device range; the driver faults on ranges outside allocations.
static CUresult check_range(CUdeviceptr ptr, size_t bytes) {
  CUresult result = check_context();
  if (result)
    return result;
  pthread_mutex_lock(&lock);
  struct allocation *a = find_allocation(ptr, bytes);
  pthread_mutex_unlock(&lock);
  return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  CUresult result = check_range(dst, bytes);
  if (result)
    return result;
  memcpy(host_address(dst), src, bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  CUresult result = check_range(src, bytes);
  if (result)
    return result;
  memcpy(dst, host_address(src), bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  CUresult result = check_range(dst, bytes);
  if (result == CUDA_SUCCESS)
    result = check_range(src, bytes);
  if (result)
    return result;
  memmove(host_address(dst), host_address(src), bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) {
  CUresult result = check_range(dst, count);
  if (result)
    return result;
  memset(host_address(dst), value, count);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

static CUresult run_fill_u32(unsigned threads, void **params) {
  if (!params)
    return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr out = *(CUdeviceptr *)params[0];
  unsigned first = *(unsigned *)params[1];
  unsigned count = *(unsigned *)params[2];
  unsigned written = threads < count ? threads : count;
  if (check_range(out, (size_t)written * sizeof(unsigned)))
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  unsigned *values = host_address(out);
  for (unsigned i = 0; i < written; ++i)
    values[i] = first + i;
  return CUDA_SUCCESS;
}

static int is_stream(CUstream stream) {
  return stream == NULL || stream->magic == STREAM_MAGIC;
}

CUresult cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y,
                        unsigned grid_z, unsigned block_x, unsigned block_y,
                        unsigned block_z, unsigned shared_bytes,
                        CUstream stream, void **params, void **extra) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!function || extra)
    return CUDA_ERROR_INVALID_VALUE;
  if (function->module->context != current_context)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!is_stream(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  if (!grid_x || !grid_y || !grid_z || !block_x || !block_y || !block_z)
    return CUDA_ERROR_INVALID_VALUE;
  unsigned long long threads = (unsigned long long)block_x * block_y * block_z;
  if (threads > (unsigned long long)function->max_threads)
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  if ((int)shared_bytes > function->max_dynamic_shared_bytes)
    return CUDA_ERROR_INVALID_VALUE; // not opted in, or beyond the device
  if ((result = (CUresult)setting("FAKE_CUDA_LAUNCH_RESULT", 0)))
    return result;

  ++fake_cuda_state.launches;
  fake_cuda_state.last_grid[0] = grid_x;
  fake_cuda_state.last_grid[1] = grid_y;
  fake_cuda_state.last_grid[2] = grid_z;
  fake_cuda_state.last_block[0] = block_x;
  fake_cuda_state.last_block[1] = block_y;
  fake_cuda_state.last_block[2] = block_z;
  fake_cuda_state.last_shared_bytes = shared_bytes;
  fake_cuda_state.last_param_count = function->param_count;
  for (int i = 0; params && i < function->param_count; ++i) {
    unsigned long long value = 0;
    if (function->param_bytes[i] == 4)
      value = *(const unsigned *)params[i];
    else
      value = *(const unsigned long long *)params[i];
    fake_cuda_state.last_params[i] = value;
  }
  fake_cuda_state.last_launch_programmatic = 0;
  if (strcmp(function->name, "fake_fill_u32") == 0)
    return run_fill_u32((unsigned)(threads * grid_x * grid_y * grid_z), params);
  return CUDA_SUCCESS;
}

#ifndef FAKE_CUDA_WITHOUT_LAUNCH_EX
/* CUDA 12's launch with attributes: the one attnrt passes, programmatic
   stream serialization, is recorded; others are refused. */
CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function,
                          void **params, void **extra) {
  if (!config || (config->numAttrs && !config->attrs))
    return CUDA_ERROR_INVALID_VALUE;
  int programmatic = 0;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id !=
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      return CUDA_ERROR_INVALID_VALUE;
    programmatic =
        config->attrs[i].value.programmaticStreamSerializationAllowed != 0;
  }
  CUresult result = cuLaunchKernel(
      function, config->gridDimX, config->gridDimY, config->gridDimZ,
      config->blockDimX, config->blockDimY, config->blockDimZ,
      config->sharedMemBytes, config->hStream, params, extra);
  if (result)
    return result;
  fake_cuda_state.last_launch_programmatic = programmatic;
  fake_cuda_state.programmatic_launches += programmatic;
  return CUDA_SUCCESS;
}
#endif

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

CUresult cuStreamCreate(CUstream *stream, unsigned flags) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!stream || flags > 1)
    return CUDA_ERROR_INVALID_VALUE;
  CUstream created = calloc(1, sizeof *created);
  if (!created)
    return CUDA_ERROR_OUT_OF_MEMORY;
  created->magic = STREAM_MAGIC;
  ++fake_cuda_state.live_streams;
  *stream = created;
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream stream) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!stream || stream->magic != STREAM_MAGIC)
    return CUDA_ERROR_INVALID_HANDLE;
  stream->magic = 0;
  --fake_cuda_state.live_streams;
  free(stream);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) {
  if (initialized && !is_stream(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  return synchronize();
}

CUresult cuEventCreate(CUevent *event, unsigned flags) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!event || flags != CU_EVENT_DEFAULT)
    return CUDA_ERROR_INVALID_VALUE;
  CUevent created = calloc(1, sizeof *created);
  if (!created)
    return CUDA_ERROR_OUT_OF_MEMORY;
  created->magic = EVENT_MAGIC;
  ++fake_cuda_state.live_events;
  *event = created;
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent event) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!event || event->magic != EVENT_MAGIC)
    return CUDA_ERROR_INVALID_HANDLE;
  event->magic = 0;
  --fake_cuda_state.live_events;
  free(event);
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!event || event->magic != EVENT_MAGIC || !is_stream(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  event->recorded = 1;
  clock_gettime(CLOCK_MONOTONIC, &event->time);
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent event) {
  if (initialized && (!event || event->magic != EVENT_MAGIC))
    return CUDA_ERROR_INVALID_HANDLE;
  return synchronize();
}

CUresult cuEventElapsedTime_v2(float *milliseconds, CUevent start,
                               CUevent end) {
  CUresult result = check_context();
  if (result)
    return result;
  if (!milliseconds)
    return CUDA_ERROR_INVALID_VALUE;
  if (!start || !end || start->magic != EVENT_MAGIC ||
      end->magic != EVENT_MAGIC || !start->recorded || !end->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *milliseconds = (float)((end->time.tv_sec - start->time.tv_sec) * 1e3 +
                          (end->time.tv_nsec - start->time.tv_nsec) / 1e6);
  return CUDA_SUCCESS;
}
