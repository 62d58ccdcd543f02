//===- attnrt.c - Load and launch GPU kernels through the CUDA driver -----===//
//
// The driver is opened with dlopen at the first call, so libattnrt needs
// neither CUDA headers nor libcuda to build, link or start; without a driver
// every call fails with ATTNRT_NO_DRIVER and a message.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "attnrt.h"
#include "cuda_driver_api.h"
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// Room for a message and a JIT log.
#define MESSAGE_CAPACITY 8192
#define JIT_LOG_CAPACITY 4096

static _Thread_local char last_error[MESSAGE_CAPACITY];
static _Thread_local CUresult last_driver_result;

// Every entry point starts with this: a message describes the latest call.
static void begin_call(void) {
  last_error[0] = '\0';
  last_driver_result = CUDA_SUCCESS;
}

static void append_error_v(const char *format, va_list args) {
  size_t used = strlen(last_error);
  if (used + 1 < sizeof last_error)
    vsnprintf(last_error + used, sizeof last_error - used, format, args);
}

static void append_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  append_error_v(format, args);
  va_end(args);
}

// Sets the message to "function: <format>" and returns `status`.
static attnrt_status fail(attnrt_status status, const char *function,
                          const char *format, ...) {
  snprintf(last_error, sizeof last_error, "%s: ", function);
  va_list args;
  va_start(args, format);
  append_error_v(format, args);
  va_end(args);
  return status;
}

void attnrt_internal_clear_error(void) { begin_call(); }

void attnrt_internal_set_error(const char *context, const char *format, ...) {
  begin_call();
  snprintf(last_error, sizeof last_error, "%s: ", context);
  va_list args;
  va_start(args, format);
  append_error_v(format, args);
  va_end(args);
}

#define REQUIRE_ARGUMENT(condition, ...)                                       \
  do {                                                                         \
    if (!(condition))                                                          \
      return fail(ATTNRT_INVALID_ARGUMENT, __func__, __VA_ARGS__);             \
  } while (0)

/* REQUIRE_ARGUMENT on behalf of the public function `caller`. */
#define REQUIRE_ARGUMENT_OF(caller, condition, ...)                            \
  do {                                                                         \
    if (!(condition))                                                          \
      return fail(ATTNRT_INVALID_ARGUMENT, caller, __VA_ARGS__);               \
  } while (0)

#define RETURN_IF_ERROR(expression)                                            \
  do {                                                                         \
    attnrt_status status_ = (expression);                                      \
    if (status_ != ATTNRT_SUCCESS)                                             \
      return status_;                                                          \
  } while (0)

const char *attnrt_status_string(attnrt_status status) {
  switch (status) {
  case ATTNRT_SUCCESS:
    return "success";
  case ATTNRT_NO_DRIVER:
    return "no CUDA driver";
  case ATTNRT_DRIVER_TOO_OLD:
    return "CUDA driver too old";
  case ATTNRT_NO_DEVICE:
    return "no CUDA device";
  case ATTNRT_INVALID_ARGUMENT:
    return "invalid argument";
  case ATTNRT_INVALID_IMAGE:
    return "invalid module image";
  case ATTNRT_KERNEL_NOT_FOUND:
    return "kernel not found";
  case ATTNRT_OUT_OF_MEMORY:
    return "out of memory";
  case ATTNRT_SHARED_MEMORY_TOO_LARGE:
    return "shared memory request too large";
  case ATTNRT_LAUNCH_FAILED:
    return "kernel launch failed";
  case ATTNRT_NOT_INITIALIZED:
    return "CUDA driver not initialized";
  case ATTNRT_DRIVER_ERROR:
    return "CUDA driver error";
  }
  return "unknown attnrt status";
}

const char *attnrt_last_error(void) { return last_error; }

int attnrt_last_driver_result(void) { return last_driver_result; }

//===----------------------------------------------------------------------===//
// The driver's functions, resolved with dlsym
//===----------------------------------------------------------------------===//

// clang-format off
#define DECLARE_FIELD(name, symbol, fallback, required, params)                \
  CUresult (*name) params;
static struct driver_api {
  ATTNRT_CUDA_DRIVER_FUNCTIONS(DECLARE_FIELD)
} driver;
#undef DECLARE_FIELD
// clang-format on

struct driver_symbol {
  const char *name;
  const char *fallback; // an older name with the same signature, or NULL
  size_t offset;        // of the function pointer in `struct driver_api`
  bool required;
};

#define DESCRIBE_SYMBOL(name, symbol, fallback, required, params)              \
  {#symbol, fallback, offsetof(struct driver_api, name), required},
static const struct driver_symbol driver_symbols[] = {
    ATTNRT_CUDA_DRIVER_FUNCTIONS(DESCRIBE_SYMBOL)};
#undef DESCRIBE_SYMBOL

// dlsym returns functions as void *; POSIX guarantees the round trip.
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "function and data pointers differ in size");

// Maps a CUresult to the status a caller can act on; call sites refine it
// where they know more (a module load, a kernel lookup).
static attnrt_status status_from_result(CUresult result) {
  switch (result) {
  case CUDA_SUCCESS:
    return ATTNRT_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_INVALID_HANDLE:
    return ATTNRT_INVALID_ARGUMENT;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return ATTNRT_OUT_OF_MEMORY;
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED:
    return ATTNRT_NOT_INITIALIZED;
  case CUDA_ERROR_STUB_LIBRARY:
    return ATTNRT_NO_DRIVER;
  case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
    return ATTNRT_DRIVER_TOO_OLD;
  case CUDA_ERROR_NO_DEVICE:
    return ATTNRT_NO_DEVICE;
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_JIT_COMPILATION_DISABLED:
  case CUDA_ERROR_INVALID_SOURCE:
    return ATTNRT_INVALID_IMAGE;
  case CUDA_ERROR_NOT_FOUND:
    return ATTNRT_KERNEL_NOT_FOUND;
  // Launch errors; a kernel that faults makes the context's later calls
  // return them too.
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    return ATTNRT_LAUNCH_FAILED;
  }
  return ATTNRT_DRIVER_ERROR;
}

// Sets the message to "function: <format>: NAME (code): description" with
// the driver's words for `result`, and returns `status`.
static attnrt_status fail_driver(attnrt_status status, CUresult result,
                                 const char *function, const char *format,
                                 ...) {
  snprintf(last_error, sizeof last_error, "%s: ", function);
  va_list args;
  va_start(args, format);
  append_error_v(format, args);
  va_end(args);

  const char *name = NULL;
  const char *description = NULL;
  if (!driver.cuGetErrorName || driver.cuGetErrorName(result, &name) != 0)
    name = NULL;
  if (!driver.cuGetErrorString ||
      driver.cuGetErrorString(result, &description) != 0)
    description = NULL;
  if (name)
    append_error(": %s (%d)", name, result);
  else
    append_error(": CUresult %d", result); // one the driver cannot name
  if (description)
    append_error(": %s", description);
  last_driver_result = result;
  return status;
}

// For the common case: the status follows from the result.
#define FAIL_DRIVER(result, ...)                                               \
  fail_driver(status_from_result(result), (result), __func__, __VA_ARGS__)

//===----------------------------------------------------------------------===//
// Initialization, once per process
//===----------------------------------------------------------------------===//

#define DEFAULT_DRIVER_LIBRARY "libcuda.so.1"
#define DRIVER_LIBRARY_VARIABLE "ATTNRT_CUDA_DRIVER"

// What attnrt knows about a device. The info is filled once, the context
// retained once; both under `device_lock`, read without it after.
struct device {
  atomic_bool has_info;
  CUdevice handle;
  attnrt_device_info info;
  _Atomic(CUcontext) context; // the primary context, retained for good
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static attnrt_status init_status;
static CUresult init_driver_result;
static char init_message[MESSAGE_CAPACITY];
static int driver_version;
static int device_count;
static struct device *devices;
static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;

// The calling thread's current device; -1 until attnrt_set_device.
static _Thread_local int current_device = -1;

static attnrt_status load_driver(void) {
  const char *function = "attnrt_init";
  const char *path = getenv(DRIVER_LIBRARY_VARIABLE);
  bool from_environment = path && *path;
  if (!from_environment)
    path = DEFAULT_DRIVER_LIBRARY;

  dlerror();
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    if (from_environment)
      return fail(
          ATTNRT_NO_DRIVER, function,
          "cannot load the CUDA driver '%s' named by " DRIVER_LIBRARY_VARIABLE
          ": %s",
          path, reason ? reason : "unknown reason");
    return fail(ATTNRT_NO_DRIVER, function,
                "cannot load the CUDA driver '%s' (%s); is the NVIDIA driver "
                "installed? " DRIVER_LIBRARY_VARIABLE
                "=/path/to/libcuda.so.1 names another library",
                path, reason ? reason : "unknown reason");
  }

  size_t count = sizeof driver_symbols / sizeof driver_symbols[0];
  for (size_t i = 0; i < count; ++i) {
    const struct driver_symbol *symbol = &driver_symbols[i];
    void *address = dlsym(library, symbol->name);
    if (!address && symbol->fallback)
      address = dlsym(library, symbol->fallback);
    if (!address && symbol->required) {
      memset(&driver, 0, sizeof driver);
      dlclose(library);
      return fail(ATTNRT_DRIVER_TOO_OLD, function,
                  "the CUDA driver '%s' has no function %s%s%s: it is older "
                  "than attnrt supports, or not the CUDA driver",
                  path, symbol->name, symbol->fallback ? " nor " : "",
                  symbol->fallback ? symbol->fallback : "");
    }
    memcpy((char *)&driver + symbol->offset, &address, sizeof address);
  }
  // The library stays loaded for the life of the process.

  // Asked before cuInit, which fails on machines without devices.
  const char *step = "cuDriverGetVersion";
  CUresult result = driver.cuDriverGetVersion(&driver_version);
  if (result == CUDA_SUCCESS) {
    step = "cuInit(0)";
    result = driver.cuInit(0);
  }
  if (result == CUDA_ERROR_NO_DEVICE)
    return ATTNRT_SUCCESS; // a driver without devices: device_count is 0
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return fail_driver(ATTNRT_NO_DRIVER, result, function,
                       "'%s' is the CUDA toolkit's stub, not the driver; run "
                       "where the NVIDIA driver is installed",
                       path);
  if (result)
    return fail_driver(status_from_result(result), result, function,
                       "%s of '%s' failed", step, path);
  int count_found = 0;
  if ((result = driver.cuDeviceGetCount(&count_found)))
    return fail_driver(status_from_result(result), result, function,
                       "cuDeviceGetCount failed");
  if (count_found > 0) {
    devices = calloc((size_t)count_found, sizeof *devices);
    if (!devices)
      return fail(ATTNRT_OUT_OF_MEMORY, function,
                  "cannot allocate the state of %d devices", count_found);
    device_count = count_found;
  }
  return ATTNRT_SUCCESS;
}

static void initialize(void) {
  init_status = load_driver();
  if (init_status != ATTNRT_SUCCESS) {
    // Keep the reason, without "attnrt_init: ", for the calls that follow.
    const char *prefix = "attnrt_init: ";
    const char *reason = last_error;
    if (strncmp(reason, prefix, strlen(prefix)) == 0)
      reason += strlen(prefix);
    snprintf(init_message, sizeof init_message, "%s", reason);
    init_driver_result = last_driver_result;
  }
}

// Loads the driver on the first call; later calls repeat its outcome, with
// the message prefixed by the function called.
static attnrt_status ensure_init(const char *function) {
  if (pthread_once(&init_once, initialize) != 0)
    return fail(ATTNRT_DRIVER_ERROR, function, "pthread_once failed");
  if (init_status == ATTNRT_SUCCESS)
    return ATTNRT_SUCCESS;
  fail(init_status, function, "%s", init_message);
  last_driver_result = init_driver_result;
  return init_status;
}

//===----------------------------------------------------------------------===//
// Devices and their primary contexts
//===----------------------------------------------------------------------===//

static attnrt_status check_ordinal(const char *function, int ordinal) {
  if (device_count == 0)
    return fail(ATTNRT_NO_DEVICE, function,
                "the CUDA driver (version %d) reports no device",
                driver_version);
  if (ordinal < 0 || ordinal >= device_count)
    return fail(ATTNRT_INVALID_ARGUMENT, function,
                "device %d does not exist: the CUDA driver reports %d "
                "device%s",
                ordinal, device_count, device_count == 1 ? "" : "s");
  return ATTNRT_SUCCESS;
}

static attnrt_status query_device_info(const char *function, int ordinal,
                                       struct device *device) {
  CUresult result = driver.cuDeviceGet(&device->handle, ordinal);
  if (result)
    return fail_driver(status_from_result(result), result, function,
                       "cuDeviceGet(%d) failed", ordinal);
  attnrt_device_info *info = &device->info;
  result = driver.cuDeviceGetName(info->name, (int)sizeof info->name,
                                  device->handle);
  if (result)
    return fail_driver(status_from_result(result), result, function,
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
    result = driver.cuDeviceGetAttribute(
        attributes[i].value, attributes[i].attribute, device->handle);
    if (result)
      return fail_driver(status_from_result(result), result, function,
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
  struct device *device = &devices[ordinal];
  if (atomic_load_explicit(&device->has_info, memory_order_acquire))
    return ATTNRT_SUCCESS;
  pthread_mutex_lock(&device_lock);
  attnrt_status status = ATTNRT_SUCCESS;
  if (!atomic_load_explicit(&device->has_info, memory_order_relaxed)) {
    status = query_device_info(function, ordinal, device);
    if (status == ATTNRT_SUCCESS)
      atomic_store_explicit(&device->has_info, true, memory_order_release);
  }
  pthread_mutex_unlock(&device_lock);
  return status;
}

// The device's primary context, retained at the first use. Retaining creates
// it, which takes a while and device memory, so only devices used pay.
static attnrt_status device_context(const char *function, int ordinal,
                                    CUcontext *context) {
  struct device *device = &devices[ordinal];
  *context = atomic_load_explicit(&device->context, memory_order_acquire);
  if (*context)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(load_device_info(function, ordinal));
  pthread_mutex_lock(&device_lock);
  attnrt_status status = ATTNRT_SUCCESS;
  *context = atomic_load_explicit(&device->context, memory_order_relaxed);
  if (!*context) {
    CUresult result = driver.cuDevicePrimaryCtxRetain(context, device->handle);
    if (result == CUDA_SUCCESS)
      atomic_store_explicit(&device->context, *context, memory_order_release);
    else
      status =
          fail_driver(status_from_result(result), result, function,
                      "cuDevicePrimaryCtxRetain of device %d failed", ordinal);
  }
  pthread_mutex_unlock(&device_lock);
  return status;
}

// Makes the device's primary context current on this thread. Asks the driver
// rather than remembering: other CUDA code may have changed it meanwhile.
static attnrt_status make_current(const char *function, int ordinal) {
  CUcontext context;
  RETURN_IF_ERROR(device_context(function, ordinal, &context));
  CUcontext current = NULL;
  CUresult result = driver.cuCtxGetCurrent(&current);
  if (result)
    return fail_driver(status_from_result(result), result, function,
                       "cuCtxGetCurrent failed");
  if (current == context)
    return ATTNRT_SUCCESS;
  if ((result = driver.cuCtxSetCurrent(context)))
    return fail_driver(status_from_result(result), result, function,
                       "cuCtxSetCurrent for device %d failed", ordinal);
  return ATTNRT_SUCCESS;
}

// Initializes, then makes the thread's current device (0 unless set) current.
static attnrt_status enter_current_device(const char *function, int *ordinal) {
  RETURN_IF_ERROR(ensure_init(function));
  int device = current_device >= 0 ? current_device : 0;
  RETURN_IF_ERROR(check_ordinal(function, device));
  RETURN_IF_ERROR(make_current(function, device));
  if (ordinal)
    *ordinal = device;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_init(void) {
  begin_call();
  return ensure_init(__func__);
}

attnrt_status attnrt_driver_version(int *version) {
  begin_call();
  REQUIRE_ARGUMENT(version, "version is NULL");
  *version = 0;
  RETURN_IF_ERROR(ensure_init(__func__));
  *version = driver_version;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_get_device_count(int *count) {
  begin_call();
  REQUIRE_ARGUMENT(count, "count is NULL");
  *count = 0;
  RETURN_IF_ERROR(ensure_init(__func__));
  *count = device_count;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_get_device_info(attnrt_device_info *info, int ordinal) {
  begin_call();
  REQUIRE_ARGUMENT(info, "info is NULL");
  memset(info, 0, sizeof *info);
  REQUIRE_ARGUMENT(ordinal >= 0, "device ordinal %d is negative", ordinal);
  RETURN_IF_ERROR(ensure_init(__func__));
  RETURN_IF_ERROR(check_ordinal(__func__, ordinal));
  RETURN_IF_ERROR(load_device_info(__func__, ordinal));
  *info = devices[ordinal].info;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_set_device(int ordinal) {
  begin_call();
  REQUIRE_ARGUMENT(ordinal >= 0, "device ordinal %d is negative", ordinal);
  RETURN_IF_ERROR(ensure_init(__func__));
  RETURN_IF_ERROR(check_ordinal(__func__, ordinal));
  RETURN_IF_ERROR(make_current(__func__, ordinal));
  current_device = ordinal;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_get_device(int *ordinal) {
  begin_call();
  REQUIRE_ARGUMENT(ordinal, "ordinal is NULL");
  *ordinal = 0;
  RETURN_IF_ERROR(ensure_init(__func__));
  int device = current_device >= 0 ? current_device : 0;
  RETURN_IF_ERROR(check_ordinal(__func__, device));
  *ordinal = device;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_get_context_device(int *ordinal) {
  begin_call();
  REQUIRE_ARGUMENT(ordinal, "ordinal is NULL");
  *ordinal = 0;
  RETURN_IF_ERROR(ensure_init(__func__));
  CUcontext current = NULL;
  CUresult result = driver.cuCtxGetCurrent(&current);
  if (result)
    return FAIL_DRIVER(result, "cuCtxGetCurrent failed");
  if (!current) {
    int device = current_device >= 0 ? current_device : 0;
    RETURN_IF_ERROR(check_ordinal(__func__, device));
    *ordinal = device;
    return ATTNRT_SUCCESS;
  }
  CUdevice handle;
  if ((result = driver.cuCtxGetDevice(&handle)))
    return FAIL_DRIVER(result, "cuCtxGetDevice failed");
  // Ordinals and handles agree for every driver so far; ask rather than
  // assume.
  for (int i = 0; i < device_count; ++i) {
    CUdevice candidate;
    if (driver.cuDeviceGet(&candidate, i) == CUDA_SUCCESS &&
        candidate == handle) {
      *ordinal = i;
      return ATTNRT_SUCCESS;
    }
  }
  return fail(ATTNRT_DRIVER_ERROR, __func__,
              "the current context's device %d is not among the %d devices",
              (int)handle, device_count);
}

attnrt_status attnrt_synchronize(void) {
  begin_call();
  int device;
  RETURN_IF_ERROR(enter_current_device(__func__, &device));
  CUresult result = driver.cuCtxSynchronize();
  if (result)
    return FAIL_DRIVER(result, "cuCtxSynchronize on device %d failed", device);
  return ATTNRT_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Modules and kernels
//===----------------------------------------------------------------------===//

struct attnrt_kernel {
  struct attnrt_kernel *next; // in the module's list
  CUfunction function;
  int device;
  attnrt_kernel_info info;
  // The dynamic shared memory the kernel is opted in to beyond the default;
  // raised under `opt_in_lock`, read without it.
  atomic_uint opted_in_dynamic_shared_bytes;
  pthread_mutex_t opt_in_lock;
  char name[]; // for messages
};

struct attnrt_module {
  CUmodule handle;
  int device;
  pthread_mutex_t lock; // guards `kernels`
  struct attnrt_kernel *kernels;
};

// 0xBA55ED50 little-endian: the magic number of a fatbin.
static const unsigned char fatbin_magic[4] = {0x50, 0xED, 0x55, 0xBA};
static const unsigned char elf_magic[4] = {0x7F, 'E', 'L', 'F'};

static const char *image_kind(const void *image, size_t size) {
  if (size >= 4 && memcmp(image, elf_magic, 4) == 0)
    return "cubin";
  if (size >= 4 && memcmp(image, fatbin_magic, 4) == 0)
    return "fatbin";
  return "PTX";
}

// cuModuleLoadDataEx says CUDA_ERROR_INVALID_VALUE or CUDA_ERROR_NOT_FOUND
// for some malformed images: about the image too, since attnrt checked the
// rest.
static attnrt_status module_load_status(CUresult result) {
  attnrt_status status = status_from_result(result);
  if (status == ATTNRT_INVALID_ARGUMENT || status == ATTNRT_KERNEL_NOT_FOUND)
    return ATTNRT_INVALID_IMAGE;
  return status;
}

static attnrt_status load_module(const char *function, attnrt_module **module,
                                 const void *image, size_t size, int device) {
  const char *kind = image_kind(image, size);
  // The driver reads PTX up to its NUL; add one when `size` ends it.
  char *terminated = NULL;
  if (strcmp(kind, "PTX") == 0 && !memchr(image, '\0', size)) {
    terminated = malloc(size + 1);
    if (!terminated)
      return fail(ATTNRT_OUT_OF_MEMORY, function,
                  "cannot copy %zu bytes of PTX", size);
    memcpy(terminated, image, size);
    terminated[size] = '\0';
    image = terminated;
  }

  char log[JIT_LOG_CAPACITY] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)(sizeof log - 1)};
  CUmodule handle = NULL;
  CUresult result =
      driver.cuModuleLoadDataEx(&handle, image, 2, options, values);
  free(terminated);
  if (result) {
    fail_driver(module_load_status(result), result, function,
                "cuModuleLoadDataEx of a %zu-byte %s image on device %d "
                "failed",
                size, kind, device);
    log[sizeof log - 1] = '\0';
    size_t length = strlen(log);
    while (length > 0 && (log[length - 1] == '\n' || log[length - 1] == ' '))
      log[--length] = '\0';
    if (length > 0)
      append_error("\nJIT log:\n%s", log);
    return module_load_status(result);
  }

  attnrt_module *loaded = calloc(1, sizeof *loaded);
  if (!loaded || pthread_mutex_init(&loaded->lock, NULL) != 0) {
    free(loaded);
    driver.cuModuleUnload(handle);
    return fail(ATTNRT_OUT_OF_MEMORY, function,
                "cannot allocate the module's state");
  }
  loaded->handle = handle;
  loaded->device = device;
  *module = loaded;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_module_load(attnrt_module **module, const void *image,
                                 size_t size) {
  begin_call();
  REQUIRE_ARGUMENT(module, "module is NULL");
  *module = NULL;
  REQUIRE_ARGUMENT(image, "image is NULL");
  REQUIRE_ARGUMENT(size > 0, "image is empty (size 0)");
  int device;
  RETURN_IF_ERROR(enter_current_device(__func__, &device));
  return load_module(__func__, module, image, size, device);
}

// Reads the whole file into a new buffer.
static attnrt_status read_file(const char *function, const char *path,
                               char **contents, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return fail(ATTNRT_INVALID_ARGUMENT, function, "cannot open '%s': %s", path,
                strerror(errno));
  size_t capacity = 1 << 16, used = 0;
  char *buffer = malloc(capacity);
  while (buffer) {
    used += fread(buffer + used, 1, capacity - used, file);
    if (used < capacity)
      break;
    char *grown =
        capacity <= SIZE_MAX / 2 ? realloc(buffer, capacity * 2) : NULL;
    if (!grown) {
      free(buffer);
      buffer = NULL;
      break;
    }
    buffer = grown;
    capacity *= 2;
  }
  bool read_error = ferror(file);
  fclose(file);
  if (!buffer)
    return fail(ATTNRT_OUT_OF_MEMORY, function, "cannot hold the file '%s'",
                path);
  if (read_error) {
    free(buffer);
    return fail(ATTNRT_INVALID_ARGUMENT, function, "cannot read '%s'", path);
  }
  *contents = buffer;
  *size = used;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_module_load_file(attnrt_module **module,
                                      const char *path) {
  begin_call();
  REQUIRE_ARGUMENT(module, "module is NULL");
  *module = NULL;
  REQUIRE_ARGUMENT(path, "path is NULL");
  int device;
  RETURN_IF_ERROR(enter_current_device(__func__, &device));
  char *image = NULL;
  size_t size = 0;
  RETURN_IF_ERROR(read_file(__func__, path, &image, &size));
  attnrt_status status;
  if (size == 0)
    status = fail(ATTNRT_INVALID_ARGUMENT, __func__, "'%s' is empty", path);
  else
    status = load_module(__func__, module, image, size, device);
  free(image);
  return status;
}

attnrt_status attnrt_module_unload(attnrt_module *module) {
  begin_call();
  REQUIRE_ARGUMENT(module, "module is NULL");
  RETURN_IF_ERROR(ensure_init(__func__));
  // The handle is gone after this call whatever the driver says.
  attnrt_status status = make_current(__func__, module->device);
  if (status == ATTNRT_SUCCESS) {
    CUresult result = driver.cuModuleUnload(module->handle);
    if (result)
      status = FAIL_DRIVER(result, "cuModuleUnload failed");
  }
  for (struct attnrt_kernel *kernel = module->kernels; kernel;) {
    struct attnrt_kernel *next = kernel->next;
    pthread_mutex_destroy(&kernel->opt_in_lock);
    free(kernel);
    kernel = next;
  }
  pthread_mutex_destroy(&module->lock);
  free(module);
  return status;
}

// Looks up `name` in the driver and records what the launch checks need.
static attnrt_status create_kernel(const char *function, attnrt_module *module,
                                   const char *name,
                                   struct attnrt_kernel **created) {
  RETURN_IF_ERROR(make_current(function, module->device));
  CUfunction handle = NULL;
  CUresult result = driver.cuModuleGetFunction(&handle, module->handle, name);
  if (result == CUDA_ERROR_NOT_FOUND)
    return fail_driver(ATTNRT_KERNEL_NOT_FOUND, result, function,
                       "the module has no kernel named '%s'", name);
  if (result)
    return fail_driver(status_from_result(result), result, function,
                       "cuModuleGetFunction('%s') failed", name);

  attnrt_kernel_info info;
  const struct {
    CUfunction_attribute attribute;
    int *value;
  } attributes[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, &info.num_registers},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &info.static_shared_bytes},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &info.local_bytes},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info.max_threads_per_block},
  };
  for (size_t i = 0; i < sizeof attributes / sizeof attributes[0]; ++i) {
    result = driver.cuFuncGetAttribute(attributes[i].value,
                                       attributes[i].attribute, handle);
    if (result)
      return fail_driver(status_from_result(result), result, function,
                         "cuFuncGetAttribute(%d) of kernel '%s' failed",
                         attributes[i].attribute, name);
  }

  size_t name_size = strlen(name) + 1;
  struct attnrt_kernel *kernel = calloc(1, sizeof *kernel + name_size);
  if (!kernel || pthread_mutex_init(&kernel->opt_in_lock, NULL) != 0) {
    free(kernel);
    return fail(ATTNRT_OUT_OF_MEMORY, function,
                "cannot allocate the state of kernel '%s'", name);
  }
  kernel->function = handle;
  kernel->device = module->device;
  kernel->info = info;
  atomic_init(&kernel->opted_in_dynamic_shared_bytes, 0);
  memcpy(kernel->name, name, name_size);
  *created = kernel;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_module_get_kernel(attnrt_kernel **kernel,
                                       attnrt_module *module,
                                       const char *name) {
  begin_call();
  REQUIRE_ARGUMENT(kernel, "kernel is NULL");
  *kernel = NULL;
  REQUIRE_ARGUMENT(module, "module is NULL");
  REQUIRE_ARGUMENT(name && *name, "the kernel name is %s",
                   name ? "empty" : "NULL");
  RETURN_IF_ERROR(ensure_init(__func__));

  pthread_mutex_lock(&module->lock);
  struct attnrt_kernel *found = module->kernels;
  while (found && strcmp(found->name, name) != 0)
    found = found->next;
  attnrt_status status = ATTNRT_SUCCESS;
  if (!found) {
    status = create_kernel(__func__, module, name, &found);
    if (status == ATTNRT_SUCCESS) {
      found->next = module->kernels;
      module->kernels = found;
    }
  }
  pthread_mutex_unlock(&module->lock);
  if (status == ATTNRT_SUCCESS)
    *kernel = found;
  return status;
}

attnrt_status attnrt_kernel_get_info(attnrt_kernel_info *info,
                                     const attnrt_kernel *kernel) {
  begin_call();
  REQUIRE_ARGUMENT(info, "info is NULL");
  memset(info, 0, sizeof *info);
  REQUIRE_ARGUMENT(kernel, "kernel is NULL");
  RETURN_IF_ERROR(ensure_init(__func__));
  *info = kernel->info;
  return ATTNRT_SUCCESS;
}


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
  const attnrt_device_info *device = &devices[kernel->device].info;
  unsigned long long total =
      (unsigned long long)kernel->info.static_shared_bytes + dynamic_bytes;
  if (total <= (unsigned long long)device->max_shared_memory_per_block)
    return ATTNRT_SUCCESS;
  if (total > (unsigned long long)device->max_shared_memory_per_block_optin)
    return fail(ATTNRT_SHARED_MEMORY_TOO_LARGE, function,
                "kernel '%s' needs %llu bytes of shared memory per block "
                "(%d static + %u dynamic), but device %d (%s) allows at most "
                "%d bytes per block",
                kernel->name, total, kernel->info.static_shared_bytes,
                dynamic_bytes, kernel->device, device->name,
                device->max_shared_memory_per_block_optin);
  if (dynamic_bytes <= atomic_load(&kernel->opted_in_dynamic_shared_bytes))
    return ATTNRT_SUCCESS;

  attnrt_status status = ATTNRT_SUCCESS;
  pthread_mutex_lock(&kernel->opt_in_lock);
  // Only ever raised, so concurrent launches never lower each other's limit.
  if (dynamic_bytes > atomic_load(&kernel->opted_in_dynamic_shared_bytes)) {
    CUresult result = driver.cuFuncSetAttribute(
        kernel->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        (int)dynamic_bytes);
    if (result == CUDA_SUCCESS)
      atomic_store(&kernel->opted_in_dynamic_shared_bytes, dynamic_bytes);
    else
      status = fail_driver(
          result == CUDA_ERROR_INVALID_VALUE ? ATTNRT_SHARED_MEMORY_TOO_LARGE
                                             : status_from_result(result),
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

attnrt_status attnrt_kernel_resident_blocks(int *blocks,
                                            attnrt_kernel *kernel,
                                            int threads,
                                            size_t dynamic_shared_bytes) {
  begin_call();
  REQUIRE_ARGUMENT(blocks, "blocks is NULL");
  *blocks = 0;
  REQUIRE_ARGUMENT(kernel, "kernel is NULL");
  REQUIRE_ARGUMENT(threads > 0, "threads is %d; it must be at least 1",
                   threads);
  RETURN_IF_ERROR(ensure_init(__func__));
  if (!driver.cuOccupancyMaxActiveBlocksPerMultiprocessor)
    return ATTNRT_SUCCESS; // an older driver: the caller's default
  RETURN_IF_ERROR(make_current(__func__, kernel->device));
  // Past the default 48 KiB the calculator answers only for what the
  // kernel is opted in to: the opt-in a launch of this size makes.
  RETURN_IF_ERROR(
      prepare_shared_memory(kernel, (unsigned)dynamic_shared_bytes));
  int resident = 0;
  CUresult result = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
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
  begin_call();
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
  RETURN_IF_ERROR(ensure_init(caller));

  // The driver would say only "too many resources requested"; say which.
  if (threads > (unsigned long long)kernel->info.max_threads_per_block)
    return fail(ATTNRT_LAUNCH_FAILED, caller,
                "kernel '%s' can run at most %d threads per block (it uses "
                "%d registers per thread), not %llu",
                kernel->name, kernel->info.max_threads_per_block,
                kernel->info.num_registers, threads);
  RETURN_IF_ERROR(make_current(caller, kernel->device));
  RETURN_IF_ERROR(prepare_shared_memory(kernel, dynamic_shared_bytes));

  CUresult result;
  if (programmatic && driver.cuLaunchKernelEx) {
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
    result = driver.cuLaunchKernelEx(&config, kernel->function, args, NULL);
  } else {
    // Without cuLaunchKernelEx (drivers before CUDA 12) an ordinary
    // launch, after which the kernel's wait passes at once.
    result = driver.cuLaunchKernel(
        kernel->function, grid_x, grid_y, grid_z, block_x, block_y, block_z,
        dynamic_shared_bytes, (CUstream)(void *)stream, args, NULL);
  }
  if (result)
    return fail_driver(status_from_result(result), result, caller,
                       "%s of '%s' with grid (%u, %u, %u), block (%u, %u, %u) "
                       "and %u bytes of dynamic shared memory failed",
                       programmatic && driver.cuLaunchKernelEx
                           ? "cuLaunchKernelEx (programmatic)"
                           : "cuLaunchKernel",
                       kernel->name, grid_x, grid_y, grid_z, block_x, block_y,
                       block_z, dynamic_shared_bytes);
  return ATTNRT_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

attnrt_status attnrt_malloc(attnrt_deviceptr *ptr, size_t bytes) {
  begin_call();
  REQUIRE_ARGUMENT(ptr, "ptr is NULL");
  *ptr = 0;
  REQUIRE_ARGUMENT(bytes > 0, "cannot allocate 0 bytes");
  int device;
  RETURN_IF_ERROR(enter_current_device(__func__, &device));
  CUdeviceptr allocated = 0;
  CUresult result = driver.cuMemAlloc(&allocated, bytes);
  if (result)
    return FAIL_DRIVER(result, "cuMemAlloc_v2 of %zu bytes on device %d failed",
                       bytes, device);
  *ptr = allocated;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_free(attnrt_deviceptr ptr) {
  begin_call();
  RETURN_IF_ERROR(ensure_init(__func__));
  if (ptr == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuMemFree(ptr);
  if (result)
    return FAIL_DRIVER(result, "cuMemFree_v2(0x%llx) failed", ptr);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_memcpy_htod(attnrt_deviceptr dst, const void *src,
                                 size_t bytes) {
  begin_call();
  REQUIRE_ARGUMENT(dst, "dst is a null device pointer");
  REQUIRE_ARGUMENT(src, "src is NULL");
  RETURN_IF_ERROR(ensure_init(__func__));
  if (bytes == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuMemcpyHtoD(dst, src, bytes);
  if (result)
    return FAIL_DRIVER(result, "cuMemcpyHtoD_v2 of %zu bytes to 0x%llx failed",
                       bytes, dst);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_memcpy_dtoh(void *dst, attnrt_deviceptr src,
                                 size_t bytes) {
  begin_call();
  REQUIRE_ARGUMENT(dst, "dst is NULL");
  REQUIRE_ARGUMENT(src, "src is a null device pointer");
  RETURN_IF_ERROR(ensure_init(__func__));
  if (bytes == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuMemcpyDtoH(dst, src, bytes);
  if (result)
    return FAIL_DRIVER(
        result, "cuMemcpyDtoH_v2 of %zu bytes from 0x%llx failed", bytes, src);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_memcpy_dtod(attnrt_deviceptr dst, attnrt_deviceptr src,
                                 size_t bytes) {
  begin_call();
  REQUIRE_ARGUMENT(dst, "dst is a null device pointer");
  REQUIRE_ARGUMENT(src, "src is a null device pointer");
  RETURN_IF_ERROR(ensure_init(__func__));
  if (bytes == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuMemcpyDtoD(dst, src, bytes);
  if (result)
    return FAIL_DRIVER(result,
                       "cuMemcpyDtoD_v2 of %zu bytes from 0x%llx to 0x%llx "
                       "failed",
                       bytes, src, dst);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_encode_tensor_map(attnrt_tensor_map *map,
                                       attnrt_deviceptr data, int rank,
                                       int element_bytes,
                                       const long long *sizes,
                                       const long long *strides,
                                       const unsigned *box, int swizzle_128) {
  begin_call();
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
  RETURN_IF_ERROR(ensure_init(__func__));
  if (!driver.cuTensorMapEncodeTiled)
    return fail(ATTNRT_DRIVER_TOO_OLD, __func__,
                "the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 or "
                "newer has tensor maps)");
  static const int types[9] = {0, CU_TENSOR_MAP_DATA_TYPE_UINT8,
                               CU_TENSOR_MAP_DATA_TYPE_UINT16, 0,
                               CU_TENSOR_MAP_DATA_TYPE_UINT32, 0, 0, 0,
                               CU_TENSOR_MAP_DATA_TYPE_UINT64};
  CUresult result = driver.cuTensorMapEncodeTiled(
      map->words, types[element_bytes], (unsigned)rank,
      (void *)(uintptr_t)data, dims, byte_strides, boxes, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle_128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result)
    return FAIL_DRIVER(result,
                       "cuTensorMapEncodeTiled of a rank-%d tensor at 0x%llx "
                       "failed",
                       rank, data);
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_encode_attention_tensor_map(
    attnrt_tensor_map *map, attnrt_deviceptr data, int element_bytes,
    const long long *sizes, const long long *strides, int q_view, int block_q,
    int group) {
  if (!q_view) {
    const unsigned box[4] = {1, 1, 64, 64};
    return attnrt_encode_tensor_map(map, data, 4, element_bytes, sizes, strides,
                                    box, 1);
  }
  begin_call();
  REQUIRE_ARGUMENT(sizes && strides, "sizes and strides must not be NULL");
  REQUIRE_ARGUMENT(attnrt_internal_q_view_box(block_q, group) &&
                       sizes[1] % group == 0,
                   "block_q %d and group %d make no box of %lld heads", block_q,
                   group, sizes[1]);
  // [B, H / group, S, group, D]: a box of block_q rows is block_q / heads
  // queries of `heads` heads.
  const long long view_sizes[5] = {sizes[0], sizes[1] / group, sizes[2], group,
                                   sizes[3]};
  const long long view_strides[5] = {strides[0], strides[1] * group, strides[2],
                                     strides[1], strides[3]};
  unsigned heads = (unsigned)(group < block_q ? group : block_q);
  const unsigned box[5] = {1, 1, (unsigned)block_q / heads, heads, 64};
  return attnrt_encode_tensor_map(map, data, 5, element_bytes, view_sizes,
                                  view_strides, box, 1);
}

attnrt_status attnrt_memset_d8(attnrt_deviceptr dst, unsigned char value,
                               size_t bytes) {
  begin_call();
  REQUIRE_ARGUMENT(dst, "dst is a null device pointer");
  RETURN_IF_ERROR(ensure_init(__func__));
  if (bytes == 0)
    return ATTNRT_SUCCESS;
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuMemsetD8(dst, value, bytes);
  if (result)
    return FAIL_DRIVER(result, "cuMemsetD8_v2 of %zu bytes at 0x%llx failed",
                       bytes, dst);
  return ATTNRT_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

static CUstream to_cu_stream(attnrt_stream *stream) {
  return (CUstream)(void *)stream;
}

static CUevent to_cu_event(attnrt_event *event) {
  return (CUevent)(void *)event;
}

attnrt_status attnrt_stream_create(attnrt_stream **stream) {
  begin_call();
  REQUIRE_ARGUMENT(stream, "stream is NULL");
  *stream = NULL;
  int device;
  RETURN_IF_ERROR(enter_current_device(__func__, &device));
  CUstream created = NULL;
  // Not CU_STREAM_NON_BLOCKING: the blocking copies must wait for its work.
  CUresult result = driver.cuStreamCreate(&created, CU_STREAM_DEFAULT);
  if (result)
    return FAIL_DRIVER(result, "cuStreamCreate on device %d failed", device);
  *stream = (attnrt_stream *)(void *)created;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_stream_destroy(attnrt_stream *stream) {
  begin_call();
  REQUIRE_ARGUMENT(stream, "stream is NULL (the default stream cannot be "
                           "destroyed)");
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuStreamDestroy(to_cu_stream(stream));
  if (result)
    return FAIL_DRIVER(result, "cuStreamDestroy_v2 failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_stream_synchronize(attnrt_stream *stream) {
  begin_call();
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuStreamSynchronize(to_cu_stream(stream));
  if (result)
    return FAIL_DRIVER(result, "cuStreamSynchronize failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_create(attnrt_event **event) {
  begin_call();
  REQUIRE_ARGUMENT(event, "event is NULL");
  *event = NULL;
  int device;
  RETURN_IF_ERROR(enter_current_device(__func__, &device));
  CUevent created = NULL;
  CUresult result = driver.cuEventCreate(&created, CU_EVENT_DEFAULT);
  if (result)
    return FAIL_DRIVER(result, "cuEventCreate on device %d failed", device);
  *event = (attnrt_event *)(void *)created;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_destroy(attnrt_event *event) {
  begin_call();
  REQUIRE_ARGUMENT(event, "event is NULL");
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuEventDestroy(to_cu_event(event));
  if (result)
    return FAIL_DRIVER(result, "cuEventDestroy_v2 failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_record(attnrt_event *event, attnrt_stream *stream) {
  begin_call();
  REQUIRE_ARGUMENT(event, "event is NULL");
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result =
      driver.cuEventRecord(to_cu_event(event), to_cu_stream(stream));
  if (result)
    return FAIL_DRIVER(result, "cuEventRecord failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_synchronize(attnrt_event *event) {
  begin_call();
  REQUIRE_ARGUMENT(event, "event is NULL");
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  CUresult result = driver.cuEventSynchronize(to_cu_event(event));
  if (result)
    return FAIL_DRIVER(result, "cuEventSynchronize failed");
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_event_elapsed_ms(float *milliseconds, attnrt_event *start,
                                      attnrt_event *end) {
  begin_call();
  REQUIRE_ARGUMENT(milliseconds, "milliseconds is NULL");
  *milliseconds = 0.0f;
  REQUIRE_ARGUMENT(start, "start is NULL");
  REQUIRE_ARGUMENT(end, "end is NULL");
  RETURN_IF_ERROR(enter_current_device(__func__, NULL));
  // Without the wait the driver answers CUDA_ERROR_NOT_READY.
  CUresult result = driver.cuEventSynchronize(to_cu_event(end));
  if (result)
    return FAIL_DRIVER(result, "cuEventSynchronize of the end event failed");
  float elapsed = 0.0f;
  result =
      driver.cuEventElapsedTime(&elapsed, to_cu_event(start), to_cu_event(end));
  if (result)
    return FAIL_DRIVER(result, "cuEventElapsedTime failed (were both events "
                               "recorded?)");
  *milliseconds = elapsed;
  return ATTNRT_SUCCESS;
}

long long attnrt_decode_split_count(int multiprocessor_count,
                                    long long blocks_per_split,
                                    long long kv_len,
                                    long long rows_per_block) {
  return attnrt_decode_split_count_resident(multiprocessor_count, 4,
                                            blocks_per_split, kv_len,
                                            rows_per_block);
}

long long attnrt_decode_split_count_resident(int multiprocessor_count,
                                             int resident_blocks,
                                             long long blocks_per_split,
                                             long long kv_len,
                                             long long rows_per_block) {
  const long long kMinKeysPerSplit = 128, kKeysPerRow = 16,
                  kMinKeysToCover = 256;
  // Without the driver's count, the SIMT split kernel's 4 blocks an SM
  // (116 registers a thread). The tensor-core one holds 1-2 (its 4
  // stages of 64-key tiles): one wave (8 splits at spec-decode B8) ran 8%
  // faster than two (16: bench/split_sweep.py, 2026-11-24), and GQA-4 B1
  // decode on 16 splits (one block an SM) 5-15% faster than on 33-49
  // (bench/RESULTS.md, 2026-11-26).
  long long kBlocksPerSM = resident_blocks > 0 ? resident_blocks : 4;
  long long sms = multiprocessor_count > 0 ? multiprocessor_count : 1;
  long long blocks = blocks_per_split > 0 ? blocks_per_split : 1;
  long long keys = kv_len > 0 ? kv_len : 1;
  long long least = kMinKeysPerSplit;
  if (rows_per_block > least / kKeysPerRow)
    least = rows_per_block < (1LL << 40) ? kKeysPerRow * rows_per_block
                                         : (1LL << 44);
  // Whole waves: on an H100, 9 splits x 64 blocks of the SIMT kernel (576
  // > 528 slots) ran at 1.68 TB/s where 8 splits (512 blocks) ran at 2.50.
  long long fill = kBlocksPerSM * sms / blocks;
  long long most = (keys + least - 1) / least;
  // But a block for every SM where 256-key splits allow it: MQA at B1
  // Sk16k (one block a split) ran in 29.9 us on 16 splits of 1024 keys,
  // 21.3 us on 64 of 256 and 26.7 us on 128 of 128 (bench/split_sweep.py,
  // 2026-11-24: the combine's cost grows with the splits).
  long long cover = (sms + blocks - 1) / blocks;
  long long coverable = (keys + kMinKeysToCover - 1) / kMinKeysToCover;
  if (cover > coverable)
    cover = coverable;
  if (most < cover)
    most = cover;
  long long splits = fill < most ? fill : most;
  return splits > 0 ? splits : 1;
}

long long attnrt_decode_splits(int multiprocessor_count,
                               long long blocks_per_split, long long kv_len) {
  return attnrt_decode_split_count(multiprocessor_count, blocks_per_split,
                                   kv_len, 0);
}
