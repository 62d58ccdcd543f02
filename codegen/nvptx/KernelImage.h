//===- KernelImage.h - attn-to-ptx's output as data -------------*- C++ -*-===//
//
// After attn-to-ptx a module holds host functions whose gpu.launch_func ops
// carry each kernel's launch contract (#attn.launch), and a gpu.binary with
// the PTX. These read both back, for attn-translate --attn-ptx and
// attn-compile.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_KERNELIMAGE_H
#define ATTN_CODEGEN_NVPTX_KERNELIMAGE_H

#include "dialect/AttnDialect.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::attn {

/// One gpu.launch_func: the kernel, its host function and its contract.
struct KernelLaunch {
  std::string kernel, host;
  /// Null if the launch has none (one attn's tiers did not build).
  LaunchAttr contract;
  int64_t numArgs = 0;

  /// The tier as the "// attn.kernel" line names it: the prefill tier
  /// ("wmma", "mma", "wgmma"), "decode-split", "decode-combine",
  /// "decode-unsplit", "append" or "block-mask"; "unknown" without a
  /// contract.
  std::string tierName() const;
  /// The contract's block_q; 0 without one.
  int64_t blockQ() const { return contract ? contract.getBlockQ() : 0; }

  /// "// attn.kernel NAME host=... tier=... threads=... smem=...
  /// [block_q=... group=... rows_per_block=...] args=N role=...
  /// grid=[...] params=[...] [workspace=[...]:type]", one line, no spaces
  /// inside a value.
  std::string describe() const;
};

/// Every launch in `module`, in program order.
std::vector<KernelLaunch> collectLaunches(ModuleOp module);

/// The PTX text of every gpu.binary object in `module`; an error if an
/// object is not PTX or there is none.
FailureOr<std::string> collectPTX(ModuleOp module);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_NVPTX_KERNELIMAGE_H
