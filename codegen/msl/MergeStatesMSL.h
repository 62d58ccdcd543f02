//===- MergeStatesMSL.h - attn.merge_states as a Metal kernel ---*- C++ -*-===//
//
// The msl tier's kernel for attn.merge_states, beside MSLEmitter.cpp's
// attention and cache-append kernels: the text, and its launch facts.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_MSL_MERGESTATESMSL_H
#define ATTN_CODEGEN_MSL_MERGESTATESMSL_H

#include "dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::attn::msl {

/// What a host needs to launch one merge kernel.
struct MergeFacts {
  std::string function, kernel;
  Type partElt, outElt;
  int64_t heads = 1, dv = 1, parts = 0; // parts: 0 where N is dynamic
  int64_t rows = 0;                     // T, 0 where dynamic
  int64_t vec = 1, threadsPerRow = 1, rowsPerGroup = 1;
  bool lse = false;
  /// Operands that are not row-major, with their strides (dynamic ones
  /// in the AttnMergeStrides buffer when dynamicStrides).
  std::vector<std::string> strided;
  std::vector<SmallVector<int64_t>> strideValues;
  bool dynamicStrides = false;
  std::vector<std::pair<std::string, int>> buffers;
  /// __METAL_VERSION__ the kernel needs (bfloat: 310).
  int version() const;
};

/// The run-time sizes struct the merge kernels take (the file's prelude).
extern const char *const kMergeSizesDecl;
/// The run-time strides struct, for merges with dynamic strides.
extern const char *const kMergeStridesDecl;

/// Writes `op`'s kernel `<function>_merge`; diagnostics on `op` for what
/// the tier cannot take.
FailureOr<MergeFacts> emitMergeStates(func::FuncOp func, MergeStatesOp op,
                                      raw_ostream &os);

/// The kernels' facts in the .metal file's comment block.
void writeMergeCommentFacts(raw_ostream &os, ArrayRef<MergeFacts> merges);

/// The kernels' facts as the launch-facts JSON's "merges" member.
void writeMergeJsonFacts(raw_ostream &os, ArrayRef<MergeFacts> merges);

} // namespace mlir::attn::msl

#endif // ATTN_CODEGEN_MSL_MERGESTATESMSL_H
