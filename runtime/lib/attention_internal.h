//===- attention_internal.h - What the attention files share ------*- C -*-===//
//
// libattnrt's attention side is four files, one job each:
//   attention_contract.c  the problem's sizes, the launch contracts as
//                         functions of them, attnrt_attention_can_implement
//   attention_check.c     pointers, strides, alignment, aliasing
//   attention_load.c      device code, loaded once per device; the
//                         workspace a call needs
//   attention_run.c       kernel parameters and the launches
// This header holds what more than one of them uses.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNRT_ATTENTION_INTERNAL_H
#define ATTNRT_ATTENTION_INTERNAL_H

#include "attnrt.h"
#include "attnrt_attention.h"
#include "internal.h"

#include <stddef.h>

// The operands' names in messages, by ATTNRT_* index.
extern const char *const attnrt_internal_operand_names[ATTNRT_NUM_OPERANDS];

// Sets attnrt_last_error() to "<kernel>: <format>" and returns `status`.
#define REJECT(status, kernel, ...)                                            \
  (attnrt_internal_set_error((kernel)->name, __VA_ARGS__), (status))

// Tensor maps one launch may pass (a parameter each).
#define MAX_TENSOR_MAPS 4

static inline int present(const attnrt_attention_kernel *kernel, int operand) {
  return kernel->operands[operand].element_bytes > 0;
}

// A cache-append kernel: it reads K_NEW and V_NEW and writes the caches K
// and V (an attention kernel reads K and V and writes O and LSE).
static inline int is_append(const attnrt_attention_kernel *kernel) {
  return present(kernel, ATTNRT_K_NEW);
}

// A merge kernel: it reads O_PARTS and LSE_PARTS and writes O (and LSE).
static inline int is_merge(const attnrt_attention_kernel *kernel) {
  return present(kernel, ATTNRT_O_PARTS);
}

// The operand's name in messages: an append's K and V are its caches.
static inline const char *operand_name(const attnrt_attention_kernel *kernel,
                                       int operand) {
  if (is_append(kernel) && operand == ATTNRT_K)
    return "k_cache";
  if (is_append(kernel) && operand == ATTNRT_V)
    return "v_cache";
  return attnrt_internal_operand_names[operand];
}

// Packed (varlen) forms: Q, O and LSE by cu_seqlens_q, K and V by
// cu_seqlens_k (attnrt_attention.h).
static inline int packed_q(const attnrt_attention_kernel *kernel) {
  return present(kernel, ATTNRT_CU_SEQLENS_Q);
}
static inline int packed_kv(const attnrt_attention_kernel *kernel) {
  return present(kernel, ATTNRT_CU_SEQLENS_K);
}
static inline int packed(const attnrt_attention_kernel *kernel) {
  return packed_q(kernel) || packed_kv(kernel);
}

static inline int written(const attnrt_attention_kernel *kernel, int operand) {
  if (is_append(kernel))
    return operand == ATTNRT_K || operand == ATTNRT_V;
  return operand == ATTNRT_O || operand == ATTNRT_LSE;
}

// The named sizes of attnrt_size; [ATTNRT_SIZE_SPLITS] is filled once the
// GPU is known (1 until then). `total_q` and `group` make the
// packed_q_tiles terms.
struct problem {
  long long size[ATTNRT_NUM_SIZES];
  long long total_q, group;
};

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

struct problem attnrt_internal_problem_of(const attnrt_attention_kernel *kernel,
                                          const attnrt_attention_call *call);

void attnrt_internal_grid_of(const attnrt_launch_facts *launch,
                             const struct problem *p, long long grid[3]);

int attnrt_internal_check_launch(const attnrt_attention_kernel *kernel,
                                 const attnrt_launch_facts *launch);

// The prefill launch to make (attnrt_device_code): of the alternatives whose
// shared memory the GPU allows (code for sm_80 also runs on sm_86 and sm_89,
// which allow less), the first whose grid gives every multiprocessor a
// block, else the last; but none before the last alternative whose
// max_kv_len covers the K/V length. If none fits, the last, whose launch
// then reports the limit; -1 if the code has no prefill launch.
int attnrt_internal_prefill_choice(const attnrt_device_code *code,
                                   const struct problem *p, int multiprocessors,
                                   int shared_limit);

int attnrt_internal_has_workspace(const attnrt_device_code *code);

// The count of K/V splits for `p` on this GPU, where a contract names
// `splits` (else 1): the caller's count when it fixed one, else the policy
// (attnrt_decode_split_count_resident), which weighs the blocks of one
// split of the decode_split launch's grid against the GPU and the blocks
// of its kernel an SM holds (`resident[i]` for launch i, 0: unknown).
long long attnrt_internal_splits_of(const attnrt_device_code *code,
                                    const int *resident,
                                    const struct problem *p,
                                    int multiprocessors, long long requested);

int attnrt_internal_has_role(const attnrt_device_code *code, int role);

// Whether a decode launch is left out at `splits`: with one split the
// decode_unsplit kernel, where the code has one, runs in place of
// decode_split and decode_combine; with more, it does not run.
int attnrt_internal_decode_skipped(const attnrt_device_code *code, int i,
                                   long long splits);

// A launch's workspace in bytes (0 without one), and its shape.
size_t attnrt_internal_launch_workspace(const attnrt_launch_facts *launch,
                                        const struct problem *p,
                                        long long shape[ATTNRT_MAX_RANK]);

// The workspace every launch of `code` that runs at `p`'s splits fits in:
// the largest (0 where the one-split kernel runs alone).
size_t attnrt_internal_workspace_bytes_of(const attnrt_device_code *code,
                                          const struct problem *p);

// Whether `code` can run `p` at its count of splits: every launch's grid
// one the GPU takes, and a workspace below 2^62 bytes (launch_workspace
// saturates there). One rule for _can_implement (at the caller's fixed
// count), _workspace_bytes and _run (at the count they use), so that the
// size query refuses exactly the counts the run refuses, with the same
// message.
int attnrt_internal_check_sized(const attnrt_attention_kernel *kernel,
                                const attnrt_device_code *code,
                                const struct problem *p);

// A packed batch with no sequence or no query token: nothing to launch.
int attnrt_internal_empty_problem(const attnrt_attention_kernel *kernel,
                                  const struct problem *p);

void attnrt_internal_row_major_strides(const attnrt_operand_type *type,
                                       const long long *sizes,
                                       long long *strides);

// The strides the kernel gets for `operand`, checked against its layout.
int attnrt_internal_strides_of(const attnrt_attention_kernel *kernel,
                               const attnrt_attention_call *call, int operand,
                               long long strides[ATTNRT_MAX_RANK]);

// The same for capture `i`, which the kernel only reads, element by element.
int attnrt_internal_capture_strides_of(const attnrt_attention_kernel *kernel,
                                       const attnrt_attention_call *call, int i,
                                       long long strides[ATTNRT_MAX_RANK]);

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
int attnrt_internal_check_overlap(const attnrt_attention_kernel *kernel,
                                  const attnrt_attention_call *call,
                                  long long strides[][ATTNRT_MAX_RANK],
                                  long long capture_strides[][ATTNRT_MAX_RANK]);

int attnrt_internal_status_of(attnrt_status status);

// The code loaded on the GPU of the caller's current context.
int attnrt_internal_loaded_code_for_caller(
    const attnrt_attention_kernel *kernel, struct loaded_code **out);

#endif // ATTNRT_ATTENTION_INTERNAL_H
