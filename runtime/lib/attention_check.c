//===- attention_check.c - A call's pointers and strides ------------------===//
//
// The checks of a call's memory: alignment, strides against the kernel's
// layouts, outputs that alias themselves or another operand. Every check
// runs before the driver is touched, so a rejected call writes nothing.
//
//===----------------------------------------------------------------------===//

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "attention_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OPERAND_NAME(id, name) name,
const char *const attnrt_internal_operand_names[ATTNRT_NUM_OPERANDS] = {
    ATTNRT_OPERANDS(OPERAND_NAME)};
#undef OPERAND_NAME

const char *attnrt_attention_status_string(int status) {
#define DESCRIBE(name, value, text)                                            \
  case value:                                                                  \
    return text;
  switch (status) { ATTN_STATUS_LIST(DESCRIBE) }
#undef DESCRIBE
  return "unknown attn status";
}

//===----------------------------------------------------------------------===//
// Pointers, strides, alignment
//===----------------------------------------------------------------------===//

// Q, K, V and O rows (and an append's new rows, a merge's parts) are
// copied with 16-byte loads and stores.
static size_t alignment_of(int operand, const attnrt_operand_type *type) {
  switch (operand) {
  case ATTNRT_Q:
  case ATTNRT_K:
  case ATTNRT_V:
  case ATTNRT_O:
  case ATTNRT_K_NEW:
  case ATTNRT_V_NEW:
  case ATTNRT_O_PARTS:
    return 16;
  default:
    return (size_t)type->element_bytes;
  }
}

void attnrt_internal_row_major_strides(const attnrt_operand_type *type,
                                       const long long *sizes,
                                       long long *strides) {
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
                             const char *name, int rank, const long long *sizes,
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
  attnrt_internal_row_major_strides(type, sizes, row_major);
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
      (result = check_no_aliasing(kernel, name, type->rank, sizes, strides)) !=
          ATTN_SUCCESS)
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
int attnrt_internal_strides_of(const attnrt_attention_kernel *kernel,
                               const attnrt_attention_call *call, int operand,
                               long long strides[ATTNRT_MAX_RANK]) {
  const attnrt_operand_type *type = &kernel->operands[operand];
  return checked_strides(kernel, operand_name(kernel, operand), type,
                         call->data[operand], call->sizes[operand],
                         call->strides[operand], written(kernel, operand),
                         alignment_of(operand, type), strides);
}

// The same for capture `i`, which the kernel only reads, element by element.
int attnrt_internal_capture_strides_of(const attnrt_attention_kernel *kernel,
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
int attnrt_internal_check_overlap(
    const attnrt_attention_kernel *kernel, const attnrt_attention_call *call,
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
      return REJECT(
          ATTN_ERROR_UNSUPPORTED_STRIDE, kernel,
          "%s overlaps %s: a written operand may share no byte "
          "with another operand (%s is bytes [0x%llx, 0x%llx), "
          "%s [0x%llx, 0x%llx))",
          e[w].name, e[other].name, e[w].name, (unsigned long long)e[w].begin,
          (unsigned long long)e[w].end, e[other].name,
          (unsigned long long)e[other].begin, (unsigned long long)e[other].end);
    }
  return ATTN_SUCCESS;
}
