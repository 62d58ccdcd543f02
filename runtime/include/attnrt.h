/*===- attnrt.h - attn's runtime: load and launch GPU kernels -----*- C -*-===*\
 *
 * libattnrt loads the kernels attn generates (PTX, cubin or fatbin) and
 * launches them through the CUDA driver API. The driver is opened at run time
 * with dlopen, so programs link and start on machines without CUDA; there every
 * call returns ATTNRT_NO_DRIVER with a message instead of crashing.
 *
 * Conventions:
 *  - Every function returns an attnrt_status; results go through pointer
 *    arguments, which come first (like the driver API).
 *  - After a call fails, attnrt_last_error() describes why, on the calling
 *    thread; every call starts by clearing it. When a driver call failed the
 *    message holds the driver's error name and string, and
 *    attnrt_last_driver_result() its CUresult.
 *  - Arguments are checked before the driver is touched: a bad argument gives
 *    ATTNRT_INVALID_ARGUMENT whether or not a driver is present.
 *  - The driver is loaded and initialized once per process, by the first call
 *    of any function (or attnrt_init); its outcome is final for the process.
 *    ATTNRT_CUDA_DRIVER=/path/to/libcuda.so overrides the library loaded.
 *  - Each thread has a current device (attnrt_set_device, 0 until set);
 *    allocations, streams, events and modules belong to the device current
 *    when they are made. attnrt uses the device's primary context, the one the
 *    CUDA runtime uses, so its memory and streams interoperate with other CUDA
 *    code in the process.
 *  - Functions may be called from any thread. A module's kernels may be
 *    launched concurrently; unloading a module while it is in use is an error
 *    of the caller, as is destroying a stream or event in use.
 *
\*===----------------------------------------------------------------------===*/

#ifndef ATTNRT_H
#define ATTNRT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a call did. ATTNRT_SUCCESS is 0; the values are part of the ABI. */
typedef enum attnrt_status {
  ATTNRT_SUCCESS = 0,
  /* The CUDA driver library (libcuda.so.1) could not be loaded, or the one
     loaded is the CUDA toolkit's stub. */
  ATTNRT_NO_DRIVER = 1,
  /* The driver lacks a function attnrt needs: it is too old, or the library
     loaded is not the CUDA driver. */
  ATTNRT_DRIVER_TOO_OLD = 2,
  /* The driver works but reports no device. (An ordinal beyond the devices
     there are is ATTNRT_INVALID_ARGUMENT.) */
  ATTNRT_NO_DEVICE = 3,
  /* A NULL pointer, a zero size, an ordinal out of range, a launch
     configuration no GPU accepts, ... */
  ATTNRT_INVALID_ARGUMENT = 4,
  /* The module image was rejected: bad PTX (the message holds the JIT log), a
     cubin for another GPU, PTX newer than the driver understands. */
  ATTNRT_INVALID_IMAGE = 5,
  /* The module has no kernel of that name. */
  ATTNRT_KERNEL_NOT_FOUND = 6,
  /* Device memory (or host memory for attnrt's own bookkeeping) ran out. */
  ATTNRT_OUT_OF_MEMORY = 7,
  /* The kernel needs more shared memory per block than the device allows even
     after opting in; the message holds the device's limit. */
  ATTNRT_SHARED_MEMORY_TOO_LARGE = 8,
  /* The launch failed, or a kernel failed while running (illegal address,
     too many resources requested, ...); the latter may surface later, at a
     synchronization or copy. */
  ATTNRT_LAUNCH_FAILED = 9,
  /* The driver reports it is not (or no longer) initialized. */
  ATTNRT_NOT_INITIALIZED = 10,
  /* Any other driver failure; attnrt_last_driver_result() has the CUresult. */
  ATTNRT_DRIVER_ERROR = 11,
} attnrt_status;

/* A short constant description of a status, e.g. "no CUDA driver". Never NULL;
   values outside the enum give "unknown attnrt status". */
const char *attnrt_status_string(attnrt_status status);

/* What made the calling thread's last call fail, in a sentence or more; "" if
   it succeeded. Never NULL; valid until the thread's next attnrt call. */
const char *attnrt_last_error(void);

/* The CUresult of the driver call that made the calling thread's last call
   fail; 0 (CUDA_SUCCESS) if the failure did not come from the driver. */
int attnrt_last_driver_result(void);

/*===------------------------- Driver and devices -------------------------===*/

/* Loads and initializes the driver (once per process). Calling it is optional:
   every other function does it first. */
attnrt_status attnrt_init(void);

/* The driver's CUDA version, e.g. 12080 for 12.8. */
attnrt_status attnrt_driver_version(int *version);

/* The number of devices; 0 (with ATTNRT_SUCCESS) when a driver has none. */
attnrt_status attnrt_get_device_count(int *count);

typedef struct attnrt_device_info {
  char name[256];
  int compute_capability_major; /* 9 for sm_90 */
  int compute_capability_minor;
  int multiprocessor_count;
  int max_threads_per_block;
  /* Shared memory a block may use by default (48 KiB) and after the kernel
     opts in, which attnrt_launch does when asked for more. */
  int max_shared_memory_per_block;
  int max_shared_memory_per_block_optin;
} attnrt_device_info;

/* Properties of the device at `ordinal`. Does not create its context. */
attnrt_status attnrt_get_device_info(attnrt_device_info *info, int ordinal);

/* Makes `ordinal` the calling thread's current device: retains its primary
   context and makes that current on the thread. */
attnrt_status attnrt_set_device(int ordinal);

/* The calling thread's current device. */
attnrt_status attnrt_get_device(int *ordinal);

/* The device of the CUDA context current on the calling thread (the one the
   CUDA runtime, PyTorch, ... made current), or the thread's current device
   when no context is current. A context that is not a device's primary
   context still names its device. */
attnrt_status attnrt_get_context_device(int *ordinal);

/* Waits until all work on the current device is done. Reports failures of
   kernels launched earlier (ATTNRT_LAUNCH_FAILED). */
attnrt_status attnrt_synchronize(void);

/*===-------------------------- Modules, kernels --------------------------===*/

typedef struct attnrt_module attnrt_module;
typedef struct attnrt_kernel attnrt_kernel;

/* Loads a module on the current device from `size` bytes at `image`: PTX text
   (JIT-compiled by the driver; need not be NUL-terminated), a cubin or a
   fatbin. For bad PTX the error message holds the JIT compiler's log. */
attnrt_status attnrt_module_load(attnrt_module **module, const void *image,
                                 size_t size);

/* Like attnrt_module_load, with the image read from the file at `path`. */
attnrt_status attnrt_module_load_file(attnrt_module **module, const char *path);

/* Unloads the module; its kernels become invalid. */
attnrt_status attnrt_module_unload(attnrt_module *module);

/* The kernel named `name` (its .entry name in PTX). The handle lives as long
   as the module; asking twice gives the same handle. */
attnrt_status attnrt_module_get_kernel(attnrt_kernel **kernel,
                                       attnrt_module *module, const char *name);

typedef struct attnrt_kernel_info {
  int num_registers;         /* per thread */
  int static_shared_bytes;   /* per block, besides the dynamic amount */
  int local_bytes;           /* per thread: register spills, local arrays */
  int max_threads_per_block; /* the most this kernel can launch with */
} attnrt_kernel_info;

/* What the compiled kernel uses. */
attnrt_status attnrt_kernel_get_info(attnrt_kernel_info *info,
                                     const attnrt_kernel *kernel);

/* How many blocks of `threads` threads, each with `dynamic_shared_bytes`
   of dynamic shared memory, one multiprocessor holds at once (the
   driver's occupancy calculator, after opting the kernel in to that much
   dynamic shared memory as a launch would); *blocks = 0 where the driver
   has no calculator. */
attnrt_status attnrt_kernel_resident_blocks(int *blocks,
                                            attnrt_kernel *kernel,
                                            int threads,
                                            size_t dynamic_shared_bytes);

/*===-------------------------- Streams, events ---------------------------===*/

/* An attnrt_stream * is the driver's CUstream itself: a stream made by other
   CUDA code (cudaStream_t, torch's stream.cuda_stream) may be passed in with a
   cast, and NULL is the (legacy) default stream. */
typedef struct attnrt_stream attnrt_stream;
typedef struct attnrt_event attnrt_event;

/* A stream on the current device. It synchronizes with the default stream, so
   the blocking copies below see its work finished. */
attnrt_status attnrt_stream_create(attnrt_stream **stream);
attnrt_status attnrt_stream_destroy(attnrt_stream *stream);
/* Waits for the stream's work; NULL waits for the default stream. */
attnrt_status attnrt_stream_synchronize(attnrt_stream *stream);

/* Events for timing work on a stream. */
attnrt_status attnrt_event_create(attnrt_event **event);
attnrt_status attnrt_event_destroy(attnrt_event *event);
/* Records `event` on `stream` (NULL: the default stream). */
attnrt_status attnrt_event_record(attnrt_event *event, attnrt_stream *stream);
attnrt_status attnrt_event_synchronize(attnrt_event *event);
/* Milliseconds between two recorded events; waits for `end` first. */
attnrt_status attnrt_event_elapsed_ms(float *milliseconds, attnrt_event *start,
                                      attnrt_event *end);

/*===------------------------------- Launch -------------------------------===*/

/* Launches `kernel` on a grid of blocks with `dynamic_shared_bytes` of dynamic
   shared memory per block, on `stream` (NULL: the default stream). `args` holds
   one pointer per kernel parameter, pointing at its value (as cuLaunchKernel
   takes them); it may be NULL for a kernel without parameters.

   When the block needs more shared memory than the default 48 KiB, the kernel
   is opted in first (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); beyond
   the device's opt-in limit the launch returns ATTNRT_SHARED_MEMORY_TOO_LARGE.
   Returns when the launch is queued: failures while the kernel runs show up
   at the next synchronization. Launches in the context of the kernel's
   device, whatever the thread's current device. */
attnrt_status attnrt_launch(attnrt_kernel *kernel, unsigned grid_x,
                            unsigned grid_y, unsigned grid_z, unsigned block_x,
                            unsigned block_y, unsigned block_z,
                            unsigned dynamic_shared_bytes,
                            attnrt_stream *stream, void **args);
/* As attnrt_launch, letting the kernel start while the kernel before it on
   `stream` still runs (CUDA's programmatic dependent launch, compute
   capability 9.0+): once every block of that kernel has run
   griddepcontrol.launch_dependents or exited. The kernel must run
   griddepcontrol.wait before it reads what that kernel writes (attn's
   decode combine does: its launch contract says `programmatic`). Where the
   driver has no cuLaunchKernelEx (before CUDA 12), an ordinary launch. */
attnrt_status attnrt_launch_programmatic(attnrt_kernel *kernel, unsigned grid_x,
                                         unsigned grid_y, unsigned grid_z,
                                         unsigned block_x, unsigned block_y,
                                         unsigned block_z,
                                         unsigned dynamic_shared_bytes,
                                         attnrt_stream *stream, void **args);

/*===------------------------------- Memory -------------------------------===*/

/* A device address, the driver's CUdeviceptr (what cudaMalloc returns). */
typedef unsigned long long attnrt_deviceptr;

/* Allocates `bytes` (> 0) of device memory on the current device. */
attnrt_status attnrt_malloc(attnrt_deviceptr *ptr, size_t bytes);
/* Frees memory from attnrt_malloc; freeing 0 does nothing. */
attnrt_status attnrt_free(attnrt_deviceptr ptr);

/* Blocking copies and fill (they order with the default stream, and so with
   streams from attnrt_stream_create). Zero bytes do nothing. */
attnrt_status attnrt_memcpy_htod(attnrt_deviceptr dst, const void *src,
                                 size_t bytes);
attnrt_status attnrt_memcpy_dtoh(void *dst, attnrt_deviceptr src, size_t bytes);
attnrt_status attnrt_memcpy_dtod(attnrt_deviceptr dst, attnrt_deviceptr src,
                                 size_t bytes);
/* Sets `bytes` bytes at `dst` to `value`. */
attnrt_status attnrt_memset_d8(attnrt_deviceptr dst, unsigned char value,
                               size_t bytes);

/* A TMA tensor map: the driver's CUtensorMap, 128 bytes aligned to 64, passed
   to a kernel by value (one launch argument pointing at it). */
#ifdef __cplusplus
#define ATTNRT_ALIGNED_64 alignas(64)
#else
#define ATTNRT_ALIGNED_64 _Alignas(64)
#endif
typedef struct attnrt_tensor_map {
  ATTNRT_ALIGNED_64 unsigned long long words[16];
} attnrt_tensor_map;

/* Encodes a tiled tensor map (cuTensorMapEncodeTiled) of the rank-`rank`
   (1-5) tensor at device address `data` whose elements have `element_bytes`
   (1, 2, 4 or 8) bytes, with `sizes` and `strides` (in elements) outermost
   first; the innermost stride must be 1. Each copy moves one box of `box`
   elements (outermost first, each 1-256); with `swizzle_128` the box lands
   in shared memory in the 128-byte swizzle (its innermost dimension then
   spans at most 128 bytes). Reads past the edges give zeros. The address
   and every other stride in bytes must be multiples of 16 (strides of size-1
   dimensions are never used and may be anything). ATTNRT_DRIVER_TOO_OLD
   where the driver has no tensor maps (before CUDA 12). */
attnrt_status attnrt_encode_tensor_map(attnrt_tensor_map *map,
                                       attnrt_deviceptr data, int rank,
                                       int element_bytes,
                                       const long long *sizes,
                                       const long long *strides,
                                       const unsigned *box, int swizzle_128);

/* The map of a launch contract's `tensor_map(operand)` parameter
   (AttnAttrs.td) for a [B, H, S, D] operand at `data` with `sizes` and
   `strides` (in elements, outermost first), in the 128-byte swizzle.
   `q_view` 0 (K and V): boxes of 64 x 64 elements. `q_view` 1 (Q and O):
   the view [B, H / group, S, group, D], whose group dim has the head
   stride, so a K/V head's rows run query-major with its group's heads
   inner; boxes of 64 columns by block_q rows, which must be whole queries
   (block_q a multiple of group) or part of one query's group (group a
   multiple of block_q). */
attnrt_status attnrt_encode_attention_tensor_map(
    attnrt_tensor_map *map, attnrt_deviceptr data, int element_bytes,
    const long long *sizes, const long long *strides, int q_view, int block_q,
    int group);

/* ---- Launch choices for attn's kernels -------------------------------- */

/* The split count for attn's split-K decode kernels (the workspace's dim 1):
   as many splits as keep the grid within one wave of four thread blocks
   per multiprocessor (a wave and a bit leaves most SMs idle for the last
   part), each split keeping at least max(128, 16 x rows_per_block) keys
   unless that leaves SMs without a block (then 256 keys a split, up to a
   block per SM), and at least one. Each block of a split writes rows_per_block partial
   rows of Dv + 2 floats that the combine kernel reads back; 16 keys a row
   keep that under 1/8 of the K/V bytes the split reads (f16). On an H100,
   MQA (64 rows a block) at B8 Sk16k wrote half as many workspace bytes as
   it read K/V bytes with 128 keys a split. `blocks_per_split` is batch x
   K/V heads x Q tiles (the split grid's y * z); sizes below 1 count as 1.
   Pure functions: no driver needed. attnrt_decode_splits is the count for
   up to 8 rows a block. */
long long attnrt_decode_split_count(int multiprocessor_count,
                                    long long blocks_per_split,
                                    long long kv_len,
                                    long long rows_per_block);
/* The same for a kernel of which a multiprocessor holds
   `resident_blocks` blocks (attnrt_kernel_resident_blocks; below 1: four,
   as attnrt_decode_split_count): one wave is that many blocks an SM. */
long long attnrt_decode_split_count_resident(int multiprocessor_count,
                                             int resident_blocks,
                                             long long blocks_per_split,
                                             long long kv_len,
                                             long long rows_per_block);
long long attnrt_decode_splits(int multiprocessor_count,
                               long long blocks_per_split, long long kv_len);

#ifdef __cplusplus
}
#endif

#endif /* ATTNRT_H */
