//===- driver.c - Errors, the CUDA driver, initialization -----------------===//
//
// The driver is opened with dlopen at the first call, so libattnrt needs
// neither CUDA headers nor libcuda to build, link or start; without a driver
// every call fails with ATTNRT_NO_DRIVER and a message.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct driver_api attnrt_internal_driver;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static _Thread_local char last_error[MESSAGE_CAPACITY];
static _Thread_local CUresult last_driver_result;

// Every entry point starts with this: a message describes the latest call.
void attnrt_internal_begin_call(void) {
  last_error[0] = '\0';
  last_driver_result = CUDA_SUCCESS;
}

static void append_error_v(const char *format, va_list args) {
  size_t used = strlen(last_error);
  if (used + 1 < sizeof last_error)
    vsnprintf(last_error + used, sizeof last_error - used, format, args);
}

void attnrt_internal_append_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  append_error_v(format, args);
  va_end(args);
}

// Sets the message to "function: <format>".
static void set_message_v(const char *function, const char *format,
                          va_list args) {
  snprintf(last_error, sizeof last_error, "%s: ", function);
  append_error_v(format, args);
}

// Sets the message to "function: <format>" and returns `status`.
attnrt_status attnrt_internal_fail(attnrt_status status, const char *function,
                                   const char *format, ...) {
  va_list args;
  va_start(args, format);
  set_message_v(function, format, args);
  va_end(args);
  return status;
}

void attnrt_internal_clear_error(void) { attnrt_internal_begin_call(); }

void attnrt_internal_set_error(const char *context, const char *format, ...) {
  attnrt_internal_begin_call();
  va_list args;
  va_start(args, format);
  set_message_v(context, format, args);
  va_end(args);
}

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
attnrt_status attnrt_internal_status_from_result(CUresult result) {
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
attnrt_status attnrt_internal_fail_driver(attnrt_status status, CUresult result,
                                          const char *function,
                                          const char *format, ...) {
  va_list args;
  va_start(args, format);
  set_message_v(function, format, args);
  va_end(args);

  const char *name = NULL;
  const char *description = NULL;
  if (!attnrt_internal_driver.cuGetErrorName ||
      attnrt_internal_driver.cuGetErrorName(result, &name) != 0)
    name = NULL;
  if (!attnrt_internal_driver.cuGetErrorString ||
      attnrt_internal_driver.cuGetErrorString(result, &description) != 0)
    description = NULL;
  if (name)
    attnrt_internal_append_error(": %s (%d)", name, result);
  else
    attnrt_internal_append_error(": CUresult %d",
                                 result); // one the driver cannot name
  if (description)
    attnrt_internal_append_error(": %s", description);
  last_driver_result = result;
  return status;
}

//===----------------------------------------------------------------------===//
// Initialization, once per process
//===----------------------------------------------------------------------===//

#define DEFAULT_DRIVER_LIBRARY "libcuda.so.1"
#define DRIVER_LIBRARY_VARIABLE "ATTNRT_CUDA_DRIVER"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static attnrt_status init_status;
static CUresult init_driver_result;
static char init_message[MESSAGE_CAPACITY];
int attnrt_internal_driver_version;
int attnrt_internal_device_count;
struct device *attnrt_internal_devices;
pthread_mutex_t attnrt_internal_device_lock = PTHREAD_MUTEX_INITIALIZER;

// The calling thread's current device; -1 until attnrt_set_device.
_Thread_local int attnrt_internal_current_device = -1;

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
      return attnrt_internal_fail(
          ATTNRT_NO_DRIVER, function,
          "cannot load the CUDA driver '%s' named by " DRIVER_LIBRARY_VARIABLE
          ": %s",
          path, reason ? reason : "unknown reason");
    return attnrt_internal_fail(
        ATTNRT_NO_DRIVER, function,
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
      memset(&attnrt_internal_driver, 0, sizeof attnrt_internal_driver);
      dlclose(library);
      return attnrt_internal_fail(
          ATTNRT_DRIVER_TOO_OLD, function,
          "the CUDA driver '%s' has no function %s%s%s: it is older "
          "than attnrt supports, or not the CUDA driver",
          path, symbol->name, symbol->fallback ? " nor " : "",
          symbol->fallback ? symbol->fallback : "");
    }
    memcpy((char *)&attnrt_internal_driver + symbol->offset, &address,
           sizeof address);
  }
  // The library stays loaded for the life of the process.

  // Asked before cuInit, which fails on machines without devices.
  const char *step = "cuDriverGetVersion";
  CUresult result = attnrt_internal_driver.cuDriverGetVersion(
      &attnrt_internal_driver_version);
  if (result == CUDA_SUCCESS) {
    step = "cuInit(0)";
    result = attnrt_internal_driver.cuInit(0);
  }
  if (result == CUDA_ERROR_NO_DEVICE)
    return ATTNRT_SUCCESS; // a driver without devices: device_count is 0
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return attnrt_internal_fail_driver(
        ATTNRT_NO_DRIVER, result, function,
        "'%s' is the CUDA toolkit's stub, not the driver; run "
        "where the NVIDIA driver is installed",
        path);
  if (result)
    return attnrt_internal_fail_driver(
        attnrt_internal_status_from_result(result), result, function,
        "%s of '%s' failed", step, path);
  int count_found = 0;
  if ((result = attnrt_internal_driver.cuDeviceGetCount(&count_found)))
    return attnrt_internal_fail_driver(
        attnrt_internal_status_from_result(result), result, function,
        "cuDeviceGetCount failed");
  if (count_found > 0) {
    attnrt_internal_devices =
        calloc((size_t)count_found, sizeof *attnrt_internal_devices);
    if (!attnrt_internal_devices)
      return attnrt_internal_fail(ATTNRT_OUT_OF_MEMORY, function,
                                  "cannot allocate the state of %d devices",
                                  count_found);
    attnrt_internal_device_count = count_found;
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
attnrt_status attnrt_internal_ensure_init(const char *function) {
  if (pthread_once(&init_once, initialize) != 0)
    return attnrt_internal_fail(ATTNRT_DRIVER_ERROR, function,
                                "pthread_once failed");
  if (init_status == ATTNRT_SUCCESS)
    return ATTNRT_SUCCESS;
  attnrt_internal_fail(init_status, function, "%s", init_message);
  last_driver_result = init_driver_result;
  return init_status;
}
