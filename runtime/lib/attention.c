//===- attention.c - Check, load and launch attn's compiled kernels -------===//
//
// What the generated C ABI calls (attnrt_attention.h). Every check runs
// before the driver is touched, so a rejected call writes nothing and needs
// no GPU; the device code is loaded once per device under one lock.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "attnrt.h"
#include "attnrt_attention.h"
#include "internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const operand_names[ATTNRT_NUM_OPERANDS] = {
    "q",   "k",     "v",     "block_table", "kv_lens",      "o",
    "lse", "k_new", "v_new", "new_lens",    "slot_mapping", "cu_seqlens_q",
    "cu_seqlens_k", "sinks"};

const char *attnrt_attention_status_string(int status) {
#define DESCRIBE(name, value, text)                                            \
  case value:                                                                  \
    return text;
  switch (status) { ATTN_STATUS_LIST(DESCRIBE) }
#undef DESCRIBE
  return "unknown attn status";
}

// Sets attnrt_last_error() to "<kernel>: <format>" and returns `status`.
#define REJECT(status, kernel, ...)                                            \
  (attnrt_internal_set_error((kernel)->name, __VA_ARGS__), (status))

// Tensor maps one launch may pass (a parameter each).
#define MAX_TENSOR_MAPS 4

static int present(const attnrt_attention_kernel *kernel, int operand) {
  return kernel->operands[operand].rank > 0;
}

// A cache-append kernel: it reads K_NEW and V_NEW and writes the caches K
// and V (an attention kernel reads K and V and writes O and LSE).
static int is_append(const attnrt_attention_kernel *kernel) {
  return present(kernel, ATTNRT_K_NEW);
}

// The operand's name in messages: an append's K and V are its caches.
static const char *operand_name(const attnrt_attention_kernel *kernel,
                                int operand) {
  if (is_append(kernel) && operand == ATTNRT_K)
    return "k_cache";
  if (is_append(kernel) && operand == ATTNRT_V)
    return "v_cache";
  return operand_names[operand];
}

// Packed (varlen) forms: Q, O and LSE by cu_seqlens_q, K and V by
// cu_seqlens_k (attnrt_attention.h).
static int packed_q(const attnrt_attention_kernel *kernel) {
  return present(kernel, ATTNRT_CU_SEQLENS_Q);
}
static int packed_kv(const attnrt_attention_kernel *kernel) {
  return present(kernel, ATTNRT_CU_SEQLENS_K);
}
static int packed(const attnrt_attention_kernel *kernel) {
  return packed_q(kernel) || packed_kv(kernel);
}

static int written(const attnrt_attention_kernel *kernel, int operand) {
  if (is_append(kernel))
    return operand == ATTNRT_K || operand == ATTNRT_V;
  return operand == ATTNRT_O || operand == ATTNRT_LSE;
}

//===----------------------------------------------------------------------===//
// The problem's sizes, and the launch contracts as functions of them
//===----------------------------------------------------------------------===//

// The named sizes of attnrt_size; [ATTNRT_SIZE_SPLITS] is filled once the
// GPU is known (1 until then). `total_q` and `group` make the
// packed_q_tiles terms.
struct problem {
  long long size[ATTNRT_NUM_SIZES];
  long long total_q, group;
};

// A packed Q's query length: the kernel's max_q_len, else the caller's
// hint, else total_q (no sequence has more queries than the batch).
static long long packed_q_len(const attnrt_attention_kernel *kernel,
                              const attnrt_attention_call *call) {
  if (kernel->max_q_len > 0)
    return kernel->max_q_len;
  if (call->max_q_len > 0)
    return call->max_q_len;
  return call->sizes[ATTNRT_Q][0];
}

static struct problem problem_of(const attnrt_attention_kernel *kernel,
                                 const attnrt_attention_call *call) {
  const long long *q = call->sizes[ATTNRT_Q], *k = call->sizes[ATTNRT_K];
  struct problem p;
  long long *s = p.size;
  s[ATTNRT_SIZE_CONSTANT] = 1;
  // An append has no Q (its sizes are 0): the batch is K_NEW's. Packed:
  // the offsets' count minus 1 (cu_seqlens_q's, else cu_seqlens_k's).
  s[ATTNRT_SIZE_BATCH] =
      is_append(kernel)   ? call->sizes[ATTNRT_K_NEW][0]
      : packed_q(kernel)  ? call->sizes[ATTNRT_CU_SEQLENS_Q][0] - 1
      : packed_kv(kernel) ? call->sizes[ATTNRT_CU_SEQLENS_K][0] - 1
                          : q[0];
  long long kv_heads = k[1] > 0 ? k[1] : 1;
  p.group = q[1] / kv_heads;
  p.total_q = packed_q(kernel) ? q[0] : 0;
  // Q [B, Hq, Sq, D], or packed [total_q, Hq, D]; K/V [B, Hkv, Sk, D],
  // paged [num_blocks, Hkv, block_size, D] or packed [total_k, Hkv, D].
  long long q_len = packed_q(kernel) ? packed_q_len(kernel, call) : q[2];
  s[ATTNRT_SIZE_Q_HEADS] = q[1];
  s[ATTNRT_SIZE_Q_LEN] = q_len;
  s[ATTNRT_SIZE_KV_HEADS] = k[1];
  // Paged: the longest sequence the block table can name. Packed: the
  // longest a sequence can be, all of K's rows.
  s[ATTNRT_SIZE_KV_LEN] = kernel->paged ? call->sizes[ATTNRT_BLOCK_TABLE][1] *
                                              k[2]
                          : packed_kv(kernel) ? k[0]
                                              : k[2];
  s[ATTNRT_SIZE_GROUP_ROWS] = q_len * p.group;
  s[ATTNRT_SIZE_ROWS] = packed_q(kernel) ? q[0] * q[1] : q[0] * q[1] * q[2];
  s[ATTNRT_SIZE_SPLITS] = 1;
  // [B, Hkv, S_new, D], or packed [T, Hkv, D].
  s[ATTNRT_SIZE_NEW_LEN] =
      call->sizes[ATTNRT_K_NEW][kernel->operands[ATTNRT_K_NEW].rank == 3 ? 0
                                                                         : 2];
  // Only a ceildiv(packed_q_tiles, N) term reads it (dim_of).
  s[ATTNRT_SIZE_PACKED_Q_TILES] = p.total_q;
  return p;
}

// Without forming a + b - 1, which overflows for a count near INT64_MAX.
static long long ceil_div(long long a, long long b) {
  return a / b + (a % b > 0);
}

// Products stop growing at 2^62: past every limit they are checked against.
static long long saturating_mul(long long a, long long b) {
  const long long cap = 1LL << 62;
  return a > 0 && b > cap / a ? cap : a * b;
}

// Dimension `dim` of a contract's grid or workspace: the product of its
// terms (check_launch has checked them).
static long long dim_of(const attnrt_launch_term *terms, int count, int dim,
                        const struct problem *p) {
  long long product = 1;
  for (int i = 0; i < count; ++i) {
    const attnrt_launch_term *t = &terms[i];
    if (t->dim != dim)
      continue;
    long long factor;
    if (t->size == ATTNRT_SIZE_CONSTANT)
      factor = t->value;
    else if (t->size == ATTNRT_SIZE_PACKED_Q_TILES)
      // Sequence b's tiles start at floor(cu_seqlens_q[b] * group / N) + b:
      // at most one tile a sequence more than the packed rows need.
      factor = saturating_mul(p->total_q, p->group) / t->value +
               p->size[ATTNRT_SIZE_BATCH];
    else
      factor = ceil_div(p->size[t->size], t->value);
    product = saturating_mul(product, factor);
  }
  return product;
}

static void grid_of(const attnrt_launch_facts *launch, const struct problem *p,
                    long long grid[3]) {
  for (int d = 0; d < 3; ++d)
    grid[d] = dim_of(launch->grid, launch->num_grid_terms, d, p);
}

static int names_splits(const attnrt_launch_term *terms, int count) {
  for (int i = 0; i < count; ++i)
    if (terms[i].size == ATTNRT_SIZE_SPLITS)
      return 1;
  return 0;
}

// Whether a table from the library is one this runtime can follow: an
// error names the launch and the rule, before anything touches the GPU.
static int check_terms(const attnrt_attention_kernel *kernel,
                       const attnrt_launch_facts *launch, const char *field,
                       const attnrt_launch_term *terms, int count, int rank) {
  if (count < 0 || count > ATTNRT_MAX_LAUNCH_TERMS)
    return REJECT(ATTN_ERROR_RUNTIME, kernel,
                  "kernel %s: %d %s terms (at most %d)", launch->kernel, count,
                  field, ATTNRT_MAX_LAUNCH_TERMS);
  for (int i = 0; i < count; ++i)
    if (terms[i].dim < 0 || terms[i].dim >= rank || terms[i].size < 0 ||
        terms[i].size >= ATTNRT_NUM_SIZES || terms[i].value < 1)
      return REJECT(ATTN_ERROR_RUNTIME, kernel,
                    "kernel %s: %s term %d (dimension %d, size %d, value "
                    "%lld) is not one this runtime knows",
                    launch->kernel, field, i, terms[i].dim, terms[i].size,
                    terms[i].value);
  return ATTN_SUCCESS;
}

static int check_launch(const attnrt_attention_kernel *kernel,
                        const attnrt_launch_facts *launch) {
  if (launch->role < ATTNRT_ROLE_PREFILL ||
      launch->role > ATTNRT_ROLE_DECODE_UNSPLIT)
    return REJECT(ATTN_ERROR_RUNTIME, kernel, "kernel %s: unknown role %d",
                  launch->kernel, launch->role);
  // Only the decode combine follows a launch of the same call it may
  // overlap (its kernel waits for the split kernel's writes).
  if (launch->programmatic && launch->role != ATTNRT_ROLE_DECODE_COMBINE)
    return REJECT(ATTN_ERROR_RUNTIME, kernel,
                  "kernel %s: a programmatic launch of role %d (only a "
                  "decode_combine launch may be)",
                  launch->kernel, launch->role);
  int result = check_terms(kernel, launch, "grid", launch->grid,
                           launch->num_grid_terms, 3);
  if (result != ATTN_SUCCESS)
    return result;
  if (launch->workspace_rank < 0 || launch->workspace_rank > ATTNRT_MAX_RANK ||
      (launch->workspace_rank > 0 && launch->workspace_element_bytes < 1))
    return REJECT(ATTN_ERROR_RUNTIME, kernel,
                  "kernel %s: a workspace of rank %d and %d-byte elements",
                  launch->kernel, launch->workspace_rank,
                  launch->workspace_element_bytes);
  if ((result = check_terms(kernel, launch, "workspace", launch->workspace,
                            launch->num_workspace_terms,
                            launch->workspace_rank)) != ATTN_SUCCESS)
    return result;
  if (launch->num_params < 0 || launch->num_params > ATTNRT_MAX_LAUNCH_PARAMS)
    return REJECT(ATTN_ERROR_RUNTIME, kernel,
                  "kernel %s: %d parameters (at most %d)", launch->kernel,
                  launch->num_params, ATTNRT_MAX_LAUNCH_PARAMS);
  int maps = 0;
  for (int i = 0; i < launch->num_params; ++i) {
    const attnrt_launch_param *param = &launch->params[i];
    switch (param->kind) {
    case ATTNRT_PARAM_MEMREF:
      if (param->operand < 0 || param->operand >= ATTNRT_NUM_OPERANDS ||
          !present(kernel, param->operand))
        return REJECT(ATTN_ERROR_RUNTIME, kernel,
                      "kernel %s: parameter %d passes operand %d, which the "
                      "kernel does not have",
                      launch->kernel, i, param->operand);
      break;
    case ATTNRT_PARAM_WORKSPACE:
      if (launch->workspace_rank == 0)
        return REJECT(ATTN_ERROR_RUNTIME, kernel,
                      "kernel %s: parameter %d is the workspace, but the "
                      "launch has no workspace shape",
                      launch->kernel, i);
      break;
    case ATTNRT_PARAM_CAPTURE:
      if (param->operand < 0 || param->operand >= kernel->num_captures)
        return REJECT(ATTN_ERROR_RUNTIME, kernel,
                      "kernel %s: parameter %d passes capture %d, but the "
                      "kernel has %d",
                      launch->kernel, i, param->operand, kernel->num_captures);
      break;
    case ATTNRT_PARAM_TENSOR_MAP:
      if (++maps > MAX_TENSOR_MAPS ||
          (param->operand != ATTNRT_Q && param->operand != ATTNRT_K &&
           param->operand != ATTNRT_V && param->operand != ATTNRT_O) ||
          !present(kernel, param->operand) ||
          kernel->operands[param->operand].rank != 4 ||
          kernel->operands[param->operand].element_bytes != 2)
        return REJECT(ATTN_ERROR_RUNTIME, kernel,
                      "kernel %s: parameter %d is a tensor map of operand "
                      "%d; this runtime encodes at most %d, of a rank-4 Q, "
                      "K, V or O with 2-byte elements",
                      launch->kernel, i, param->operand, MAX_TENSOR_MAPS);
      // Q's (and O's) boxes are block_q rows of whole queries or of part
      // of one query's group (add_tensor_map).
      if ((param->operand == ATTNRT_Q || param->operand == ATTNRT_O) &&
          !attnrt_internal_q_view_box(launch->block_q, launch->group))
        return REJECT(ATTN_ERROR_RUNTIME, kernel,
                      "kernel %s: parameter %d is %s's tensor map, but its "
                      "block_q = %d and group = %d make no box",
                      launch->kernel, i, param->operand == ATTNRT_Q ? "Q" : "O",
                      launch->block_q, launch->group);
      break;
    default:
      return REJECT(ATTN_ERROR_RUNTIME, kernel,
                    "kernel %s: parameter %d has unknown kind %d",
                    launch->kernel, i, param->kind);
    }
  }
  return ATTN_SUCCESS;
}

// The prefill launch to make (attnrt_device_code): of the alternatives whose
// shared memory the GPU allows (code for sm_80 also runs on sm_86 and sm_89,
// which allow less), the first whose grid gives every multiprocessor a
// block, else the last; but none before the last alternative whose
// max_kv_len covers the K/V length. If none fits, the last, whose launch
// then reports the limit; -1 if the code has no prefill launch.
static int prefill_choice(const attnrt_device_code *code,
                          const struct problem *p, int multiprocessors,
                          int shared_limit) {
  int choice = -1, last = -1, from = 0;
  for (int i = 0; i < code->num_launches; ++i) {
    const attnrt_launch_facts *launch = &code->launches[i];
    if (launch->role == ATTNRT_ROLE_PREFILL && launch->max_kv_len > 0 &&
        p->size[ATTNRT_SIZE_KV_LEN] <= launch->max_kv_len &&
        launch->shared_bytes <= (unsigned)shared_limit)
      from = i;
  }
  for (int i = from; i < code->num_launches; ++i) {
    if (code->launches[i].role != ATTNRT_ROLE_PREFILL)
      continue;
    last = i;
    if (code->launches[i].shared_bytes > (unsigned)shared_limit)
      continue;
    choice = i;
    long long grid[3];
    grid_of(&code->launches[i], p, grid);
    if (grid[0] * grid[1] * grid[2] >= multiprocessors)
      break;
  }
  return choice >= 0 ? choice : last;
}

static int has_workspace(const attnrt_device_code *code) {
  for (int i = 0; i < code->num_launches; ++i)
    if (code->launches[i].workspace_rank > 0)
      return 1;
  return 0;
}

// Whether a launch of `code` depends on the count of K/V splits.
static int splits_named(const attnrt_device_code *code) {
  int named = 0;
  for (int i = 0; i < code->num_launches; ++i) {
    const attnrt_launch_facts *launch = &code->launches[i];
    named |= names_splits(launch->grid, launch->num_grid_terms) ||
             names_splits(launch->workspace, launch->num_workspace_terms);
  }
  return named;
}

// The count of K/V splits for `p` on this GPU, where a contract names
// `splits` (else 1): the caller's count when it fixed one, else the policy
// (attnrt_decode_split_count_resident), which weighs the blocks of one
// split of the decode_split launch's grid against the GPU and the blocks
// of its kernel an SM holds (`resident[i]` for launch i, 0: unknown).
static long long splits_of(const attnrt_device_code *code,
                           const int *resident, const struct problem *p,
                           int multiprocessors, long long requested) {
  if (!splits_named(code))
    return 1;
  if (requested > 0)
    return requested;
  struct problem one = *p;
  one.size[ATTNRT_SIZE_SPLITS] = 1;
  for (int i = 0; i < code->num_launches; ++i) {
    const attnrt_launch_facts *launch = &code->launches[i];
    if (launch->role != ATTNRT_ROLE_DECODE_SPLIT)
      continue;
    long long grid[3];
    grid_of(launch, &one, grid);
    // Rows a block: the Q tile the grid divides the group's rows by.
    long long rows = 1;
    for (int t = 0; t < launch->num_grid_terms; ++t)
      if (launch->grid[t].size == ATTNRT_SIZE_GROUP_ROWS)
        rows = launch->grid[t].value;
    return attnrt_decode_split_count_resident(
        multiprocessors, resident[i],
        saturating_mul(grid[0], saturating_mul(grid[1], grid[2])),
        p->size[ATTNRT_SIZE_KV_LEN], rows);
  }
  return 1;
}

static int has_role(const attnrt_device_code *code, int role) {
  for (int i = 0; i < code->num_launches; ++i)
    if (code->launches[i].role == role)
      return 1;
  return 0;
}

// Whether a decode launch is left out at `splits`: with one split the
// decode_unsplit kernel, where the code has one, runs in place of
// decode_split and decode_combine; with more, it does not run.
static int decode_skipped(const attnrt_device_code *code, int i,
                          long long splits) {
  int role = code->launches[i].role;
  if (role == ATTNRT_ROLE_DECODE_UNSPLIT)
    return splits != 1;
  if (role == ATTNRT_ROLE_DECODE_SPLIT || role == ATTNRT_ROLE_DECODE_COMBINE)
    return splits == 1 && has_role(code, ATTNRT_ROLE_DECODE_UNSPLIT);
  return 0;
}

// A launch's workspace in bytes (0 without one), and its shape.
static size_t launch_workspace(const attnrt_launch_facts *launch,
                               const struct problem *p,
                               long long shape[ATTNRT_MAX_RANK]) {
  if (launch->workspace_rank == 0)
    return 0;
  long long bytes = launch->workspace_element_bytes;
  for (int d = 0; d < launch->workspace_rank; ++d) {
    shape[d] = dim_of(launch->workspace, launch->num_workspace_terms, d, p);
    bytes = saturating_mul(bytes, shape[d]);
  }
  return (size_t)bytes;
}

// The workspace every launch of `code` that runs at `p`'s splits fits in:
// the largest (0 where the one-split kernel runs alone).
static size_t workspace_bytes_of(const attnrt_device_code *code,
                                 const struct problem *p) {
  size_t most = 0;
  for (int i = 0; i < code->num_launches; ++i) {
    if (decode_skipped(code, i, p->size[ATTNRT_SIZE_SPLITS]))
      continue;
    long long shape[ATTNRT_MAX_RANK];
    size_t bytes = launch_workspace(&code->launches[i], p, shape);
    most = bytes > most ? bytes : most;
  }
  return most;
}

static int check_grid(const attnrt_attention_kernel *kernel,
                      const attnrt_launch_facts *launch,
                      const struct problem *p) {
  const long long limits[3] = {2147483647LL, 65535, 65535};
  long long grid[3];
  grid_of(launch, p, grid);
  for (int d = 0; d < 3; ++d)
    if (grid[d] > limits[d])
      return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                    "kernel %s would need a grid of %lld blocks in %c, more "
                    "than the %lld a GPU launches",
                    launch->kernel, grid[d], "xyz"[d], limits[d]);
  return ATTN_SUCCESS;
}

// Whether `code` can run `p` at its count of splits: every launch's grid
// one the GPU takes, and a workspace below 2^62 bytes (launch_workspace
// saturates there). One rule for _can_implement (at the caller's fixed
// count), _workspace_bytes and _run (at the count they use), so that the
// size query refuses exactly the counts the run refuses, with the same
// message.
static int check_sized(const attnrt_attention_kernel *kernel,
                       const attnrt_device_code *code,
                       const struct problem *p) {
  for (int i = 0; i < code->num_launches; ++i) {
    int result = check_grid(kernel, &code->launches[i], p);
    if (result != ATTN_SUCCESS)
      return result;
  }
  for (int i = 0; i < code->num_launches; ++i) {
    long long shape[ATTNRT_MAX_RANK];
    if (decode_skipped(code, i, p->size[ATTNRT_SIZE_SPLITS]) ||
        launch_workspace(&code->launches[i], p, shape) < ((size_t)1 << 62))
      continue;
    return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                  "kernel %s would need a workspace of 2^62 bytes or more "
                  "(%lld splits), too many to address",
                  code->launches[i].kernel, p->size[ATTNRT_SIZE_SPLITS]);
  }
  return ATTN_SUCCESS;
}

// The least size of `operand`'s dimension `d`: 1, except that a packed
// batch may be empty. Its token rows (total_q, total_k) and its batch
// dimensions may be 0; its offsets have B + 1 >= 1 entries, and a paged
// cache's blocks stay at least 1.
static long long least_size(const attnrt_attention_kernel *kernel,
                            int operand, int d) {
  if (!packed(kernel) || d != 0 || operand == ATTNRT_CU_SEQLENS_Q ||
      operand == ATTNRT_CU_SEQLENS_K)
    return 1;
  if (kernel->paged && (operand == ATTNRT_K || operand == ATTNRT_V))
    return 1;
  return 0;
}

// Whether the table's packed operands have the packed forms' ranks
// (attnrt_attention.h): an error names the operand, before any size is
// read.
static int check_packed_table(const attnrt_attention_kernel *kernel) {
  static const struct {
    int operand, rank, packed_q;
  } ranks[] = {{ATTNRT_Q, 3, 1},           {ATTNRT_O, 3, 1},
               {ATTNRT_LSE, 2, 1},         {ATTNRT_CU_SEQLENS_Q, 1, 1},
               {ATTNRT_K, 3, 0},           {ATTNRT_V, 3, 0},
               {ATTNRT_CU_SEQLENS_K, 1, 0}};
  if (is_append(kernel) || !packed(kernel))
    return ATTN_SUCCESS;
  for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; ++i) {
    int operand = ranks[i].operand;
    if (!(ranks[i].packed_q ? packed_q(kernel) : packed_kv(kernel)) ||
        !present(kernel, operand))
      continue;
    if (kernel->operands[operand].rank != ranks[i].rank)
      return REJECT(ATTN_ERROR_RUNTIME, kernel,
                    "%s has rank %d in the library's table; packed by %s it "
                    "has rank %d",
                    operand_name(kernel, operand),
                    kernel->operands[operand].rank,
                    ranks[i].packed_q ? "cu_seqlens_q" : "cu_seqlens_k",
                    ranks[i].rank);
  }
  for (int operand = ATTNRT_CU_SEQLENS_Q; operand <= ATTNRT_CU_SEQLENS_K;
       ++operand)
    if (present(kernel, operand) &&
        kernel->operands[operand].element_bytes != 4)
      return REJECT(ATTN_ERROR_RUNTIME, kernel,
                    "%s has %d-byte elements in the library's table; the "
                    "offsets are i32",
                    operand_name(kernel, operand),
                    kernel->operands[operand].element_bytes);
  if (packed_kv(kernel) &&
      (present(kernel, ATTNRT_BLOCK_TABLE) || present(kernel, ATTNRT_KV_LENS)))
    return REJECT(ATTN_ERROR_RUNTIME, kernel,
                  "the library's table has cu_seqlens_k with block_table or "
                  "kv_lens; packed K/V take their lengths from the offsets");
  return ATTN_SUCCESS;
}

// A packed batch's sizes agree: one B (offsets B + 1, every batch
// dimension B), and O and LSE have Q's rows. The offsets themselves are
// device data, the caller's guarantee.
static int check_packed_sizes(const attnrt_attention_kernel *kernel,
                              const attnrt_attention_call *call) {
  if (is_append(kernel) || !packed(kernel))
    return ATTN_SUCCESS;
  int offsets = packed_q(kernel) ? ATTNRT_CU_SEQLENS_Q : ATTNRT_CU_SEQLENS_K;
  long long batch = call->sizes[offsets][0] - 1;
  // Operands whose dimension 0 is the batch (B + 1 for the offsets).
  int batched[8], count = 0;
  if (packed_q(kernel) && packed_kv(kernel))
    batched[count++] = ATTNRT_CU_SEQLENS_K;
  if (!packed_q(kernel)) {
    batched[count++] = ATTNRT_Q;
    batched[count++] = ATTNRT_O;
    batched[count++] = ATTNRT_LSE;
  }
  if (!packed_kv(kernel) && !kernel->paged) {
    batched[count++] = ATTNRT_K;
    batched[count++] = ATTNRT_V;
  }
  batched[count++] = ATTNRT_BLOCK_TABLE;
  batched[count++] = ATTNRT_KV_LENS;
  for (int i = 0; i < count; ++i) {
    int operand = batched[i];
    if (!present(kernel, operand))
      continue;
    long long wanted = operand == ATTNRT_CU_SEQLENS_K ? batch + 1 : batch;
    if (call->sizes[operand][0] != wanted)
      return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                    "%s dimension 0 is %lld; %s's %lld offsets make a batch "
                    "of %lld sequences, so it must be %lld",
                    operand_name(kernel, operand), call->sizes[operand][0],
                    operand_name(kernel, offsets), batch + 1, batch, wanted);
  }
  if (packed_q(kernel)) {
    int rows[] = {ATTNRT_O, ATTNRT_LSE};
    for (int i = 0; i < 2; ++i)
      if (present(kernel, rows[i]) &&
          call->sizes[rows[i]][0] != call->sizes[ATTNRT_Q][0])
        return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                      "%s has %lld rows and q %lld (total_q); packed by "
                      "cu_seqlens_q they are the same tokens",
                      operand_name(kernel, rows[i]), call->sizes[rows[i]][0],
                      call->sizes[ATTNRT_Q][0]);
    if (packed_kv(kernel) &&
        call->sizes[ATTNRT_V][0] != call->sizes[ATTNRT_K][0])
      return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                    "v has %lld rows and k %lld (total_k); packed by "
                    "cu_seqlens_k they are the same tokens",
                    call->sizes[ATTNRT_V][0], call->sizes[ATTNRT_K][0]);
  }
  if (call->max_q_len < 0)
    return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                  "max_q_len is %lld; 0: not known, N >= 1: no sequence has "
                  "more queries",
                  call->max_q_len);
  if (packed_q(kernel) && kernel->max_q_len > 0 &&
      call->max_q_len > kernel->max_q_len)
    return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                  "max_q_len is %lld, but the kernel is built for sequences "
                  "of at most %lld queries",
                  call->max_q_len, kernel->max_q_len);
  return ATTN_SUCCESS;
}

// A packed batch with no sequence or no query token: nothing to launch.
static int empty_problem(const attnrt_attention_kernel *kernel,
                         const struct problem *p) {
  return !is_append(kernel) && packed(kernel) &&
         (p->size[ATTNRT_SIZE_BATCH] == 0 ||
          (packed_q(kernel) && p->total_q == 0));
}

int attnrt_attention_can_implement(const attnrt_attention_kernel *kernel,
                                   const attnrt_attention_call *call) {
  attnrt_internal_clear_error();
  if (!kernel || !call)
    return ATTN_ERROR_NULL_POINTER;
  int checked = check_packed_table(kernel);
  if (checked != ATTN_SUCCESS)
    return checked;
  for (int operand = 0; operand < ATTNRT_NUM_OPERANDS; ++operand) {
    const attnrt_operand_type *type = &kernel->operands[operand];
    // Elements addressed by the operand: below 2^62 bytes, so no offset the
    // kernels compute overflows.
    double elements = 1;
    for (int d = 0; d < type->rank; ++d) {
      long long size = call->sizes[operand][d];
      long long least = least_size(kernel, operand, d);
      if (size < least)
        return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                      least ? "%s dimension %d is %lld; every size must be "
                              "at least 1"
                            : "%s dimension %d is %lld; it must be at least 0",
                      operand_name(kernel, operand), d, size);
      elements *= (double)size;
    }
    if (elements * type->element_bytes >= 0x1p62)
      return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                    "%s has %.3g elements, too many to address",
                    operand_name(kernel, operand), elements);
  }
  if (kernel->num_captures < 0 || kernel->num_captures > ATTNRT_MAX_CAPTURES)
    return REJECT(ATTN_ERROR_RUNTIME, kernel, "%d captures (at most %d)",
                  kernel->num_captures, ATTNRT_MAX_CAPTURES);
  for (int i = 0; i < kernel->num_captures; ++i) {
    const attnrt_operand_type *type = &kernel->captures[i];
    double elements = 1;
    for (int d = 0; d < type->rank; ++d) {
      if (call->capture_sizes[i][d] < 1)
        return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                      "capture%d dimension %d is %lld; every size must be at "
                      "least 1",
                      i, d, call->capture_sizes[i][d]);
      elements *= (double)call->capture_sizes[i][d];
    }
    if (elements * type->element_bytes >= 0x1p62)
      return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                    "capture%d has %.3g elements, too many to address", i,
                    elements);
  }
  for (int c = 0; c < kernel->num_code; ++c)
    for (int i = 0; i < kernel->code[c].num_launches; ++i) {
      int result = check_launch(kernel, &kernel->code[c].launches[i]);
      if (result != ATTN_SUCCESS)
        return result;
    }
  if (call->num_splits < 0)
    return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                  "num_splits is %lld; 0 lets the runtime choose, N >= 1 "
                  "fixes the count",
                  call->num_splits);
  if (call->num_splits > 1)
    for (int c = 0; c < kernel->num_code; ++c)
      if (!splits_named(&kernel->code[c]))
        return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                      "num_splits is %lld, but the kernel has no split-K "
                      "launch (0 or 1)",
                      call->num_splits);
  if ((checked = check_packed_sizes(kernel, call)) != ATTN_SUCCESS)
    return checked;
  struct problem p = problem_of(kernel, call);
  if (p.size[ATTNRT_SIZE_Q_HEADS] % p.size[ATTNRT_SIZE_KV_HEADS] != 0)
    return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                  "%lld query heads are not a multiple of %lld K/V heads",
                  p.size[ATTNRT_SIZE_Q_HEADS], p.size[ATTNRT_SIZE_KV_HEADS]);
  // Every target's grids and workspace must be ones the GPU takes: at the
  // caller's count of splits where it fixed one (a code without a split-K
  // launch has taken only 0 or 1, above), else at one split here (the
  // count needs the GPU) and again at the chosen count before launching.
  p.size[ATTNRT_SIZE_SPLITS] = call->num_splits > 0 ? call->num_splits : 1;
  for (int c = 0; c < kernel->num_code; ++c)
    if ((checked = check_sized(kernel, &kernel->code[c], &p)) != ATTN_SUCCESS)
      return checked;
  return ATTN_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Pointers, strides, alignment
//===----------------------------------------------------------------------===//

// Q, K, V and O rows (and an append's new rows) are copied with 16-byte
// loads and stores.
static size_t alignment_of(int operand, const attnrt_operand_type *type) {
  switch (operand) {
  case ATTNRT_Q:
  case ATTNRT_K:
  case ATTNRT_V:
  case ATTNRT_O:
  case ATTNRT_K_NEW:
  case ATTNRT_V_NEW:
    return 16;
  default:
    return (size_t)type->element_bytes;
  }
}

static void row_major_strides(const attnrt_operand_type *type,
                              const long long *sizes, long long *strides) {
  long long stride = 1;
  for (int d = type->rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= sizes[d];
  }
}

// An output's elements each need their own address. They have one when,
// taking the dims of size > 1 by increasing stride, each stride exceeds the
// farthest offset of the dims before it (the verifier's rule for static
// layouts, dialect/AttnOps.cpp).
static int check_no_aliasing(const attnrt_attention_kernel *kernel,
                             const char *name, int rank,
                             const long long *sizes,
                             const long long *strides) {
  int order[ATTNRT_MAX_RANK], n = 0;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] == 1)
      continue;
    int at = n++;
    while (at > 0 && strides[order[at - 1]] > strides[d]) {
      order[at] = order[at - 1];
      --at;
    }
    order[at] = d;
  }
  double reach = 0; // the farthest offset of the dims taken so far
  for (int i = 0; i < n; ++i) {
    int d = order[i];
    if ((double)strides[d] <= reach)
      return REJECT(ATTN_ERROR_UNSUPPORTED_STRIDE, kernel,
                    "%s's elements alias: stride %d is %lld but the dims with "
                    "smaller strides reach offset %.0f",
                    name, d, strides[d], reach);
    reach += (double)(sizes[d] - 1) * (double)strides[d];
  }
  return ATTN_SUCCESS;
}

// The strides the kernel gets for a memref of `type` at `data` with
// `sizes` (the caller's `given` strides, NULL for row-major), checked
// against its layout; `written`: an output, whose elements may not alias;
// `align`: what its pointer and outer strides in bytes must divide by.
static int checked_strides(const attnrt_attention_kernel *kernel,
                           const char *name, const attnrt_operand_type *type,
                           const void *data, const long long *sizes,
                           const long long *given, int written, size_t align,
                           long long strides[ATTNRT_MAX_RANK]) {
  long long row_major[ATTNRT_MAX_RANK];
  int result;
  row_major_strides(type, sizes, row_major);
  for (int d = 0; d < type->rank; ++d) {
    strides[d] = given ? given[d] : row_major[d];
    long long wanted = type->row_major ? row_major[d] : type->strides[d];
    if (wanted >= 0 && strides[d] != wanted)
      return REJECT(ATTN_ERROR_UNSUPPORTED_STRIDE, kernel,
                    "%s stride %d is %lld; the kernel's layout needs %lld%s",
                    name, d, strides[d], wanted,
                    type->row_major ? " (row-major)" : "");
    if (strides[d] < 0)
      return REJECT(ATTN_ERROR_UNSUPPORTED_STRIDE, kernel,
                    "%s stride %d is negative (%lld)", name, d, strides[d]);
  }
  // The farthest element: below 2^62 bytes, so no offset overflows.
  double span = 0;
  for (int d = 0; d < type->rank; ++d)
    span += (double)(sizes[d] - 1) * (double)strides[d];
  if (span * type->element_bytes >= 0x1p62)
    return REJECT(ATTN_ERROR_UNSUPPORTED_STRIDE, kernel,
                  "%s's strides reach %.3g elements past its start, too far "
                  "to address",
                  name, span);
  // An operand of no elements (an empty packed batch) aliases nothing.
  int elements = 1;
  for (int d = 0; d < type->rank; ++d)
    elements &= sizes[d] > 0;
  if (written && elements &&
      (result = check_no_aliasing(kernel, name, type->rank, sizes,
                                  strides)) != ATTN_SUCCESS)
    return result;
  if ((uintptr_t)data % align)
    return REJECT(ATTN_ERROR_MISALIGNED, kernel,
                  "%s (%p) is not %zu-byte aligned", name, data, align);
  for (int d = 0; d + 1 < type->rank; ++d)
    if ((size_t)strides[d] * (size_t)type->element_bytes % align)
      return REJECT(ATTN_ERROR_MISALIGNED, kernel,
                    "%s stride %d (%lld elements) is not a multiple of %zu "
                    "bytes",
                    name, d, strides[d], align);
  return ATTN_SUCCESS;
}

// The strides the kernel gets for `operand`, checked against its layout.
static int strides_of(const attnrt_attention_kernel *kernel,
                      const attnrt_attention_call *call, int operand,
                      long long strides[ATTNRT_MAX_RANK]) {
  const attnrt_operand_type *type = &kernel->operands[operand];
  return checked_strides(kernel, operand_name(kernel, operand), type,
                         call->data[operand], call->sizes[operand],
                         call->strides[operand], written(kernel, operand),
                         alignment_of(operand, type), strides);
}

// The same for capture `i`, which the kernel only reads, element by element.
static int capture_strides_of(const attnrt_attention_kernel *kernel,
                              const attnrt_attention_call *call, int i,
                              long long strides[ATTNRT_MAX_RANK]) {
  char name[16];
  snprintf(name, sizeof name, "capture%d", i);
  const attnrt_operand_type *type = &kernel->captures[i];
  if (!call->capture_data[i])
    return REJECT(ATTN_ERROR_NULL_POINTER, kernel, "%s is NULL", name);
  return checked_strides(kernel, name, type, call->capture_data[i],
                         call->capture_sizes[i], call->capture_strides[i],
                         /*written=*/0, (size_t)type->element_bytes, strides);
}

// The bytes a memref at `data` of `sizes` and `strides` (in elements of
// `element_bytes`) touches, lowest to highest: [*begin, *end), clamped to
// the address space. 0 for one of no elements, which touches none.
static int extent_of(const void *data, int rank, const long long *sizes,
                     const long long *strides, int element_bytes,
                     uintptr_t *begin, uintptr_t *end) {
  // checked_strides has bounded each reach below 2^62 bytes; the
  // saturating arithmetic keeps a bad table from overflowing anyway.
  const long long cap = 1LL << 62;
  long long bytes = element_bytes > 0 ? element_bytes : 1;
  long long low = 0, high = 0; // byte offsets from data
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] < 1)
      return 0;
    long long reach;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
        __builtin_mul_overflow(reach, bytes, &reach))
      reach = strides[d] > 0 ? cap : -cap;
    reach = reach > cap ? cap : reach < -cap ? -cap : reach;
    if (reach < 0)
      low = low < -cap - reach ? -cap : low + reach;
    else
      high = high > cap - reach ? cap : high + reach;
  }
  uintptr_t at = (uintptr_t)data;
  uintptr_t below = (uintptr_t)-low, above = (uintptr_t)(high + bytes);
  *begin = at >= below ? at - below : 0;
  *end = above <= UINTPTR_MAX - at ? at + above : UINTPTR_MAX;
  return 1;
}

// An operand as check_overlap sees it: its extent, and the layout that
// apart_by_period reads (sizes and strides in elements, all >= 0).
struct footprint {
  uintptr_t begin, end;
  int written;
  char name[16];
  int rank, element_bytes;
  const long long *sizes, *strides;
};

static void set_layout(struct footprint *f, int rank, const long long *sizes,
                       const long long *strides, int element_bytes) {
  f->rank = rank;
  f->sizes = sizes;
  f->strides = strides;
  f->element_bytes = element_bytes > 0 ? element_bytes : 1;
}

// The bytes of `f`, taken modulo `period`, fall in one window of `*width`
// bytes from `*start` when every dim whose stride reaches `period` moves by
// whole periods: the other dims and the element make the window. 0 when a
// dim does not, or the window covers the whole period.
static int window_modulo(const struct footprint *f, long long period,
                         long long *start, long long *width) {
  long long inner = f->element_bytes; // the window, from the pointer
  for (int d = 0; d < f->rank; ++d) {
    if (f->sizes[d] <= 1)
      continue;
    long long step = f->strides[d] * f->element_bytes; // < 2^62, checked
    if (step >= period) {
      if (step % period)
        return 0;
      continue;
    }
    // (sizes - 1) * step < 2^62: the strides were checked to reach less.
    inner += (f->sizes[d] - 1) * step;
    if (inner >= period)
      return 0;
  }
  *start = (long long)(f->begin % (uintptr_t)period);
  *width = inner;
  return 1;
}

// Whether two operands whose extents overlap share no byte after all: for
// some period P (a byte stride of either), each touches, modulo P, a window
// the other's window misses. K and V caches interleaved in one buffer
// ([pages, 2, page_size, heads, dim], K at [:, 0] and V at [:, 1]) are
// apart by the page stride. A proof, not a search: 0 means "not shown".
static int apart_by_period(const struct footprint *a,
                           const struct footprint *b) {
  const struct footprint *both[2] = {a, b};
  for (int side = 0; side < 2; ++side)
    for (int d = 0; d < both[side]->rank; ++d) {
      const struct footprint *f = both[side];
      if (f->sizes[d] <= 1 || f->strides[d] == 0)
        continue;
      long long period = f->strides[d] * f->element_bytes;
      long long start_a, width_a, start_b, width_b;
      if (!window_modulo(a, period, &start_a, &width_a) ||
          !window_modulo(b, period, &start_b, &width_b))
        continue;
      // b's window begins `gap` bytes after a's, around the period.
      long long gap = (start_b - start_a + period) % period;
      if (gap >= width_a && gap + width_b <= period)
        return 1;
    }
  return 0;
}

// What a call may not alias: an operand a call writes (O, LSE and the
// workspace; an append's caches K and V) shares no byte with another of
// its operands, read or written (its captures and offsets included).
// Operands that are only read may overlap (K and V one buffer, say). Each
// operand counts as its extent, the bytes from the lowest to the highest
// it touches, from its pointer, sizes and strides on the host; the
// workspace as `workspace_bytes` from its pointer, when the call gives
// one. Two extents that overlap are still apart when a period proves it
// (apart_by_period: K and V interleaved in one cache). A handful of
// operands: every pair is compared.
static int check_overlap(const attnrt_attention_kernel *kernel,
                         const attnrt_attention_call *call,
                         long long strides[][ATTNRT_MAX_RANK],
                         long long capture_strides[][ATTNRT_MAX_RANK]) {
  struct footprint e[ATTNRT_NUM_OPERANDS + ATTNRT_MAX_CAPTURES + 1];
  static const long long one = 1;
  long long workspace_size = 0;
  int n = 0;
  for (int operand = 0; operand < ATTNRT_NUM_OPERANDS; ++operand) {
    const attnrt_operand_type *type = &kernel->operands[operand];
    if (!present(kernel, operand) ||
        !extent_of(call->data[operand], type->rank, call->sizes[operand],
                   strides[operand], type->element_bytes, &e[n].begin,
                   &e[n].end))
      continue;
    e[n].written = written(kernel, operand);
    set_layout(&e[n], type->rank, call->sizes[operand], strides[operand],
               type->element_bytes);
    snprintf(e[n++].name, sizeof e[0].name, "%s",
             operand_name(kernel, operand));
  }
  for (int i = 0; i < kernel->num_captures; ++i) {
    const attnrt_operand_type *type = &kernel->captures[i];
    if (!extent_of(call->capture_data[i], type->rank, call->capture_sizes[i],
                   capture_strides[i], type->element_bytes, &e[n].begin,
                   &e[n].end))
      continue;
    e[n].written = 0;
    set_layout(&e[n], type->rank, call->capture_sizes[i], capture_strides[i],
               type->element_bytes);
    snprintf(e[n++].name, sizeof e[0].name, "capture%d", i);
  }
  if (call->workspace && call->workspace_bytes > 0) {
    uintptr_t at = (uintptr_t)call->workspace;
    e[n].begin = at;
    e[n].end = call->workspace_bytes <= UINTPTR_MAX - at
                   ? at + call->workspace_bytes
                   : UINTPTR_MAX;
    e[n].written = 1;
    // Bytes, one contiguous run; past 2^62 no period can prove it apart.
    workspace_size = call->workspace_bytes < (1ULL << 62)
                         ? (long long)call->workspace_bytes
                         : 1LL << 62;
    set_layout(&e[n], 1, &workspace_size, &one, 1);
    snprintf(e[n++].name, sizeof e[0].name, "workspace");
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      if (!(e[i].written || e[j].written) || e[i].begin >= e[j].end ||
          e[j].begin >= e[i].end || apart_by_period(&e[i], &e[j]))
        continue;
      // The written one first (the earlier where both are).
      int w = e[i].written ? i : j, other = w == i ? j : i;
      return REJECT(ATTN_ERROR_UNSUPPORTED_STRIDE, kernel,
                    "%s overlaps %s: a written operand may share no byte "
                    "with another operand (%s is bytes [0x%llx, 0x%llx), "
                    "%s [0x%llx, 0x%llx))",
                    e[w].name, e[other].name, e[w].name,
                    (unsigned long long)e[w].begin,
                    (unsigned long long)e[w].end, e[other].name,
                    (unsigned long long)e[other].begin,
                    (unsigned long long)e[other].end);
    }
  return ATTN_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Device code, loaded once per device
//===----------------------------------------------------------------------===//

#define MAX_LAUNCHES 4

struct loaded_code {
  const attnrt_device_code *code;
  attnrt_module *module;
  attnrt_kernel *kernels[MAX_LAUNCHES];
  // Blocks of each decode_split launch's kernel an SM holds (0: the driver
  // cannot say), asked once here rather than on every call.
  int resident_blocks[MAX_LAUNCHES];
  int multiprocessors;
  int shared_limit; // opt-in shared memory per block
};

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int status_of(attnrt_status status) {
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
    used += (size_t)snprintf(out + used, size - used, "%s%s sm_%d%s",
                             c ? ", " : "",
                             kernel->code[c].is_cubin ? "cubin" : "PTX",
                             kernel->code[c].sm,
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
    return status_of(status);
  if ((status = attnrt_set_device(ordinal)) != ATTNRT_SUCCESS)
    return status_of(status);
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
          attnrt_kernel_resident_blocks(&loaded->resident_blocks[j],
                                        loaded->kernels[j],
                                        (int)launch->threads,
                                        launch->shared_bytes) !=
              ATTNRT_SUCCESS)
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
static int loaded_code_for_caller(const attnrt_attention_kernel *kernel,
                                  struct loaded_code **out) {
  int ordinal;
  attnrt_status status = attnrt_get_context_device(&ordinal);
  if (status != ATTNRT_SUCCESS)
    return status_of(status);
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
    any |= has_workspace(&kernel->code[c]);
  struct problem p = problem_of(kernel, call);
  // An empty packed batch launches nothing and needs no workspace.
  if (!any || empty_problem(kernel, &p))
    return ATTN_SUCCESS;
  struct loaded_code *loaded;
  if ((result = loaded_code_for_caller(kernel, &loaded)) != ATTN_SUCCESS)
    return result;
  p.size[ATTNRT_SIZE_SPLITS] =
      splits_of(loaded->code, loaded->resident_blocks, &p,
                loaded->multiprocessors, call->num_splits);
  // The counts _run refuses, refused here the same way.
  if ((result = check_sized(kernel, loaded->code, &p)) != ATTN_SUCCESS)
    return result;
  *bytes = workspace_bytes_of(loaded->code, &p);
  return ATTN_SUCCESS;
}

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
    return status_of(status);
  params->pointers[params->count++] = map;
  return ATTN_SUCCESS;
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
        (result = strides_of(kernel, call, operand, strides[operand])) !=
            ATTN_SUCCESS)
      return result;
  long long capture_strides[ATTNRT_MAX_CAPTURES][ATTNRT_MAX_RANK];
  for (int i = 0; i < kernel->num_captures; ++i)
    if ((result = capture_strides_of(kernel, call, i, capture_strides[i])) !=
        ATTN_SUCCESS)
      return result;
  // Written operands alias nothing (the workspace as the call gives it).
  if ((result = check_overlap(kernel, call, strides, capture_strides)) !=
      ATTN_SUCCESS)
    return result;
  struct problem p = problem_of(kernel, call);
  // An empty packed batch: every grid is empty, nothing to launch (and no
  // driver needed to say so).
  if (empty_problem(kernel, &p))
    return ATTN_SUCCESS;

  struct loaded_code *loaded;
  if ((result = loaded_code_for_caller(kernel, &loaded)) != ATTN_SUCCESS)
    return result;
  const attnrt_device_code *code = loaded->code;
  long long splits =
      splits_of(code, loaded->resident_blocks, &p, loaded->multiprocessors,
                call->num_splits);
  p.size[ATTNRT_SIZE_SPLITS] = splits;
  if ((result = check_sized(kernel, code, &p)) != ATTN_SUCCESS)
    return result;
  size_t needed = workspace_bytes_of(code, &p); // 0: none is used
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

  int prefill = prefill_choice(code, &p, loaded->multiprocessors,
                               loaded->shared_limit);
  // The launches to make, in order: the block mask first (it fills the
  // workspace the prefill reads), then the rest but the prefill
  // alternatives not chosen; the call's mode may keep one side.
  int order[MAX_LAUNCHES], num_order = 0;
  for (int i = 0; i < code->num_launches; ++i)
    if (code->launches[i].role == ATTNRT_ROLE_BLOCK_MASK &&
        call->block_mask != ATTNRT_BLOCK_MASK_REUSE)
      order[num_order++] = i;
  int attend = call->block_mask != ATTNRT_BLOCK_MASK_ONLY ||
               !has_role(code, ATTNRT_ROLE_BLOCK_MASK);
  for (int i = 0; attend && i < code->num_launches; ++i) {
    int role = code->launches[i].role;
    if (role != ATTNRT_ROLE_BLOCK_MASK &&
        (role != ATTNRT_ROLE_PREFILL || i == prefill) &&
        !decode_skipped(code, i, splits))
      order[num_order++] = i;
  }
  for (int o = 0; o < num_order; ++o) {
    int i = order[o];
    const attnrt_launch_facts *launch = &code->launches[i];
    // The parameters in the contract's order (check_launch has checked
    // each kind and operand).
    long long ws_shape[ATTNRT_MAX_RANK], ws_strides[ATTNRT_MAX_RANK];
    launch_workspace(launch, &p, ws_shape);
    attnrt_operand_type ws_type = {.rank = launch->workspace_rank};
    row_major_strides(&ws_type, ws_shape, ws_strides);
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
        add_memref(&params, call->data[operand],
                   kernel->operands[operand].rank, call->sizes[operand],
                   strides[operand]);
    }
    long long grid[3];
    grid_of(launch, &p, grid);
    // A programmatic launch (the decode combine on sm_90+) may overlap the
    // one before it, which this loop has just queued on the same stream.
    attnrt_status status =
        (launch->programmatic ? attnrt_launch_programmatic : attnrt_launch)(
            loaded->kernels[i], (unsigned)grid[0], (unsigned)grid[1],
            (unsigned)grid[2], launch->threads, 1, 1, launch->shared_bytes,
            (attnrt_stream *)call->stream, params.pointers);
    if (status != ATTNRT_SUCCESS)
      return status_of(status);
  }
  return ATTN_SUCCESS;
}
