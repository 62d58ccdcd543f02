//===- module.c - Modules and kernels -------------------------------------===//
//
// Loading images (cubin, fatbin, PTX) as modules, and their kernels.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Modules and kernels
//===----------------------------------------------------------------------===//

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
  attnrt_status status = attnrt_internal_status_from_result(result);
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
      return attnrt_internal_fail(ATTNRT_OUT_OF_MEMORY, function,
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
  CUresult result = attnrt_internal_driver.cuModuleLoadDataEx(&handle, image, 2,
                                                              options, values);
  free(terminated);
  if (result) {
    attnrt_internal_fail_driver(
        module_load_status(result), result, function,
        "cuModuleLoadDataEx of a %zu-byte %s image on device %d "
        "failed",
        size, kind, device);
    log[sizeof log - 1] = '\0';
    size_t length = strlen(log);
    while (length > 0 && (log[length - 1] == '\n' || log[length - 1] == ' '))
      log[--length] = '\0';
    if (length > 0)
      attnrt_internal_append_error("\nJIT log:\n%s", log);
    return module_load_status(result);
  }

  attnrt_module *loaded = calloc(1, sizeof *loaded);
  if (!loaded || pthread_mutex_init(&loaded->lock, NULL) != 0) {
    free(loaded);
    attnrt_internal_driver.cuModuleUnload(handle);
    return attnrt_internal_fail(ATTNRT_OUT_OF_MEMORY, function,
                                "cannot allocate the module's state");
  }
  loaded->handle = handle;
  loaded->device = device;
  *module = loaded;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_module_load(attnrt_module **module, const void *image,
                                 size_t size) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(module, "module is NULL");
  *module = NULL;
  REQUIRE_ARGUMENT(image, "image is NULL");
  REQUIRE_ARGUMENT(size > 0, "image is empty (size 0)");
  int device;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, &device));
  return load_module(__func__, module, image, size, device);
}

// Reads the whole file into a new buffer.
static attnrt_status read_file(const char *function, const char *path,
                               char **contents, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return attnrt_internal_fail(ATTNRT_INVALID_ARGUMENT, function,
                                "cannot open '%s': %s", path, strerror(errno));
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
    return attnrt_internal_fail(ATTNRT_OUT_OF_MEMORY, function,
                                "cannot hold the file '%s'", path);
  if (read_error) {
    free(buffer);
    return attnrt_internal_fail(ATTNRT_INVALID_ARGUMENT, function,
                                "cannot read '%s'", path);
  }
  *contents = buffer;
  *size = used;
  return ATTNRT_SUCCESS;
}

attnrt_status attnrt_module_load_file(attnrt_module **module,
                                      const char *path) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(module, "module is NULL");
  *module = NULL;
  REQUIRE_ARGUMENT(path, "path is NULL");
  int device;
  RETURN_IF_ERROR(attnrt_internal_enter_current_device(__func__, &device));
  char *image = NULL;
  size_t size = 0;
  RETURN_IF_ERROR(read_file(__func__, path, &image, &size));
  attnrt_status status;
  if (size == 0)
    status = attnrt_internal_fail(ATTNRT_INVALID_ARGUMENT, __func__,
                                  "'%s' is empty", path);
  else
    status = load_module(__func__, module, image, size, device);
  free(image);
  return status;
}

attnrt_status attnrt_module_unload(attnrt_module *module) {
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(module, "module is NULL");
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  // The handle is gone after this call whatever the driver says.
  attnrt_status status = attnrt_internal_make_current(__func__, module->device);
  if (status == ATTNRT_SUCCESS) {
    CUresult result = attnrt_internal_driver.cuModuleUnload(module->handle);
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
  RETURN_IF_ERROR(attnrt_internal_make_current(function, module->device));
  CUfunction handle = NULL;
  CUresult result =
      attnrt_internal_driver.cuModuleGetFunction(&handle, module->handle, name);
  if (result == CUDA_ERROR_NOT_FOUND)
    return attnrt_internal_fail_driver(
        ATTNRT_KERNEL_NOT_FOUND, result, function,
        "the module has no kernel named '%s'", name);
  if (result)
    return attnrt_internal_fail_driver(
        attnrt_internal_status_from_result(result), result, function,
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
    result = attnrt_internal_driver.cuFuncGetAttribute(
        attributes[i].value, attributes[i].attribute, handle);
    if (result)
      return attnrt_internal_fail_driver(
          attnrt_internal_status_from_result(result), result, function,
          "cuFuncGetAttribute(%d) of kernel '%s' failed",
          attributes[i].attribute, name);
  }

  size_t name_size = strlen(name) + 1;
  struct attnrt_kernel *kernel = calloc(1, sizeof *kernel + name_size);
  if (!kernel || pthread_mutex_init(&kernel->opt_in_lock, NULL) != 0) {
    free(kernel);
    return attnrt_internal_fail(ATTNRT_OUT_OF_MEMORY, function,
                                "cannot allocate the state of kernel '%s'",
                                name);
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
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(kernel, "kernel is NULL");
  *kernel = NULL;
  REQUIRE_ARGUMENT(module, "module is NULL");
  REQUIRE_ARGUMENT(name && *name, "the kernel name is %s",
                   name ? "empty" : "NULL");
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));

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
  attnrt_internal_begin_call();
  REQUIRE_ARGUMENT(info, "info is NULL");
  memset(info, 0, sizeof *info);
  REQUIRE_ARGUMENT(kernel, "kernel is NULL");
  RETURN_IF_ERROR(attnrt_internal_ensure_init(__func__));
  *info = kernel->info;
  return ATTNRT_SUCCESS;
}
