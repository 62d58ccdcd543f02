//===- RunSteps.cpp - Steps both runs share -------------------------------===//
//
// The steps the attention run and the append run share: resolving sizes
// from the spec and the options, measuring and allocating the kernel's
// arguments, lowering through the CPU pipeline and calling the JIT'd
// kernel, and the error measure.
//
//===----------------------------------------------------------------------===//

#include "tools/attn-run/Run.h"

#include "lib/Pipelines/Pipelines.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

namespace attn_run {

/// Resolves dim `dim` of an operand: its static size, or `value` for a
/// dynamic one. A static dim that disagrees with a given value is an error.
FailureOr<int64_t> resolve(MemRefType type, unsigned dim, int64_t value,
                           StringRef what) {
  int64_t s = type.getDimSize(dim);
  if (!ShapedType::isDynamic(s)) {
    if (value >= 0 && value != s) {
      fail(Twine(what) + " is static (" + Twine(s) + ") in the spec; got " +
           Twine(value));
      return failure();
    }
    return s;
  }
  if (value < 0) {
    fail(Twine(what) + " is dynamic in the spec; give it on the command line");
    return failure();
  }
  return value;
}

//===----------------------------------------------------------------------===//
// Steps the attention run and the append run share
//===----------------------------------------------------------------------===//

/// The argument number of operand `v` (called `name`), which must be an
/// argument of `func`.
FailureOr<unsigned> argumentOf(func::FuncOp func, Value v, StringRef name) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner()->getParentOp() != func) {
    fail("operand '" + name + "' must be an argument of @" + func.getSymName());
    return failure();
  }
  return arg.getArgNumber();
}

/// The run's seed (--seed, or a fresh one).
uint64_t runSeed() {
  return seedOpt.getNumOccurrences() ? uint64_t(seedOpt)
                                     : std::random_device()();
}

/// The first `count` of block numbers [0, numBlocks), shuffled.
std::vector<int32_t> shuffledBlocks(int64_t numBlocks, int64_t count,
                                    std::mt19937_64 &rng) {
  std::vector<int32_t> blocks(numBlocks);
  for (int64_t i = 0; i < numBlocks; ++i)
    blocks[i] = i;
  std::shuffle(blocks.begin(), blocks.end(), rng);
  blocks.resize(count);
  return blocks;
}

/// Dim 2 of a K/V operand (its rows): static, or --kv-len.
FailureOr<int64_t> resolveRows(MemRefType type, StringRef what) {
  auto rows = resolve(type, 2, kvLenOpt, what);
  if (failed(rows))
    return failure();
  if (*rows < 1 || *rows > 1 << 20) {
    fail("--kv-len must be in [1, 2^20]");
    return failure();
  }
  return rows;
}

/// A paged cache that holds `tokens` per sequence in blocks of `blockSize`
/// rows: the blocks a block-table row names, and the cache's block count,
/// room for every sequence's blocks plus unused ones (dim 0 of `type`).
FailureOr<std::pair<int64_t, int64_t>>
pagedBlocks(MemRefType type, int64_t batch, int64_t tokens, int64_t blockSize) {
  const int64_t maxBlocks = (tokens + blockSize - 1) / blockSize;
  const int64_t numBlocks = batch * maxBlocks + 3;
  if (failed(resolve(type, 0, numBlocks, "paged cache block count")))
    return failure();
  return std::pair(maxBlocks, numBlocks);
}

/// The reference's scale, softcap and mask, from the op.
void setScoreTerms(ref::Problem &p, mlir::attn::AttentionOp op) {
  p.scale = op.getScaleOrDefault();
  if (std::optional<APFloat> cap = op.getSoftcap())
    p.softcap = cap->convertToDouble();
  mlir::attn::MaskAttr mask = op.getMaskOrNone();
  p.mask.left = mask.getLeft();
  p.mask.right = mask.getRight();
  p.mask.bottomRight = mask.isBottomRight();
}

/// Checks every argument's static dims against the shape the run needs and
/// measures its buffer. `totalBytes` is empty past 2^63: the caller says
/// how that compares with --max-memory-mib.
LogicalResult measureArguments(func::FuncOp func,
                               ArrayRef<SmallVector<int64_t>> shapes,
                               SmallVectorImpl<Extent> &extents,
                               std::optional<int64_t> &totalBytes) {
  totalBytes = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = cast<MemRefType>(func.getArgument(i).getType());
    ArrayRef<int64_t> shape = shapes[i];
    for (unsigned d = 0; d < shape.size(); ++d) {
      if (!type.isDynamicDim(d) && type.getDimSize(d) != shape[d]) {
        fail("argument " + Twine(i) + " dim " + Twine(d) + " is " +
             Twine(type.getDimSize(d)) + " in the spec but the run needs " +
             Twine(shape[d]));
        return failure();
      }
    }
    FailureOr<Extent> extent = extentOf(type, shape);
    if (failed(extent)) {
      fail("argument " + Twine(i) + " would need more than 2^63 bytes");
      return failure();
    }
    extents.push_back(*extent);
    totalBytes =
        llvm::checkedAdd(totalBytes.value_or(INT64_MAX), extent->bytes);
  }
  return success();
}

LogicalResult measureWithinLimit(func::FuncOp func,
                                 ArrayRef<SmallVector<int64_t>> shapes,
                                 SmallVectorImpl<Extent> &extents) {
  std::optional<int64_t> totalBytes;
  if (failed(measureArguments(func, shapes, extents, totalBytes)))
    return failure();
  // Checked before allocating: a static size or stride can ask for far
  // more memory than a CPU check should take.
  const int64_t limit = maxMemoryMiB * (int64_t(1) << 20);
  if (!totalBytes || *totalBytes > limit)
    return fail("the run's buffers need " +
                (totalBytes ? Twine(*totalBytes >> 20) + " MiB"
                            : Twine("more than 2^63 bytes")) +
                ", more than --max-memory-mib=" + Twine(maxMemoryMiB)),
           failure();
  return success();
}

/// One buffer per argument of `func`, as measureArguments measured them.
SmallVector<Buffer> allocateArguments(func::FuncOp func,
                                      ArrayRef<SmallVector<int64_t>> shapes,
                                      ArrayRef<Extent> extents) {
  SmallVector<Buffer> buffers;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    buffers.push_back(allocate(cast<MemRefType>(func.getArgument(i).getType()),
                               shapes[i], extents[i]));
  return buffers;
}

/// Lowers `module` through the CPU pipeline, JITs it and calls `func` on
/// `buffers`. The pipeline replaces `func`: callers keep what they need of
/// it first.
LogicalResult compileAndCall(MLIRContext &context, ModuleOp module,
                             func::FuncOp func,
                             MutableArrayRef<Buffer> buffers) {
  const std::string kernelName = func.getSymName().str();
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(&context));
  PassManager pm(&context);
  mlir::attn::CPUPipelineOptions options;
  options.blockQ = blockQ;
  options.blockKV = blockKV;
  if (numSplits.getNumOccurrences())
    options.numSplits = numSplits;
  if (kvChunk.getNumOccurrences())
    options.kvChunk = kvChunk;
  if (failed(mlir::attn::buildCPUPipeline(pm, options)) ||
      failed(pm.run(module)))
    return failure(); // diagnostics were printed
  ExecutionEngineOptions engineOptions;
  auto optimize = makeOptimizingTransformer(2, 0, nullptr);
  engineOptions.transformer = optimize;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return fail("JIT: " + llvm::toString(engine.takeError())), failure();
  SmallVector<void *> descriptorPointers, args;
  for (Buffer &buf : buffers)
    descriptorPointers.push_back(buf.descriptor.data());
  for (void *&ptr : descriptorPointers)
    args.push_back(&ptr);
  if (llvm::Error err =
          (*engine)->invokePacked("_mlir_ciface_" + kernelName, args))
    return fail("JIT call: " + llvm::toString(std::move(err))), failure();
  return success();
}

/// ||got - want|| / ||want|| over O's written elements; the NaNs it still
/// holds (never written) are added to `unwritten`.
double relativeError(ArrayRef<double> got, ArrayRef<double> want,
                     int64_t &unwritten) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) {
      ++unwritten;
      continue;
    }
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0);
}

/// Per-sequence lengths from an option: 'random' in [lo, hi], 'full' (hi)
/// or a list; a list may hold any i32 when `anyInList` (the op's rules
/// for negative and too long lengths are part of what is checked).
FailureOr<std::vector<int32_t>> lengthsFrom(StringRef option, StringRef name,
                                            int64_t batch, int64_t lo,
                                            int64_t hi, bool anyInList,
                                            std::mt19937_64 &rng) {
  std::vector<int32_t> lens(batch);
  SmallVector<StringRef> parts;
  option.split(parts, ',');
  for (int64_t b = 0; b < batch; ++b) {
    if (option == "random") {
      lens[b] = std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    } else if (option == "full") {
      lens[b] = hi;
    } else if (static_cast<int64_t>(parts.size()) != batch ||
               parts[b].trim().getAsInteger(10, lens[b]) ||
               (!anyInList && (lens[b] < lo || lens[b] > hi))) {
      fail("--" + name + " must be 'random', 'full' or " + Twine(batch) +
           " lengths" +
           (anyInList ? Twine(" (i32)")
                      : " in [" + Twine(lo) + ", " + Twine(hi) + "]"));
      return failure();
    }
  }
  return lens;
}

} // namespace attn_run
