/*===- attnrt_attention.h - Run attn's compiled attention kernels -*- C -*-===*\
 *
 * The part of libattnrt the libraries made by attn-compile call. A generated
 * library describes each kernel in static tables (an attnrt_attention_kernel:
 * its operands' layouts, and per GPU target the device code and how to
 * launch it); its <kernel>_run, _can_implement and _workspace_bytes fill an
 * attnrt_attention_call and call the functions below, which
 *  - check the call (pointers, sizes, strides, alignment, workspace) before
 *    touching the driver or any memory;
 *  - pick the device code for the GPU of the caller's current CUDA context
 *    (a cubin built for it, else PTX the driver compiles) and load it once
 *    per device, thread-safely;
 *  - size the decode tier's workspace and launch the kernels.
 *
 * They return the ATTN_* codes below (the generated headers repeat them);
 * attnrt_last_error() then says what was wrong.
 *
\*===----------------------------------------------------------------------===*/

#ifndef ATTNRT_ATTENTION_H
#define ATTNRT_ATTENTION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The status codes of the generated C ABI: X(name, value, description).
   attn-compile writes them into every generated header from this list. */
#define ATTN_STATUS_LIST(X)                                                    \
  X(ATTN_SUCCESS, 0, "success")                                                \
  X(ATTN_ERROR_NULL_POINTER, 1, "a required pointer is NULL")                  \
  X(ATTN_ERROR_MISALIGNED, 2,                                                  \
    "a pointer or stride is not aligned as the kernel needs")                  \
  X(ATTN_ERROR_UNSUPPORTED_SIZE, 3,                                            \
    "the sizes are outside what the kernel can do")                            \
  X(ATTN_ERROR_UNSUPPORTED_STRIDE, 4,                                          \
    "the strides do not match the kernel's layout")                            \
  X(ATTN_ERROR_WORKSPACE_TOO_SMALL, 5,                                         \
    "the workspace is smaller than the kernel needs")                          \
  X(ATTN_ERROR_NO_DRIVER, 6, "no usable CUDA driver")                          \
  X(ATTN_ERROR_NO_DEVICE, 7, "no CUDA device")                                 \
  X(ATTN_ERROR_UNSUPPORTED_DEVICE, 8,                                          \
    "the library has no code this GPU can run, or the GPU lacks the "          \
    "resources the kernel needs")                                              \
  X(ATTN_ERROR_LAUNCH_FAILED, 9, "the kernel launch failed")                   \
  X(ATTN_ERROR_RUNTIME, 10, "the CUDA driver or attn's runtime failed")

/* The generated headers define the same names as macros, under the same
   guard; whichever comes first wins, with the same values. */
#ifndef ATTN_STATUS_CODES
#define ATTN_STATUS_CODES
#define ATTNRT_DECLARE_STATUS(name, value, text) name = value,
enum { ATTN_STATUS_LIST(ATTNRT_DECLARE_STATUS) };
#undef ATTNRT_DECLARE_STATUS
#endif

/* A short constant description of a code; never NULL. */
const char *attnrt_attention_status_string(int status);

/* The operands of attn.attention, in the order the kernels take them. */
enum {
  ATTNRT_Q,
  ATTNRT_K,
  ATTNRT_V,
  ATTNRT_BLOCK_TABLE,
  ATTNRT_KV_LENS,
  ATTNRT_O,
  ATTNRT_LSE,
  ATTNRT_NUM_OPERANDS
};

#define ATTNRT_MAX_RANK 4
#define ATTNRT_MAX_DEVICES 64

/* An operand's memref type. */
typedef struct attnrt_operand_type {
  int rank; /* 0: the kernel has no such operand */
  int element_bytes;
  /* 1: an identity layout, whose strides are the row-major ones of its
     sizes. 0: a strided layout with `strides` (-1 where dynamic). */
  int row_major;
  long long strides[ATTNRT_MAX_RANK];
} attnrt_operand_type;

/* How a kernel of a tier is launched (attn-translate --attn-ptx's
   "// attn.kernel" line). */
typedef enum attnrt_tier {
  ATTNRT_TIER_PREFILL = 1,        /* wmma, mma: (ceil(G Sq / block_q), Hkv, B) */
  ATTNRT_TIER_DECODE_SPLIT = 2,   /* grid (splits, Hkv, B ceil(G Sq / block_q)) */
  ATTNRT_TIER_DECODE_COMBINE = 3, /* grid (ceil(B Hq Sq / rows_per_block)) */
} attnrt_tier;

typedef struct attnrt_launch_facts {
  const char *kernel; /* the .entry name */
  int tier;
  unsigned threads;
  unsigned shared_bytes;
  int block_q;
  int rows_per_block;
} attnrt_launch_facts;

/* The device code for one target, and its launches in order. Prefill
   launches are alternatives, largest block_q first (attn-compile puts its
   8-warp small-grid kernel last): of those whose shared memory the GPU
   allows, the runtime launches the first whose grid has a block for every
   multiprocessor, else the last (small problems run on smaller tiles or
   on more warps per tile). */
typedef struct attnrt_device_code {
  int sm;            /* 90 for sm_90 and sm_90a */
  int arch_specific; /* sm_90a: runs on compute capability 9.0 only */
  int is_cubin;      /* else PTX text */
  const void *image;
  size_t image_size;
  const attnrt_launch_facts *launches;
  int num_launches;
} attnrt_device_code;

typedef struct attnrt_attention_kernel {
  const char *name;
  attnrt_operand_type operands[ATTNRT_NUM_OPERANDS];
  int paged;
  const attnrt_device_code *code;
  int num_code;
  /* ATTNRT_MAX_DEVICES slots, zero-initialized by the library: the loaded
     code per device ordinal. Owned by the runtime. */
  void **loaded;
} attnrt_attention_kernel;

/* One call's arguments. `sizes` are complete (the library fills the static
   dimensions); `strides` in elements, NULL for row-major. */
typedef struct attnrt_attention_call {
  const void *data[ATTNRT_NUM_OPERANDS];
  long long sizes[ATTNRT_NUM_OPERANDS][ATTNRT_MAX_RANK];
  const long long *strides[ATTNRT_NUM_OPERANDS];
  void *workspace;
  size_t workspace_bytes;
  void *stream; /* a CUstream / cudaStream_t; NULL: the default stream */
} attnrt_attention_call;

/* Whether the kernel can run on `call`'s sizes (pointers are not looked at):
   ATTN_SUCCESS or ATTN_ERROR_UNSUPPORTED_SIZE. No driver needed. */
int attnrt_attention_can_implement(const attnrt_attention_kernel *kernel,
                                   const attnrt_attention_call *call);

/* The workspace `call`'s sizes need on the GPU of the current context (0 for
   kernels without one; the split-K decode tier's count of splits depends on
   the GPU's multiprocessors). */
int attnrt_attention_workspace_bytes(const attnrt_attention_kernel *kernel,
                                     const attnrt_attention_call *call,
                                     size_t *bytes);

/* Checks everything, then launches on `call->stream`. Returns when the
   kernels are queued; a failure while they run shows at the next
   synchronization. Nothing is written when it returns an error. */
int attnrt_attention_run(const attnrt_attention_kernel *kernel,
                         const attnrt_attention_call *call);

#ifdef __cplusplus
}
#endif

#endif /* ATTNRT_ATTENTION_H */
