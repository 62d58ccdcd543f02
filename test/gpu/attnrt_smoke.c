//===- attnrt_smoke.c - libattnrt on a real GPU ---------------------------===//
//
// Loads hand-written PTX through libattnrt and runs it on device 0: a vector
// add checked element by element, a kernel using more than 48 KiB of dynamic
// shared memory (the opt-in path) and the errors a real driver gives for bad
// PTX, a missing kernel, too much shared memory and a faulting kernel. Needs
// an NVIDIA GPU of sm_80 or newer; not part of CI. From the repository root,
// with libattnrt.a built (build/lib/libattnrt.a):
//   cc test/gpu/attnrt_smoke.c -Iruntime/include build/lib/libattnrt.a -ldl
//   -lpthread
// Prints a line per check and "N passed, M failed"; exits 1 if any failed.
//
//===----------------------------------------------------------------------===//

#include "attnrt.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed;
static int failed;

static void check(bool ok, const char *format, ...) {
  printf("%s: ", ok ? "PASS" : "FAIL");
  va_list args;
  va_start(args, format);
  vprintf(format, args);
  va_end(args);
  printf("\n");
  if (ok)
    ++passed;
  else
    ++failed;
}

// Checks a call's status; on a surprise prints attnrt's message.
static bool expect(attnrt_status status, attnrt_status expected,
                   const char *call) {
  bool ok = status == expected;
  check(ok, "%s -> %s%s%s", call, attnrt_status_string(status),
        ok || status == ATTNRT_SUCCESS ? "" : ": ",
        ok || status == ATTNRT_SUCCESS ? "" : attnrt_last_error());
  return ok;
}

#define EXPECT(call, expected) expect((call), (expected), #call)
#define EXPECT_OK(call) expect((call), ATTNRT_SUCCESS, #call)

// c[i] = a[i] + b[i] for i < n, one thread per element.
static const char vector_add_ptx[] =
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry vector_add(\n"
    "    .param .u64 a,\n"
    "    .param .u64 b,\n"
    "    .param .u64 c,\n"
    "    .param .u32 n)\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .f32 %f<4>;\n"
    "    .reg .b64 %rd<11>;\n"
    "\n"
    "    ld.param.u64 %rd1, [a];\n"
    "    ld.param.u64 %rd2, [b];\n"
    "    ld.param.u64 %rd3, [c];\n"
    "    ld.param.u32 %r1, [n];\n"
    "    mov.u32 %r2, %ctaid.x;\n"
    "    mov.u32 %r3, %ntid.x;\n"
    "    mov.u32 %r4, %tid.x;\n"
    "    mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "    setp.ge.u32 %p1, %r5, %r1;\n"
    "    @%p1 bra DONE;\n"
    "    cvta.to.global.u64 %rd4, %rd1;\n"
    "    cvta.to.global.u64 %rd5, %rd2;\n"
    "    cvta.to.global.u64 %rd6, %rd3;\n"
    "    mul.wide.u32 %rd7, %r5, 4;\n"
    "    add.s64 %rd8, %rd4, %rd7;\n"
    "    add.s64 %rd9, %rd5, %rd7;\n"
    "    add.s64 %rd10, %rd6, %rd7;\n"
    "    ld.global.f32 %f1, [%rd8];\n"
    "    ld.global.f32 %f2, [%rd9];\n"
    "    add.f32 %f3, %f1, %f2;\n"
    "    st.global.f32 [%rd10], %f3;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    "\n"
    // Thread t writes 2t+1 to word `words`-1-t of the dynamic shared memory
    // (its far end), then reads what thread ntid-1-t wrote: out[t] =
    // 2(ntid-1-t)+1. Launched with more than 48 KiB, it needs the opt-in.
    ".extern .shared .align 16 .b8 dynamic_shared[];\n"
    "\n"
    ".visible .entry reverse_in_shared(\n"
    "    .param .u64 out,\n"
    "    .param .u32 words)\n"
    "{\n"
    "    .reg .b32 %r<12>;\n"
    "    .reg .b64 %rd<4>;\n"
    "\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    ld.param.u32 %r1, [words];\n"
    "    mov.u32 %r2, %tid.x;\n"
    "    mov.u32 %r3, %ntid.x;\n"
    "    mov.u32 %r4, dynamic_shared;\n"
    "    sub.u32 %r5, %r1, 1;\n"
    "    sub.u32 %r5, %r5, %r2;\n"
    "    shl.b32 %r6, %r5, 2;\n"
    "    add.u32 %r6, %r4, %r6;\n"
    "    shl.b32 %r7, %r2, 1;\n"
    "    add.u32 %r7, %r7, 1;\n"
    "    st.shared.u32 [%r6], %r7;\n"
    "    bar.sync 0;\n"
    "    sub.u32 %r8, %r1, %r3;\n"
    "    add.u32 %r8, %r8, %r2;\n"
    "    shl.b32 %r9, %r8, 2;\n"
    "    add.u32 %r9, %r4, %r9;\n"
    "    ld.shared.u32 %r10, [%r9];\n"
    "    cvta.to.global.u64 %rd2, %rd1;\n"
    "    mul.wide.u32 %rd3, %r2, 4;\n"
    "    add.s64 %rd2, %rd2, %rd3;\n"
    "    st.global.u32 [%rd2], %r10;\n"
    "    ret;\n"
    "}\n";

static const char bad_ptx[] = ".version 8.0\n"
                              ".target sm_80\n"
                              ".address_size 64\n"
                              ".visible .entry broken()\n"
                              "{\n"
                              "    not_an_instruction %r1;\n"
                              "    ret;\n"
                              "}\n";

static unsigned next_random = 12345;
static float random_float(void) {
  next_random = next_random * 1664525u + 1013904223u;
  return (float)(next_random >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static void check_vector_add(attnrt_kernel *vector_add) {
  const unsigned n = (1u << 20) + 3; // a ragged last block
  const size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  if (!a || !b || !c) {
    check(false, "host buffers allocated");
    free(a), free(b), free(c);
    return;
  }
  for (unsigned i = 0; i < n; ++i) {
    a[i] = random_float();
    b[i] = random_float();
    c[i] = NAN;
  }
  attnrt_deviceptr da = 0, db = 0, dc = 0;
  EXPECT_OK(attnrt_malloc(&da, bytes));
  EXPECT_OK(attnrt_malloc(&db, bytes));
  EXPECT_OK(attnrt_malloc(&dc, bytes));
  EXPECT_OK(attnrt_memcpy_htod(da, a, bytes));
  EXPECT_OK(attnrt_memcpy_htod(db, b, bytes));
  EXPECT_OK(attnrt_memset_d8(dc, 0xFF, bytes)); // NaN poison

  attnrt_stream *stream = NULL;
  attnrt_event *start = NULL, *end = NULL;
  EXPECT_OK(attnrt_stream_create(&stream));
  EXPECT_OK(attnrt_event_create(&start));
  EXPECT_OK(attnrt_event_create(&end));
  void *args[] = {&da, &db, &dc, (void *)&n};
  unsigned block = 256, grid = (n + block - 1) / block;
  EXPECT_OK(attnrt_event_record(start, stream));
  EXPECT_OK(
      attnrt_launch(vector_add, grid, 1, 1, block, 1, 1, 0, stream, args));
  EXPECT_OK(attnrt_event_record(end, stream));
  EXPECT_OK(attnrt_stream_synchronize(stream));
  float ms = -1.0f;
  EXPECT_OK(attnrt_event_elapsed_ms(&ms, start, end));
  check(ms > 0.0f && ms < 1000.0f, "vector_add of %u floats took %.3f ms", n,
        (double)ms);
  EXPECT_OK(attnrt_memcpy_dtoh(c, dc, bytes));
  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i)
    wrong += c[i] != a[i] + b[i];
  check(wrong == 0, "vector_add is exact on all %u elements (%u wrong)", n,
        wrong);

  // The same through the default stream.
  EXPECT_OK(attnrt_memset_d8(dc, 0xFF, bytes));
  EXPECT_OK(attnrt_launch(vector_add, grid, 1, 1, block, 1, 1, 0, NULL, args));
  EXPECT_OK(attnrt_synchronize());
  EXPECT_OK(attnrt_memcpy_dtoh(c, dc, bytes));
  wrong = 0;
  for (unsigned i = 0; i < n; ++i)
    wrong += c[i] != a[i] + b[i];
  check(wrong == 0, "vector_add on the default stream is exact (%u wrong)",
        wrong);

  EXPECT_OK(attnrt_event_destroy(start));
  EXPECT_OK(attnrt_event_destroy(end));
  EXPECT_OK(attnrt_stream_destroy(stream));
  EXPECT_OK(attnrt_free(da));
  EXPECT_OK(attnrt_free(db));
  EXPECT_OK(attnrt_free(dc));
  free(a), free(b), free(c);
}

static void check_shared_memory(attnrt_kernel *reverse,
                                const attnrt_device_info *device) {
  const unsigned threads = 256;
  const unsigned dynamic_bytes = 100 * 1024; // beyond the default 48 KiB
  if (device->max_shared_memory_per_block_optin < (int)dynamic_bytes) {
    check(true, "skipped: the device opts in to only %d bytes",
          device->max_shared_memory_per_block_optin);
    return;
  }
  attnrt_deviceptr out = 0;
  EXPECT_OK(attnrt_malloc(&out, threads * sizeof(unsigned)));
  EXPECT_OK(attnrt_memset_d8(out, 0xFF, threads * sizeof(unsigned)));
  unsigned words = dynamic_bytes / 4;
  void *args[] = {&out, &words};
  EXPECT_OK(attnrt_launch(reverse, 1, 1, 1, threads, 1, 1, dynamic_bytes, NULL,
                          args));
  EXPECT_OK(attnrt_synchronize());
  unsigned values[256];
  EXPECT_OK(attnrt_memcpy_dtoh(values, out, sizeof values));
  unsigned wrong = 0;
  for (unsigned t = 0; t < threads; ++t)
    wrong += values[t] != 2 * (threads - 1 - t) + 1;
  check(wrong == 0,
        "a block with 100 KiB of dynamic shared memory ran (%u wrong)", wrong);

  // All the device allows, then one byte more.
  unsigned most = (unsigned)device->max_shared_memory_per_block_optin;
  words = most / 4;
  EXPECT_OK(attnrt_launch(reverse, 1, 1, 1, threads, 1, 1, most, NULL, args));
  EXPECT_OK(attnrt_synchronize());
  EXPECT(attnrt_launch(reverse, 1, 1, 1, threads, 1, 1, most + 1, NULL, args),
         ATTNRT_SHARED_MEMORY_TOO_LARGE);
  printf("  message: %s\n", attnrt_last_error());
  EXPECT_OK(attnrt_free(out));
}

int main(void) {
  int version = 0, count = 0;
  if (!EXPECT_OK(attnrt_init())) {
    printf("  message: %s\n", attnrt_last_error());
    printf("%d passed, %d failed\n", passed, failed);
    return 1;
  }
  EXPECT_OK(attnrt_driver_version(&version));
  EXPECT_OK(attnrt_get_device_count(&count));
  check(count > 0, "driver %d.%d reports %d device(s)", version / 1000,
        version % 1000 / 10, count);
  attnrt_device_info device;
  memset(&device, 0, sizeof device);
  EXPECT_OK(attnrt_get_device_info(&device, 0));
  check(device.compute_capability_major >= 8,
        "device 0: %s, sm_%d%d, %d SMs, %d threads/block, shared memory %d "
        "bytes/block (%d opted in)",
        device.name, device.compute_capability_major,
        device.compute_capability_minor, device.multiprocessor_count,
        device.max_threads_per_block, device.max_shared_memory_per_block,
        device.max_shared_memory_per_block_optin);
  EXPECT_OK(attnrt_set_device(0));

  attnrt_module *module = NULL;
  attnrt_kernel *vector_add = NULL, *reverse = NULL, *missing = NULL;
  if (!EXPECT_OK(
          attnrt_module_load(&module, vector_add_ptx, strlen(vector_add_ptx))))
    printf("  message: %s\n", attnrt_last_error());
  EXPECT_OK(attnrt_module_get_kernel(&vector_add, module, "vector_add"));
  EXPECT_OK(attnrt_module_get_kernel(&reverse, module, "reverse_in_shared"));
  EXPECT(attnrt_module_get_kernel(&missing, module, "no_such_kernel"),
         ATTNRT_KERNEL_NOT_FOUND);
  attnrt_kernel_info info;
  if (vector_add && EXPECT_OK(attnrt_kernel_get_info(&info, vector_add)))
    check(info.num_registers > 0 && info.max_threads_per_block >= 256,
          "vector_add: %d registers, %d static shared, %d local bytes, up to "
          "%d threads",
          info.num_registers, info.static_shared_bytes, info.local_bytes,
          info.max_threads_per_block);
  if (vector_add)
    check_vector_add(vector_add);
  if (reverse)
    check_shared_memory(reverse, &device);

  // Errors from a real driver.
  attnrt_module *broken = NULL;
  EXPECT(attnrt_module_load(&broken, bad_ptx, sizeof bad_ptx),
         ATTNRT_INVALID_IMAGE);
  check(strstr(attnrt_last_error(), "CUDA_ERROR_INVALID_PTX") &&
            strstr(attnrt_last_error(), "JIT log"),
        "bad PTX reports CUDA_ERROR_INVALID_PTX with the JIT log");
  printf("  message: %s\n", attnrt_last_error());
  EXPECT(attnrt_launch(vector_add, 1, 1, 1, 1025, 1, 1, 0, NULL, NULL),
         ATTNRT_INVALID_ARGUMENT);

  // Last: a kernel that faults spoils the context for the rest of the process.
  if (vector_add) {
    attnrt_deviceptr bad = 8, good = 0;
    unsigned n = 1024;
    EXPECT_OK(attnrt_malloc(&good, n * sizeof(float)));
    void *args[] = {&good, &good, &bad, &n};
    EXPECT_OK(attnrt_launch(vector_add, 4, 1, 1, 256, 1, 1, 0, NULL, args));
    EXPECT(attnrt_synchronize(), ATTNRT_LAUNCH_FAILED);
    check(attnrt_last_driver_result() == 700,
          "a write to address 8 reports CUDA_ERROR_ILLEGAL_ADDRESS (%d)",
          attnrt_last_driver_result());
    printf("  message: %s\n", attnrt_last_error());
  }

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
