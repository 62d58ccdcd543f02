//===- attention_run.c - Kernel parameters and launches -------------------===//
//
// attnrt_attention_run: the checks, then each launch's parameters from its
// contract, in order.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "attention_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

// A memref descriptor per operand, one 64-bit kernel parameter per field:
// allocated pointer, aligned pointer, offset, sizes, strides.
#define MAX_PARAMS (3 + 2 * ATTNRT_MAX_RANK) * ATTNRT_MAX_LAUNCH_PARAMS

struct params {
  unsigned long long values[MAX_PARAMS];
  void *pointers[MAX_PARAMS];
  int count;
  attnrt_tensor_map maps[MAX_TENSOR_MAPS];
  int num_maps;
};

static void add_memref(struct params *params, const void *data, int rank,
                       const long long *sizes, const long long *strides) {
  unsigned long long *v = params->values + params->count;
  v[0] = v[1] = (unsigned long long)(uintptr_t)data;
  v[2] = 0;
  for (int d = 0; d < rank; ++d) {
    v[3 + d] = (unsigned long long)sizes[d];
    v[3 + rank + d] = (unsigned long long)strides[d];
  }
  for (int i = 0; i < 3 + 2 * rank; ++i)
    params->pointers[params->count + i] = &v[i];
  params->count += 3 + 2 * rank;
}

// A tensor_map(operand) parameter: the contract's map of a [B, H, S, D]
// operand in the 128-byte swizzle (dialect/AttnAttrs.td); one kernel
// parameter, passed by value. K and V: boxes of 64 x 64 elements. Q and
// O: the view [B, Hkv, S, group, D] (the block's rows, query-major, a
// group's heads inner), boxes of block_q rows by 64 columns.
static int add_tensor_map(struct params *params,
                          const attnrt_attention_kernel *kernel,
                          const attnrt_launch_facts *launch, int operand,
                          const void *data, const long long *sizes,
                          const long long *strides) {
  attnrt_tensor_map *map = &params->maps[params->num_maps++];
  attnrt_status status = attnrt_encode_attention_tensor_map(
      map, (attnrt_deviceptr)(uintptr_t)data,
      kernel->operands[operand].element_bytes, sizes, strides,
      operand == ATTNRT_Q || operand == ATTNRT_O, launch->block_q,
      launch->group);
  if (status == ATTNRT_INVALID_ARGUMENT) {
    char why[256];
    snprintf(why, sizeof why, "%s", attnrt_last_error());
    return REJECT(ATTN_ERROR_MISALIGNED, kernel,
                  "%s cannot be %s through a TMA tensor map (%s); this "
                  "kernel (the wgmma tier's) needs a 16-byte aligned "
                  "address and strides of multiples of 16 bytes",
                  operand_name(kernel, operand),
                  operand == ATTNRT_O ? "written" : "read", why);
  }
  if (status != ATTNRT_SUCCESS)
    return attnrt_internal_status_of(status);
  params->pointers[params->count++] = map;
  return ATTN_SUCCESS;
}

// The tensor-map views of the attention kernels' operands (attnrt.h): a
// [B, H, S, D] tensor in 64 x 64 boxes, or Q's and O's rows in GQA order.
attnrt_status attnrt_encode_attention_tensor_map(
    attnrt_tensor_map *map, attnrt_deviceptr data, int element_bytes,
    const long long *sizes, const long long *strides, int q_view, int block_q,
    int group) {
  if (!q_view) {
    const unsigned box[4] = {1, 1, 64, 64};
    return attnrt_encode_tensor_map(map, data, 4, element_bytes, sizes, strides,
                                    box, 1);
  }
  attnrt_internal_clear_error();
  if (!sizes || !strides) {
    attnrt_internal_set_error(__func__, "sizes and strides must not be NULL");
    return ATTNRT_INVALID_ARGUMENT;
  }
  if (!attnrt_internal_q_view_box(block_q, group) || sizes[1] % group != 0) {
    attnrt_internal_set_error(
        __func__, "block_q %d and group %d make no box of %lld heads", block_q,
        group, sizes[1]);
    return ATTNRT_INVALID_ARGUMENT;
  }
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

int attnrt_attention_run(const attnrt_attention_kernel *kernel,
                         const attnrt_attention_call *call) {
  attnrt_internal_clear_error();
  if (!kernel || !call)
    return ATTN_ERROR_NULL_POINTER;
  for (int operand = 0; operand < ATTNRT_NUM_OPERANDS; ++operand) {
    if (!present(kernel, operand) || call->data[operand])
      continue;
    // A packed batch's empty operand (no tokens) may be NULL, as an empty
    // tensor's pointer is.
    int empty = 0;
    for (int d = 0; packed(kernel) && d < kernel->operands[operand].rank; ++d)
      empty |= call->sizes[operand][d] == 0;
    if (!empty)
      return REJECT(ATTN_ERROR_NULL_POINTER, kernel, "%s is NULL",
                    operand_name(kernel, operand));
  }
  int result = attnrt_attention_can_implement(kernel, call);
  if (result != ATTN_SUCCESS)
    return result;
  if (call->block_mask < ATTNRT_BLOCK_MASK_COMPUTE ||
      call->block_mask > ATTNRT_BLOCK_MASK_REUSE)
    return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                  "block_mask mode %d is not compute (0), only (1) or "
                  "reuse (2)",
                  call->block_mask);
  long long strides[ATTNRT_NUM_OPERANDS][ATTNRT_MAX_RANK];
  for (int operand = 0; operand < ATTNRT_NUM_OPERANDS; ++operand)
    if (present(kernel, operand) &&
        (result = attnrt_internal_strides_of(kernel, call, operand,
                                             strides[operand])) != ATTN_SUCCESS)
      return result;
  long long capture_strides[ATTNRT_MAX_CAPTURES][ATTNRT_MAX_RANK];
  for (int i = 0; i < kernel->num_captures; ++i)
    if ((result = attnrt_internal_capture_strides_of(
             kernel, call, i, capture_strides[i])) != ATTN_SUCCESS)
      return result;
  // Written operands alias nothing (the workspace as the call gives it).
  if ((result = attnrt_internal_check_overlap(kernel, call, strides,
                                              capture_strides)) != ATTN_SUCCESS)
    return result;
  struct problem p = attnrt_internal_problem_of(kernel, call);
  // An empty packed batch: every grid is empty, nothing to launch (and no
  // driver needed to say so).
  if (attnrt_internal_empty_problem(kernel, &p))
    return ATTN_SUCCESS;

  struct loaded_code *loaded;
  if ((result = attnrt_internal_loaded_code_for_caller(kernel, &loaded)) !=
      ATTN_SUCCESS)
    return result;
  const attnrt_device_code *code = loaded->code;
  long long splits =
      attnrt_internal_splits_of(code, loaded->resident_blocks, &p,
                                loaded->multiprocessors, call->num_splits);
  p.size[ATTNRT_SIZE_SPLITS] = splits;
  if ((result = attnrt_internal_check_sized(kernel, code, &p)) != ATTN_SUCCESS)
    return result;
  size_t needed =
      attnrt_internal_workspace_bytes_of(code, &p); // 0: none is used
  if (needed > 0) {
    if (call->workspace_bytes < needed)
      return REJECT(ATTN_ERROR_WORKSPACE_TOO_SMALL, kernel,
                    "the workspace has %zu bytes; %zu are needed (%lld "
                    "splits on this GPU)",
                    call->workspace_bytes, needed, splits);
    if (!call->workspace)
      return REJECT(ATTN_ERROR_NULL_POINTER, kernel, "workspace is NULL");
    if ((uintptr_t)call->workspace % 16)
      return REJECT(ATTN_ERROR_MISALIGNED, kernel,
                    "workspace (%p) is not 16-byte aligned", call->workspace);
  }

  int prefill = attnrt_internal_prefill_choice(
      code, &p, loaded->multiprocessors, loaded->shared_limit);
  // The launches to make, in order: the block mask first (it fills the
  // workspace the prefill reads), then the rest but the prefill
  // alternatives not chosen; the call's mode may keep one side.
  int order[MAX_LAUNCHES], num_order = 0;
  for (int i = 0; i < code->num_launches; ++i)
    if (code->launches[i].role == ATTNRT_ROLE_BLOCK_MASK &&
        call->block_mask != ATTNRT_BLOCK_MASK_REUSE)
      order[num_order++] = i;
  int attend = call->block_mask != ATTNRT_BLOCK_MASK_ONLY ||
               !attnrt_internal_has_role(code, ATTNRT_ROLE_BLOCK_MASK);
  for (int i = 0; attend && i < code->num_launches; ++i) {
    int role = code->launches[i].role;
    if (role != ATTNRT_ROLE_BLOCK_MASK &&
        (role != ATTNRT_ROLE_PREFILL || i == prefill) &&
        !attnrt_internal_decode_skipped(code, i, splits))
      order[num_order++] = i;
  }
  for (int o = 0; o < num_order; ++o) {
    int i = order[o];
    const attnrt_launch_facts *launch = &code->launches[i];
    // The parameters in the contract's order (check_launch has checked
    // each kind and operand).
    long long ws_shape[ATTNRT_MAX_RANK], ws_strides[ATTNRT_MAX_RANK];
    attnrt_internal_launch_workspace(launch, &p, ws_shape);
    attnrt_operand_type ws_type = {.rank = launch->workspace_rank};
    attnrt_internal_row_major_strides(&ws_type, ws_shape, ws_strides);
    struct params params = {.count = 0};
    for (int j = 0; j < launch->num_params; ++j) {
      int operand = launch->params[j].operand;
      if (launch->params[j].kind == ATTNRT_PARAM_TENSOR_MAP) {
        if ((result = add_tensor_map(&params, kernel, launch, operand,
                                     call->data[operand], call->sizes[operand],
                                     strides[operand])) != ATTN_SUCCESS)
          return result;
      } else if (launch->params[j].kind == ATTNRT_PARAM_WORKSPACE)
        add_memref(&params, call->workspace, launch->workspace_rank, ws_shape,
                   ws_strides);
      else if (launch->params[j].kind == ATTNRT_PARAM_CAPTURE)
        add_memref(&params, call->capture_data[operand],
                   kernel->captures[operand].rank, call->capture_sizes[operand],
                   capture_strides[operand]);
      else
        add_memref(&params, call->data[operand], kernel->operands[operand].rank,
                   call->sizes[operand], strides[operand]);
    }
    long long grid[3];
    attnrt_internal_grid_of(launch, &p, grid);
    // A programmatic launch (the decode combine on sm_90+) may overlap the
    // one before it, which this loop has just queued on the same stream.
    attnrt_status status =
        (launch->programmatic ? attnrt_launch_programmatic : attnrt_launch)(
            loaded->kernels[i], (unsigned)grid[0], (unsigned)grid[1],
            (unsigned)grid[2], launch->threads, 1, 1, launch->shared_bytes,
            (attnrt_stream *)call->stream, params.pointers);
    if (status != ATTNRT_SUCCESS)
      return attnrt_internal_status_of(status);
  }
  return ATTN_SUCCESS;
}
