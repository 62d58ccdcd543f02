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
 *  - launch the kernels as their launch contracts say: grid, parameters
 *    and workspace as functions of the problem's sizes.
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
    "the strides do not match the kernel's layout, or a written operand "      \
    "overlaps another")                                                        \
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

/* The operands of attn.attention, then those only attn.cache_append has,
   then attn.attention's packed (varlen) offsets, appended last so that the
   values before them stay. An append kernel has K_NEW, V_NEW,
   [BLOCK_TABLE], KV_LENS, [NEW_LENS] (or, packed, K_NEW, V_NEW,
   SLOT_MAPPING) and writes the caches K and V; it has no Q or O.

   Packed (varlen) attention, FlashAttention's varlen layout:
    - CU_SEQLENS_Q [B + 1] i32: Q is [total_q, Hq, D], O [total_q, Hq, Dv]
      and LSE [total_q, Hq]; sequence b owns rows cu_seqlens_q[b] ..
      cu_seqlens_q[b + 1] - 1. B is its size minus 1, total_q is Q's
      dimension 0.
    - CU_SEQLENS_K [B + 1] i32: K and V are [total_k, Hkv, D(v)] the same
      way (no BLOCK_TABLE or KV_LENS then).
   Q may be packed over contiguous (+ KV_LENS), packed or paged
   (+ BLOCK_TABLE, KV_LENS) K/V; K/V may be packed under a padded Q.
   The offsets are DEVICE arrays: libattnrt never reads them, so the
   caller guarantees what it cannot check: offsets monotone (cu[b] <=
   cu[b + 1]) starting at cu[0] = 0, cu[B] <= the rows of the buffer they
   index (total_q, total_k), every sequence's keys within K/V (kv_lens,
   block_table as for a padded batch), and, where a max_q_len is given,
   no sequence with more queries (rows past it may stay unwritten).
   B = 0 and total_q = 0 are allowed: nothing is launched.

   Attention sinks (SINKS, [Hq] f16, bf16 or f32, appended after the
   offsets): one logit per query head in the denominator, with no value;
   the LSE counts it. Only the launches that normalize O read it.

   A merge kernel (attn.merge_states) reads O_PARTS [N, T, H, Dv] and
   LSE_PARTS [N, T, H] (f32), the partial states of N disjoint key sets,
   and writes O [T, H, Dv] and, optionally, LSE [T, H]; it has no Q, K or
   V.

   A quantized K/V cache (f8E4M3FN, f8E5M2 or i8 K and V, one byte an
   element) has dequantization scales K_SCALE and V_SCALE (f32, each
   optional: 1 where absent): rank 0, one for the tensor; [Hkv], one per
   K/V head; or one per token and head, K's shape without D
   ([B, Hkv, Sk], paged [num_blocks, Hkv, block_size], packed
   [total_k, Hkv]). A K/V element is its decoded byte times its scale. */
/* Every operand and its name, in number order: X(ATTNRT_Q, "q") and so
   on. The enum below, libattnrt's messages and attn-compile's C functions
   all come from this one list. */
#define ATTNRT_OPERANDS(X)                                                     \
  X(ATTNRT_Q, "q")                                                             \
  X(ATTNRT_K, "k")                                                             \
  X(ATTNRT_V, "v")                                                             \
  X(ATTNRT_BLOCK_TABLE, "block_table")                                         \
  X(ATTNRT_KV_LENS, "kv_lens")                                                 \
  X(ATTNRT_O, "o")                                                             \
  X(ATTNRT_LSE, "lse")                                                         \
  X(ATTNRT_K_NEW, "k_new")                                                     \
  X(ATTNRT_V_NEW, "v_new")                                                     \
  X(ATTNRT_NEW_LENS, "new_lens")                                               \
  X(ATTNRT_SLOT_MAPPING, "slot_mapping")                                       \
  X(ATTNRT_CU_SEQLENS_Q, "cu_seqlens_q")                                       \
  X(ATTNRT_CU_SEQLENS_K, "cu_seqlens_k")                                       \
  X(ATTNRT_SINKS, "sinks")                                                     \
  X(ATTNRT_O_PARTS, "o_parts")                                                 \
  X(ATTNRT_LSE_PARTS, "lse_parts")                                             \
  X(ATTNRT_K_SCALE, "k_scale")                                                 \
  X(ATTNRT_V_SCALE, "v_scale")

/* The operands' numbers: ATTNRT_Q = 0, ATTNRT_K = 1, ... */
#define ATTNRT_OPERAND_ENUMERATOR(id, name) id,
enum { ATTNRT_OPERANDS(ATTNRT_OPERAND_ENUMERATOR) ATTNRT_NUM_OPERANDS };
#undef ATTNRT_OPERAND_ENUMERATOR

#define ATTNRT_MAX_RANK 4
#define ATTNRT_MAX_DEVICES 64
/* The memrefs a spec's score_mod / mask_mod regions read (attn.attention's
   captures), at most this many. */
#define ATTNRT_MAX_CAPTURES 4

/* An operand's memref type. */
typedef struct attnrt_operand_type {
  int rank; /* 0: a scalar (a per-tensor scale) */
  int element_bytes; /* 0: the kernel has no such operand */
  /* 1: an identity layout, whose strides are the row-major ones of its
     sizes. 0: a strided layout with `strides` (-1 where dynamic). */
  int row_major;
  long long strides[ATTNRT_MAX_RANK];
} attnrt_operand_type;

/* How to launch one kernel: its launch contract (#attn.launch in attn's
   dialect), copied by attn-compile from the IR the tier built. libattnrt
   interprets it; it knows no tier. */

/* What a launch is to its kernel function: prefill launches are
   alternatives (below), decode_split then decode_combine run in order,
   unless the call has one split and the code has a decode_unsplit launch,
   which then runs alone in place of both (and needs no workspace); append
   is the one launch of a cache-append kernel. */
typedef enum attnrt_launch_role {
  ATTNRT_ROLE_PREFILL = 1,
  ATTNRT_ROLE_DECODE_SPLIT = 2,
  ATTNRT_ROLE_DECODE_COMBINE = 3,
  ATTNRT_ROLE_APPEND = 4,
  ATTNRT_ROLE_BLOCK_MASK = 5,     /* writes the block mask into the workspace,
                                     before the prefill launch that reads it */
  ATTNRT_ROLE_DECODE_UNSPLIT = 6, /* the split kernel's tile writing O
                                     itself: a call of one split */
  ATTNRT_ROLE_MERGE = 7,          /* the one launch of a merge kernel */
} attnrt_launch_role;

/* The problem sizes grids and workspaces are functions of. */
typedef enum attnrt_size {
  ATTNRT_SIZE_CONSTANT, /* the term is its value */
  ATTNRT_SIZE_BATCH,
  ATTNRT_SIZE_Q_HEADS,
  ATTNRT_SIZE_KV_HEADS,
  ATTNRT_SIZE_Q_LEN,      /* packed Q: the kernel's max_q_len, else the
                             call's, else total_q */
  ATTNRT_SIZE_KV_LEN,     /* paged: the longest the block table can name;
                             packed K/V: total_k */
  ATTNRT_SIZE_GROUP_ROWS, /* q_len * q_heads / kv_heads */
  ATTNRT_SIZE_ROWS,       /* batch * q_heads * q_len (O's rows: packed,
                             total_q * q_heads; a merge's T * H) */
  ATTNRT_SIZE_SPLITS,     /* K/V splits, chosen per GPU (attnrt.h) */
  ATTNRT_SIZE_NEW_LEN,    /* an append's new tokens per sequence (S_new),
                             or its packed tokens (T) */
  ATTNRT_SIZE_PACKED_Q_TILES, /* a packed Q's tiles: the term
                             ceildiv(packed_q_tiles, N) is
                             floor(total_q * group / N) + batch, group =
                             q_heads / kv_heads (sequence b's tiles start
                             at floor(cu_seqlens_q[b] * group / N) + b) */
  ATTNRT_NUM_SIZES
} attnrt_size;

/* One factor of dimension `dim`: ceil(size / value), or `value` for
   ATTNRT_SIZE_CONSTANT. A dimension is the product of its terms. */
typedef struct attnrt_launch_term {
  int dim;
  int size; /* attnrt_size */
  long long value;
} attnrt_launch_term;

typedef enum attnrt_param_kind {
  ATTNRT_PARAM_MEMREF,     /* operand `operand`'s memref descriptor */
  ATTNRT_PARAM_WORKSPACE,  /* the workspace, a row-major memref */
  ATTNRT_PARAM_TENSOR_MAP, /* a TMA tensor map of Q, K, V or O, by value */
  ATTNRT_PARAM_CAPTURE     /* capture `operand`'s memref descriptor */
} attnrt_param_kind;

typedef struct attnrt_launch_param {
  int kind;    /* attnrt_param_kind */
  int operand; /* ATTNRT_Q ... ATTNRT_LSE_PARTS; a capture's index;
                  unused for the workspace */
} attnrt_launch_param;

#define ATTNRT_MAX_LAUNCH_TERMS 8
#define ATTNRT_MAX_LAUNCH_PARAMS 16

/* A memref parameter is passed expanded, one 64-bit value per field:
   allocated pointer, aligned pointer, offset 0, sizes, strides. */
typedef struct attnrt_launch_facts {
  const char *kernel; /* the .entry name */
  int role;           /* attnrt_launch_role */
  unsigned threads;   /* per block, in x */
  unsigned shared_bytes;
  int num_grid_terms; /* grid (x, y, z) */
  attnrt_launch_term grid[ATTNRT_MAX_LAUNCH_TERMS];
  int num_params; /* in the kernel's order */
  attnrt_launch_param params[ATTNRT_MAX_LAUNCH_PARAMS];
  int workspace_rank; /* 0: no workspace */
  int workspace_element_bytes;
  int num_workspace_terms;
  attnrt_launch_term workspace[ATTNRT_MAX_LAUNCH_TERMS];
  /* The tile's query rows and the query heads per K/V head (0: the tier
     has none); Q's and O's tensor maps take boxes of block_q rows in GQA
     order. */
  int block_q;
  int group;
  /* A decode_combine launch that may overlap the launch before it (CUDA's
     programmatic dependent launch; its kernel waits for that one's
     writes): attnrt_launch_programmatic. */
  int programmatic;
  /* A prefill alternative launched in preference to the larger tiles
     before it when the K/V length is at most this (0: no such rule). */
  long long max_kv_len;
} attnrt_launch_facts;

/* The device code for one target, and its launches in order. Prefill
   launches are alternatives, largest tile first (attn-compile puts its
   8-warp small-grid kernel last): of those whose shared memory the GPU
   allows, the runtime launches the first whose grid has a block for every
   multiprocessor, else the last (small problems run on smaller tiles or
   on more warps per tile). An alternative with max_kv_len >= the K/V
   length first drops the alternatives before it (short sequences run on
   the smaller tile even where the larger one fills the GPU). */
/* Arch-specific code (sm_90a: the wgmma prefill tier) is not forward
   compatible, neither its cubin nor its PTX: it runs on compute capability
   9.0 only, where the runtime prefers it to plain sm_90 code, and a library
   meant for other GPUs must also carry a plain target (attn-compile
   --targets=sm_80,sm_90,sm_90a). */
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
  /* A packed Q: the spec's max_q_len (most queries a sequence), 0 where
     the spec leaves it to the call. */
  long long max_q_len;
  /* The captures' memref types, in the spec's order (read-only device
     arrays the kernel's mod regions index). */
  int num_captures;
  const attnrt_operand_type *captures;
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
  /* K/V splits of a split-K kernel: 0 lets the runtime choose from the
     sizes and the GPU; N >= 1 fixes them, so that each sequence's result
     depends on its own data alone (not on the batch or the GPU). Kernels
     without a split-K launch take 0 or 1. */
  long long num_splits;
  /* A packed Q whose kernel has no max_q_len: the caller's promise that no
     sequence has more queries (FlashAttention's max_seqlen_q); 0: unknown
     (then total_q). At most the kernel's max_q_len where it has one. */
  long long max_q_len;
  /* The captures (kernel->num_captures of them): device pointers, their
     complete sizes (each at least 1) and strides in elements (NULL:
     row-major). The kernel reads them where its regions say; the caller
     guarantees those reads fall inside (as FlexAttention's do). */
  const void *capture_data[ATTNRT_MAX_CAPTURES];
  long long capture_sizes[ATTNRT_MAX_CAPTURES][ATTNRT_MAX_RANK];
  const long long *capture_strides[ATTNRT_MAX_CAPTURES];
  /* Code with a block-mask launch (a mask_mod's tile classification, kept
     in the workspace): ATTNRT_BLOCK_MASK_COMPUTE runs it, then the
     attention; _ONLY runs it alone, so that later calls with the same
     sizes and captures can run _REUSE, which attends with the block mask
     the workspace holds. Code without one ignores the field. */
  int block_mask;
} attnrt_attention_call;

enum {
  ATTNRT_BLOCK_MASK_COMPUTE = 0,
  ATTNRT_BLOCK_MASK_ONLY = 1,
  ATTNRT_BLOCK_MASK_REUSE = 2
};

/* The layout of the tables above, in the link names of the functions
   below: code that attn-compile generated against another layout calls
   names this runtime does not define. Where two libraries of different
   attn versions are linked into one program (the first archive's runtime
   objects serve both), each library's calls then resolve to entry points
   of its own layout, or the link fails; never to a runtime that would
   misread its tables. Raise it with every change to attnrt_launch_facts,
   attnrt_device_code, attnrt_attention_kernel, attnrt_attention_call or
   the launch roles (3: decode_unsplit; 4: the sinks operand; 5: the
   merge's operands and role; 6: the k_scale and v_scale operands). */
#define ATTNRT_ATTENTION_ABI 6
#define attnrt_attention_can_implement attnrt_attention_can_implement_abi6
#define attnrt_attention_workspace_bytes attnrt_attention_workspace_bytes_abi6
#define attnrt_attention_run attnrt_attention_run_abi6

/* Whether the kernel can run on `call`'s sizes (pointers are not looked at):
   ATTN_SUCCESS or ATTN_ERROR_UNSUPPORTED_SIZE. No driver needed. It never
   reads device memory: of a packed batch it checks the sizes (B + 1
   offsets, total_q, total_k), not the offsets. A count of splits the call
   fixes (num_splits >= 1) is checked here too: grids the GPU launches and
   a workspace below 2^62 bytes, as _workspace_bytes and _run check the
   count they use. */
int attnrt_attention_can_implement(const attnrt_attention_kernel *kernel,
                                   const attnrt_attention_call *call);

/* The workspace `call`'s sizes need on the GPU of the current context: the
   largest workspace of the launches the call makes (0 for kernels without
   one, and for decode code at one split where its decode_unsplit kernel
   runs alone; a count of splits depends on the GPU's multiprocessors).
   It refuses the counts of splits _run refuses (a grid the GPU cannot
   launch, a workspace of 2^62 bytes or more), with the same code and
   message; *bytes is then 0. */
int attnrt_attention_workspace_bytes(const attnrt_attention_kernel *kernel,
                                     const attnrt_attention_call *call,
                                     size_t *bytes);

/* Checks everything, then launches on `call->stream`. Returns when the
   kernels are queued; a failure while they run shows at the next
   synchronization. Nothing is written when it returns an error. A packed
   batch of no sequences or no query tokens launches nothing (and needs
   no driver): ATTN_SUCCESS.

   Overlap: an operand the call writes (O, LSE and the workspace; an
   append's caches K and V) may share no byte with any other operand of
   the call, read or written (captures and offsets included); operands
   that are only read may overlap (K and V one buffer, say). An operand
   counts as its extent, from the lowest to the highest byte its pointer,
   sizes and strides reach (an operand of no elements has none); the
   workspace, where the call gives one, as workspace_bytes from its
   pointer. Two operands whose extents overlap are still apart when a
   period proves it: a byte stride P of either such that every dim of
   both whose stride reaches P moves by whole multiples of P, and the
   windows the other dims cover, modulo P, do not meet (K and V caches
   interleaved in one buffer, [pages, 2, page_size, heads, dim] or per
   head). A written operand in some other gap of a strided layout is
   refused. Refused before the driver is touched:
   ATTN_ERROR_UNSUPPORTED_STRIDE, "o overlaps q: a written operand may
   share no byte with another operand (...)". */
int attnrt_attention_run(const attnrt_attention_kernel *kernel,
                         const attnrt_attention_call *call);

#ifdef __cplusplus
}
#endif

#endif /* ATTNRT_ATTENTION_H */
