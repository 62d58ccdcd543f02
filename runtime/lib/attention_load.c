//===- attention_load.c - Device code, loaded once per device -------------===//
//
// The code a device runs, chosen and loaded once per device under one
// lock, and attnrt_attention_workspace_bytes, which needs that device.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "attention_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Device code, loaded once per device
//===----------------------------------------------------------------------===//

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

int attnrt_internal_status_of(attnrt_status status) {
  switch (status) {
  case ATTNRT_SUCCESS:
    return ATTN_SUCCESS;
  case ATTNRT_NO_DRIVER:
  case ATTNRT_DRIVER_TOO_OLD:
  case ATTNRT_NOT_INITIALIZED:
    return ATTN_ERROR_NO_DRIVER;
  case ATTNRT_NO_DEVICE:
    return ATTN_ERROR_NO_DEVICE;
  case ATTNRT_INVALID_IMAGE:
  case ATTNRT_KERNEL_NOT_FOUND:
  case ATTNRT_SHARED_MEMORY_TOO_LARGE:
    return ATTN_ERROR_UNSUPPORTED_DEVICE;
  case ATTNRT_LAUNCH_FAILED:
    return ATTN_ERROR_LAUNCH_FAILED;
  default:
    return ATTN_ERROR_RUNTIME;
  }
}

// How well `code` suits compute capability `cc` (e.g. 86): a cubin runs on
// its own major version from its minor up; PTX on anything as new or newer.
// Arch-specific code (sm_90a) runs only on its exact version, and there it
// goes first: it has the instructions (wgmma) the plain image lacks.
// 0: unusable.
static int suitability(const attnrt_device_code *code, int cc) {
  if (code->sm > cc || (code->arch_specific && code->sm != cc))
    return 0;
  int specific = code->arch_specific ? 1 : 0;
  if (code->is_cubin)
    return code->sm / 10 == cc / 10 ? 2 * (2000 + code->sm) + specific : 0;
  return 2 * (1000 + code->sm) + specific;
}

static void describe_targets(const attnrt_attention_kernel *kernel, char *out,
                             size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int c = 0; c < kernel->num_code && used < size; ++c)
    used += (size_t)snprintf(
        out + used, size - used, "%s%s sm_%d%s", c ? ", " : "",
        kernel->code[c].is_cubin ? "cubin" : "PTX", kernel->code[c].sm,
        kernel->code[c].arch_specific ? "a" : "");
}

static void unload(struct loaded_code *loaded) {
  if (loaded->module)
    attnrt_module_unload(loaded->module);
  loaded->module = NULL;
}

// Loads the best code for device `ordinal`; the lock is held.
static int load(const attnrt_attention_kernel *kernel, int ordinal,
                struct loaded_code **out) {
  attnrt_device_info info;
  attnrt_status status = attnrt_get_device_info(&info, ordinal);
  if (status != ATTNRT_SUCCESS)
    return attnrt_internal_status_of(status);
  if ((status = attnrt_set_device(ordinal)) != ATTNRT_SUCCESS)
    return attnrt_internal_status_of(status);
  int cc = info.compute_capability_major * 10 + info.compute_capability_minor;
  struct loaded_code *loaded = calloc(1, sizeof *loaded);
  if (!loaded)
    return REJECT(ATTN_ERROR_RUNTIME, kernel, "out of host memory");
  loaded->multiprocessors = info.multiprocessor_count;
  loaded->shared_limit = info.max_shared_memory_per_block_optin;
  char why[1024] = "";
  // Best first (insertion sort on suitability); on a failed load (a driver
  // too old for the PTX, say) the next best.
  int order[64], count = 0;
  for (int c = 0; c < kernel->num_code && count < 64; ++c) {
    int score = suitability(&kernel->code[c], cc);
    if (!score)
      continue;
    int at = count++;
    while (at > 0 && suitability(&kernel->code[order[at - 1]], cc) < score) {
      order[at] = order[at - 1];
      --at;
    }
    order[at] = c;
  }
  for (int i = 0; i < count; ++i) {
    loaded->code = &kernel->code[order[i]];
    if (loaded->code->num_launches > MAX_LAUNCHES)
      continue;
    status = attnrt_module_load(&loaded->module, loaded->code->image,
                                loaded->code->image_size);
    for (int j = 0; status == ATTNRT_SUCCESS && j < loaded->code->num_launches;
         ++j) {
      const attnrt_launch_facts *launch = &loaded->code->launches[j];
      status = attnrt_module_get_kernel(&loaded->kernels[j], loaded->module,
                                        launch->kernel);
      loaded->resident_blocks[j] = 0;
      if (status == ATTNRT_SUCCESS &&
          launch->role == ATTNRT_ROLE_DECODE_SPLIT &&
          attnrt_kernel_resident_blocks(
              &loaded->resident_blocks[j], loaded->kernels[j],
              (int)launch->threads, launch->shared_bytes) != ATTNRT_SUCCESS)
        loaded->resident_blocks[j] = 0;
    }
    if (status == ATTNRT_SUCCESS) {
      *out = loaded;
      return ATTN_SUCCESS;
    }
    snprintf(why, sizeof why, "; loading its %s sm_%d failed: %s",
             loaded->code->is_cubin ? "cubin" : "PTX", loaded->code->sm,
             attnrt_last_error());
    unload(loaded);
  }
  free(loaded);
  char targets[512];
  describe_targets(kernel, targets, sizeof targets);
  return REJECT(ATTN_ERROR_UNSUPPORTED_DEVICE, kernel,
                "device %d (%s, sm_%d) cannot run any of the library's code "
                "(%s)%s",
                ordinal, info.name, cc, targets, why);
}

// The code loaded on the GPU of the caller's current context.
int attnrt_internal_loaded_code_for_caller(
    const attnrt_attention_kernel *kernel, struct loaded_code **out) {
  int ordinal;
  attnrt_status status = attnrt_get_context_device(&ordinal);
  if (status != ATTNRT_SUCCESS)
    return attnrt_internal_status_of(status);
  if (ordinal >= ATTNRT_MAX_DEVICES)
    return REJECT(ATTN_ERROR_UNSUPPORTED_DEVICE, kernel,
                  "device %d is beyond the %d devices the library serves",
                  ordinal, ATTNRT_MAX_DEVICES);
  void **slot = &kernel->loaded[ordinal];
  *out = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (*out)
    return ATTN_SUCCESS;
  pthread_mutex_lock(&load_lock);
  int result = ATTN_SUCCESS;
  *out = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!*out) {
    result = load(kernel, ordinal, out);
    if (result == ATTN_SUCCESS)
      __atomic_store_n(slot, (void *)*out, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&load_lock);
  return result;
}

int attnrt_attention_workspace_bytes(const attnrt_attention_kernel *kernel,
                                     const attnrt_attention_call *call,
                                     size_t *bytes) {
  attnrt_internal_clear_error();
  if (!kernel || !call || !bytes)
    return ATTN_ERROR_NULL_POINTER;
  *bytes = 0;
  int result = attnrt_attention_can_implement(kernel, call);
  if (result != ATTN_SUCCESS)
    return result;
  // Only contracts with a workspace need one; its size may need the GPU.
  int any = 0;
  for (int c = 0; c < kernel->num_code; ++c)
    any |= attnrt_internal_has_workspace(&kernel->code[c]);
  struct problem p = attnrt_internal_problem_of(kernel, call);
  // An empty packed batch launches nothing and needs no workspace.
  if (!any || attnrt_internal_empty_problem(kernel, &p))
    return ATTN_SUCCESS;
  struct loaded_code *loaded;
  if ((result = attnrt_internal_loaded_code_for_caller(kernel, &loaded)) !=
      ATTN_SUCCESS)
    return result;
  p.size[ATTNRT_SIZE_SPLITS] =
      attnrt_internal_splits_of(loaded->code, loaded->resident_blocks, &p,
                                loaded->multiprocessors, call->num_splits);
  // The counts _run refuses, refused here the same way.
  if ((result = attnrt_internal_check_sized(kernel, loaded->code, &p)) !=
      ATTN_SUCCESS)
    return result;
  *bytes = attnrt_internal_workspace_bytes_of(loaded->code, &p);
  return ATTN_SUCCESS;
}
