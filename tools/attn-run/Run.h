//===- Run.h - What attn-run's files share ----------------------*- C++ -*-===//
//
// attn-run, one job a file:
//   attn-run.cpp      the options and main: parse the spec, pick the kernel
//   Buffers.cpp       host buffers for memref arguments
//   RunSteps.cpp      the steps both runs share: sizes, buffers, the JIT
//                     call, the error measure
//   AttentionRun.cpp  attn.attention: run, compare with the reference
//   AppendRun.cpp     attn.cache_append: run, check every cache element
//   MergeRun.cpp      attn.merge_states: run, compare with the reference
//   CascadeRun.cpp    two attention levels and a merge: cascade attention
//                     from attn's kernels, compared with the reference
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_RUN_RUN_H
#define ATTN_TOOLS_ATTN_RUN_RUN_H

#include "dialect/AttnDialect.h"
#include "lib/Reference/HostFloat.h"
#include "lib/Reference/Reference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <vector>

namespace attn_run {

using namespace mlir;
namespace ref = ::attn::reference;

// The command line (attn-run.cpp).
extern llvm::cl::opt<std::string> inputFile;
extern llvm::cl::opt<std::string> funcName;
extern llvm::cl::opt<int64_t> batchOpt;
extern llvm::cl::opt<int64_t> qLenOpt;
extern llvm::cl::opt<int64_t> kvLenOpt;
extern llvm::cl::opt<std::string> kvLensOpt;
extern llvm::cl::opt<std::string> qLensOpt;
extern llvm::cl::opt<int64_t> newLenOpt;
extern llvm::cl::opt<std::string> newLensOpt;
extern llvm::cl::opt<int64_t> invalidBlocks;
extern llvm::cl::opt<int64_t> blockQ;
extern llvm::cl::opt<int64_t> blockKV;
extern llvm::cl::opt<int64_t> numSplits;
extern llvm::cl::opt<int64_t> kvChunk;
extern llvm::cl::opt<int64_t> captureDim;
extern llvm::cl::opt<int64_t> captureIntMax;
extern llvm::cl::opt<std::string> saveOutputs;
extern llvm::cl::opt<uint64_t> seedOpt;
extern llvm::cl::opt<int64_t> maxMemoryMiB;
extern llvm::cl::opt<double> maxWork;
extern llvm::cl::opt<double> tolerance;
extern llvm::cl::opt<bool> quantizeFromFloat;
extern llvm::cl::list<std::string> cascadeKernels;
extern llvm::cl::opt<int64_t> prefixLen;
extern llvm::cl::opt<int64_t> prefixChunks;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// "%.3g" of `x`.
std::string shortDouble(double x);
/// Prints "attn-run: error: <message>" and returns 1.
int fail(const Twine &message);

using ::attn::host::fromBF16;
using ::attn::host::fromHalf;
using ::attn::host::toBF16;
using ::attn::host::toHalf;

/// The bytes an element takes in memory: i1 (as LLVM stores it) takes one.
inline int64_t bytesOf(Type elt) {
  return (elt.getIntOrFloatBitWidth() + 7) / 8;
}

/// A memref argument's host buffer: logical shape, element strides, bytes.
struct Buffer {
  Type elt;
  SmallVector<int64_t> shape, strides;
  int64_t offset = 0;
  std::vector<char> bytes;
  std::vector<int64_t> descriptor; // MLIR's memref descriptor, C layout

  int64_t width() const { return bytesOf(elt); }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  /// Byte offset of the element with logical row-major index `linear`.
  int64_t byteOffset(int64_t linear) const {
    int64_t pos = offset;
    for (int64_t i = shape.size() - 1; i >= 0; --i) {
      pos += (linear % shape[i]) * strides[i];
      linear /= shape[i];
    }
    return pos * width();
  }
  /// Whether the elements are one of the fp8 formats (e4m3fn: true).
  std::optional<bool> fp8E4M3() const {
    if (isa<Float8E4M3FNType>(elt))
      return true;
    if (isa<Float8E5M2Type>(elt))
      return false;
    return std::nullopt;
  }
  double get(int64_t linear) const {
    const char *p = bytes.data() + byteOffset(linear);
    if (std::optional<bool> e4m3 = fp8E4M3())
      return ::attn::host::fromFP8(static_cast<uint8_t>(*p), *e4m3);
    if (elt.isF64()) {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    if (elt.isInteger() && !elt.isInteger(32)) {
      int64_t x = 0;
      std::memcpy(&x, p, width());
      unsigned bits = width() * 8;
      if (bits < 64 && (x >> (bits - 1)) & 1 && !elt.isInteger(1))
        x |= ~((int64_t(1) << bits) - 1);
      return double(x);
    }
    if (elt.isF32()) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    if (elt.isInteger(32)) {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return elt.isBF16() ? fromBF16(h) : fromHalf(h);
  }
  void set(int64_t linear, double value) {
    char *p = bytes.data() + byteOffset(linear);
    if (std::optional<bool> e4m3 = fp8E4M3()) {
      *p = static_cast<char>(::attn::host::toFP8(value, *e4m3));
    } else if (elt.isF64()) {
      std::memcpy(p, &value, 8);
    } else if (elt.isInteger() && !elt.isInteger(32)) {
      int64_t x = static_cast<int64_t>(value);
      std::memcpy(p, &x, width()); // little-endian: the low bytes
    } else if (elt.isF32()) {
      float f = static_cast<float>(value);
      std::memcpy(p, &f, 4);
    } else if (elt.isInteger(32)) {
      int32_t x = static_cast<int32_t>(value);
      std::memcpy(p, &x, 4);
    } else {
      float f = static_cast<float>(value);
      uint16_t h = elt.isBF16() ? toBF16(f) : toHalf(f);
      std::memcpy(p, &h, 2);
    }
  }
  std::vector<double> toDense() const {
    std::vector<double> out(numElements());
    for (int64_t i = 0; i < numElements(); ++i)
      out[i] = get(i);
    return out;
  }
};

/// The bytes a buffer for `type` with the given logical shape needs, and its
/// strides: static strides are kept; a dynamic stride is made large enough
/// that the dims do not overlap (e.g. the batch stride of a [B, S, H, D]
/// view). Fails when the size does not fit in 63 bits.
struct Extent {
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  int64_t bytes = 0;
};
FailureOr<Extent> extentOf(MemRefType type, ArrayRef<int64_t> shape);

/// What an argument of the kernel is to the attention run.
enum class Role {
  Q,
  K,
  V,
  BlockTable,
  KVLens,
  O,
  LSE,
  CuSeqlensQ,
  CuSeqlensK,
  Sinks,
  KScale,
  VScale,
  QScale,
  Capture
};

/// The largest finite value of a quantized element type (fp8 e4m3fn 448,
/// e5m2 57344; i8 127, symmetric), from the formats' definitions (the
/// host does not use the compiler's rules).
double quantizedLargest(Type elt);

/// Index, in `scale`, of the scale of element `i` (row-major) of a
/// quantized buffer `data`: 0 per tensor (or no scale), the head (dim 1)
/// per head, the row (every dim but the last) per token.
int64_t scaleIndex(const Buffer &data, const Buffer *scale, int64_t i);

/// A quantized buffer's values in float64 times their scales (a float
/// buffer's values as they are).
std::vector<double> dequantized(const Buffer &data, const Buffer *scale);

/// Allocates the buffer `extent` describes.
Buffer allocate(MemRefType type, ArrayRef<int64_t> shape, Extent extent);

/// Resolves dim `dim` of an operand: its static size, or `value` for a
/// dynamic one. A static dim that disagrees with a given value is an error.
FailureOr<int64_t> resolve(MemRefType type, unsigned dim, int64_t value,
                           StringRef what);

/// The argument number of operand `v` (called `name`), which must be an
/// argument of `func`.
FailureOr<unsigned> argumentOf(func::FuncOp func, Value v, StringRef name);

/// Per-sequence lengths from an option: 'random' in [lo, hi], 'full' (hi)
/// or a list; a list may hold any i32 when `anyInList` (the op's rules
/// for negative and too long lengths are part of what is checked).
FailureOr<std::vector<int32_t>> lengthsFrom(StringRef option, StringRef name,
                                            int64_t batch, int64_t lo,
                                            int64_t hi, bool anyInList,
                                            std::mt19937_64 &rng);

/// The run's seed (--seed, or a fresh one).
uint64_t runSeed();

/// The first `count` of block numbers [0, numBlocks), shuffled.
std::vector<int32_t> shuffledBlocks(int64_t numBlocks, int64_t count,
                                    std::mt19937_64 &rng);

/// Dim 2 of a K/V operand (its rows): static, or --kv-len.
FailureOr<int64_t> resolveRows(MemRefType type, StringRef what);

/// A paged cache that holds `tokens` per sequence in blocks of `blockSize`
/// rows: the blocks a block-table row names, and the cache's block count,
/// room for every sequence's blocks plus unused ones (dim 0 of `type`).
FailureOr<std::pair<int64_t, int64_t>>
pagedBlocks(MemRefType type, int64_t batch, int64_t tokens, int64_t blockSize);

/// The reference's scale, softcap and mask, from the op.
void setScoreTerms(ref::Problem &p, mlir::attn::AttentionOp op);

/// Checks every argument's static dims against the shape the run needs and
/// measures its buffer. `totalBytes` is empty past 2^63: the caller says
/// how that compares with --max-memory-mib.
LogicalResult measureArguments(func::FuncOp func,
                               ArrayRef<SmallVector<int64_t>> shapes,
                               SmallVectorImpl<Extent> &extents,
                               std::optional<int64_t> &totalBytes);

/// measureArguments, and an error (false) where the buffers would need
/// more than --max-memory-mib.
LogicalResult measureWithinLimit(func::FuncOp func,
                                 ArrayRef<SmallVector<int64_t>> shapes,
                                 SmallVectorImpl<Extent> &extents);

/// One buffer per argument of `func`, as measureArguments measured them.
SmallVector<Buffer> allocateArguments(func::FuncOp func,
                                      ArrayRef<SmallVector<int64_t>> shapes,
                                      ArrayRef<Extent> extents);

/// Lowers `module` through the CPU pipeline, JITs it and calls `func` on
/// `buffers`. The pipeline replaces `func`: callers keep what they need of
/// it first.
LogicalResult compileAndCall(MLIRContext &context, ModuleOp module,
                             func::FuncOp func,
                             MutableArrayRef<Buffer> buffers);

/// ||got - want|| / ||want|| over O's written elements; the NaNs it still
/// holds (never written) are added to `unwritten`.
double relativeError(ArrayRef<double> got, ArrayRef<double> want,
                     int64_t &unwritten);

/// attn.attention: runs `op`'s kernel `func` on fresh inputs and compares
/// O (and the LSE) with the float64 reference (AttentionRun.cpp).
int runAttention(MLIRContext &context, ModuleOp module, func::FuncOp func,
                 mlir::attn::AttentionOp op);
/// attn.cache_append: runs it and checks every cache element
/// (AppendRun.cpp).
int runAppend(MLIRContext &context, ModuleOp module, func::FuncOp func,
              mlir::attn::CacheAppendOp op);
/// What an argument of a merge kernel is to attn-run.
enum class MergeRole { OParts, LseParts, O, Lse };
/// The role of each argument of `func`, every one an operand of `op`
/// (MergeRun.cpp); a message and failure otherwise.
FailureOr<SmallVector<MergeRole>> mergeRoles(func::FuncOp func,
                                             mlir::attn::MergeStatesOp op);
/// The logical shape of a merge argument for N parts of T rows.
SmallVector<int64_t> mergeShape(mlir::attn::MergeStatesOp op, MergeRole role,
                                int64_t N, int64_t T);

/// attn.merge_states: runs it on fresh parts (some empty) and compares O
/// and the LSE with the float64 reference merge (MergeRun.cpp).
int runMerge(MLIRContext &context, ModuleOp module, func::FuncOp func,
             mlir::attn::MergeStatesOp op);

/// Cascade attention: a prefix level, a suffix level and a merge, each a
/// kernel of `module` (names: prefix, suffix, merge), composed on fresh
/// inputs and compared with float64 attention over each request's whole
/// sequence (CascadeRun.cpp).
int runCascade(MLIRContext &context, ModuleOp module,
               ArrayRef<std::string> names);

} // namespace attn_run

#endif // ATTN_TOOLS_ATTN_RUN_RUN_H
