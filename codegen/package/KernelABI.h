//===- KernelABI.h - a kernel spec as its C functions see it ----*- C++ -*-===//
//
// What a packaged library's C functions take for one kernel function of a
// spec: the operands libattnrt knows (attnrt_attention.h) in the
// function's order, which size each of their dimensions is, and which of
// those sizes the spec leaves dynamic. The writers turn it into text.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_PACKAGE_KERNELABI_H
#define ATTN_CODEGEN_PACKAGE_KERNELABI_H

#include "attnrt_attention.h"
#include "codegen/nvptx/KernelImage.h"
#include "dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::attn::package {

/// The C names of libattnrt's operands, indexed by ATTNRT_Q ...
/// ATTNRT_NEW_LENS (an append kernel names K and V k_cache and v_cache:
/// operandName).
extern const char *const kOperandNames[ATTNRT_NUM_OPERANDS];

/// The size roles, in the order the C functions take them.
enum Size {
  Batch,
  QHeads,
  KVHeads,
  QLen,
  KVLen,
  HeadDim,
  VHeadDim,
  NumBlocks,
  BlockSize,
  MaxBlocks,
  NewLen,    // an append's new tokens per sequence
  Capacity,  // an append's contiguous cache rows per sequence
  NumTokens, // the packed tokens of a slot-mapping append
  // Packed (varlen) attention, after the sizes of the padded forms so that
  // their C functions keep their parameters:
  QTokens,  // total_q: a packed Q's (and O's, LSE's) rows
  KVTokens, // total_k: packed K/V's rows
  MaxQLen,  // a packed Q's max_q_len hint (no operand's dimension)
  NumParts, // a merge's partial states (N)
  NumSizes
};
/// The sizes before the packed forms': the C of a kernel that takes none
/// of the others lists this many, as it did before they existed.
inline constexpr int kPaddedSizes = NumTokens + 1;
/// The C names of the sizes, indexed by Size.
extern const char *const kSizeNames[NumSizes];

/// Which size each dimension of libattnrt's `operand` is, in an attention
/// kernel, (`append`) a cache-append kernel or (`merge`) a merge kernel:
/// parts [num_parts, num_tokens, q_heads, v_head_dim], O [num_tokens,
/// q_heads, v_head_dim].
/// `slotted`: the slot-mapping form (packed tokens, caches named by slots).
/// `packedQ` / `packedKV`: Q, O, LSE by cu_seqlens_q / K, V by
/// cu_seqlens_k ([total, H, D]); the offsets are [batch + 1] (sizeOffset).
/// A dequantization scale (k_scale, v_scale) of rank `scaleRank`: none
/// per tensor, [kv_heads] per head, else K's without D (per token).
std::vector<Size> rolesOf(int operand, bool paged, bool append = false,
                          bool slotted = false, bool packedQ = false,
                          bool packedKV = false, bool merge = false,
                          int64_t scaleRank = 0);

/// What `operand`'s dimensions add to their size role: 1 for the offsets
/// cu_seqlens_q/k ([batch + 1]), else 0.
int64_t sizeOffset(int operand);

struct Operand {
  MemRefType type;         // null if the kernel does not have it
  std::vector<Size> roles; // per dimension
  int argument = -1;       // of the function
};

/// What attn-select-tier chose for one kernel function of a target's
/// module: the tier and the filled-in schedule.
/// A memref the mod regions read (attn.attention's captures): passed as
/// capture<index> with its strides; its dynamic dims are sizes of their
/// own, capture<index>_size<dim>.
struct Capture {
  MemRefType type;
  int argument = -1; // of the function
  /// The C names of its dims: the size parameter's where dynamic, else "".
  std::vector<std::string> sizeNames;
  std::string name;
};

struct TierChoice {
  std::string function;
  Tier tier;
  ScheduleAttr schedule;
};

/// One target's code for a kernel.
struct DeviceCode {
  std::string chip;
  int sm = 0;
  bool archSpecific = false;
  std::string ptx, cubin; // cubin empty without ptxas
  std::vector<KernelLaunch> launches;
  /// The kernel's own choice first, then its small-grid alternatives'.
  std::vector<TierChoice> choices;
  /// Decode-tier code of a kernel with a dynamic Sq: launched in place of
  /// the prefill code for q_len <= maxQLen (0: always the code).
  int64_t maxQLen = 0;
  /// An arch-specific target's code left out: the plain chip named here
  /// (sm_90 for sm_90a) would have the same code and its image runs there
  /// too. No PTX, launches or image then.
  std::string servedBy;
};

struct Kernel {
  func::FuncOp func;
  AttentionOp op;       // null for a cache-append or merge kernel
  CacheAppendOp append; // null for an attention or merge kernel
  MergeStatesOp merge;  // null for an attention or cache-append kernel
  std::string name;
  Operand operands[ATTNRT_NUM_OPERANDS];
  int64_t staticSize[NumSizes];
  bool dynamicSize[NumSizes] = {};
  std::vector<DeviceCode> code;
  /// For a dynamic Sq (decodesAtRunTime): the decode tier's code per
  /// target, which the C functions launch for q_len <= its maxQLen.
  std::vector<DeviceCode> decodeCode;
  int numArguments = 0;
  /// The attention's captures, in its order (ATTNRT_MAX_CAPTURES at most).
  std::vector<Capture> captures;
  /// The C names of the captures' dynamic dims, after the operands' sizes
  /// in every function that takes sizes.
  std::vector<std::string> captureSizes() const;
  /// The capture that is function argument `arg`; null if none is.
  const Capture *captureAt(int arg) const;
  /// A packed Q's max_q_len where the spec fixes it, else 0.
  int64_t staticMaxQLen = 0;
  bool paged() const { return operands[ATTNRT_BLOCK_TABLE].type != nullptr; }
  bool packedQ() const { return operands[ATTNRT_CU_SEQLENS_Q].type != nullptr; }
  bool packedKV() const {
    return operands[ATTNRT_CU_SEQLENS_K].type != nullptr;
  }
  bool isAppend() const { return static_cast<bool>(append); }
  bool isMerge() const { return static_cast<bool>(merge); }
  /// Whether some target's code classifies a mask_mod's tiles first.
  bool hasBlockMask() const {
    for (const DeviceCode &c : code)
      for (const KernelLaunch &l : c.launches)
        if (l.contract && l.contract.getRole() == LaunchRole::BlockMask)
          return true;
    return false;
  }
  /// The kernel's one attn op.
  Operation *specOp() const {
    AttentionOp attention = op;
    CacheAppendOp cacheAppend = append;
    MergeStatesOp mergeStates = merge;
    if (attention)
      return attention.getOperation();
    return cacheAppend ? cacheAppend.getOperation()
                       : mergeStates.getOperation();
  }
};

/// The C name of `kernel`'s `operand`: kOperandNames, except an append
/// kernel's caches, k_cache and v_cache.
const char *operandName(const Kernel &kernel, int operand);

/// Whether `kernel` writes `operand`: o and lse, or an append's caches.
bool isOutput(const Kernel &kernel, int operand);

/// A library: its name (lib<name>.a, <name>.h), the prefix of its C
/// functions, the spec's file name and targets as the header names them,
/// and its kernels.
struct Library {
  std::string name, prefix, specFile, targets;
  std::vector<Kernel> kernels;
};

/// The kernel of `func`; an error on `func` if a C function cannot take
/// its arguments.
LogicalResult describeKernel(func::FuncOp func, Kernel &kernel);

/// The kernel of every function with a body in `spec`, in order.
FailureOr<std::vector<Kernel>> describeKernels(ModuleOp spec);

/// "f16": an element type as the spec writes it.
std::string elementName(Type t);

} // namespace mlir::attn::package

#endif // ATTN_CODEGEN_PACKAGE_KERNELABI_H
