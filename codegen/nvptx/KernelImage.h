//===- KernelImage.h - attn-to-ptx's output as data -------------*- C++ -*-===//
//
// After attn-to-ptx a module holds host functions whose gpu.launch_func ops
// say how to launch each kernel, and a gpu.binary with the PTX. These read
// both back, for attn-translate --attn-ptx and attn-compile.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_KERNELIMAGE_H
#define ATTN_CODEGEN_NVPTX_KERNELIMAGE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

#include <string>
#include <vector>

namespace mlir::attn {

/// One gpu.launch_func: the kernel, its tier and launch constants.
struct KernelLaunch {
  std::string kernel, host, tier;
  int64_t threads = -1, sharedBytes = -1, numArgs = 0;
  /// The tier's own facts (attn.block_q, attn.group, ...), without "attn.".
  llvm::MapVector<StringRef, int64_t> facts;

  /// "// attn.kernel NAME host=... tier=... threads=... smem=... ... args=N"
  std::string describe() const;
};

/// Every launch in `module`, in program order.
std::vector<KernelLaunch> collectLaunches(ModuleOp module);

/// The PTX text of every gpu.binary object in `module`; an error if an
/// object is not PTX or there is none.
FailureOr<std::string> collectPTX(ModuleOp module);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_NVPTX_KERNELIMAGE_H
