//===- attention_contract.c - Sizes and launch contracts ------------------===//
//
// The problem's named sizes, the launch contracts libattnrt interprets as
// functions of them, and attnrt_attention_can_implement, which checks a
// call against them before anything touches the driver.
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
// The problem's sizes, and the launch contracts as functions of them
//===----------------------------------------------------------------------===//

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

struct problem attnrt_internal_problem_of(const attnrt_attention_kernel *kernel,
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
  s[ATTNRT_SIZE_KV_LEN] = kernel->paged
                              ? call->sizes[ATTNRT_BLOCK_TABLE][1] * k[2]
                          : packed_kv(kernel) ? k[0]
                                              : k[2];
  s[ATTNRT_SIZE_GROUP_ROWS] = q_len * p.group;
  // A merge's rows are its T * H (parts [N, T, H, Dv]).
  const long long *parts = call->sizes[ATTNRT_O_PARTS];
  s[ATTNRT_SIZE_ROWS] = is_merge(kernel)   ? parts[1] * parts[2]
                        : packed_q(kernel) ? q[0] * q[1]
                                           : q[0] * q[1] * q[2];
  s[ATTNRT_SIZE_SPLITS] = 1;
  // [B, Hkv, S_new, D], or packed [T, Hkv, D].
  s[ATTNRT_SIZE_NEW_LEN] =
      call->sizes[ATTNRT_K_NEW]
                 [kernel->operands[ATTNRT_K_NEW].rank == 3 ? 0 : 2];
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

void attnrt_internal_grid_of(const attnrt_launch_facts *launch,
                             const struct problem *p, long long grid[3]) {
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

int attnrt_internal_check_launch(const attnrt_attention_kernel *kernel,
                                 const attnrt_launch_facts *launch) {
  if (launch->role < ATTNRT_ROLE_PREFILL || launch->role > ATTNRT_ROLE_MERGE)
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
int attnrt_internal_prefill_choice(const attnrt_device_code *code,
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
    attnrt_internal_grid_of(&code->launches[i], p, grid);
    if (grid[0] * grid[1] * grid[2] >= multiprocessors)
      break;
  }
  return choice >= 0 ? choice : last;
}

int attnrt_internal_has_workspace(const attnrt_device_code *code) {
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
long long attnrt_internal_splits_of(const attnrt_device_code *code,
                                    const int *resident,
                                    const struct problem *p,
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
    attnrt_internal_grid_of(launch, &one, grid);
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

int attnrt_internal_has_role(const attnrt_device_code *code, int role) {
  for (int i = 0; i < code->num_launches; ++i)
    if (code->launches[i].role == role)
      return 1;
  return 0;
}

// Whether a decode launch is left out at `splits`: with one split the
// decode_unsplit kernel, where the code has one, runs in place of
// decode_split and decode_combine; with more, it does not run.
int attnrt_internal_decode_skipped(const attnrt_device_code *code, int i,
                                   long long splits) {
  int role = code->launches[i].role;
  if (role == ATTNRT_ROLE_DECODE_UNSPLIT)
    return splits != 1;
  if (role == ATTNRT_ROLE_DECODE_SPLIT || role == ATTNRT_ROLE_DECODE_COMBINE)
    return splits == 1 &&
           attnrt_internal_has_role(code, ATTNRT_ROLE_DECODE_UNSPLIT);
  return 0;
}

// A launch's workspace in bytes (0 without one), and its shape.
size_t attnrt_internal_launch_workspace(const attnrt_launch_facts *launch,
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
size_t attnrt_internal_workspace_bytes_of(const attnrt_device_code *code,
                                          const struct problem *p) {
  size_t most = 0;
  for (int i = 0; i < code->num_launches; ++i) {
    if (attnrt_internal_decode_skipped(code, i, p->size[ATTNRT_SIZE_SPLITS]))
      continue;
    long long shape[ATTNRT_MAX_RANK];
    size_t bytes =
        attnrt_internal_launch_workspace(&code->launches[i], p, shape);
    most = bytes > most ? bytes : most;
  }
  return most;
}

static int check_grid(const attnrt_attention_kernel *kernel,
                      const attnrt_launch_facts *launch,
                      const struct problem *p) {
  const long long limits[3] = {2147483647LL, 65535, 65535};
  long long grid[3];
  attnrt_internal_grid_of(launch, p, grid);
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
int attnrt_internal_check_sized(const attnrt_attention_kernel *kernel,
                                const attnrt_device_code *code,
                                const struct problem *p) {
  for (int i = 0; i < code->num_launches; ++i) {
    int result = check_grid(kernel, &code->launches[i], p);
    if (result != ATTN_SUCCESS)
      return result;
  }
  for (int i = 0; i < code->num_launches; ++i) {
    long long shape[ATTNRT_MAX_RANK];
    if (attnrt_internal_decode_skipped(code, i, p->size[ATTNRT_SIZE_SPLITS]) ||
        attnrt_internal_launch_workspace(&code->launches[i], p, shape) <
            ((size_t)1 << 62))
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
static long long least_size(const attnrt_attention_kernel *kernel, int operand,
                            int d) {
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
      return REJECT(
          ATTN_ERROR_RUNTIME, kernel,
          "%s has rank %d in the library's table; packed by %s it "
          "has rank %d",
          operand_name(kernel, operand), kernel->operands[operand].rank,
          ranks[i].packed_q ? "cu_seqlens_q" : "cu_seqlens_k", ranks[i].rank);
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
int attnrt_internal_empty_problem(const attnrt_attention_kernel *kernel,
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
      int result =
          attnrt_internal_check_launch(kernel, &kernel->code[c].launches[i]);
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
  struct problem p = attnrt_internal_problem_of(kernel, call);
  if (!is_merge(kernel) &&
      p.size[ATTNRT_SIZE_Q_HEADS] % p.size[ATTNRT_SIZE_KV_HEADS] != 0)
    return REJECT(ATTN_ERROR_UNSUPPORTED_SIZE, kernel,
                  "%lld query heads are not a multiple of %lld K/V heads",
                  p.size[ATTNRT_SIZE_Q_HEADS], p.size[ATTNRT_SIZE_KV_HEADS]);
  // Every target's grids and workspace must be ones the GPU takes: at the
  // caller's count of splits where it fixed one (a code without a split-K
  // launch has taken only 0 or 1, above), else at one split here (the
  // count needs the GPU) and again at the chosen count before launching.
  p.size[ATTNRT_SIZE_SPLITS] = call->num_splits > 0 ? call->num_splits : 1;
  for (int c = 0; c < kernel->num_code; ++c)
    if ((checked = attnrt_internal_check_sized(kernel, &kernel->code[c], &p)) !=
        ATTN_SUCCESS)
      return checked;
  return ATTN_SUCCESS;
}

//===----------------------------------------------------------------------===//
// The K/V split policy (attnrt.h): attnrt_internal_splits_of's, and the
// GPU suite's and the benchmarks' entry points to it
//===----------------------------------------------------------------------===//

long long attnrt_decode_split_count(int multiprocessor_count,
                                    long long blocks_per_split,
                                    long long kv_len,
                                    long long rows_per_block) {
  return attnrt_decode_split_count_resident(
      multiprocessor_count, 4, blocks_per_split, kv_len, rows_per_block);
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
