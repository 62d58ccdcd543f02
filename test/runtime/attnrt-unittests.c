//===- attnrt-unittests.c - Unit tests of libattnrt without a GPU ---------===//
//
// attnrt-unittests SCENARIO runs the checks of one driver scenario; attnrt
// loads its driver once per process, so each scenario is a process of its
// own (see the lit tests beside this file):
//   no-driver       ATTNRT_CUDA_DRIVER names a library that does not exist
//   fake-driver     ATTNRT_CUDA_DRIVER names fake_cuda_driver
//   no-device       the fake driver, whose cuInit finds no device
//   init-fails      the fake driver, whose cuInit fails
//   stub-driver     the fake driver, answering like the toolkit's stub
//   missing-symbol  ATTNRT_CUDA_DRIVER names a fake driver without cuInit
//   system-driver   whatever libcuda.so.1 the machine has, if any
//   launch-contracts  hand-written launch tables (attnrt_attention.h), which
//                   libattnrt checks before it needs a driver
//   overlap, overlap-no-driver  written operands overlapping others
//   split-limits, split-limits-no-driver  fixed split counts past the limits
// Prints a line per check and "N passed, M failed"; exits 1 if any failed.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "attnrt.h"
#include "attnrt_attention.h"
#include "fake_cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

static int passed;
static int failed;

// Prints one line: "PASS: what" or "FAIL: what", newlines shown as \n.
static void check(bool ok, const char *format, ...) {
  char line[2048];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof line, format, args);
  va_end(args);
  printf("%s: ", ok ? "PASS" : "FAIL");
  for (const char *c = line; *c; ++c) {
    if (*c == '\n')
      fputs("\\n", stdout);
    else
      putchar(*c);
  }
  putchar('\n');
  if (ok)
    ++passed;
  else
    ++failed;
}

static const char *status_name(attnrt_status status) {
  switch (status) {
#define NAME(s)                                                                \
  case s:                                                                      \
    return #s;
    NAME(ATTNRT_SUCCESS)
    NAME(ATTNRT_NO_DRIVER)
    NAME(ATTNRT_DRIVER_TOO_OLD)
    NAME(ATTNRT_NO_DEVICE)
    NAME(ATTNRT_INVALID_ARGUMENT)
    NAME(ATTNRT_INVALID_IMAGE)
    NAME(ATTNRT_KERNEL_NOT_FOUND)
    NAME(ATTNRT_OUT_OF_MEMORY)
    NAME(ATTNRT_SHARED_MEMORY_TOO_LARGE)
    NAME(ATTNRT_LAUNCH_FAILED)
    NAME(ATTNRT_NOT_INITIALIZED)
    NAME(ATTNRT_DRIVER_ERROR)
#undef NAME
  }
  return "(not a status)";
}

// A call must return `expected`, leave a message if it failed and none if it
// succeeded.
static bool expect_status(attnrt_status status, attnrt_status expected,
                          const char *call) {
  const char *message = attnrt_last_error();
  bool has_message = message && message[0] != '\0';
  bool ok = status == expected &&
            (expected == ATTNRT_SUCCESS ? !has_message : has_message);
  if (ok)
    check(true, "%s -> %s", call, status_name(expected));
  else
    check(false, "%s -> %s, expected %s; message: \"%s\"", call,
          status_name(status), status_name(expected),
          message ? message : "(NULL)");
  return ok;
}

#define EXPECT(call, expected) expect_status((call), (expected), #call)

// The last message must contain `text`.
static void expect_message(const char *text) {
  const char *message = attnrt_last_error();
  if (strstr(message, text))
    check(true, "message contains \"%s\"", text);
  else
    check(false, "message contains \"%s\"; it is \"%s\"", text, message);
}

static void expect_driver_result(int expected) {
  int result = attnrt_last_driver_result();
  check(result == expected, "attnrt_last_driver_result() == %d (is %d)",
        expected, result);
}

// Handles that are never dereferenced: with no driver every call fails before
// looking at them.
static max_align_t dummy_storage[64];
#define DUMMY(type) ((type *)(void *)dummy_storage)

static const char tiny_ptx[] = ".version 8.0\n"
                               ".target sm_80\n"
                               ".address_size 64\n"
                               ".visible .entry fake_fill_u32(\n"
                               "  .param .u64 out, .param .u32 first,\n"
                               "  .param .u32 count)\n"
                               "{\n  ret;\n}\n"
                               ".visible .entry fake_noop()\n"
                               "{\n  ret;\n}\n";

//===----------------------------------------------------------------------===//
// Scenario: no driver
//===----------------------------------------------------------------------===//

static void check_status_strings(void) {
  const char *unknown = attnrt_status_string((attnrt_status)-1);
  check(unknown && strcmp(unknown, "unknown attnrt status") == 0,
        "attnrt_status_string(-1) is \"unknown attnrt status\"");
  check(strcmp(attnrt_status_string((attnrt_status)(ATTNRT_DRIVER_ERROR + 1)),
               unknown) == 0,
        "attnrt_status_string(past the last status) is the unknown string");
  check(ATTNRT_SUCCESS == 0 && ATTNRT_NO_DRIVER == 1 &&
            ATTNRT_DRIVER_ERROR == 11,
        "status values are the documented ABI (SUCCESS 0 .. DRIVER_ERROR 11)");
  for (int s = ATTNRT_SUCCESS; s <= ATTNRT_DRIVER_ERROR; ++s) {
    const char *string = attnrt_status_string((attnrt_status)s);
    bool distinct = true;
    for (int other = ATTNRT_SUCCESS; other < s; ++other)
      distinct &=
          strcmp(string, attnrt_status_string((attnrt_status)other)) != 0;
    check(string && string[0] && strcmp(string, unknown) != 0 && distinct,
          "attnrt_status_string(%s) is \"%s\", its own",
          status_name((attnrt_status)s), string ? string : "(NULL)");
  }
}

struct thread_result {
  attnrt_status status;
  bool had_message;
  bool started_clean;
};

static void *count_devices_thread(void *argument) {
  struct thread_result *result = argument;
  result->started_clean = attnrt_last_error()[0] == '\0';
  int count = -1;
  result->status = attnrt_get_device_count(&count);
  result->had_message = attnrt_last_error()[0] != '\0';
  return NULL;
}

// Several threads race to the first call: one loads, all see the outcome.
static void check_concurrent_first_calls(attnrt_status expected) {
  enum { THREADS = 8 };
  pthread_t threads[THREADS];
  struct thread_result results[THREADS];
  for (int i = 0; i < THREADS; ++i)
    pthread_create(&threads[i], NULL, count_devices_thread, &results[i]);
  for (int i = 0; i < THREADS; ++i)
    pthread_join(threads[i], NULL);
  bool all_ok = true;
  for (int i = 0; i < THREADS; ++i)
    all_ok &= results[i].status == expected && results[i].started_clean &&
              results[i].had_message == (expected != ATTNRT_SUCCESS);
  check(all_ok, "%d threads racing to the first call all get %s", THREADS,
        status_name(expected));
}

static void *failing_call_thread(void *argument) {
  (void)argument;
  bool clean = attnrt_last_error()[0] == '\0';
  attnrt_status status = attnrt_malloc(NULL, 16);
  bool ok = clean && status == ATTNRT_INVALID_ARGUMENT &&
            strstr(attnrt_last_error(), "attnrt_malloc") != NULL;
  return ok ? argument : NULL;
}

// Messages are per thread: another thread's failure leaves ours alone.
static void check_thread_local_messages(void) {
  attnrt_status status = attnrt_get_device_count(NULL);
  (void)status;
  char before[512];
  snprintf(before, sizeof before, "%s", attnrt_last_error());
  pthread_t thread;
  void *outcome = NULL;
  static int marker;
  pthread_create(&thread, NULL, failing_call_thread, &marker);
  pthread_join(thread, &outcome);
  check(outcome == &marker,
        "another thread starts with no message and gets its own");
  check(strcmp(before, attnrt_last_error()) == 0,
        "this thread's message is unchanged by the other thread's failure");
}

static void check_decode_splits(void) {
  // H100-like: 132 SMs; B1 x 8 K/V heads wants 66 splits for 528 blocks.
  check(attnrt_decode_splits(132, 8, 131072) == 66,
        "decode splits fill 4 blocks per SM");
  check(attnrt_decode_splits(132, 8, 1000) == 8,
        "decode splits keep >= 128 keys each");
  check(attnrt_decode_splits(132, 64, 16384) == 8,
        "decode splits stay within one wave (8 x 64 <= 528 blocks)");
  check(attnrt_decode_splits(132, 512, 4096) == 1,
        "a grid of one wave needs no split");
  check(attnrt_decode_splits(132, 100000, 4096) == 1,
        "decode splits are at least 1");
  // Q tiles of many rows keep 16 keys a row per split: MQA's 64 rows at
  // B16 Sk32k take 32 splits of 1024 keys, not 33 of 993.
  check(attnrt_decode_split_count(132, 16, 32768, 64) == 32 &&
            attnrt_decode_splits(132, 16, 32768) == 33,
        "64-row blocks keep 1024 keys a split");
  check(attnrt_decode_split_count(132, 8, 131072, 4) ==
            attnrt_decode_splits(132, 8, 131072),
        "up to 8 rows a block keep 128 keys a split");
  // ... unless that leaves SMs idle: at B8 Sk16k 17 splits (a block per
  // SM), at B1 (one block a split) as many as 256-key splits allow: 64.
  check(attnrt_decode_split_count(132, 8, 16384, 64) == 17,
        "a small grid gets a block per SM");
  check(attnrt_decode_split_count(132, 1, 16384, 64) == 64,
        "a one-block split gets a block per SM down to 256 keys a split");
  check(attnrt_decode_split_count(132, 1, 1000, 1LL << 62) == 4,
        "huge rows_per_block does not overflow");
  // The kernel's own residency: the tensor-core split kernel holds 2
  // blocks an SM, so spec-decode B8 (32 blocks a split of 32 rows) takes
  // one wave of 8 splits, not 16; 0 or less means 4.
  check(attnrt_decode_split_count_resident(132, 2, 32, 16384, 32) == 8 &&
            attnrt_decode_split_count(132, 32, 16384, 32) == 16,
        "two resident blocks an SM halve the wave");
  check(attnrt_decode_split_count_resident(132, 0, 8, 131072, 4) ==
                attnrt_decode_split_count(132, 8, 131072, 4) &&
            attnrt_decode_split_count_resident(132, -1, 8, 131072, 4) == 66,
        "no residency known: four blocks an SM");
  check(attnrt_decode_splits(0, 0, 0) == 1 &&
            attnrt_decode_splits(-3, -1, -5) == 1,
        "nonsense sizes give 1 split, not 0 or a crash");
}

static void run_no_driver(void) {
  const char *path = getenv("ATTNRT_CUDA_DRIVER");
  check(path && *path, "ATTNRT_CUDA_DRIVER names a library");
  if (!path)
    path = "";

  check_status_strings();
  check_decode_splits();
  check(attnrt_last_error() && attnrt_last_error()[0] == '\0',
        "attnrt_last_error() is \"\" before any call");
  check_concurrent_first_calls(ATTNRT_NO_DRIVER);

  EXPECT(attnrt_init(), ATTNRT_NO_DRIVER);
  expect_message(path);
  expect_message("ATTNRT_CUDA_DRIVER");
  expect_message("attnrt_init: ");
  expect_driver_result(0);
  EXPECT(attnrt_init(), ATTNRT_NO_DRIVER); // the outcome stays

  // Every entry point, with good arguments, reports the missing driver.
  int value = -1;
  EXPECT(attnrt_driver_version(&value), ATTNRT_NO_DRIVER);
  check(value == 0, "attnrt_driver_version leaves 0 on failure");
  value = -1;
  EXPECT(attnrt_get_device_count(&value), ATTNRT_NO_DRIVER);
  check(value == 0, "attnrt_get_device_count leaves 0 on failure");
  expect_message("attnrt_get_device_count: ");
  expect_message(path);
  attnrt_device_info info;
  EXPECT(attnrt_get_device_info(&info, 0), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_set_device(0), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_get_device(&value), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_synchronize(), ATTNRT_NO_DRIVER);

  attnrt_module *module = DUMMY(attnrt_module);
  EXPECT(attnrt_module_load(&module, tiny_ptx, sizeof tiny_ptx),
         ATTNRT_NO_DRIVER);
  check(module == NULL, "attnrt_module_load leaves NULL on failure");
  EXPECT(attnrt_module_load_file(&module, "/no/such/kernels.ptx"),
         ATTNRT_NO_DRIVER);
  EXPECT(attnrt_module_unload(DUMMY(attnrt_module)), ATTNRT_NO_DRIVER);
  attnrt_kernel *kernel = DUMMY(attnrt_kernel);
  EXPECT(attnrt_module_get_kernel(&kernel, DUMMY(attnrt_module), "k"),
         ATTNRT_NO_DRIVER);
  check(kernel == NULL, "attnrt_module_get_kernel leaves NULL on failure");
  attnrt_kernel_info kernel_info;
  EXPECT(attnrt_kernel_get_info(&kernel_info, DUMMY(attnrt_kernel)),
         ATTNRT_NO_DRIVER);
  int resident = 7;
  EXPECT(attnrt_kernel_resident_blocks(&resident, DUMMY(attnrt_kernel), 128,
                                       0),
         ATTNRT_NO_DRIVER);
  check(resident == 0, "attnrt_kernel_resident_blocks leaves 0 on failure");
  EXPECT(attnrt_launch(DUMMY(attnrt_kernel), 1, 1, 1, 32, 1, 1, 0, NULL, NULL),
         ATTNRT_NO_DRIVER);
  expect_message("attnrt_launch: ");

  attnrt_deviceptr ptr = 1;
  EXPECT(attnrt_malloc(&ptr, 64), ATTNRT_NO_DRIVER);
  check(ptr == 0, "attnrt_malloc leaves 0 on failure");
  EXPECT(attnrt_free(0), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_free(0x1000), ATTNRT_NO_DRIVER);
  char host[16] = {0};
  EXPECT(attnrt_memcpy_htod(0x1000, host, sizeof host), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_memcpy_dtoh(host, 0x1000, sizeof host), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_memcpy_dtod(0x1000, 0x2000, sizeof host), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_memset_d8(0x1000, 0, sizeof host), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_memcpy_htod(0x1000, host, 0), ATTNRT_NO_DRIVER);

  attnrt_stream *stream = DUMMY(attnrt_stream);
  EXPECT(attnrt_stream_create(&stream), ATTNRT_NO_DRIVER);
  check(stream == NULL, "attnrt_stream_create leaves NULL on failure");
  EXPECT(attnrt_stream_destroy(DUMMY(attnrt_stream)), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_stream_synchronize(NULL), ATTNRT_NO_DRIVER);
  attnrt_event *event = DUMMY(attnrt_event);
  EXPECT(attnrt_event_create(&event), ATTNRT_NO_DRIVER);
  check(event == NULL, "attnrt_event_create leaves NULL on failure");
  EXPECT(attnrt_event_destroy(DUMMY(attnrt_event)), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_event_record(DUMMY(attnrt_event), NULL), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_event_synchronize(DUMMY(attnrt_event)), ATTNRT_NO_DRIVER);
  float ms = -1.0f;
  EXPECT(attnrt_event_elapsed_ms(&ms, DUMMY(attnrt_event), DUMMY(attnrt_event)),
         ATTNRT_NO_DRIVER);
  check(ms == 0.0f, "attnrt_event_elapsed_ms leaves 0 on failure");

  // Bad arguments are reported as such, before the driver is looked at.
  EXPECT(attnrt_driver_version(NULL), ATTNRT_INVALID_ARGUMENT);
  expect_message("version is NULL");
  expect_driver_result(0);
  EXPECT(attnrt_get_device_count(NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_get_device_info(NULL, 0), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_get_device_info(&info, -1), ATTNRT_INVALID_ARGUMENT);
  expect_message("-1");
  EXPECT(attnrt_set_device(-1), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_get_device(NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_module_load(NULL, tiny_ptx, sizeof tiny_ptx),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_module_load(&module, NULL, 16), ATTNRT_INVALID_ARGUMENT);
  expect_message("image is NULL");
  EXPECT(attnrt_module_load(&module, tiny_ptx, 0), ATTNRT_INVALID_ARGUMENT);
  expect_message("empty");
  EXPECT(attnrt_module_load_file(NULL, "k.ptx"), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_module_load_file(&module, NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_module_unload(NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_module_get_kernel(NULL, DUMMY(attnrt_module), "k"),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_module_get_kernel(&kernel, NULL, "k"), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_module_get_kernel(&kernel, DUMMY(attnrt_module), NULL),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_module_get_kernel(&kernel, DUMMY(attnrt_module), ""),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_kernel_get_info(NULL, DUMMY(attnrt_kernel)),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_kernel_get_info(&kernel_info, NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_kernel_resident_blocks(NULL, DUMMY(attnrt_kernel), 128, 0),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_kernel_resident_blocks(&resident, NULL, 128, 0),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_kernel_resident_blocks(&resident, DUMMY(attnrt_kernel), 0, 0),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_malloc(NULL, 64), ATTNRT_INVALID_ARGUMENT);
  expect_message("attnrt_malloc: ptr is NULL");
  EXPECT(attnrt_malloc(&ptr, 0), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_memcpy_htod(0, host, sizeof host), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_memcpy_htod(0x1000, NULL, sizeof host),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_memcpy_dtoh(NULL, 0x1000, sizeof host),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_memcpy_dtoh(host, 0, sizeof host), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_memcpy_dtod(0, 0x1000, sizeof host), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_memcpy_dtod(0x1000, 0, sizeof host), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_memset_d8(0, 0, sizeof host), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_stream_create(NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_stream_destroy(NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_event_create(NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_event_destroy(NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_event_record(NULL, NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_event_synchronize(NULL), ATTNRT_INVALID_ARGUMENT);
  EXPECT(
      attnrt_event_elapsed_ms(NULL, DUMMY(attnrt_event), DUMMY(attnrt_event)),
      ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_event_elapsed_ms(&ms, NULL, DUMMY(attnrt_event)),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_event_elapsed_ms(&ms, DUMMY(attnrt_event), NULL),
         ATTNRT_INVALID_ARGUMENT);

  // Launch configurations no GPU accepts.
  attnrt_kernel *k = DUMMY(attnrt_kernel);
  EXPECT(attnrt_launch(NULL, 1, 1, 1, 32, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("kernel is NULL");
  EXPECT(attnrt_launch(k, 0, 1, 1, 32, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("grid (0, 1, 1)");
  EXPECT(attnrt_launch(k, 1, 0, 1, 32, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(k, 1, 1, 0, 32, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(k, 1, 1, 1, 0, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("block (0, 1, 1)");
  EXPECT(attnrt_launch(k, 1, 1, 1, 32, 0, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(k, 1, 1, 1, 32, 1, 0, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(k, 1, 1, 1, 1025, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("1024 threads");
  EXPECT(attnrt_launch(k, 1, 1, 1, 32, 33, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(k, 1, 1, 1, 1, 1, 65, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(k, 1, 65536, 1, 32, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("65535");
  EXPECT(attnrt_launch(k, 1, 1, 65536, 32, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(k, 2147483648u, 1, 1, 32, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);
  // The largest configurations pass the checks and reach the (absent) driver.
  EXPECT(attnrt_launch(k, 2147483647u, 65535, 65535, 1024, 1, 1, 0, NULL, NULL),
         ATTNRT_NO_DRIVER);
  EXPECT(attnrt_launch(k, 1, 1, 1, 16, 16, 4, 0, NULL, NULL), ATTNRT_NO_DRIVER);
  EXPECT(attnrt_launch(k, 1, 1, 1, 1, 1, 64, 0, NULL, NULL), ATTNRT_NO_DRIVER);

  check_thread_local_messages();
}

//===----------------------------------------------------------------------===//
// Scenario: the fake driver
//===----------------------------------------------------------------------===//

static struct fake_cuda_state *fake;

// The driver's CUcontext points to this.
struct CUctx_st;

// The fake driver's state, from the copy attnrt loaded.
static struct fake_cuda_state *find_fake_state(const char *path) {
  void *library = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!library)
    return NULL;
  return (struct fake_cuda_state *)dlsym(library, FAKE_CUDA_STATE_SYMBOL);
}

static void check_devices(void) {
  int value = -1;
  EXPECT(attnrt_driver_version(&value), ATTNRT_SUCCESS);
  check(value == 12080, "driver version is 12080 (%d)", value);
  EXPECT(attnrt_get_device_count(&value), ATTNRT_SUCCESS);
  check(value == 2, "device count is 2 (%d)", value);

  attnrt_device_info info;
  EXPECT(attnrt_get_device_info(&info, 0), ATTNRT_SUCCESS);
  check(strcmp(info.name, "Fake CUDA Device 0") == 0, "device 0 is \"%s\"",
        info.name);
  check(info.compute_capability_major == 8 &&
            info.compute_capability_minor == 6,
        "device 0 has compute capability 8.6 (%d.%d)",
        info.compute_capability_major, info.compute_capability_minor);
  check(info.multiprocessor_count == 108, "device 0 has 108 SMs (%d)",
        info.multiprocessor_count);
  check(info.max_threads_per_block == 1024,
        "device 0 runs 1024 threads per block (%d)",
        info.max_threads_per_block);
  check(info.max_shared_memory_per_block == 49152 &&
            info.max_shared_memory_per_block_optin == 102400,
        "device 0 shares 48 KiB by default, 100 KiB opted in (%d, %d)",
        info.max_shared_memory_per_block,
        info.max_shared_memory_per_block_optin);
  EXPECT(attnrt_get_device_info(&info, 1), ATTNRT_SUCCESS);
  check(info.multiprocessor_count == 109, "device 1 has 109 SMs (%d)",
        info.multiprocessor_count);
  EXPECT(attnrt_get_device_info(&info, 2), ATTNRT_INVALID_ARGUMENT);
  expect_message("device 2 does not exist");
  expect_message("2 devices");
  check(fake->primary_context_retains == 0,
        "device info creates no context (%d retained)",
        fake->primary_context_retains);

  EXPECT(attnrt_get_device(&value), ATTNRT_SUCCESS);
  check(value == 0, "the current device is 0 until set (%d)", value);
  EXPECT(attnrt_set_device(2), ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_set_device(1), ATTNRT_SUCCESS);
  check(fake->primary_context_retains == 1,
        "attnrt_set_device(1) retains a primary context (%d)",
        fake->primary_context_retains);
  EXPECT(attnrt_get_device(&value), ATTNRT_SUCCESS);
  check(value == 1, "the current device is 1 (%d)", value);
  attnrt_deviceptr ptr = 0;
  EXPECT(attnrt_malloc(&ptr, 64), ATTNRT_SUCCESS);
  EXPECT(attnrt_free(ptr), ATTNRT_SUCCESS);
  EXPECT(attnrt_set_device(0), ATTNRT_SUCCESS);
  EXPECT(attnrt_set_device(0), ATTNRT_SUCCESS);
  check(fake->primary_context_retains == 2,
        "each device's context is retained once (%d retains for 2 devices)",
        fake->primary_context_retains);
}

static void check_memory(void) {
  enum { BYTES = 1024 };
  attnrt_deviceptr a = 0, b = 0;
  EXPECT(attnrt_malloc(&a, BYTES), ATTNRT_SUCCESS);
  EXPECT(attnrt_malloc(&b, BYTES), ATTNRT_SUCCESS);
  check(a != 0 && b != 0 && a != b, "allocations are distinct and not 0");
  check(fake->live_allocations == 2, "the driver holds 2 allocations (%d)",
        fake->live_allocations);

  unsigned char pattern[BYTES], back[BYTES];
  for (int i = 0; i < BYTES; ++i)
    pattern[i] = (unsigned char)(i * 7 + 3);
  EXPECT(attnrt_memcpy_htod(a, pattern, BYTES), ATTNRT_SUCCESS);
  memset(back, 0, sizeof back);
  EXPECT(attnrt_memcpy_dtoh(back, a, BYTES), ATTNRT_SUCCESS);
  check(memcmp(pattern, back, BYTES) == 0, "host -> device -> host keeps the "
                                           "bytes");
  EXPECT(attnrt_memcpy_dtod(b, a, BYTES), ATTNRT_SUCCESS);
  EXPECT(attnrt_memset_d8(a, 0xAB, BYTES / 2), ATTNRT_SUCCESS);
  EXPECT(attnrt_memcpy_dtoh(back, a, BYTES), ATTNRT_SUCCESS);
  bool filled = true;
  for (int i = 0; i < BYTES; ++i)
    filled &= back[i] == (i < BYTES / 2 ? 0xAB : pattern[i]);
  check(filled, "memset_d8 sets exactly the bytes asked for");
  EXPECT(attnrt_memcpy_dtoh(back, b, BYTES), ATTNRT_SUCCESS);
  check(memcmp(pattern, back, BYTES) == 0, "device -> device copies");
  EXPECT(attnrt_memcpy_htod(a, pattern, 0), ATTNRT_SUCCESS);

  // Driver failures carry the driver's words.
  EXPECT(attnrt_memcpy_htod(a + BYTES - 8, pattern, 64),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("cuMemcpyHtoD_v2");
  expect_message("CUDA_ERROR_INVALID_VALUE (1): invalid argument");
  expect_driver_result(1);
  attnrt_deviceptr huge = 1;
  EXPECT(attnrt_malloc(&huge, 2ull << 30), ATTNRT_OUT_OF_MEMORY);
  expect_message("2147483648 bytes");
  expect_message("CUDA_ERROR_OUT_OF_MEMORY");
  expect_driver_result(2);
  check(huge == 0, "a failed allocation leaves 0");

  // Other CUDA code may change the thread's context; attnrt restores its own.
  // cuCtxSetCurrent's type: CUresult (an int) from a CUcontext.
  int (*set_current)(struct CUctx_st *) = NULL;
  void *library = dlopen(getenv("ATTNRT_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  if (library)
    *(void **)&set_current = dlsym(library, "cuCtxSetCurrent");
  check(set_current && set_current(NULL) == 0,
        "a foreign cuCtxSetCurrent(NULL) succeeds");
  EXPECT(attnrt_free(a), ATTNRT_SUCCESS);

  EXPECT(attnrt_free(b), ATTNRT_SUCCESS);
  check(fake->live_allocations == 0, "the driver holds no allocation (%d)",
        fake->live_allocations);
  EXPECT(attnrt_free(b), ATTNRT_INVALID_ARGUMENT); // freed twice
  expect_message("cuMemFree_v2");
  EXPECT(attnrt_free(0), ATTNRT_SUCCESS);
}

static void *allocate_on_new_thread(void *argument) {
  (void)argument;
  attnrt_deviceptr ptr = 0;
  bool ok = attnrt_malloc(&ptr, 16) == ATTNRT_SUCCESS &&
            attnrt_free(ptr) == ATTNRT_SUCCESS;
  return ok ? argument : NULL;
}

static void check_new_thread(void) {
  static int marker;
  pthread_t thread;
  void *outcome = NULL;
  pthread_create(&thread, NULL, allocate_on_new_thread, &marker);
  pthread_join(thread, &outcome);
  check(outcome == &marker,
        "a new thread allocates (attnrt makes the context current there)");
}

// Writes `size` bytes to a new temporary file; returns its path or NULL.
static char *write_temporary(const void *bytes, size_t size) {
  const char *directory = getenv("TMPDIR");
  static char path[512];
  snprintf(path, sizeof path, "%s/attnrt-unittests-XXXXXX",
           directory && *directory ? directory : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0)
    return NULL;
  bool ok = write(fd, bytes, size) == (ssize_t)size;
  close(fd);
  return ok ? path : NULL;
}

static void check_modules(void) {
  attnrt_module *module = NULL;
  // Not NUL-terminated: attnrt terminates it for the driver.
  EXPECT(attnrt_module_load(&module, tiny_ptx, strlen(tiny_ptx)),
         ATTNRT_SUCCESS);
  check(module != NULL && fake->live_modules == 1, "a module is loaded");

  attnrt_kernel *kernel = NULL, *again = NULL, *missing = DUMMY(attnrt_kernel);
  EXPECT(attnrt_module_get_kernel(&kernel, module, "fake_fill_u32"),
         ATTNRT_SUCCESS);
  EXPECT(attnrt_module_get_kernel(&again, module, "fake_fill_u32"),
         ATTNRT_SUCCESS);
  check(kernel && kernel == again, "asking twice gives the same kernel");
  EXPECT(attnrt_module_get_kernel(&missing, module, "no_such_kernel"),
         ATTNRT_KERNEL_NOT_FOUND);
  expect_message("no_such_kernel");
  expect_message("CUDA_ERROR_NOT_FOUND");
  expect_driver_result(500);
  check(missing == NULL, "a missing kernel leaves NULL");

  // The fake driver has no occupancy calculator, as an older driver: 0.
  int resident = 7;
  EXPECT(attnrt_kernel_resident_blocks(&resident, kernel, 128, 0),
         ATTNRT_SUCCESS);
  check(resident == 0, "no occupancy calculator gives 0 blocks (%d)",
        resident);

  attnrt_kernel_info info;
  EXPECT(attnrt_kernel_get_info(&info, kernel), ATTNRT_SUCCESS);
  check(info.num_registers == 40 && info.static_shared_bytes == 0 &&
            info.local_bytes == 0 && info.max_threads_per_block == 1024,
        "kernel info comes from the driver (%d registers, %d static shared, "
        "%d local, %d threads)",
        info.num_registers, info.static_shared_bytes, info.local_bytes,
        info.max_threads_per_block);
  EXPECT(attnrt_module_unload(module), ATTNRT_SUCCESS);
  check(fake->live_modules == 0, "the module is unloaded");

  // Only `size` bytes are the image, even when a NUL comes later.
  static const char longer[] = ".version 8.0\n.entry shown()\n{}\n"
                               ".entry hidden()\n{}\n";
  size_t shown_size = (size_t)(strstr(longer, ".entry hidden") - longer);
  EXPECT(attnrt_module_load(&module, longer, shown_size), ATTNRT_SUCCESS);
  EXPECT(attnrt_module_get_kernel(&kernel, module, "shown"), ATTNRT_SUCCESS);
  EXPECT(attnrt_module_get_kernel(&kernel, module, "hidden"),
         ATTNRT_KERNEL_NOT_FOUND);
  EXPECT(attnrt_module_unload(module), ATTNRT_SUCCESS);

  // Bad PTX: the JIT log is in the message.
  static const char bad_ptx[] = "this is not PTX";
  module = DUMMY(attnrt_module);
  EXPECT(attnrt_module_load(&module, bad_ptx, sizeof bad_ptx),
         ATTNRT_INVALID_IMAGE);
  expect_message("CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation failed");
  expect_message("JIT log:\nptxas application ptx input, line 1; fatal   : "
                 "Missing .version directive");
  expect_message("Ptx assembly aborted due to errors");
  expect_message("PTX image");
  expect_driver_result(218);
  check(module == NULL && fake->live_modules == 0,
        "a rejected module leaves NULL and nothing loaded");
  static const char cubin[] = "\x7f"
                              "ELF\2\1\1 not for this GPU";
  EXPECT(attnrt_module_load(&module, cubin, sizeof cubin),
         ATTNRT_INVALID_IMAGE);
  expect_message("cubin image");
  expect_message("CUDA_ERROR_NO_BINARY_FOR_GPU");

  // From a file.
  char *path = write_temporary(tiny_ptx, strlen(tiny_ptx));
  check(path != NULL, "a temporary PTX file is written");
  if (path) {
    EXPECT(attnrt_module_load_file(&module, path), ATTNRT_SUCCESS);
    EXPECT(attnrt_module_get_kernel(&kernel, module, "fake_noop"),
           ATTNRT_SUCCESS);
    EXPECT(attnrt_module_unload(module), ATTNRT_SUCCESS);
    unlink(path);
  }
  path = write_temporary("", 0);
  if (path) {
    EXPECT(attnrt_module_load_file(&module, path), ATTNRT_INVALID_ARGUMENT);
    expect_message("is empty");
    unlink(path);
  }
  EXPECT(attnrt_module_load_file(&module, "/no/such/dir/kernels.ptx"),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("/no/such/dir/kernels.ptx");
  expect_message("No such file");
  check(fake->live_modules == 0, "no module is left loaded (%d)",
        fake->live_modules);
}

static bool last_launch_was(unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared) {
  return fake->last_grid[0] == gx && fake->last_grid[1] == gy &&
         fake->last_grid[2] == gz && fake->last_block[0] == bx &&
         fake->last_block[1] == by && fake->last_block[2] == bz &&
         fake->last_shared_bytes == shared;
}

static void check_launches(void) {
  attnrt_module *module = NULL;
  attnrt_kernel *fill = NULL;
  EXPECT(attnrt_module_load(&module, tiny_ptx, sizeof tiny_ptx),
         ATTNRT_SUCCESS);
  EXPECT(attnrt_module_get_kernel(&fill, module, "fake_fill_u32"),
         ATTNRT_SUCCESS);
  if (!fill)
    return;

  enum { COUNT = 256 };
  attnrt_deviceptr out = 0;
  EXPECT(attnrt_malloc(&out, COUNT * sizeof(unsigned)), ATTNRT_SUCCESS);
  EXPECT(attnrt_memset_d8(out, 0xFF, COUNT * sizeof(unsigned)), ATTNRT_SUCCESS);
  unsigned first = 7, count = 200;
  void *args[] = {&out, &first, &count};
  int launches = fake->launches;
  EXPECT(attnrt_launch(fill, 1, 1, 1, 256, 1, 1, 0, NULL, args),
         ATTNRT_SUCCESS);
  EXPECT(attnrt_synchronize(), ATTNRT_SUCCESS);
  unsigned values[COUNT];
  EXPECT(attnrt_memcpy_dtoh(values, out, sizeof values), ATTNRT_SUCCESS);
  bool filled = true;
  for (unsigned i = 0; i < COUNT; ++i)
    filled &= values[i] == (i < count ? first + i : 0xFFFFFFFFu);
  check(fake->launches == launches + 1 && filled,
        "the kernel ran once with its arguments (out[i] = 7 + i, i < 200)");
  EXPECT(attnrt_launch(fill, 2, 3, 4, 8, 4, 2, 0, NULL, args), ATTNRT_SUCCESS);
  check(last_launch_was(2, 3, 4, 8, 4, 2, 0),
        "grid and block reach the driver as given");

  // Refused before the driver is called.
  launches = fake->launches;
  EXPECT(attnrt_launch(fill, 0, 1, 1, 32, 1, 1, 0, NULL, args),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 0, 0, NULL, args),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(fill, 1, 1, 1, 33, 32, 1, 0, NULL, args),
         ATTNRT_INVALID_ARGUMENT);
  EXPECT(attnrt_launch(fill, 1, 65536, 1, 32, 1, 1, 0, NULL, args),
         ATTNRT_INVALID_ARGUMENT);
  check(fake->launches == launches, "refused launches never reach the driver");

  // Shared memory: up to 48 KiB as is, beyond it opted in, beyond the
  // device's 100 KiB refused.
  int opt_ins = fake->set_attribute_calls;
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 48 * 1024, NULL, args),
         ATTNRT_SUCCESS);
  check(fake->set_attribute_calls == opt_ins, "48 KiB needs no opt-in");
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 64 * 1024, NULL, args),
         ATTNRT_SUCCESS);
  check(fake->set_attribute_calls == opt_ins + 1 &&
            fake->max_dynamic_shared_set == 64 * 1024 &&
            last_launch_was(1, 1, 1, 32, 1, 1, 64 * 1024),
        "64 KiB opts the kernel in to 65536 bytes, then launches");
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 64 * 1024, NULL, args),
         ATTNRT_SUCCESS);
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 60 * 1024, NULL, args),
         ATTNRT_SUCCESS);
  check(fake->set_attribute_calls == opt_ins + 1,
        "launches within the opted-in amount opt in no more");
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 100 * 1024, NULL, args),
         ATTNRT_SUCCESS);
  check(fake->max_dynamic_shared_set == 100 * 1024,
        "exactly the device's limit is allowed");
  launches = fake->launches;
  opt_ins = fake->set_attribute_calls;
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 100 * 1024 + 1, NULL, args),
         ATTNRT_SHARED_MEMORY_TOO_LARGE);
  expect_message("at most 102400 bytes per block");
  expect_message("Fake CUDA Device 0");
  expect_message("fake_fill_u32");
  check(fake->launches == launches && fake->set_attribute_calls == opt_ins,
        "a refused shared memory request reaches neither launch nor opt-in");

  // Static shared memory counts against the limits too.
  setenv("FAKE_CUDA_KERNEL_STATIC_SMEM", "8192", 1);
  attnrt_kernel *noop = NULL;
  EXPECT(attnrt_module_get_kernel(&noop, module, "fake_noop"), ATTNRT_SUCCESS);
  unsetenv("FAKE_CUDA_KERNEL_STATIC_SMEM");
  attnrt_kernel_info info;
  EXPECT(attnrt_kernel_get_info(&info, noop), ATTNRT_SUCCESS);
  check(info.static_shared_bytes == 8192, "fake_noop has 8 KiB static (%d)",
        info.static_shared_bytes);
  opt_ins = fake->set_attribute_calls;
  EXPECT(attnrt_launch(noop, 1, 1, 1, 32, 1, 1, 44 * 1024, NULL, NULL),
         ATTNRT_SUCCESS);
  check(fake->set_attribute_calls == opt_ins + 1,
        "8 KiB static + 44 KiB dynamic exceed 48 KiB: opted in");
  EXPECT(attnrt_launch(noop, 1, 1, 1, 32, 1, 1, 96 * 1024, NULL, NULL),
         ATTNRT_SHARED_MEMORY_TOO_LARGE);
  expect_message("8192 static + 98304 dynamic");

  // A kernel whose registers allow fewer threads than the block has.
  setenv("FAKE_CUDA_KERNEL_MAX_THREADS", "256", 1);
  attnrt_module *module2 = NULL;
  attnrt_kernel *narrow = NULL;
  EXPECT(attnrt_module_load(&module2, tiny_ptx, sizeof tiny_ptx),
         ATTNRT_SUCCESS);
  EXPECT(attnrt_module_get_kernel(&narrow, module2, "fake_fill_u32"),
         ATTNRT_SUCCESS);
  unsetenv("FAKE_CUDA_KERNEL_MAX_THREADS");
  launches = fake->launches;
  EXPECT(attnrt_launch(narrow, 1, 1, 1, 512, 1, 1, 0, NULL, args),
         ATTNRT_LAUNCH_FAILED);
  expect_message("at most 256 threads per block");
  expect_message("40 registers");
  check(fake->launches == launches, "the too-wide launch reached no GPU");
  EXPECT(attnrt_launch(narrow, 1, 1, 1, 256, 1, 1, 0, NULL, args),
         ATTNRT_SUCCESS);
  EXPECT(attnrt_module_unload(module2), ATTNRT_SUCCESS);

  // Failures the driver reports.
  setenv("FAKE_CUDA_LAUNCH_RESULT", "701", 1);
  EXPECT(attnrt_launch(fill, 4, 1, 1, 128, 1, 1, 0, NULL, args),
         ATTNRT_LAUNCH_FAILED);
  expect_message("cuLaunchKernel of 'fake_fill_u32' with grid (4, 1, 1), "
                 "block (128, 1, 1)");
  expect_message("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too many "
                 "resources requested for launch");
  expect_driver_result(701);
  setenv("FAKE_CUDA_LAUNCH_RESULT", "999", 1);
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 0, NULL, args),
         ATTNRT_DRIVER_ERROR);
  expect_message("CUDA_ERROR_UNKNOWN (999): unknown error");
  // A result the driver cannot name still gets its number.
  setenv("FAKE_CUDA_LAUNCH_RESULT", "4242", 1);
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 0, NULL, args),
         ATTNRT_DRIVER_ERROR);
  expect_message("failed: CUresult 4242");
  expect_driver_result(4242);
  unsetenv("FAKE_CUDA_LAUNCH_RESULT");
  setenv("FAKE_CUDA_SYNC_RESULT", "700", 1);
  EXPECT(attnrt_synchronize(), ATTNRT_LAUNCH_FAILED);
  expect_message("CUDA_ERROR_ILLEGAL_ADDRESS");
  unsetenv("FAKE_CUDA_SYNC_RESULT");
  EXPECT(attnrt_launch(fill, 1, 1, 1, 32, 1, 1, 0, NULL, args),
         ATTNRT_SUCCESS); // and the message is cleared

  // Streams and events.
  attnrt_stream *stream = NULL;
  attnrt_event *start = NULL, *end = NULL, *never = NULL;
  EXPECT(attnrt_stream_create(&stream), ATTNRT_SUCCESS);
  EXPECT(attnrt_event_create(&start), ATTNRT_SUCCESS);
  EXPECT(attnrt_event_create(&end), ATTNRT_SUCCESS);
  EXPECT(attnrt_event_create(&never), ATTNRT_SUCCESS);
  check(fake->live_streams == 1 && fake->live_events == 3,
        "one stream and three events exist");
  EXPECT(attnrt_event_record(start, stream), ATTNRT_SUCCESS);
  EXPECT(attnrt_launch(fill, 1, 1, 1, 256, 1, 1, 0, stream, args),
         ATTNRT_SUCCESS);
  EXPECT(attnrt_event_record(end, stream), ATTNRT_SUCCESS);
  EXPECT(attnrt_stream_synchronize(stream), ATTNRT_SUCCESS);
  EXPECT(attnrt_stream_synchronize(NULL), ATTNRT_SUCCESS);
  EXPECT(attnrt_event_synchronize(end), ATTNRT_SUCCESS);
  float ms = -1.0f;
  EXPECT(attnrt_event_elapsed_ms(&ms, start, end), ATTNRT_SUCCESS);
  check(ms >= 0.0f && ms < 10000.0f, "elapsed time is plausible (%g ms)",
        (double)ms);
  EXPECT(attnrt_event_elapsed_ms(&ms, start, never), ATTNRT_INVALID_ARGUMENT);
  expect_message("CUDA_ERROR_INVALID_HANDLE");
  EXPECT(attnrt_event_destroy(start), ATTNRT_SUCCESS);
  EXPECT(attnrt_event_destroy(end), ATTNRT_SUCCESS);
  EXPECT(attnrt_event_destroy(never), ATTNRT_SUCCESS);
  EXPECT(attnrt_stream_destroy(stream), ATTNRT_SUCCESS);
  check(fake->live_streams == 0 && fake->live_events == 0,
        "streams and events are destroyed");

  EXPECT(attnrt_free(out), ATTNRT_SUCCESS);
  EXPECT(attnrt_module_unload(module), ATTNRT_SUCCESS);
  check(fake->live_modules == 0 && fake->live_allocations == 0,
        "nothing is left on the fake GPU");
}

// attnrt_encode_tensor_map hands the driver the tensor innermost first,
// strides in bytes, and refuses what TMA cannot read before calling it.
static void check_tensor_maps(void) {
  attnrt_tensor_map map;
  // K of [B 2, H 8, S 300, D 128], 2-byte elements, 64x64 boxes.
  const long long sizes[4] = {2, 8, 300, 128};
  const long long strides[4] = {8 * 300 * 128, 300 * 128, 128, 1};
  const unsigned box[4] = {1, 1, 64, 64};
  const attnrt_deviceptr data = 0x7000100;
  int calls = fake->tensor_map_calls;
  EXPECT(attnrt_encode_tensor_map(&map, data, 4, 2, sizes, strides, box, 1),
         ATTNRT_SUCCESS);
  check(fake->tensor_map_calls == calls + 1, "cuTensorMapEncodeTiled ran once");
  check(fake->tensor_map_rank == 4 && fake->tensor_map_type == 1 &&
            fake->tensor_map_swizzle == 3 &&
            fake->tensor_map_address == data,
        "rank 4, UINT16, 128-byte swizzle, the address (%d %d %d 0x%llx)",
        fake->tensor_map_rank, fake->tensor_map_type,
        fake->tensor_map_swizzle, fake->tensor_map_address);
  check(fake->tensor_map_dims[0] == 128 && fake->tensor_map_dims[1] == 300 &&
            fake->tensor_map_dims[2] == 8 && fake->tensor_map_dims[3] == 2,
        "dims innermost first (%llu %llu %llu %llu)",
        fake->tensor_map_dims[0], fake->tensor_map_dims[1],
        fake->tensor_map_dims[2], fake->tensor_map_dims[3]);
  check(fake->tensor_map_strides[0] == 256 &&
            fake->tensor_map_strides[1] == 300 * 256 &&
            fake->tensor_map_strides[2] == 8 * 300 * 256,
        "strides in bytes past the innermost (%llu %llu %llu)",
        fake->tensor_map_strides[0], fake->tensor_map_strides[1],
        fake->tensor_map_strides[2]);
  check(fake->tensor_map_box[0] == 64 && fake->tensor_map_box[1] == 64 &&
            fake->tensor_map_box[2] == 1 && fake->tensor_map_box[3] == 1,
        "box innermost first (%u %u %u %u)", fake->tensor_map_box[0],
        fake->tensor_map_box[1], fake->tensor_map_box[2],
        fake->tensor_map_box[3]);
  check(map.words[0] == data, "the driver wrote the map");
  // A row of 100 2-byte elements is 200 bytes: not a multiple of 16.
  const long long odd[4] = {8 * 300 * 100, 300 * 100, 100, 1};
  EXPECT(attnrt_encode_tensor_map(&map, data, 4, 2, sizes, odd, box, 1),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("TMA needs a multiple of 16");
  // The 128-byte swizzle takes boxes of at most 128 bytes a row.
  const unsigned wide[4] = {1, 1, 64, 128};
  EXPECT(attnrt_encode_tensor_map(&map, data, 4, 2, sizes, strides, wide, 1),
         ATTNRT_INVALID_ARGUMENT);
  expect_message("the 128-byte swizzle");
  // A launch contract's Q (or O) view: 64-row boxes cannot hold whole
  // queries of 3-head groups, nor part of one query's group.
  const long long q[4] = {2, 24, 300, 128};
  const long long q_strides[4] = {24 * 300 * 128, 300 * 128, 128, 1};
  EXPECT(
      attnrt_encode_attention_tensor_map(&map, data, 2, q, q_strides, 1, 64, 3),
      ATTNRT_INVALID_ARGUMENT);
  expect_message("block_q 64 and group 3 make no box of 24 heads");
  check(fake->tensor_map_calls == calls + 1,
        "refused maps never reach the driver");
  EXPECT(
      attnrt_encode_attention_tensor_map(&map, data, 2, q, q_strides, 1, 64, 4),
      ATTNRT_SUCCESS);
  check(fake->tensor_map_rank == 5 && fake->tensor_map_box[0] == 64 &&
            fake->tensor_map_box[1] == 4 && fake->tensor_map_box[2] == 16,
        "a Q view: 64 columns, 4 heads, 16 queries (rank %d; %u %u %u)",
        fake->tensor_map_rank, fake->tensor_map_box[0], fake->tensor_map_box[1],
        fake->tensor_map_box[2]);
}

static void run_fake_driver(void) {
  const char *path = getenv("ATTNRT_CUDA_DRIVER");
  check(path && *path, "ATTNRT_CUDA_DRIVER names the fake driver");
  if (!path)
    return;
  setenv("FAKE_CUDA_DEVICE_COUNT", "2", 1);

  check_concurrent_first_calls(ATTNRT_SUCCESS);
  EXPECT(attnrt_init(), ATTNRT_SUCCESS);
  fake = find_fake_state(path);
  check(fake != NULL, "the fake driver's state is found");
  if (!fake)
    return;
  check(fake->init_calls == 1, "cuInit ran once (%d)", fake->init_calls);
  check_devices();
  check_memory();
  check_new_thread();
  check_modules();
  check_launches();
  check_tensor_maps();
}

//===----------------------------------------------------------------------===//
// Scenarios: drivers that fail to start
//===----------------------------------------------------------------------===//

static void run_no_device(void) {
  setenv("FAKE_CUDA_INIT_RESULT", "100", 1); // CUDA_ERROR_NO_DEVICE
  EXPECT(attnrt_init(), ATTNRT_SUCCESS);
  int value = -1;
  EXPECT(attnrt_get_device_count(&value), ATTNRT_SUCCESS);
  check(value == 0, "a driver without devices counts 0 (%d)", value);
  EXPECT(attnrt_driver_version(&value), ATTNRT_SUCCESS);
  check(value == 12080, "the driver version is known (%d)", value);
  attnrt_device_info info;
  EXPECT(attnrt_get_device_info(&info, 0), ATTNRT_NO_DEVICE);
  expect_message("reports no device");
  EXPECT(attnrt_set_device(0), ATTNRT_NO_DEVICE);
  EXPECT(attnrt_get_device(&value), ATTNRT_NO_DEVICE);
  attnrt_deviceptr ptr;
  EXPECT(attnrt_malloc(&ptr, 16), ATTNRT_NO_DEVICE);
  attnrt_module *module;
  EXPECT(attnrt_module_load(&module, tiny_ptx, sizeof tiny_ptx),
         ATTNRT_NO_DEVICE);
  attnrt_stream *stream;
  EXPECT(attnrt_stream_create(&stream), ATTNRT_NO_DEVICE);
  EXPECT(attnrt_synchronize(), ATTNRT_NO_DEVICE);
}

static void run_init_fails(void) {
  setenv("FAKE_CUDA_INIT_RESULT", "999", 1); // CUDA_ERROR_UNKNOWN
  EXPECT(attnrt_init(), ATTNRT_DRIVER_ERROR);
  expect_message("cuInit(0)");
  expect_message("CUDA_ERROR_UNKNOWN (999): unknown error");
  expect_driver_result(999);
  attnrt_deviceptr ptr;
  EXPECT(attnrt_malloc(&ptr, 16), ATTNRT_DRIVER_ERROR);
  expect_message("attnrt_malloc: ");
  expect_message("CUDA_ERROR_UNKNOWN");
  expect_driver_result(999);
}

static void run_stub_driver(void) {
  setenv("FAKE_CUDA_INIT_RESULT", "34", 1); // CUDA_ERROR_STUB_LIBRARY
  EXPECT(attnrt_init(), ATTNRT_NO_DRIVER);
  expect_message("stub");
  expect_message("CUDA_ERROR_STUB_LIBRARY");
  int count;
  EXPECT(attnrt_get_device_count(&count), ATTNRT_NO_DRIVER);
}

static void run_missing_symbol(void) {
  EXPECT(attnrt_init(), ATTNRT_DRIVER_TOO_OLD);
  expect_message("has no function cuInit");
  const char *path = getenv("ATTNRT_CUDA_DRIVER");
  if (path)
    expect_message(path);
  expect_driver_result(0);
  int count;
  EXPECT(attnrt_get_device_count(&count), ATTNRT_DRIVER_TOO_OLD);
  attnrt_deviceptr ptr;
  EXPECT(attnrt_malloc(&ptr, 16), ATTNRT_DRIVER_TOO_OLD);
  expect_message("attnrt_malloc: ");
}

// CI machines have no driver; GPU machines have one. Either way: no crash and
// an answer that fits.
static void run_system_driver(void) {
  check(getenv("ATTNRT_CUDA_DRIVER") == NULL,
        "ATTNRT_CUDA_DRIVER is unset: the default library is loaded");
  attnrt_status status = attnrt_init();
  check(status == ATTNRT_SUCCESS || status == ATTNRT_NO_DRIVER ||
            status == ATTNRT_NO_DEVICE || status == ATTNRT_DRIVER_TOO_OLD,
        "attnrt_init() -> %s%s%s", status_name(status),
        status == ATTNRT_SUCCESS ? "" : ": ", attnrt_last_error());
  if (status == ATTNRT_NO_DRIVER)
    expect_message("libcuda.so.1");
  int count = -1;
  attnrt_status count_status = attnrt_get_device_count(&count);
  check(count_status == status && count >= 0,
        "attnrt_get_device_count agrees with attnrt_init (%d devices)", count);
}

//===----------------------------------------------------------------------===//
// Launch contracts: libattnrt interprets the tables, checking them first
//===----------------------------------------------------------------------===//

// A prefill kernel q, k, v -> o over [B, H, S, 64] f16 whose one launch is
// `launch`; sizes B = 2, Hq = 4, Hkv = 2, Sq = q_len, Sk = 8.
static int can_implement(const attnrt_launch_facts *launch, long long q_len) {
  static void *loaded[ATTNRT_MAX_DEVICES];
  const attnrt_operand_type tensor = {4, 2, 1, {0, 0, 0, 0}};
  attnrt_device_code code = {80, 0, 0, "", 1, launch, 1};
  attnrt_attention_kernel kernel = {"contract", {{0}}, 0,   &code,
                                    1,          loaded, 0,   0, NULL};
  kernel.operands[ATTNRT_Q] = kernel.operands[ATTNRT_K] = tensor;
  kernel.operands[ATTNRT_V] = kernel.operands[ATTNRT_O] = tensor;
  attnrt_attention_call call;
  memset(&call, 0, sizeof call);
  const long long q[4] = {2, 4, q_len, 64}, kv[4] = {2, 2, 8, 64};
  memcpy(call.sizes[ATTNRT_Q], q, sizeof q);
  memcpy(call.sizes[ATTNRT_O], q, sizeof q);
  memcpy(call.sizes[ATTNRT_K], kv, sizeof kv);
  memcpy(call.sizes[ATTNRT_V], kv, sizeof kv);
  return attnrt_attention_can_implement(&kernel, &call);
}

static void expect_contract(const char *what, const attnrt_launch_facts *launch,
                            long long q_len, int status, const char *message) {
  int result = can_implement(launch, q_len);
  const char *error = attnrt_last_error();
  check(result == status && strstr(error, message) != NULL, "%s -> %d (%s)",
        what, result, error);
}

static void run_launch_contracts(void) {
  // grid [ceildiv(group_rows, 64), kv_heads, batch], params q, k, v, o.
  const attnrt_launch_facts good = {
      "k", ATTNRT_ROLE_PREFILL, 128, 0,
      3, {{0, ATTNRT_SIZE_GROUP_ROWS, 64}, {1, ATTNRT_SIZE_KV_HEADS, 1},
          {2, ATTNRT_SIZE_BATCH, 1}},
      4, {{ATTNRT_PARAM_MEMREF, ATTNRT_Q}, {ATTNRT_PARAM_MEMREF, ATTNRT_K},
          {ATTNRT_PARAM_MEMREF, ATTNRT_V}, {ATTNRT_PARAM_MEMREF, ATTNRT_O}},
      0, 0, 0, {{0}}, 0, 0, 0, 0};
  expect_contract("a prefill contract", &good, 100, ATTN_SUCCESS, "");
  // The grid comes from the terms: y = rows = 2 * 4 * 9000 > 65535.
  attnrt_launch_facts launch = good;
  launch.grid[1].size = ATTNRT_SIZE_ROWS;
  expect_contract("grid y = rows = 72000", &launch, 9000,
                  ATTN_ERROR_UNSUPPORTED_SIZE,
                  "kernel k would need a grid of 72000 blocks in y");
  launch.grid[1].value = 2; // ceildiv(rows, 2) = 36000 fits
  expect_contract("grid y = ceildiv(rows, 2)", &launch, 9000, ATTN_SUCCESS, "");
  launch = good;
  launch.grid[0].value = 0;
  expect_contract("a grid term dividing by 0", &launch, 100, ATTN_ERROR_RUNTIME,
                  "kernel k: grid term 0 (dimension 0, size 6, value 0)");
  launch = good;
  launch.grid[2].dim = 3;
  expect_contract("a grid term in dimension 3", &launch, 100,
                  ATTN_ERROR_RUNTIME, "grid term 2 (dimension 3");
  launch = good;
  launch.params[3].operand = ATTNRT_LSE;
  expect_contract("a parameter passing an operand the kernel lacks", &launch,
                  100, ATTN_ERROR_RUNTIME,
                  "parameter 3 passes operand 6, which the kernel does not "
                  "have");
  launch = good;
  launch.params[3].kind = ATTNRT_PARAM_WORKSPACE;
  expect_contract("a workspace parameter without a workspace shape", &launch,
                  100, ATTN_ERROR_RUNTIME, "launch has no workspace shape");
  // Q's tensor map takes boxes of block_q rows: whole queries of a
  // group, or part of one query's group (group 2 here).
  launch = good;
  launch.params[0].kind = ATTNRT_PARAM_TENSOR_MAP; /* of Q */
  expect_contract("a TMA tensor map of Q without block_q", &launch, 100,
                  ATTN_ERROR_RUNTIME,
                  "parameter 0 is Q's tensor map, but its block_q = 0 and "
                  "group = 0 make no box");
  launch.block_q = 64;
  launch.group = 3;
  expect_contract("a TMA tensor map of Q, 64 rows of 3-head groups", &launch,
                  100, ATTN_ERROR_RUNTIME,
                  "parameter 0 is Q's tensor map, but its block_q = 64 and "
                  "group = 3 make no box");
  launch.group = 2;
  expect_contract("a TMA tensor map of Q, 64 rows of 2-head groups", &launch,
                  100, ATTN_SUCCESS, "");
  // O's map (the wgmma tier's TMA store) is Q's view of O: the same rule.
  launch.params[3].kind = ATTNRT_PARAM_TENSOR_MAP; /* of O */
  expect_contract("TMA tensor maps of Q and O, 64 rows of 2-head groups",
                  &launch, 100, ATTN_SUCCESS, "");
  launch.params[0].kind = ATTNRT_PARAM_MEMREF;
  launch.group = 3;
  expect_contract("a TMA tensor map of O, 64 rows of 3-head groups", &launch,
                  100, ATTN_ERROR_RUNTIME,
                  "parameter 3 is O's tensor map, but its block_q = 64 and "
                  "group = 3 make no box");
  launch = good;
  launch.params[4].kind = ATTNRT_PARAM_TENSOR_MAP;
  launch.params[4].operand = ATTNRT_KV_LENS;
  launch.num_params = 5;
  expect_contract("a TMA tensor map of kv_lens", &launch, 100,
                  ATTN_ERROR_RUNTIME,
                  "parameter 4 is a tensor map of operand 4; this runtime "
                  "encodes at most 4, of a rank-4 Q, K, V or O with 2-byte "
                  "elements");
  launch = good;
  launch.num_params = ATTNRT_MAX_LAUNCH_PARAMS + 1;
  expect_contract("too many parameters", &launch, 100, ATTN_ERROR_RUNTIME,
                  "17 parameters (at most 16)");
  launch = good;
  launch.params[3].kind = ATTNRT_PARAM_CAPTURE;
  launch.params[3].operand = 0;
  expect_contract("a capture parameter of a kernel without captures",
                  &launch, 100, ATTN_ERROR_RUNTIME,
                  "parameter 3 passes capture 0, but the kernel has 0");
  launch = good;
  launch.programmatic = 1;
  expect_contract("a programmatic prefill launch", &launch, 100,
                  ATTN_ERROR_RUNTIME,
                  "kernel k: a programmatic launch of role 1 (only a "
                  "decode_combine launch may be)");
  launch = good;
  launch.role = ATTNRT_ROLE_BLOCK_MASK;
  expect_contract("a block_mask launch", &launch, 100, ATTN_SUCCESS, "");
  launch = good;
  launch.role = 8;
  expect_contract("an unknown role", &launch, 100, ATTN_ERROR_RUNTIME,
                  "kernel k: unknown role 8");
}

// Device addresses of calls whose kernels the fake driver never runs (it
// launches nothing real): operand `slot` at (slot + 1) * 2^32, so that no
// two operands overlap (libattnrt refuses a written operand that does).
static const void *fake_address(int slot) {
  return (const void *)(uintptr_t)((unsigned long long)(slot + 1) << 32);
}

//===----------------------------------------------------------------------===//
// Packed (varlen) batches: sizes, checks and grids (attnrt_attention.h)
//===----------------------------------------------------------------------===//

// q [total_q, 4, 64] f16 packed by cu_seqlens_q over K/V [total_k, 2, 64]
// packed by cu_seqlens_k, -> o [total_q, 4, 64], lse [total_q, 4]: a
// prefill launch of block_q `block_q` ([ceildiv(packed_q_tiles, block_q),
// kv_heads, 1]), or the decode pair (split [splits, kv_heads, batch * 2],
// combine [rows, 1, 1], programmatic, workspace [rows, splits, 66] f32). The kernels are
// tiny_ptx's fake_noop, which the fake driver runs.
static void *packed_loaded[2][ATTNRT_MAX_DEVICES];
static attnrt_launch_facts packed_launches[2][2];
static attnrt_device_code packed_code[2];

static attnrt_attention_kernel packed_kernel(int decode, long long block_q,
                                             long long max_q_len) {
  const attnrt_launch_param inputs[] = {
      {ATTNRT_PARAM_MEMREF, ATTNRT_Q},
      {ATTNRT_PARAM_MEMREF, ATTNRT_K},
      {ATTNRT_PARAM_MEMREF, ATTNRT_V},
      {ATTNRT_PARAM_MEMREF, ATTNRT_CU_SEQLENS_Q},
      {ATTNRT_PARAM_MEMREF, ATTNRT_CU_SEQLENS_K}};
  attnrt_launch_facts *l = packed_launches[decode];
  memset(l, 0, 2 * sizeof *l);
  if (!decode) {
    l[0] = (attnrt_launch_facts){
        "fake_noop", ATTNRT_ROLE_PREFILL, 128, 0,
        3, {{0, ATTNRT_SIZE_PACKED_Q_TILES, block_q},
            {1, ATTNRT_SIZE_KV_HEADS, 1}, {2, ATTNRT_SIZE_CONSTANT, 1}},
        7, {{0}}, 0, 0, 0, {{0}}, 0, 0, 0, 0};
    memcpy(l[0].params, inputs, sizeof inputs);
    l[0].params[5] = (attnrt_launch_param){ATTNRT_PARAM_MEMREF, ATTNRT_O};
    l[0].params[6] = (attnrt_launch_param){ATTNRT_PARAM_MEMREF, ATTNRT_LSE};
  } else {
    const attnrt_launch_term workspace[] = {{0, ATTNRT_SIZE_ROWS, 1},
                                            {1, ATTNRT_SIZE_SPLITS, 1},
                                            {2, ATTNRT_SIZE_CONSTANT, 66}};
    l[0] = (attnrt_launch_facts){
        "fake_noop", ATTNRT_ROLE_DECODE_SPLIT, 128, 0,
        4, {{0, ATTNRT_SIZE_SPLITS, 1}, {1, ATTNRT_SIZE_KV_HEADS, 1},
            {2, ATTNRT_SIZE_BATCH, 1}, {2, ATTNRT_SIZE_CONSTANT, 2}},
        6, {{0}}, 3, 4, 3, {{0}}, 0, 0, 0, 0};
    memcpy(l[0].params, inputs, sizeof inputs);
    l[0].params[5] = (attnrt_launch_param){ATTNRT_PARAM_WORKSPACE, 0};
    l[1] = (attnrt_launch_facts){
        "fake_noop", ATTNRT_ROLE_DECODE_COMBINE, 128, 16,
        3, {{0, ATTNRT_SIZE_ROWS, 1}, {1, ATTNRT_SIZE_CONSTANT, 1},
            {2, ATTNRT_SIZE_CONSTANT, 1}},
        3, {{ATTNRT_PARAM_WORKSPACE, 0}, {ATTNRT_PARAM_MEMREF, ATTNRT_O},
            {ATTNRT_PARAM_MEMREF, ATTNRT_LSE}},
        3, 4, 3, {{0}}, 0, 0, /*programmatic=*/1, 0};
    memcpy(l[0].workspace, workspace, sizeof workspace);
    memcpy(l[1].workspace, workspace, sizeof workspace);
  }
  packed_code[decode] = (attnrt_device_code){
      80, 0, 0, tiny_ptx, sizeof tiny_ptx, l, decode ? 2 : 1};
  attnrt_attention_kernel kernel = {
      decode ? "packed_decode" : "packed", {{0}}, 0, &packed_code[decode], 1,
      packed_loaded[decode], max_q_len, 0, NULL};
  const attnrt_operand_type rows3 = {3, 2, 1, {0}}, rows2 = {2, 4, 1, {0}},
                            offsets = {1, 4, 1, {0}};
  kernel.operands[ATTNRT_Q] = kernel.operands[ATTNRT_O] = rows3;
  kernel.operands[ATTNRT_K] = kernel.operands[ATTNRT_V] = rows3;
  kernel.operands[ATTNRT_LSE] = rows2;
  kernel.operands[ATTNRT_CU_SEQLENS_Q] = offsets;
  kernel.operands[ATTNRT_CU_SEQLENS_K] = offsets;
  return kernel;
}

// A call of `batch` sequences, `total_q` query and `total_k` key tokens.
static attnrt_attention_call packed_call(long long batch, long long total_q,
                                         long long total_k) {
  attnrt_attention_call call;
  memset(&call, 0, sizeof call);
  const long long q[3] = {total_q, 4, 64}, kv[3] = {total_k, 2, 64};
  memcpy(call.sizes[ATTNRT_Q], q, sizeof q);
  memcpy(call.sizes[ATTNRT_O], q, sizeof q);
  memcpy(call.sizes[ATTNRT_K], kv, sizeof kv);
  memcpy(call.sizes[ATTNRT_V], kv, sizeof kv);
  call.sizes[ATTNRT_LSE][0] = total_q;
  call.sizes[ATTNRT_LSE][1] = 4;
  call.sizes[ATTNRT_CU_SEQLENS_Q][0] = batch + 1;
  call.sizes[ATTNRT_CU_SEQLENS_K][0] = batch + 1;
  for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o)
    call.data[o] = fake_address(o);
  return call;
}

static void expect_packed(const char *what, int result, int status,
                          const char *message) {
  const char *error = attnrt_last_error();
  check(result == status && strstr(error, message) != NULL, "%s -> %d (%s)",
        what, result, error);
}

// packed_call(3, 100, 300)'s decode at 3 splits: `what` asks its workspace
// (rows 400 x 3 splits x 66 f32) and the call gets one of that size.
static void give_packed_decode_workspace(const char *what,
                                         attnrt_attention_kernel *decode,
                                         attnrt_attention_call *call) {
  size_t bytes = 0;
  expect_packed(what, attnrt_attention_workspace_bytes(decode, call, &bytes),
                ATTN_SUCCESS, "");
  check(bytes == 400ull * 3 * 66 * 4,
        "workspace is rows 400 x 3 splits x 66 f32 = 316800 bytes (%zu)",
        bytes);
  static max_align_t workspace[316800 / sizeof(max_align_t) + 1];
  call->workspace = workspace;
  call->workspace_bytes = bytes;
}

// What needs no driver: the checks, and empty batches.
static void check_packed_sizes(void) {
  attnrt_attention_kernel k = packed_kernel(0, 64, 0);
  attnrt_attention_call call = packed_call(3, 100, 300);
  expect_packed("packed can_implement(B 3, total_q 100, total_k 300)",
                attnrt_attention_can_implement(&k, &call), ATTN_SUCCESS, "");
  call = packed_call(0, 0, 0);
  expect_packed("packed can_implement(B 0, no tokens)",
                attnrt_attention_can_implement(&k, &call), ATTN_SUCCESS, "");
  call.data[ATTNRT_Q] = call.data[ATTNRT_O] = call.data[ATTNRT_LSE] = NULL;
  call.data[ATTNRT_K] = call.data[ATTNRT_V] = NULL;
  expect_packed("packed run(B 0, NULL empty buffers) launches nothing",
                attnrt_attention_run(&k, &call), ATTN_SUCCESS, "");
  call = packed_call(2, 0, 10);
  expect_packed("packed run(B 2, total_q 0) launches nothing",
                attnrt_attention_run(&k, &call), ATTN_SUCCESS, "");
  call = packed_call(2, 5, 10);
  call.data[ATTNRT_CU_SEQLENS_Q] = NULL;
  expect_packed("packed run(cu_seqlens_q NULL)",
                attnrt_attention_run(&k, &call), ATTN_ERROR_NULL_POINTER,
                "packed: cu_seqlens_q is NULL");
  call = packed_call(2, 5, 10);
  call.data[ATTNRT_Q] = NULL;
  expect_packed("packed run(q NULL, 5 tokens)",
                attnrt_attention_run(&k, &call), ATTN_ERROR_NULL_POINTER,
                "packed: q is NULL");
  call = packed_call(-1, 5, 10);
  expect_packed("packed can_implement(no offsets)",
                attnrt_attention_can_implement(&k, &call),
                ATTN_ERROR_UNSUPPORTED_SIZE,
                "cu_seqlens_q dimension 0 is 0; every size must be at least 1");
  call = packed_call(2, -1, 10);
  expect_packed("packed can_implement(total_q -1)",
                attnrt_attention_can_implement(&k, &call),
                ATTN_ERROR_UNSUPPORTED_SIZE,
                "q dimension 0 is -1; it must be at least 0");
  call = packed_call(2, 5, 10);
  call.sizes[ATTNRT_CU_SEQLENS_K][0] = 4;
  expect_packed("packed can_implement(cu_seqlens_k of another batch)",
                attnrt_attention_can_implement(&k, &call),
                ATTN_ERROR_UNSUPPORTED_SIZE,
                "cu_seqlens_k dimension 0 is 4; cu_seqlens_q's 3 offsets make "
                "a batch of 2 sequences, so it must be 3");
  call = packed_call(2, 5, 10);
  call.sizes[ATTNRT_LSE][0] = 6;
  expect_packed("packed can_implement(lse rows != total_q)",
                attnrt_attention_can_implement(&k, &call),
                ATTN_ERROR_UNSUPPORTED_SIZE,
                "lse has 6 rows and q 5 (total_q)");
  call = packed_call(2, 5, 10);
  call.sizes[ATTNRT_O][0] = 4;
  expect_packed("packed can_implement(o rows != total_q)",
                attnrt_attention_can_implement(&k, &call),
                ATTN_ERROR_UNSUPPORTED_SIZE, "o has 4 rows and q 5");
  call = packed_call(2, 5, 10);
  call.sizes[ATTNRT_V][0] = 9;
  expect_packed("packed can_implement(v rows != total_k)",
                attnrt_attention_can_implement(&k, &call),
                ATTN_ERROR_UNSUPPORTED_SIZE, "v has 9 rows and k 10");
  call = packed_call(2, 5, 10);
  call.max_q_len = -2;
  expect_packed("packed can_implement(max_q_len -2)",
                attnrt_attention_can_implement(&k, &call),
                ATTN_ERROR_UNSUPPORTED_SIZE, "max_q_len is -2");
  attnrt_attention_kernel fixed = packed_kernel(0, 64, 4);
  call.max_q_len = 4;
  expect_packed("packed can_implement(max_q_len 4 of the kernel's 4)",
                attnrt_attention_can_implement(&fixed, &call), ATTN_SUCCESS,
                "");
  call.max_q_len = 5;
  expect_packed("packed can_implement(max_q_len 5 > the kernel's 4)",
                attnrt_attention_can_implement(&fixed, &call),
                ATTN_ERROR_UNSUPPORTED_SIZE,
                "max_q_len is 5, but the kernel is built for sequences of at "
                "most 4 queries");
  // A table whose packed operands have the padded forms' ranks.
  attnrt_attention_kernel bad = packed_kernel(0, 64, 0);
  bad.operands[ATTNRT_LSE].rank = 3;
  call = packed_call(2, 5, 10);
  expect_packed("a packed table with a rank-3 lse",
                attnrt_attention_can_implement(&bad, &call),
                ATTN_ERROR_RUNTIME,
                "lse has rank 3 in the library's table; packed by "
                "cu_seqlens_q it has rank 2");
  bad = packed_kernel(0, 64, 0);
  bad.operands[ATTNRT_K].rank = 4;
  expect_packed("a packed table with a rank-4 k",
                attnrt_attention_can_implement(&bad, &call),
                ATTN_ERROR_RUNTIME, "k has rank 4 in the library's table; "
                                    "packed by cu_seqlens_k it has rank 3");
  bad = packed_kernel(0, 64, 0);
  bad.operands[ATTNRT_CU_SEQLENS_K].element_bytes = 8;
  expect_packed("a packed table with 8-byte offsets",
                attnrt_attention_can_implement(&bad, &call),
                ATTN_ERROR_RUNTIME,
                "cu_seqlens_k has 8-byte elements in the library's table");
  bad = packed_kernel(0, 64, 0);
  bad.operands[ATTNRT_KV_LENS] = (attnrt_operand_type){1, 4, 1, {0}};
  call.sizes[ATTNRT_KV_LENS][0] = 2;
  expect_packed("a packed table with cu_seqlens_k and kv_lens",
                attnrt_attention_can_implement(&bad, &call),
                ATTN_ERROR_RUNTIME, "cu_seqlens_k with block_table or kv_lens");
  // Strides of rank-3 and rank-2 operands are checked as any others'.
  call = packed_call(2, 5, 10);
  const long long o_strides[3] = {256, 64, 1}, lse_strides[2] = {1, 5};
  call.strides[ATTNRT_O] = o_strides; // row-major is {256, 64, 1}
  call.strides[ATTNRT_LSE] = lse_strides;
  expect_packed("packed run(lse strides {1, 5})",
                attnrt_attention_run(&k, &call),
                ATTN_ERROR_UNSUPPORTED_STRIDE,
                "lse stride 0 is 1; the kernel's layout needs 4 (row-major)");
  // An empty batch needs no workspace, even for split-K decode code.
  attnrt_attention_kernel decode = packed_kernel(1, 0, 2);
  call = packed_call(0, 0, 0);
  size_t bytes = 1;
  expect_packed("packed decode workspace_bytes(B 0)",
                attnrt_attention_workspace_bytes(&decode, &call, &bytes),
                ATTN_SUCCESS, "");
  check(bytes == 0, "an empty batch needs 0 workspace bytes (%zu)", bytes);
}

static void run_packed_no_driver(void) { check_packed_sizes(); }

// attnrt_init() on the fake driver ATTNRT_CUDA_DRIVER names, and its
// state in `fake`; whether it was found.
static int attach_fake_driver(void) {
  const char *path = getenv("ATTNRT_CUDA_DRIVER");
  EXPECT(attnrt_init(), ATTNRT_SUCCESS);
  fake = find_fake_state(path ? path : "");
  check(fake != NULL, "the fake driver's state is found");
  return fake != NULL;
}

// With the fake driver: the grids run() launches.
static void run_packed(void) {
  if (!attach_fake_driver())
    return;
  int launches = fake->launches;
  check_packed_sizes();
  check(fake->launches == launches, "empty and rejected calls launched "
                                    "nothing (%d launches)",
        fake->launches - launches);
  // 100 query tokens, group 2, 64-row tiles, 3 sequences:
  // floor(100 * 2 / 64) + 3 = 6 blocks in x.
  attnrt_attention_kernel k = packed_kernel(0, 64, 0);
  attnrt_attention_call call = packed_call(3, 100, 300);
  expect_packed("packed run(B 3, total_q 100)",
                attnrt_attention_run(&k, &call), ATTN_SUCCESS, "");
  check(fake->launches == launches + 1 && fake->last_grid[0] == 6 &&
            fake->last_grid[1] == 2 && fake->last_grid[2] == 1,
        "packed prefill grid (%u, %u, %u) is (6, 2, 1)", fake->last_grid[0],
        fake->last_grid[1], fake->last_grid[2]);
  // 16-row tiles: floor(200 / 16) + 3 = 15.
  attnrt_attention_kernel k16 = packed_kernel(0, 16, 0);
  expect_packed("packed run(16-row tiles)", attnrt_attention_run(&k16, &call),
                ATTN_SUCCESS, "");
  check(fake->last_grid[0] == 15, "packed prefill grid x is 15 (%u)",
        fake->last_grid[0]);
  // One sequence of 1 token: floor(2 / 64) + 1 = 1 block.
  call = packed_call(1, 1, 7);
  expect_packed("packed run(B 1, total_q 1)", attnrt_attention_run(&k, &call),
                ATTN_SUCCESS, "");
  check(fake->last_grid[0] == 1, "one token, one block (%u)",
        fake->last_grid[0]);
  // Decode: rows = total_q * q_heads = 400, split grid z = batch * 2.
  attnrt_attention_kernel decode = packed_kernel(1, 0, 2);
  call = packed_call(3, 100, 300);
  call.num_splits = 3;
  give_packed_decode_workspace("packed decode workspace_bytes(3 splits)",
                               &decode, &call);
  launches = fake->launches;
  expect_packed("packed decode run", attnrt_attention_run(&decode, &call),
                ATTN_SUCCESS, "");
  check(fake->launches == launches + 2 && fake->last_grid[0] == 400 &&
            fake->last_grid[1] == 1,
        "split + combine launched, combine grid x = rows = 400 (%u)",
        fake->last_grid[0]);
  // The combine's contract says programmatic: cuLaunchKernelEx with
  // programmatic stream serialization, the split an ordinary launch.
  check(fake->last_launch_programmatic == 1,
        "the combine launched programmatically (%d)",
        fake->last_launch_programmatic);
  call = packed_call(0, 0, 0);
  launches = fake->launches;
  expect_packed("packed decode run(B 0, no workspace)",
                attnrt_attention_run(&decode, &call), ATTN_SUCCESS, "");
  check(fake->launches == launches, "B 0 launched nothing");
}

// A decode call whose combine is programmatic: with cuLaunchKernelEx in the
// driver it goes through it, without (a driver before CUDA 12) it is an
// ordinary launch, and the call succeeds either way. FAKE_EXPECT_EX says
// which driver this is (1: with).
static void run_programmatic(void) {
  if (!attach_fake_driver())
    return;
  const char *expect = getenv("FAKE_EXPECT_EX");
  int with_ex = expect && strcmp(expect, "1") == 0;
  attnrt_attention_kernel decode = packed_kernel(1, 0, 2);
  attnrt_attention_call call = packed_call(3, 100, 300);
  call.num_splits = 3;
  static max_align_t workspace[316800 / sizeof(max_align_t) + 1];
  call.workspace = workspace;
  call.workspace_bytes = sizeof workspace;
  int launches = fake->launches, programmatic = fake->programmatic_launches;
  expect_packed("decode run, programmatic combine",
                attnrt_attention_run(&decode, &call), ATTN_SUCCESS, "");
  check(fake->launches == launches + 2, "split and combine launched (%d)",
        fake->launches - launches);
  check(fake->programmatic_launches == programmatic + with_ex &&
            fake->last_launch_programmatic == with_ex,
        "the combine's launch is programmatic: %d (expected %d)",
        fake->last_launch_programmatic, with_ex);
}

// Decode code with a one-split kernel (decode_unsplit, launched on the
// prefill grid of 16-row tiles) beside the split and combine pair: a call
// of one split runs it alone and needs no workspace; a call of more runs
// the pair.
static void run_decode_unsplit(void) {
  if (!attach_fake_driver())
    return;
  packed_kernel(0, 16, 0); // fills packed_launches[0]
  attnrt_attention_kernel decode = packed_kernel(1, 0, 2);
  static attnrt_launch_facts three[3];
  three[0] = packed_launches[1][0];
  three[1] = packed_launches[0][0]; // a prefill launch's grid and params
  three[1].role = ATTNRT_ROLE_DECODE_UNSPLIT;
  three[2] = packed_launches[1][1];
  static attnrt_device_code code;
  code = packed_code[1];
  code.launches = three;
  code.num_launches = 3;
  static void *loaded[ATTNRT_MAX_DEVICES];
  decode.code = &code;
  decode.loaded = loaded;
  attnrt_attention_call call = packed_call(3, 100, 300);
  call.num_splits = 1;
  size_t bytes = 1;
  expect_packed("decode workspace_bytes(1 split)",
                attnrt_attention_workspace_bytes(&decode, &call, &bytes),
                ATTN_SUCCESS, "");
  check(bytes == 0, "one split needs no workspace (%zu bytes)", bytes);
  int launches = fake->launches;
  expect_packed("decode run(1 split, no workspace)",
                attnrt_attention_run(&decode, &call), ATTN_SUCCESS, "");
  // floor(100 * 2 / 16) + 3 = 15 tiles.
  check(fake->launches == launches + 1 && fake->last_grid[0] == 15 &&
            fake->last_grid[1] == 2 && !fake->last_launch_programmatic,
        "one split: the unsplit kernel alone, grid (%u, %u, %u)",
        fake->last_grid[0], fake->last_grid[1], fake->last_grid[2]);
  call.num_splits = 3;
  expect_packed("decode run(3 splits, no workspace)",
                attnrt_attention_run(&decode, &call),
                ATTN_ERROR_WORKSPACE_TOO_SMALL, "316800 are needed");
  give_packed_decode_workspace("decode workspace_bytes(3 splits)", &decode,
                               &call);
  launches = fake->launches;
  expect_packed("decode run(3 splits)", attnrt_attention_run(&decode, &call),
                ATTN_SUCCESS, "");
  check(fake->launches == launches + 2 && fake->last_grid[0] == 400,
        "3 splits: split and combine, not the unsplit kernel (%d launches, "
        "last grid x %u)",
        fake->launches - launches, fake->last_grid[0]);
}

// On a compute capability 9.0 device (FAKE_CUDA_CC=90) arch-specific code
// (sm_90a) goes before plain sm_90 code, which suits it as well: here the
// two differ only in their Q tile (64 rows plain, 16 arch-specific), which
// shows in the grid the run launches.
static void run_arch_specific(void) {
  if (!attach_fake_driver())
    return;
  attnrt_attention_kernel k = packed_kernel(0, 64, 0);
  static attnrt_launch_facts plain[1], specific[1];
  plain[0] = specific[0] = packed_launches[0][0];
  specific[0].grid[0].value = 16;
  static const attnrt_device_code both[2] = {
      {90, 0, 0, tiny_ptx, sizeof tiny_ptx, plain, 1},
      {90, 1, 0, tiny_ptx, sizeof tiny_ptx, specific, 1}};
  static void *loaded[ATTNRT_MAX_DEVICES];
  k.code = both;
  k.num_code = 2;
  k.loaded = loaded;
  // 100 query tokens, group 2, 3 sequences: floor(200 / 16) + 3 = 15
  // blocks in x on 16-row tiles, 6 on 64-row ones.
  attnrt_attention_call call = packed_call(3, 100, 300);
  expect_packed("run(sm_90 and sm_90a code, compute capability 9.0)",
                attnrt_attention_run(&k, &call), ATTN_SUCCESS, "");
  check(fake->last_grid[0] == 15,
        "the sm_90a code ran (grid x %u: 15 on its tiles, 6 on sm_90's)",
        fake->last_grid[0]);
}

// A call on Q/O [batch, hq, sq, d] and K/V [batch, hkv, sk, d] (row-major;
// the pointers are never read: the fake driver runs nothing).
static attnrt_attention_call bhsd_call(long long batch, long long hq,
                                       long long hkv, long long sq,
                                       long long sk, long long d) {
  attnrt_attention_call call;
  memset(&call, 0, sizeof call);
  const long long q[4] = {batch, hq, sq, d}, kv[4] = {batch, hkv, sk, d};
  memcpy(call.sizes[ATTNRT_Q], q, sizeof q);
  memcpy(call.sizes[ATTNRT_O], q, sizeof q);
  memcpy(call.sizes[ATTNRT_K], kv, sizeof kv);
  memcpy(call.sizes[ATTNRT_V], kv, sizeof kv);
  for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o)
    call.data[o] = fake_address(o);
  return call;
}

// Q's tensor map (AttnAttrs.td): q [2, 4, 100, 64] f16, 2 K/V heads
// (group 2), 64-row tiles. The driver gets the view [B, Hkv, Sq, group, D]
// innermost first, the group dim with the head's stride and the K/V head
// dim with twice it, and boxes of 64 columns by 2 heads by 32 queries.
// (Strides TMA cannot take are refused for every kernel before any map:
// rows must be 16-byte aligned.)
//
// O's map (`mapped` = ATTNRT_O, the wgmma tier's TMA store) is the same
// view of O, whose own strides count: here O is [B, Sq, Hq, D] in memory
// (the layout engines often keep), passed as [B, Hq, Sq, D] strides.
static void check_q_view_map(int mapped) {
  if (!attach_fake_driver())
    return;
  static attnrt_launch_facts launch[1];
  launch[0] = (attnrt_launch_facts){"fake_noop",
                                    ATTNRT_ROLE_PREFILL,
                                    128,
                                    0,
                                    3,
                                    {{0, ATTNRT_SIZE_GROUP_ROWS, 64},
                                     {1, ATTNRT_SIZE_KV_HEADS, 1},
                                     {2, ATTNRT_SIZE_BATCH, 1}},
                                    5,
                                    {{ATTNRT_PARAM_TENSOR_MAP, mapped},
                                     {ATTNRT_PARAM_MEMREF, ATTNRT_Q},
                                     {ATTNRT_PARAM_MEMREF, ATTNRT_K},
                                     {ATTNRT_PARAM_MEMREF, ATTNRT_V},
                                     {ATTNRT_PARAM_MEMREF, ATTNRT_O}},
                                    0,
                                    0,
                                    0,
                                    {{0}},
                                    64,
                                    2,
                                    0,
                                    0};
  static const attnrt_device_code code = {80, 0, 0, tiny_ptx,
                                          sizeof tiny_ptx, launch, 1};
  static void *loaded[ATTNRT_MAX_DEVICES];
  attnrt_attention_kernel k = {"q_map", {{0}}, 0, &code, 1, loaded, 0, 0, NULL};
  const attnrt_operand_type tensor = {4, 2, 1, {0, 0, 0, 0}};
  k.operands[ATTNRT_Q] = k.operands[ATTNRT_K] = tensor;
  k.operands[ATTNRT_V] = k.operands[ATTNRT_O] = tensor;
  attnrt_attention_call call = bhsd_call(2, 4, 2, 100, 300, 64);
  // Elements: query Hq * D = 256, head D, batch Sq * Hq * D.
  static const long long bshd[4] = {100 * 256, 64, 256, 1};
  if (mapped == ATTNRT_O) {
    const attnrt_operand_type strided = {4, 2, 0, {-1, -1, -1, -1}};
    k.operands[ATTNRT_O] = strided;
    call.strides[ATTNRT_O] = bshd;
  }
  int calls = fake->tensor_map_calls;
  expect_packed(mapped == ATTNRT_Q ? "run(tensor_map(q))"
                                   : "run(tensor_map(o))",
                attnrt_attention_run(&k, &call), ATTN_SUCCESS, "");
  check(fake->tensor_map_calls == calls + 1 && fake->tensor_map_rank == 5,
        "one rank-5 map (%d calls, rank %d)", fake->tensor_map_calls - calls,
        fake->tensor_map_rank);
  const unsigned long long *d = fake->tensor_map_dims,
                           *st = fake->tensor_map_strides;
  check(d[0] == 64 && d[1] == 2 && d[2] == 100 && d[3] == 2 && d[4] == 2,
        "dims D, group, Sq, Hkv, B = (%llu %llu %llu %llu %llu)", d[0], d[1],
        d[2], d[3], d[4]);
  // Bytes: query 128, head 100 * 128, K/V head 2 heads, batch 4 heads;
  // O: head 128, query 512, batch 100 queries.
  if (mapped == ATTNRT_Q)
    check(st[0] == 12800 && st[1] == 128 && st[2] == 25600 && st[3] == 51200,
          "byte strides group, Sq, Hkv, B = (%llu %llu %llu %llu)", st[0],
          st[1], st[2], st[3]);
  else
    check(st[0] == 128 && st[1] == 512 && st[2] == 256 && st[3] == 51200,
          "O's byte strides group, Sq, Hkv, B = (%llu %llu %llu %llu)", st[0],
          st[1], st[2], st[3]);
  const unsigned *box = fake->tensor_map_box;
  check(box[0] == 64 && box[1] == 2 && box[2] == 32 && box[3] == 1 &&
            box[4] == 1,
        "box 64 columns, 2 heads, 32 queries (%u %u %u %u %u)", box[0], box[1],
        box[2], box[3], box[4]);
}

// Which prefill alternative runs (attnrt_internal_prefill_choice in attention_contract.c): 128-row
// tiles (384 threads), then 64-row ones preferred up to a K/V length of 512
// (max_kv_len, 128 threads), then 64 rows on 8 warps (256 threads), the
// last resort of small grids. The fake GPU has 108 multiprocessors; group 1.
static void run_prefill_choice(void) {
  if (!attach_fake_driver())
    return;
  static attnrt_launch_facts launch[3];
  const int rows[3] = {128, 64, 64}, threads[3] = {384, 128, 256};
  for (int i = 0; i < 3; ++i)
    launch[i] = (attnrt_launch_facts){
        .kernel = "fake_noop",
        .role = ATTNRT_ROLE_PREFILL,
        .threads = threads[i],
        .num_grid_terms = 3,
        .grid = {{0, ATTNRT_SIZE_GROUP_ROWS, rows[i]},
                 {1, ATTNRT_SIZE_KV_HEADS, 1},
                 {2, ATTNRT_SIZE_BATCH, 1}},
        .num_params = 4,
        .params = {{ATTNRT_PARAM_MEMREF, ATTNRT_Q},
                   {ATTNRT_PARAM_MEMREF, ATTNRT_K},
                   {ATTNRT_PARAM_MEMREF, ATTNRT_V},
                   {ATTNRT_PARAM_MEMREF, ATTNRT_O}},
        .block_q = rows[i],
        .group = 1,
        .max_kv_len = i == 1 ? 512 : 0};
  static const attnrt_device_code code = {
      80, 0, 0, tiny_ptx, sizeof tiny_ptx, launch, 3};
  static void *loaded[ATTNRT_MAX_DEVICES];
  attnrt_attention_kernel k = {"choice", {{0}}, 0, &code, 1,
                               loaded,   0,     0, NULL};
  const attnrt_operand_type tensor = {4, 2, 1, {0, 0, 0, 0}};
  k.operands[ATTNRT_Q] = k.operands[ATTNRT_K] = tensor;
  k.operands[ATTNRT_V] = k.operands[ATTNRT_O] = tensor;
  static const struct {
    long long batch, q_len, kv_len;
    unsigned threads, grid_x;
    const char *why;
  } cases[] = {
      {4, 4096, 4096, 384, 32, "long: 128-row tiles"},
      {32, 512, 512, 128, 8, "kv_len 512: the max_kv_len alternative"},
      {32, 4096, 512, 128, 64, "Sq 4096 over kv_len 512: the same"},
      {32, 513, 513, 384, 5, "kv_len 513: 128-row tiles again"},
      {1, 512, 512, 256, 8, "kv_len 512 on 16 blocks: the last resort"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    attnrt_attention_call call = bhsd_call(cases[c].batch, 2, 2,
                                           cases[c].q_len, cases[c].kv_len, 64);
    int result = attnrt_attention_run(&k, &call);
    check(result == ATTN_SUCCESS && fake->last_block[0] == cases[c].threads &&
              fake->last_grid[0] == cases[c].grid_x,
          "%s: B %lld Sq %lld Sk %lld ran %u threads on %u blocks in x "
          "(status %d)",
          cases[c].why, cases[c].batch, cases[c].q_len, cases[c].kv_len,
          fake->last_block[0], fake->last_grid[0], result);
  }
}

//===----------------------------------------------------------------------===//
// Overlap: an operand a call writes shares no byte with another
//===----------------------------------------------------------------------===//

// One buffer of a call: operand `index` (ATTNRT_Q ...), capture `index`,
// or the workspace; `bytes` from its start (row-major), `written` whether
// the call writes it. Every size here is a multiple of 16 bytes, so that
// each placement below keeps the 16-byte alignment the kernels need.
enum { OPERAND, CAPTURE, WORKSPACE };
struct buffer_slot {
  const char *name;
  int kind, index;
  unsigned long long bytes;
  int written;
};

static unsigned long long address_of(const attnrt_attention_call *call,
                                     const struct buffer_slot *slot) {
  const void *at = slot->kind == OPERAND   ? call->data[slot->index]
                   : slot->kind == CAPTURE ? call->capture_data[slot->index]
                                           : call->workspace;
  return (unsigned long long)(uintptr_t)at;
}

static void place(attnrt_attention_call *call, const struct buffer_slot *slot,
                  unsigned long long at) {
  void *pointer = (void *)(uintptr_t)at;
  if (slot->kind == OPERAND)
    call->data[slot->index] = pointer;
  else if (slot->kind == CAPTURE)
    call->capture_data[slot->index] = pointer;
  else
    call->workspace = pointer;
}

// Whether `call` is refused as the overlap of `w` (written) and `x`: the
// code, a message naming both (the written one first; where both are
// written, the runtime names the one it lists first), and no launch.
// Else `why` says what happened.
static bool refused_as_overlap(const attnrt_attention_kernel *kernel,
                               const attnrt_attention_call *call,
                               const struct buffer_slot *w,
                               const struct buffer_slot *x, char *why,
                               size_t size) {
  int launches = fake ? fake->launches : 0;
  int result = attnrt_attention_run(kernel, call);
  const char *error = attnrt_last_error();
  char named[64], reversed[64];
  snprintf(named, sizeof named, "%s overlaps %s: ", w->name, x->name);
  snprintf(reversed, sizeof reversed, "%s overlaps %s: ", x->name, w->name);
  bool ok = result == ATTN_ERROR_UNSUPPORTED_STRIDE &&
            (strstr(error, named) || (x->written && strstr(error, reversed))) &&
            strstr(error, "a written operand may share no byte with another "
                          "operand") &&
            (!fake || fake->launches == launches);
  if (!ok)
    snprintf(why, size, "status %d, %d launches, \"%s\"", result,
             fake ? fake->launches - launches : 0, error);
  return ok;
}

static bool accepted(const attnrt_attention_kernel *kernel,
                     const attnrt_attention_call *call, char *why,
                     size_t size) {
  int launches = fake ? fake->launches : 0;
  int result = attnrt_attention_run(kernel, call);
  // Without a driver a call that passes every check fails on the driver.
  bool ok = fake ? result == ATTN_SUCCESS && fake->launches > launches
                 : result == ATTN_ERROR_NO_DRIVER;
  if (!ok)
    snprintf(why, size, "status %d, %d launches, \"%s\"", result,
             fake ? fake->launches - launches : 0, attnrt_last_error());
  return ok;
}

// `call` with slot i at fake_address(i) passes; then for each written slot
// w and every other slot x (read or written), w placed over x is refused:
// at x's start, 16 bytes into x, on x's last 16 bytes, and ending 16 bytes
// into x; w right after x and right before x (adjacent, no byte shared)
// are accepted. One line per pair.
static void check_overlaps(const char *what,
                           const attnrt_attention_kernel *kernel,
                           attnrt_attention_call call,
                           const struct buffer_slot *slots, int n) {
  for (int i = 0; i < n; ++i)
    place(&call, &slots[i], (unsigned long long)(uintptr_t)fake_address(i));
  char why[512] = "";
  check(accepted(kernel, &call, why, sizeof why),
        "%s: every buffer apart is accepted%s%s", what, why[0] ? ": " : "",
        why);
  for (int wi = 0; wi < n; ++wi) {
    const struct buffer_slot *w = &slots[wi];
    if (!w->written)
      continue;
    unsigned long long home = address_of(&call, w);
    for (int xi = 0; xi < n; ++xi) {
      if (xi == wi)
        continue;
      const struct buffer_slot *x = &slots[xi];
      unsigned long long begin = address_of(&call, x), end = begin + x->bytes;
      unsigned long long rounded = (w->bytes + 15) / 16 * 16;
      const struct {
        const char *how;
        unsigned long long at;
        bool overlaps;
      } placements[] = {
          {"at its start", begin, true},
          {"16 bytes into it", x->bytes > 16 ? begin + 16 : 0, true},
          {"on its last 16 bytes", begin + (x->bytes - 1) / 16 * 16, true},
          {"ending 16 bytes into it", begin - rounded + 16, true},
          {"right after it", end, false},
          {"right before it", begin - w->bytes, false},
      };
      bool ok = true;
      why[0] = '\0';
      for (size_t p = 0; ok && p < sizeof placements / sizeof *placements;
           ++p) {
        if (!placements[p].at)
          continue;
        place(&call, w, placements[p].at);
        char detail[400] = "";
        ok = placements[p].overlaps
                 ? refused_as_overlap(kernel, &call, w, x, detail,
                                      sizeof detail)
                 : accepted(kernel, &call, detail, sizeof detail);
        if (!ok)
          snprintf(why, sizeof why, ": placed %s, %s", placements[p].how,
                   detail);
      }
      place(&call, w, home);
      check(ok,
            "%s: %s over %s refused, naming both; %s next to it "
            "accepted%s",
            what, w->name, x->name, w->name, why);
    }
  }
}

// Read-only operands may alias: `a` placed at `b` is accepted.
static void check_read_alias(const char *what,
                             const attnrt_attention_kernel *kernel,
                             attnrt_attention_call call,
                             const struct buffer_slot *slots, int n, int a,
                             int b) {
  for (int i = 0; i < n; ++i)
    place(&call, &slots[i], (unsigned long long)(uintptr_t)fake_address(i));
  place(&call, &slots[a], address_of(&call, &slots[b]));
  char why[512] = "";
  check(accepted(kernel, &call, why, sizeof why),
        "%s: %s == %s (both only read) is accepted%s", what, slots[a].name,
        slots[b].name, why);
}

// The kernels: the bhsd prefill of run_prefill_choice's shape (q, k, v ->
// o) with a capture its mod regions read, the packed prefill (lse,
// cu_seqlens) and decode (workspace) of packed_kernel, and a cache append
// (k_new, v_new, kv_lens -> k_cache, v_cache).
static attnrt_attention_kernel bhsd_capture_kernel(void) {
  static attnrt_launch_facts launch[1];
  launch[0] = (attnrt_launch_facts){
      .kernel = "fake_noop",
      .role = ATTNRT_ROLE_PREFILL,
      .threads = 128,
      .num_grid_terms = 3,
      .grid = {{0, ATTNRT_SIZE_GROUP_ROWS, 64},
               {1, ATTNRT_SIZE_KV_HEADS, 1},
               {2, ATTNRT_SIZE_BATCH, 1}},
      .num_params = 5,
      .params = {{ATTNRT_PARAM_MEMREF, ATTNRT_Q},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_K},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_V},
                 {ATTNRT_PARAM_CAPTURE, 0},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_O}}};
  static const attnrt_device_code code = {80, 0, 0, tiny_ptx, sizeof tiny_ptx,
                                          launch, 1};
  static void *loaded[ATTNRT_MAX_DEVICES];
  static const attnrt_operand_type capture = {2, 4, 1, {0}}; // [?, ?] f32
  attnrt_attention_kernel k = {"with_capture", {{0}}, 0, &code, 1,
                               loaded,         0,     1, &capture};
  const attnrt_operand_type tensor = {4, 2, 1, {0, 0, 0, 0}};
  k.operands[ATTNRT_Q] = k.operands[ATTNRT_K] = tensor;
  k.operands[ATTNRT_V] = k.operands[ATTNRT_O] = tensor;
  return k;
}

// k_new, v_new [B, 2, 1, 64] f16, kv_lens [B] i32 -> k_cache, v_cache
// [B, 2, capacity, 64] f16; one append launch over [new_len, kv_heads,
// batch].
static attnrt_attention_kernel append_kernel(void) {
  static attnrt_launch_facts launch[1];
  launch[0] = (attnrt_launch_facts){
      .kernel = "fake_noop",
      .role = ATTNRT_ROLE_APPEND,
      .threads = 128,
      .num_grid_terms = 3,
      .grid = {{0, ATTNRT_SIZE_NEW_LEN, 1},
               {1, ATTNRT_SIZE_KV_HEADS, 1},
               {2, ATTNRT_SIZE_BATCH, 1}},
      .num_params = 5,
      .params = {{ATTNRT_PARAM_MEMREF, ATTNRT_K_NEW},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_V_NEW},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_KV_LENS},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_K},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_V}}};
  static const attnrt_device_code code = {80, 0, 0, tiny_ptx, sizeof tiny_ptx,
                                          launch, 1};
  static void *loaded[ATTNRT_MAX_DEVICES];
  attnrt_attention_kernel k = {"append", {{0}}, 0, &code, 1, loaded, 0, 0,
                               NULL};
  const attnrt_operand_type tensor = {4, 2, 1, {0, 0, 0, 0}},
                            lens = {1, 4, 1, {0}};
  k.operands[ATTNRT_K_NEW] = k.operands[ATTNRT_V_NEW] = tensor;
  k.operands[ATTNRT_K] = k.operands[ATTNRT_V] = tensor;
  k.operands[ATTNRT_KV_LENS] = lens;
  return k;
}

static attnrt_attention_call append_call(long long batch,
                                         long long capacity) {
  attnrt_attention_call call;
  memset(&call, 0, sizeof call);
  const long long fresh[4] = {batch, 2, 1, 64}, cache[4] = {batch, 2, capacity,
                                                            64};
  memcpy(call.sizes[ATTNRT_K_NEW], fresh, sizeof fresh);
  memcpy(call.sizes[ATTNRT_V_NEW], fresh, sizeof fresh);
  memcpy(call.sizes[ATTNRT_K], cache, sizeof cache);
  memcpy(call.sizes[ATTNRT_V], cache, sizeof cache);
  call.sizes[ATTNRT_KV_LENS][0] = batch;
  return call;
}

// K and V caches in one buffer, as FlashInfer and vLLM's paged layouts
// keep them: apart though their extents overlap, unless they truly share
// a byte. The caches are [4, 2, 128, 64] f16 views of a buffer
// [4, 2 (k, v), 2, 128, 64] (K and V alternate per batch entry) or
// [4, 2, 2 (k, v), 128, 64] (per head), with the append kernel's caches
// strided.
static void check_interleaved_caches(void) {
  attnrt_attention_kernel k = append_kernel();
  const attnrt_operand_type strided = {4, 2, 0, {-1, -1, -1, 1}};
  k.operands[ATTNRT_K] = k.operands[ATTNRT_V] = strided;
  attnrt_attention_call call = append_call(4, 128);
  for (int i = 0; i < 3; ++i)
    call.data[i == 0 ? ATTNRT_K_NEW : i == 1 ? ATTNRT_V_NEW : ATTNRT_KV_LENS] =
        fake_address(i);
  const char *buffer = (const char *)fake_address(3);
  const long long per_batch[4] = {2 * 2 * 128 * 64, 128 * 64, 64, 1},
                  per_head[4] = {2 * 2 * 128 * 64, 2 * 128 * 64, 64, 1};
  const struct {
    const char *what;
    const long long *strides;
    long long v_offset; // bytes from K's pointer
    bool apart;
  } cases[] = {
      {"alternating per batch entry", per_batch, 2 * 128 * 64 * 2, true},
      {"alternating per head", per_head, 128 * 64 * 2, true},
      {"alternating per batch entry, V 16 bytes early", per_batch,
       2 * 128 * 64 * 2 - 16, false},
      {"alternating per head, V 16 bytes late", per_head,
       128 * 64 * 2 + 16, false},
      {"alternating per head, V on K's next head", per_head,
       2 * 128 * 64 * 2, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    call.data[ATTNRT_K] = buffer;
    call.data[ATTNRT_V] = buffer + cases[i].v_offset;
    call.strides[ATTNRT_K] = call.strides[ATTNRT_V] = cases[i].strides;
    char why[512] = "";
    const struct buffer_slot v = {"v_cache", OPERAND, ATTNRT_V, 0, 1},
                             kc = {"k_cache", OPERAND, ATTNRT_K, 0, 1};
    bool ok = cases[i].apart
                  ? accepted(&k, &call, why, sizeof why)
                  : refused_as_overlap(&k, &call, &kc, &v, why, sizeof why);
    check(ok, "append: K and V caches interleaved in one buffer, %s: %s%s%s",
          cases[i].what, cases[i].apart ? "accepted" : "refused",
          why[0] ? ": " : "", why);
  }
}

static void check_overlap_calls(void) {
  // Prefill: q [2, 4, 100, 64] f16, k/v [2, 2, 300, 64], capture0 [4, 4] f32.
  {
    attnrt_attention_kernel k = bhsd_capture_kernel();
    attnrt_attention_call call = bhsd_call(2, 4, 2, 100, 300, 64);
    call.capture_sizes[0][0] = call.capture_sizes[0][1] = 4;
    const unsigned long long q = 2 * 4 * 100 * 64 * 2, kv = 2 * 2 * 300 * 64 * 2;
    const struct buffer_slot slots[] = {
        {"q", OPERAND, ATTNRT_Q, q, 0},
        {"k", OPERAND, ATTNRT_K, kv, 0},
        {"v", OPERAND, ATTNRT_V, kv, 0},
        {"o", OPERAND, ATTNRT_O, q, 1},
        {"capture0", CAPTURE, 0, 4 * 4 * 4, 0}};
    int n = sizeof slots / sizeof *slots;
    check_overlaps("prefill", &k, call, slots, n);
    check_read_alias("prefill", &k, call, slots, n, 2, 1); // v == k
    check_read_alias("prefill", &k, call, slots, n, 4, 0); // capture0 in q
  }
  // Packed prefill: q/o [100, 4, 64] f16, k/v [300, 2, 64], lse [100, 4]
  // f32, cu_seqlens_q/k [4] i32.
  const unsigned long long q = 100 * 4 * 64 * 2, kv = 300 * 2 * 64 * 2;
  const struct buffer_slot packed[] = {
      {"q", OPERAND, ATTNRT_Q, q, 0},
      {"k", OPERAND, ATTNRT_K, kv, 0},
      {"v", OPERAND, ATTNRT_V, kv, 0},
      {"cu_seqlens_q", OPERAND, ATTNRT_CU_SEQLENS_Q, 16, 0},
      {"cu_seqlens_k", OPERAND, ATTNRT_CU_SEQLENS_K, 16, 0},
      {"o", OPERAND, ATTNRT_O, q, 1},
      {"lse", OPERAND, ATTNRT_LSE, 100 * 4 * 4, 1},
      {"workspace", WORKSPACE, 0, 400 * 3 * 66 * 4, 1}};
  {
    attnrt_attention_kernel k = packed_kernel(0, 64, 0);
    attnrt_attention_call call = packed_call(3, 100, 300);
    check_overlaps("packed", &k, call, packed, 7);
    check_read_alias("packed", &k, call, packed, 7, 2, 1); // v == k
    check_read_alias("packed", &k, call, packed, 7, 4, 3); // the offsets
    // A batch without query tokens: q, o and lse have no byte to share.
    call = packed_call(2, 0, 10);
    call.data[ATTNRT_O] = call.data[ATTNRT_LSE] = call.data[ATTNRT_Q];
    int launches = fake ? fake->launches : 0;
    int result = attnrt_attention_run(&k, &call);
    check(result == ATTN_SUCCESS && (!fake || fake->launches == launches),
          "packed: o == lse == q of no tokens is accepted (status %d)",
          result);
  }
  // Packed decode at 3 splits: the workspace (its 316800 bytes as given).
  {
    attnrt_attention_kernel k = packed_kernel(1, 0, 2);
    attnrt_attention_call call = packed_call(3, 100, 300);
    call.num_splits = 3;
    call.workspace_bytes = 400 * 3 * 66 * 4;
    check_overlaps("packed decode", &k, call, packed, 8);
    // The workspace is as large as the call says, needed or not: one
    // claimed SIZE_MAX bytes 1 MiB below q reaches over it.
    for (int i = 0; i < 8; ++i)
      place(&call, &packed[i], (unsigned long long)(uintptr_t)fake_address(i));
    call.workspace = (char *)(uintptr_t)fake_address(0) - (1 << 20);
    call.workspace_bytes = SIZE_MAX;
    char why[512] = "";
    check(refused_as_overlap(&k, &call, &packed[7], &packed[0], why,
                             sizeof why),
          "packed decode: a workspace of SIZE_MAX bytes below q overlaps "
          "it (%s)",
          attnrt_last_error());
  }
  // Append: k_new/v_new [4, 2, 1, 64] f16, kv_lens [4] i32, caches
  // [4, 2, 128, 64].
  {
    attnrt_attention_kernel k = append_kernel();
    attnrt_attention_call call = append_call(4, 128);
    const unsigned long long fresh = 4 * 2 * 64 * 2, cache = 4 * 2 * 128 * 64 * 2;
    const struct buffer_slot slots[] = {
        {"k_new", OPERAND, ATTNRT_K_NEW, fresh, 0},
        {"v_new", OPERAND, ATTNRT_V_NEW, fresh, 0},
        {"kv_lens", OPERAND, ATTNRT_KV_LENS, 16, 0},
        {"k_cache", OPERAND, ATTNRT_K, cache, 1},
        {"v_cache", OPERAND, ATTNRT_V, cache, 1}};
    int n = sizeof slots / sizeof *slots;
    check_overlaps("append", &k, call, slots, n);
    check_read_alias("append", &k, call, slots, n, 1, 0); // v_new == k_new
  }
  check_interleaved_caches();
}

// With the fake driver: every pair.
static void run_overlap(void) {
  if (!attach_fake_driver())
    return;
  check_overlap_calls();
}

// Without a driver: the overlap is refused before the driver is needed
// (ATTNRT_CUDA_DRIVER names no library; a call passing every check gets
// ATTN_ERROR_NO_DRIVER).
static void run_overlap_no_driver(void) {
  fake = NULL;
  check_overlap_calls();
}

//===----------------------------------------------------------------------===//
// Split counts: _workspace_bytes refuses those _run refuses
//===----------------------------------------------------------------------===//

// `count` splits of `decode` (packed_call(3, 100, 300)): can_implement,
// workspace_bytes and run (with a workspace claimed as large as can be)
// all refuse it with `status` and one message containing `message`, and
// workspace_bytes leaves *bytes 0.
static void expect_split_count_refused(const char *what,
                                       const attnrt_attention_kernel *decode,
                                       long long count, const char *message) {
  attnrt_attention_call call = packed_call(3, 100, 300);
  call.num_splits = count;
  // Above every operand, so that SIZE_MAX bytes overlap none.
  call.workspace = (void *)(uintptr_t)fake_address(40);
  call.workspace_bytes = SIZE_MAX;
  char texts[3][512];
  int results[3];
  results[0] = attnrt_attention_can_implement(decode, &call);
  snprintf(texts[0], sizeof texts[0], "%s", attnrt_last_error());
  size_t bytes = 12345;
  results[1] = attnrt_attention_workspace_bytes(decode, &call, &bytes);
  snprintf(texts[1], sizeof texts[1], "%s", attnrt_last_error());
  int launches = fake ? fake->launches : 0;
  results[2] = attnrt_attention_run(decode, &call);
  snprintf(texts[2], sizeof texts[2], "%s", attnrt_last_error());
  bool ok = bytes == 0 && (!fake || fake->launches == launches) &&
            strstr(texts[0], message);
  for (int i = 0; i < 3; ++i)
    ok &= results[i] == ATTN_ERROR_UNSUPPORTED_SIZE &&
          strcmp(texts[i], texts[0]) == 0;
  check(ok,
        "%s: can_implement, workspace_bytes and run -> %d, %d, %d (%s | %s | "
        "%s), bytes %zu",
        what, results[0], results[1], results[2], texts[0], texts[1],
        texts[2], bytes);
}

static void check_split_limits(void) {
  // The split grid's x is the count: 2^31 - 1 blocks at most.
  attnrt_attention_kernel decode = packed_kernel(1, 0, 2);
  expect_split_count_refused("2^31 splits", &decode, 1LL << 31,
                             "kernel fake_noop would need a grid of "
                             "2147483648 blocks in x, more than the "
                             "2147483647 a GPU launches");
  expect_split_count_refused("2^62 splits", &decode, 1LL << 62,
                             "would need a grid of 4611686018427387904 "
                             "blocks in x");
  expect_split_count_refused("INT64_MAX splits", &decode, INT64_MAX,
                             "would need a grid of 4611686018427387904 "
                             "blocks in x");
  // 2^31 - 1 splits: a grid the GPU takes, and a workspace of rows 400 x
  // that many x 66 f32, which run asks for as workspace_bytes says.
  attnrt_attention_call call = packed_call(3, 100, 300);
  call.num_splits = (1LL << 31) - 1;
  size_t bytes = 0;
  int result = attnrt_attention_workspace_bytes(&decode, &call, &bytes);
  unsigned long long wanted = 400ull * ((1ull << 31) - 1) * 66 * 4;
  check(result == (fake ? ATTN_SUCCESS : ATTN_ERROR_NO_DRIVER) &&
            bytes == (fake ? wanted : 0),
        "2^31 - 1 splits: workspace_bytes -> %d, %zu bytes (%s)", result,
        bytes, attnrt_last_error());
  if (fake) {
    call.workspace = (void *)(uintptr_t)fake_address(40);
    call.workspace_bytes = bytes - 1;
    result = attnrt_attention_run(&decode, &call);
    check(result == ATTN_ERROR_WORKSPACE_TOO_SMALL,
          "2^31 - 1 splits: run with a byte less -> %d (%s)", result,
          attnrt_last_error());
    call.workspace_bytes = bytes;
    int launches = fake->launches;
    result = attnrt_attention_run(&decode, &call);
    check(result == ATTN_SUCCESS && fake->launches == launches + 2,
          "2^31 - 1 splits: run with that workspace -> %d, %d launches (%s)",
          result, fake->launches - launches, attnrt_last_error());
  }
  // A split grid of ceildiv(splits, 2^20) blocks takes 2^46 splits, whose
  // workspace (400 x 2^46 x 66 f32) is past 2^62 bytes: refused the same
  // way by all three rather than saturated.
  static attnrt_launch_facts wide[2];
  memcpy(wide, packed_launches[1], sizeof wide);
  wide[0].grid[0].value = 1LL << 20;
  static attnrt_device_code code;
  code = packed_code[1];
  code.launches = wide;
  static void *loaded[ATTNRT_MAX_DEVICES];
  decode.code = &code;
  decode.loaded = loaded;
  expect_split_count_refused("2^46 splits of 2^20 a block", &decode, 1LL << 46,
                             "kernel fake_noop would need a workspace of 2^62 "
                             "bytes or more (70368744177664 splits), too many "
                             "to address");
}

static void run_split_limits(void) {
  if (!attach_fake_driver())
    return;
  check_split_limits();
}

static void run_split_limits_no_driver(void) {
  fake = NULL;
  check_split_limits();
}

static void run_q_tensor_map(void) { check_q_view_map(ATTNRT_Q); }
static void run_o_tensor_map(void) { check_q_view_map(ATTNRT_O); }

//===----------------------------------------------------------------------===//
// A merge kernel (attn.merge_states): its sizes, grid and written operands
//===----------------------------------------------------------------------===//

// o_parts [N, T, 4, 64] f16, lse_parts [N, T, 4] f32 -> o [T, 4, 64] f16,
// lse [T, 4] f32; one merge launch of ceil(T * 4 / 16) blocks.
static attnrt_attention_kernel merge_kernel(void) {
  static attnrt_launch_facts launch[1];
  launch[0] = (attnrt_launch_facts){
      .kernel = "fake_noop",
      .role = ATTNRT_ROLE_MERGE,
      .threads = 128,
      .num_grid_terms = 3,
      .grid = {{0, ATTNRT_SIZE_ROWS, 16},
               {1, ATTNRT_SIZE_CONSTANT, 1},
               {2, ATTNRT_SIZE_CONSTANT, 1}},
      .num_params = 4,
      .params = {{ATTNRT_PARAM_MEMREF, ATTNRT_O_PARTS},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_LSE_PARTS},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_O},
                 {ATTNRT_PARAM_MEMREF, ATTNRT_LSE}}};
  static const attnrt_device_code code = {80, 0, 0, tiny_ptx, sizeof tiny_ptx,
                                          launch, 1};
  static void *loaded[ATTNRT_MAX_DEVICES];
  attnrt_attention_kernel k = {"merge", {{0}}, 0, &code, 1, loaded, 0, 0,
                               NULL};
  k.operands[ATTNRT_O_PARTS] = (attnrt_operand_type){4, 2, 1, {0}};
  k.operands[ATTNRT_LSE_PARTS] = (attnrt_operand_type){3, 4, 1, {0}};
  k.operands[ATTNRT_O] = (attnrt_operand_type){3, 2, 1, {0}};
  k.operands[ATTNRT_LSE] = (attnrt_operand_type){2, 4, 1, {0}};
  return k;
}

static attnrt_attention_call merge_call(long long parts, long long rows) {
  attnrt_attention_call call;
  memset(&call, 0, sizeof call);
  const long long o_parts[4] = {parts, rows, 4, 64},
                  lse_parts[3] = {parts, rows, 4}, o[3] = {rows, 4, 64},
                  lse[2] = {rows, 4};
  memcpy(call.sizes[ATTNRT_O_PARTS], o_parts, sizeof o_parts);
  memcpy(call.sizes[ATTNRT_LSE_PARTS], lse_parts, sizeof lse_parts);
  memcpy(call.sizes[ATTNRT_O], o, sizeof o);
  memcpy(call.sizes[ATTNRT_LSE], lse, sizeof lse);
  const int operands[4] = {ATTNRT_O_PARTS, ATTNRT_LSE_PARTS, ATTNRT_O,
                           ATTNRT_LSE};
  for (int i = 0; i < 4; ++i)
    call.data[operands[i]] = fake_address(i);
  return call;
}

// With the fake driver: a merge of 3 parts of 100 rows of 4 heads is one
// launch of ceil(400 / 16) = 25 blocks, with no Q, K or V (no query or
// K/V heads to divide); a zero row count, and an O written over the
// parts, are refused before the driver.
static void run_merge(void) {
  if (!attach_fake_driver())
    return;
  attnrt_attention_kernel k = merge_kernel();
  attnrt_attention_call call = merge_call(3, 100);
  int launches = fake->launches;
  EXPECT(attnrt_attention_can_implement(&k, &call), ATTN_SUCCESS);
  EXPECT(attnrt_attention_run(&k, &call), ATTN_SUCCESS);
  check(fake->launches == launches + 1 && fake->last_grid[0] == 25 &&
            fake->last_grid[1] == 1 && fake->last_grid[2] == 1,
        "merge grid (%u, %u, %u) is (25, 1, 1)", fake->last_grid[0],
        fake->last_grid[1], fake->last_grid[2]);
  attnrt_attention_call empty = merge_call(3, 0);
  EXPECT(attnrt_attention_run(&k, &empty), ATTN_ERROR_UNSUPPORTED_SIZE);
  expect_message("o dimension 0 is 0");
  attnrt_attention_call over = merge_call(3, 100);
  over.data[ATTNRT_O] = over.data[ATTNRT_O_PARTS];
  EXPECT(attnrt_attention_run(&k, &over), ATTN_ERROR_UNSUPPORTED_STRIDE);
  expect_message("o overlaps o_parts");
  check(fake->launches == launches + 1,
        "the refused merges launched nothing (%d launches after the first)",
        fake->launches - launches - 1);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*run)(void);
  } scenarios[] = {
      {"no-driver", run_no_driver},
      {"fake-driver", run_fake_driver},
      {"no-device", run_no_device},
      {"init-fails", run_init_fails},
      {"stub-driver", run_stub_driver},
      {"missing-symbol", run_missing_symbol},
      {"system-driver", run_system_driver},
      {"launch-contracts", run_launch_contracts},
      {"packed-no-driver", run_packed_no_driver},
      {"packed", run_packed},
      {"arch-specific", run_arch_specific},
      {"q-tensor-map", run_q_tensor_map},
      {"o-tensor-map", run_o_tensor_map},
      {"programmatic", run_programmatic},
      {"prefill-choice", run_prefill_choice},
      {"decode-unsplit", run_decode_unsplit},
      {"overlap", run_overlap},
      {"overlap-no-driver", run_overlap_no_driver},
      {"split-limits", run_split_limits},
      {"split-limits-no-driver", run_split_limits_no_driver},
      {"merge", run_merge},
  };
  size_t count = sizeof scenarios / sizeof scenarios[0];
  for (size_t i = 0; argc == 2 && i < count; ++i) {
    if (strcmp(argv[1], scenarios[i].name) != 0)
      continue;
    scenarios[i].run();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
  }
  fprintf(stderr, "usage: %s SCENARIO, one of:", argv[0]);
  for (size_t i = 0; i < count; ++i)
    fprintf(stderr, " %s", scenarios[i].name);
  fprintf(stderr, "\n");
  return 2;
}
