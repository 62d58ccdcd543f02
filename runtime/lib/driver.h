//===- driver.h - What libattnrt's driver files share -----------*- C -*-===//
//
// libattnrt's side of the CUDA driver, one job a file:
//   driver.c      errors, the driver's functions (dlopen, dlsym) and the
//                 one initialization
//   device.c      devices and their primary contexts
//   module.c      modules and kernels
//   launch.c      kernel launches and their limits
//   memory.c      device memory and copies
//   tensor_map.c  TMA tensor maps
//   stream.c      streams and events
// This header holds what more than one of them uses.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNRT_DRIVER_H
#define ATTNRT_DRIVER_H

#include "attnrt.h"
#include "cuda_driver_api.h"
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

// Room for a message and a JIT log.
#define MESSAGE_CAPACITY 8192
#define JIT_LOG_CAPACITY 4096

// Every entry point starts with this: a message describes the latest call.
void attnrt_internal_begin_call(void);
// Appends to the message.
void attnrt_internal_append_error(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
// Sets the message to "function: <format>" and returns `status`.
attnrt_status attnrt_internal_fail(attnrt_status status, const char *function,
                                   const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#define REQUIRE_ARGUMENT(condition, ...)                                       \
  do {                                                                         \
    if (!(condition))                                                          \
      return attnrt_internal_fail(ATTNRT_INVALID_ARGUMENT, __func__,           \
                                  __VA_ARGS__);                                \
  } while (0)

/* REQUIRE_ARGUMENT on behalf of the public function `caller`. */
#define REQUIRE_ARGUMENT_OF(caller, condition, ...)                            \
  do {                                                                         \
    if (!(condition))                                                          \
      return attnrt_internal_fail(ATTNRT_INVALID_ARGUMENT, caller,             \
                                  __VA_ARGS__);                                \
  } while (0)

#define RETURN_IF_ERROR(expression)                                            \
  do {                                                                         \
    attnrt_status status_ = (expression);                                      \
    if (status_ != ATTNRT_SUCCESS)                                             \
      return status_;                                                          \
  } while (0)

// clang-format off
#define DECLARE_FIELD(name, symbol, fallback, required, params)                \
  CUresult (*name) params;
struct driver_api {
  ATTNRT_CUDA_DRIVER_FUNCTIONS(DECLARE_FIELD)
};
extern struct driver_api attnrt_internal_driver;
#undef DECLARE_FIELD
// clang-format on

// Maps a CUresult to the status a caller can act on; call sites refine it
// where they know more (a module load, a kernel lookup).
attnrt_status attnrt_internal_status_from_result(CUresult result);
// Sets the message to "function: <format>: NAME (code): description" with
// the driver's words for `result`, and returns `status`.
attnrt_status attnrt_internal_fail_driver(attnrt_status status, CUresult result,
                                          const char *function,
                                          const char *format, ...)
    __attribute__((format(printf, 4, 5)));
// For the common case: the status follows from the result.
#define FAIL_DRIVER(result, ...)                                               \
  attnrt_internal_fail_driver(attnrt_internal_status_from_result(result),      \
                              (result), __func__, __VA_ARGS__)

// What attnrt knows about a device. The info is filled once, the context
// retained once; both under `device_lock`, read without it after.
struct device {
  atomic_bool has_info;
  CUdevice handle;
  attnrt_device_info info;
  _Atomic(CUcontext) context; // the primary context, retained for good
};

// The driver's version, the devices and their state (driver.c), filled at
// the one initialization.
extern int attnrt_internal_driver_version;
extern int attnrt_internal_device_count;
extern struct device *attnrt_internal_devices;
extern pthread_mutex_t attnrt_internal_device_lock;
// The calling thread's current device; -1 until attnrt_set_device.
extern _Thread_local int attnrt_internal_current_device;

// Loads the driver on the first call; later calls repeat its outcome, with
// the message prefixed by the function called.
attnrt_status attnrt_internal_ensure_init(const char *function);
// Makes the device's primary context current on this thread (device.c).
attnrt_status attnrt_internal_make_current(const char *function, int ordinal);
// Initializes, then makes the thread's current device (0 unless set)
// current; `ordinal` (if not NULL) gets it.
attnrt_status attnrt_internal_enter_current_device(const char *function,
                                                   int *ordinal);

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

#endif // ATTNRT_DRIVER_H
