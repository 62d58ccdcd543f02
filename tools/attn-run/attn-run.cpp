//===- attn-run.cpp - run an attention spec on the CPU, check it ----------===//
//
// Compiles one kernel spec with attn-to-cpu, runs it through MLIR's
// ExecutionEngine on fresh random inputs, and compares O (and LSE) with the
// float64 reference. Outputs are poisoned with NaN first, so an element the
// kernel never wrote fails the check. Exit code 0 only when every check
// passes; bad input gets a message and exit code 1, never a crash.
//
//   attn-run spec.mlir --batch=2 --q-len=113 --kv-len=203 [--func=name]
//            [--block-q=64 --block-kv=64] [--num-splits=N | --kv-chunk=N]
//            [--kv-lens=random|full|a,b,...] [--seed=N]
//
// Packed (varlen) forms: --q-lens and --kv-lens give each sequence's
// lengths (random ones up to --q-len and --kv-len, empty sequences
// included); the run builds cu_seqlens_q / cu_seqlens_k from them and
// packs Q, O, LSE (and K, V) with exactly that many rows.
//
// Attention sinks get fresh values in [-2, 4), past the usual scores so
// that a sink sometimes dominates its row; empty_rows then counts the rows
// that see no key, whose LSE is their sink's.
//
// A spec whose kernel holds an attn.cache_append runs the append instead
// (runAppend): the caches are poisoned, the kernel runs, and every cache
// element must equal what the reference append gives, bit for bit (new
// rows written, all others untouched). When the kernel also holds an
// attn.attention over the appended caches (kv_lens = kv_lens + n as its
// own argument), its O is checked against the reference attention over
// the old rows followed by the new ones.
//
//   attn-run append.mlir --batch=3 --new-len=5 --kv-len=40
//            [--kv-lens=...] [--new-lens=...] [--invalid-blocks=N]
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "dialect/AttnMods.h"
#include "lib/Pipelines/Pipelines.h"
#include "lib/Transforms/CheckKernels.h"
#include "lib/Reference/HostFloat.h"
#include "lib/Reference/Reference.h"
#include "tools/ToolOptions.h"
#include "tools/attn-run/ModEval.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>

using namespace mlir;
namespace cl = llvm::cl;
namespace ref = ::attn::reference;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.mlir>"),
                                      cl::Required);
static cl::opt<std::string> funcName("func", cl::desc("kernel to run "
                                                      "(default: the first)"));
static cl::opt<int64_t> batchOpt("batch", cl::desc("B"), cl::init(1));
static cl::opt<int64_t> qLenOpt("q-len", cl::desc("Sq (dynamic Sq only)"),
                                cl::init(-1));
static cl::opt<int64_t> kvLenOpt("kv-len",
                                 cl::desc("Sk; for paged K/V the longest "
                                          "sequence"),
                                 cl::init(-1));
static cl::opt<std::string>
    kvLensOpt("kv-lens",
              cl::desc("per-sequence K/V lengths: 'random' (default), 'full' "
                       "or a comma-separated list"),
              cl::init("random"));
static cl::opt<std::string>
    qLensOpt("q-lens",
             cl::desc("packed Q (cu_seqlens_q): per-sequence query lengths, "
                      "'random' in [0, --q-len] (default), 'full' or a "
                      "comma-separated list"),
             cl::init("random"));
static cl::opt<int64_t> newLenOpt("new-len",
                                  cl::desc("attn.cache_append: S_new (dynamic "
                                           "S_new only)"),
                                  cl::init(-1));
static cl::opt<std::string> newLensOpt(
    "new-lens",
    cl::desc("attn.cache_append with new_lens: 'random' (default), 'full' "
             "or a comma-separated list"),
    cl::init("random"));
static cl::opt<int64_t> invalidBlocks(
    "invalid-blocks",
    cl::desc("attn.cache_append, paged: the last block-table entry of this "
             "many sequences names no block (-1, num_blocks + 7, ...)"),
    cl::init(0));
static cl::opt<int64_t> blockQ("block-q", cl::init(64));
static cl::opt<int64_t> blockKV("block-kv", cl::init(64));
static cl::opt<int64_t> numSplits("num-splits", cl::init(0),
                                  cl::desc("split-K: number of splits"));
static cl::opt<int64_t> kvChunk("kv-chunk", cl::init(0),
                                cl::desc("split-K: keys per split"));
static cl::opt<int64_t> captureDim(
    "capture-dim",
    cl::desc("size of each dynamic dim of a capture (default: the larger "
             "of Sq and Sk)"),
    cl::init(0));
static cl::opt<int64_t>
    captureIntMax("capture-int-max",
                  cl::desc("integer captures are filled with random values in "
                           "[0, N) (default 4)"),
                  cl::init(4));
static cl::opt<std::string> saveOutputs(
    "save-outputs",
    cl::desc("write O's bytes, then LSE's, to this file after the run (two "
             "runs with one --seed bit-compare with cmp)"));
static cl::opt<uint64_t> seedOpt("seed", cl::desc("RNG seed (default: fresh)"));
static cl::opt<int64_t> maxMemoryMiB(
    "max-memory-mib",
    cl::desc("refuse runs whose host buffers need more MiB (default 4096)"),
    cl::init(4096));
static cl::opt<double> maxWork(
    "max-work",
    cl::desc("refuse runs with more multiply-adds B*Hq*Sq*Sk*(D+Dv) "
             "(default 2^31; the float64 reference computes them all)"),
    cl::init(0x1p31));
static cl::opt<double> tolerance(
    "tolerance",
    cl::desc("max ||o - ref|| / ||ref|| (default 1e-4 for f32, 1e-2 else)"),
    cl::init(0));

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string shortDouble(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", x);
  return text;
}

int fail(const Twine &message) {
  llvm::errs() << "attn-run: error: " << message << "\n";
  return 1;
}

//===----------------------------------------------------------------------===//
// Element storage
//===----------------------------------------------------------------------===//

using ::attn::host::fromBF16;
using ::attn::host::fromHalf;
using ::attn::host::toBF16;
using ::attn::host::toHalf;

/// The bytes an element takes in memory: i1 (as LLVM stores it) takes one.
int64_t bytesOf(Type elt) { return (elt.getIntOrFloatBitWidth() + 7) / 8; }

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
  double get(int64_t linear) const {
    const char *p = bytes.data() + byteOffset(linear);
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
    if (elt.isF64()) {
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
FailureOr<Extent> extentOf(MemRefType type, ArrayRef<int64_t> shape) {
  Extent e;
  int64_t offset;
  if (failed(type.getStridesAndOffset(e.strides, offset)))
    return failure();
  e.offset = ShapedType::isDynamic(offset) ? 0 : offset;
  std::optional<int64_t> extent = 1; // span of the static-stride dims
  for (size_t i = 0; i < shape.size() && extent; ++i) {
    if (ShapedType::isDynamic(e.strides[i]))
      continue;
    std::optional<int64_t> x = llvm::checkedMul(e.strides[i], shape[i]);
    extent = x ? std::optional<int64_t>(std::max(*extent, *x)) : std::nullopt;
  }
  for (int64_t i = shape.size() - 1; i >= 0 && extent; --i) {
    if (ShapedType::isDynamic(e.strides[i])) {
      e.strides[i] = *extent;
      extent = llvm::checkedMul(*extent, shape[i]);
    }
  }
  std::optional<int64_t> span = e.offset + 1;
  for (size_t i = 0; i < shape.size() && span && extent; ++i) {
    std::optional<int64_t> x = llvm::checkedMul(shape[i] - 1, e.strides[i]);
    span = x ? llvm::checkedAdd(*span, *x) : std::nullopt;
  }
  std::optional<int64_t> bytes;
  if (span && extent)
    bytes = llvm::checkedMul<int64_t>(*span, bytesOf(type.getElementType()));
  if (!bytes)
    return failure();
  e.bytes = *bytes;
  return e;
}

/// Allocates the buffer `extent` describes.
Buffer allocate(MemRefType type, ArrayRef<int64_t> shape, Extent extent) {
  Buffer buf;
  buf.elt = type.getElementType();
  buf.shape.assign(shape.begin(), shape.end());
  buf.strides = extent.strides;
  buf.offset = extent.offset;
  buf.bytes.assign(extent.bytes, 0);
  int64_t base = reinterpret_cast<int64_t>(buf.bytes.data());
  buf.descriptor = {base, base, buf.offset};
  buf.descriptor.insert(buf.descriptor.end(), shape.begin(), shape.end());
  buf.descriptor.insert(buf.descriptor.end(), buf.strides.begin(),
                        buf.strides.end());
  return buf;
}

//===----------------------------------------------------------------------===//
// Sizes of a run
//===----------------------------------------------------------------------===//

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
  Capture
};

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

} // namespace

//===----------------------------------------------------------------------===//
// attn.cache_append: run, and check every cache element
//===----------------------------------------------------------------------===//

namespace {

enum class AppendRole {
  KNew, VNew, BlockTable, KVLens, NewLens, SlotMapping, KCache,
  VCache,             // the append
  Q, O, LSE, AttnLens // an attention over the appended caches
};

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

int runAppend(MLIRContext &context, ModuleOp module, func::FuncOp func,
              mlir::attn::CacheAppendOp op) {
  mlir::attn::AttentionOp attention;
  func.walk([&](mlir::attn::AttentionOp a) { attention = attention ? attention : a; });
  DenseMap<unsigned, AppendRole> roles;
  auto bind = [&](Value v, AppendRole role, StringRef name) -> LogicalResult {
    if (!v)
      return success();
    FailureOr<unsigned> arg = argumentOf(func, v, name);
    if (failed(arg))
      return failure();
    auto [it, inserted] = roles.try_emplace(*arg, role);
    if (!inserted && it->second != role)
      return fail("argument " + Twine(*arg) + " of @" + func.getSymName() +
                  " is operand '" + name + "' and another operand"),
             failure();
    return success();
  };
  if (failed(bind(op.getKNew(), AppendRole::KNew, "k_new")) ||
      failed(bind(op.getVNew(), AppendRole::VNew, "v_new")) ||
      failed(bind(op.getBlockTable(), AppendRole::BlockTable, "block_table")) ||
      failed(bind(op.getKvLens(), AppendRole::KVLens, "kv_lens")) ||
      failed(bind(op.getNewLens(), AppendRole::NewLens, "new_lens")) ||
      failed(bind(op.getSlotMapping(), AppendRole::SlotMapping,
                  "slot_mapping")) ||
      failed(bind(op.getKCache(), AppendRole::KCache, "k_cache")) ||
      failed(bind(op.getVCache(), AppendRole::VCache, "v_cache")))
    return 1;
  if (attention) {
    if (attention.getK() != op.getKCache() ||
        attention.getV() != op.getVCache() ||
        attention.getBlockTable() != op.getBlockTable() ||
        !attention.getKvLens() || attention.getKvLens() == op.getKvLens())
      return fail("an attn.attention after attn.cache_append must read its "
                  "caches (and block table) and take its own kv_lens, the "
                  "lengths after the append");
    if (failed(bind(attention.getQ(), AppendRole::Q, "q")) ||
        failed(bind(attention.getO(), AppendRole::O, "o")) ||
        failed(bind(attention.getLse(), AppendRole::LSE, "lse")) ||
        failed(bind(attention.getKvLens(), AppendRole::AttnLens,
                    "kv_lens (attention)")))
      return 1;
  }
  if (roles.size() != func.getNumArguments())
    return fail("every argument of @" + func.getSymName() +
                " must be an operand of its attn.cache_append (or "
                "attn.attention)");

  // Sizes. The slot-mapping form: --new-len packed tokens into a cache of
  // --batch blocks of --kv-len rows (where dynamic).
  auto knType = cast<MemRefType>(op.getKNew().getType());
  auto kcType = cast<MemRefType>(op.getKCache().getType());
  ref::AppendProblem p;
  const bool slotted = op.isSlotMapped();
  if (slotted && attention)
    return fail("an attn.attention after a slot-mapping append is not "
                "supported by attn-run (it has no kv_lens to extend)");
  auto batch = resolve(slotted ? kcType : knType, 0, batchOpt,
                       slotted ? "cache blocks (--batch)" : "batch (--batch)");
  auto newLen = resolve(knType, slotted ? 0 : 2, newLenOpt,
                        slotted ? "packed token count (--new-len)"
                                : "new token count (--new-len)");
  if (failed(batch) || failed(newLen))
    return 1;
  if (*batch < 1 || *newLen < 1 || *batch > 4096 || *newLen > 65536)
    return fail("--batch and --new-len must be in [1, 4096] and [1, 65536]");
  p.batch = *batch;
  p.newLen = *newLen;
  p.kvHeads = op.getNumKVHeads();
  p.headDim = op.getHeadDim();
  p.valueHeadDim = op.getValueHeadDim();
  const bool paged = op.isPaged();
  if (slotted) {
    auto rows = resolveRows(kcType, "rows per block (--kv-len)");
    if (failed(rows))
      return 1;
    p.blockSize = *rows;
    p.numBlocks = p.batch;
    p.capacity = *rows;
    if (p.newLen > p.numBlocks * p.blockSize)
      return fail("--new-len packed tokens need as many slots; the cache "
                  "has --batch x --kv-len");
  } else if (paged) {
    if (kvLenOpt < 1 || kvLenOpt > 1 << 20)
      return fail("a paged cache needs --kv-len (the tokens a sequence's "
                  "block table can name) in [1, 2^20]");
    p.blockSize = op.getBlockSize();
    auto blocks = pagedBlocks(kcType, p.batch, kvLenOpt, p.blockSize);
    if (failed(blocks))
      return 1;
    std::tie(p.maxBlocks, p.numBlocks) = *blocks;
    p.capacity = p.maxBlocks * p.blockSize;
  } else {
    auto capacity = resolveRows(kcType, "cache capacity (--kv-len)");
    if (failed(capacity))
      return 1;
    p.capacity = *capacity;
  }

  uint64_t seed = runSeed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);

  // New counts first: with an attention, the old lengths leave room.
  std::vector<int32_t> newLens, kvLens, attnLens, blockTable, slots;
  if (slotted) {
    // Distinct slots, shuffled; --invalid-blocks of them name no slot (-1,
    // vLLM's padding) or one past the cache.
    std::vector<int32_t> all(p.numBlocks * p.blockSize);
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = int32_t(i);
    std::shuffle(all.begin(), all.end(), rng);
    slots.assign(all.begin(), all.begin() + p.newLen);
    for (int64_t t = 0; t < std::min<int64_t>(invalidBlocks, p.newLen); ++t)
      slots[t] = t % 2 ? int32_t(p.numBlocks * p.blockSize + t) : -1;
    p.slotMapping = slots.data();
  }
  if (op.getNewLens()) {
    auto lens = lengthsFrom(newLensOpt, "new-lens", p.batch, 0, p.newLen,
                            /*anyInList=*/!attention, rng);
    if (failed(lens))
      return 1;
    newLens = *lens;
    p.newLens = newLens.data();
  }
  auto count = [&](int64_t b) -> int64_t {
    return p.newLens ? std::clamp<int64_t>(p.newLens[b], 0, p.newLen)
                     : p.newLen;
  };
  int64_t most = p.newLen;
  if (attention) {
    most = 0;
    for (int64_t b = 0; b < p.batch; ++b)
      most = std::max(most, count(b));
    if (most > p.capacity)
      return fail("an attention after the append needs the new tokens to "
                  "fit: S_new is larger than the capacity (--kv-len)");
  }
  if (!slotted) {
    auto lens = lengthsFrom(kvLensOpt, "kv-lens", p.batch, 0,
                            attention ? p.capacity - most : p.capacity,
                            /*anyInList=*/!attention, rng);
    if (failed(lens))
      return 1;
    kvLens = *lens;
    p.kvLens = kvLens.data();
  }
  if (attention) {
    for (int64_t b = 0; b < p.batch; ++b) {
      if (kvLens[b] + count(b) > p.capacity)
        return fail("with an attention after the append, kv_lens + new "
                    "tokens must fit the capacity");
      attnLens.push_back(kvLens[b] + count(b));
    }
  }
  if (paged) {
    blockTable = shuffledBlocks(p.numBlocks, p.batch * p.maxBlocks, rng);
    if (attention && invalidBlocks > 0)
      return fail("--invalid-blocks is for an append alone (an attention "
                  "would read the missing blocks)");
    for (int64_t b = 0; b < std::min<int64_t>(invalidBlocks, p.batch); ++b)
      blockTable[(b + 1) * p.maxBlocks - 1] =
          b % 2 ? int32_t(p.numBlocks + 7) : -1;
    p.blockTable = blockTable.data();
  }

  // Attention sizes, for a kernel that reads the caches after the append.
  ref::Problem ap;
  if (attention) {
    auto qType = cast<MemRefType>(attention.getQ().getType());
    auto qLen = resolve(qType, 2, qLenOpt, "query length (--q-len)");
    if (failed(qLen))
      return 1;
    if (*qLen < 1 || *qLen > 65536)
      return fail("--q-len must be in [1, 65536]");
    ap.batch = p.batch;
    ap.qLen = *qLen;
    ap.qHeads = attention.getNumQueryHeads();
    ap.kvHeads = p.kvHeads;
    ap.headDim = p.headDim;
    ap.valueHeadDim = p.valueHeadDim;
    ap.kvLen = p.capacity;
    setScoreTerms(ap, attention);
    ap.kvLens = attnLens.data();
  }

  // Buffers, in argument order.
  const int64_t B = p.batch, Hkv = p.kvHeads;
  const int64_t outer = paged || slotted ? p.numBlocks : B;
  const int64_t rows = paged || slotted ? p.blockSize : p.capacity;
  SmallVector<SmallVector<int64_t>> shapes;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    SmallVector<int64_t> &shape = shapes.emplace_back();
    switch (roles[i]) {
    case AppendRole::KNew:
      shape = slotted ? SmallVector<int64_t>{p.newLen, Hkv, p.headDim}
                      : SmallVector<int64_t>{B, Hkv, p.newLen, p.headDim};
      break;
    case AppendRole::VNew:
      shape = slotted ? SmallVector<int64_t>{p.newLen, Hkv, p.valueHeadDim}
                      : SmallVector<int64_t>{B, Hkv, p.newLen, p.valueHeadDim};
      break;
    case AppendRole::SlotMapping: shape = {p.newLen}; break;
    case AppendRole::BlockTable: shape = {B, p.maxBlocks}; break;
    case AppendRole::KVLens:
    case AppendRole::NewLens:
    case AppendRole::AttnLens: shape = {B}; break;
    case AppendRole::KCache: shape = {outer, Hkv, rows, p.headDim}; break;
    case AppendRole::VCache: shape = {outer, Hkv, rows, p.valueHeadDim}; break;
    case AppendRole::Q: shape = {B, ap.qHeads, ap.qLen, p.headDim}; break;
    case AppendRole::O: shape = {B, ap.qHeads, ap.qLen, p.valueHeadDim}; break;
    case AppendRole::LSE: shape = {B, ap.qHeads, ap.qLen}; break;
    }
  }
  SmallVector<Extent> extents;
  std::optional<int64_t> totalBytes;
  if (failed(measureArguments(func, shapes, extents, totalBytes)))
    return 1;
  const int64_t limit = maxMemoryMiB * (int64_t(1) << 20);
  if (!totalBytes || *totalBytes > limit)
    return fail("the run's buffers need more than --max-memory-mib=" +
                Twine(maxMemoryMiB));
  if (attention) {
    const double work = double(B) * ap.qHeads * ap.qLen * ap.kvLen *
                        double(ap.headDim + ap.valueHeadDim);
    if (work > maxWork)
      return fail("the attention needs " + shortDouble(work) +
                  " multiply-adds, more than --max-work=" +
                  shortDouble(maxWork));
  }
  SmallVector<Buffer> buffers = allocateArguments(func, shapes, extents);
  Buffer *kNew = nullptr, *vNew = nullptr, *kCache = nullptr,
         *vCache = nullptr, *q = nullptr, *o = nullptr, *lse = nullptr;
  for (unsigned i = 0; i < buffers.size(); ++i) {
    Buffer &buf = buffers[i];
    const std::vector<int32_t> *ints = nullptr;
    bool poison = false;
    switch (roles[i]) {
    case AppendRole::KNew: kNew = &buf; break;
    case AppendRole::VNew: vNew = &buf; break;
    case AppendRole::Q: q = &buf; break;
    // Without an attention the caches are poison, so a stray write shows;
    // with one they hold old tokens, which it must read.
    case AppendRole::KCache: kCache = &buf; poison = !attention; break;
    case AppendRole::VCache: vCache = &buf; poison = !attention; break;
    case AppendRole::O: o = &buf; poison = true; break;
    case AppendRole::LSE: lse = &buf; poison = true; break;
    case AppendRole::BlockTable: ints = &blockTable; break;
    case AppendRole::KVLens: ints = &kvLens; break;
    case AppendRole::SlotMapping: ints = &slots; break;
    case AppendRole::NewLens: ints = &newLens; break;
    case AppendRole::AttnLens: ints = &attnLens; break;
    }
    for (int64_t x = 0; x < buf.numElements(); ++x)
      buf.set(x, ints ? double((*ints)[x]) : poison ? kNaN : uniform(rng));
  }
  // What the caches hold before the kernel runs.
  std::vector<double> kBefore = kCache->toDense(), vBefore = vCache->toDense();

  // Compile and run.
  const std::string kernelName = func.getSymName().str();
  Type elt = knType.getElementType();
  if (failed(compileAndCall(context, module, func, buffers)))
    return 1;

  // The caches, element by element: a copy is exact.
  std::vector<double> kWant = kBefore, vWant = vBefore;
  int64_t rowsWritten = ref::cacheAppend(p, kNew->toDense(), vNew->toDense(),
                                         kWant, vWant);
  int64_t wrong = 0, clobbered = 0, written = 0;
  auto same = [](double x, double y) {
    return (std::isnan(x) && std::isnan(y)) || x == y;
  };
  for (auto [got, want, before] :
       {std::tuple<std::vector<double>, const std::vector<double> *,
                   const std::vector<double> *>{kCache->toDense(), &kWant,
                                                &kBefore},
        {vCache->toDense(), &vWant, &vBefore}}) {
    for (size_t i = 0; i < got.size(); ++i) {
      bool isNew = !same((*want)[i], (*before)[i]);
      written += isNew;
      if (!same(got[i], (*want)[i]))
        ++(isNew ? wrong : clobbered);
    }
  }
  bool pass = wrong == 0 && clobbered == 0;
  llvm::outs() << "@" << kernelName << " append "
               << (slotted ? "T=" + std::to_string(p.newLen) +
                                 " slots=" + std::to_string(p.numBlocks) +
                                 "x" + std::to_string(p.blockSize)
                           : "B=" + std::to_string(B) +
                                 " S_new=" + std::to_string(p.newLen))
               << " Hkv=" << Hkv << " D=" << p.headDim
               << " Dv=" << p.valueHeadDim << " " << elt
               << (slotted ? ""
                   : paged ? " paged bs=" + std::to_string(p.blockSize) +
                                 " max_blocks=" + std::to_string(p.maxBlocks)
                           : " capacity=" + std::to_string(p.capacity))
               << " seed=" << seed << ": rows_written=" << rowsWritten
               << " elements_written=" << written << " wrong=" << wrong
               << " clobbered=" << clobbered;

  if (attention) {
    // The reference attention over the old rows, then the new ones, as one
    // contiguous K/V: nothing of the append's reference is reused.
    const int64_t L = p.capacity, d = p.headDim, dv = p.valueHeadDim;
    std::vector<double> kFull(B * Hkv * L * d, 0.0), vFull(B * Hkv * L * dv, 0.0);
    std::vector<double> kn = kNew->toDense(), vn = vNew->toDense();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hkv; ++h)
        for (int64_t j = 0; j < attnLens[b]; ++j) {
          const std::vector<double> *ks = &kBefore, *vs = &vBefore;
          int64_t krow, vrow;
          if (j < kvLens[b]) {
            int64_t slot = b, r = j;
            if (paged) {
              slot = blockTable[b * p.maxBlocks + j / p.blockSize];
              r = j % p.blockSize;
            }
            krow = vrow = (slot * Hkv + h) * rows + r;
          } else {
            ks = &kn;
            vs = &vn;
            krow = vrow = (b * Hkv + h) * p.newLen + (j - kvLens[b]);
          }
          const int64_t dst = (b * Hkv + h) * L + j;
          for (int64_t x = 0; x < d; ++x)
            kFull[dst * d + x] = (*ks)[krow * d + x];
          for (int64_t x = 0; x < dv; ++x)
            vFull[dst * dv + x] = (*vs)[vrow * dv + x];
        }
    std::vector<double> refO, refLse;
    ref::attention(ap, q->toDense(), kFull, vFull, refO, refLse);
    int64_t unwritten = 0;
    double relErr = relativeError(o->toDense(), refO, unwritten);
    double lseErr = 0;
    if (lse) {
      std::vector<double> gotLse = lse->toDense();
      for (size_t i = 0; i < gotLse.size(); ++i) {
        if (std::isnan(gotLse[i]))
          ++unwritten;
        else if (refLse[i] == -kInf)
          lseErr = std::max(lseErr, gotLse[i] == -kInf ? 0.0 : kInf);
        else
          lseErr = std::max(lseErr, std::abs(gotLse[i] - refLse[i]) /
                                        std::max(1.0, std::abs(refLse[i])));
      }
    }
    double tol = tolerance > 0 ? double(tolerance) : elt.isF32() ? 1e-4 : 1e-2;
    pass = pass && relErr <= tol && unwritten == 0 && lseErr <= 1e-3;
    llvm::outs() << "; attention Hq=" << ap.qHeads << " Sq=" << ap.qLen
                 << " rel_err=" << llvm::format("%.3e", relErr) << " (tol "
                 << tol << ")";
    if (lse)
      llvm::outs() << " lse_err=" << llvm::format("%.3e", lseErr);
    llvm::outs() << " unwritten=" << unwritten;
  }
  llvm::outs() << (pass ? " PASS" : " FAIL") << "\n";
  return pass ? 0 : 1;
}

} // namespace

static cl::OptionCategory attnRunCategory("attn-run options");

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::attn::tools::setUpToolOptions(attnRunCategory);
  cl::ParseCommandLineOptions(argc, argv, "attn CPU runner and checker\n");
  registerAllPasses();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry);

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // the parser printed why

  // The kernel and its attention op (or its cache append, which has a run
  // of its own).
  func::FuncOp func;
  mlir::attn::AttentionOp op;
  mlir::attn::CacheAppendOp append;
  module->walk([&](func::FuncOp f) {
    if (func || (!funcName.empty() && f.getSymName() != funcName))
      return;
    f.walk([&](mlir::attn::CacheAppendOp a) { append = append ? append : a; });
    f.walk([&](mlir::attn::AttentionOp a) { op = op ? op : a; });
    if (op || append)
      func = f;
  });
  // Names, results and op counts, as every path checks them: attn-run's
  // model covers one attention and one append a function.
  if (func && failed(mlir::attn::checkKernelFunction(func)))
    return 1;
  if (append)
    return runAppend(context, *module, func, append);
  if (!func)
    return fail(funcName.empty()
                    ? "no func.func with an attn.attention or "
                      "attn.cache_append"
                    : "no func.func @" + funcName +
                          " with an attn.attention or attn.cache_append");
  // Each operand of the op must be an argument of the kernel. A read-only
  // argument may be two operands (the verifier keeps outputs apart): K and
  // V, or an operand and a capture; the buffer is made for its first role.
  DenseMap<unsigned, Role> roles;
  SmallVector<std::pair<unsigned, Role>> aliases;
  auto bind = [&](Value v, Role role, StringRef name) -> LogicalResult {
    if (!v)
      return success();
    FailureOr<unsigned> arg = argumentOf(func, v, name);
    if (failed(arg))
      return failure();
    auto [it, first] = roles.try_emplace(*arg, role);
    if (first)
      return success();
    if (!(it->second == Role::K && role == Role::V) && role != Role::Capture)
      return fail("argument " + Twine(*arg) + " is operand '" + name +
                  "' and another operand; attn-run checks one buffer as "
                  "two operands only for k and v, or as a capture"),
             failure();
    aliases.push_back({*arg, role});
    return success();
  };
  if (failed(bind(op.getQ(), Role::Q, "q")) ||
      failed(bind(op.getK(), Role::K, "k")) ||
      failed(bind(op.getV(), Role::V, "v")) ||
      failed(bind(op.getBlockTable(), Role::BlockTable, "block_table")) ||
      failed(bind(op.getKvLens(), Role::KVLens, "kv_lens")) ||
      failed(bind(op.getCuSeqlensQ(), Role::CuSeqlensQ, "cu_seqlens_q")) ||
      failed(bind(op.getCuSeqlensK(), Role::CuSeqlensK, "cu_seqlens_k")) ||
      failed(bind(op.getSinks(), Role::Sinks, "sinks")) ||
      failed(bind(op.getO(), Role::O, "o")) ||
      failed(bind(op.getLse(), Role::LSE, "lse")))
    return 1;
  for (auto [i, capture] : llvm::enumerate(op.getCaptures()))
    if (failed(bind(capture, Role::Capture, ("capture #" + Twine(i)).str())))
      return 1;
  if (roles.size() != func.getNumArguments())
    return fail("every argument of @" + func.getSymName() +
                " must be an operand of its attn.attention");

  // Sizes.
  auto qType = cast<MemRefType>(op.getQ().getType());
  auto kType = cast<MemRefType>(op.getK().getType());
  const bool packedQ = op.isPackedQ(), packedKV = op.isPackedKV();
  ref::Problem p;
  auto batch = packedQ ? FailureOr<int64_t>(batchOpt)
                       : resolve(qType, 0, batchOpt, "batch (--batch)");
  // Packed Q: --q-len bounds the random lengths (and max_q_len).
  auto qLen = packedQ ? FailureOr<int64_t>(qLenOpt)
                      : resolve(qType, 2, qLenOpt, "query length (--q-len)");
  if (failed(batch) || failed(qLen))
    return 1;
  if (*batch < 1 || *qLen < 1 || *batch > 4096 || *qLen > 65536)
    return fail("--batch and --q-len must be in [1, 4096] and [1, 65536]");
  p.batch = *batch;
  p.qLen = *qLen;
  if (std::optional<int64_t> maxQLen = op.getMaxQLen()) {
    p.qLen = std::min(p.qLen, *maxQLen);
    // The CPU nest walks the tiles of the promised longest sequence, as
    // the decode tier's grid does: a promise far past every generated
    // length (2^31-1 is legal) would take minutes. The tighter promise
    // holds for this run's lengths and gives the same results.
    if (*maxQLen > p.qLen) {
      op.setMaxQLenAttr(Builder(&context).getI64IntegerAttr(p.qLen));
      llvm::errs() << "attn-run: note: max_q_len " << *maxQLen
                   << " is past the longest generated sequence; the run "
                      "promises "
                   << p.qLen << " (--q-len)\n";
    }
  }
  p.qHeads = op.getNumQueryHeads();
  p.kvHeads = op.getNumKVHeads();
  p.headDim = op.getHeadDim();
  p.valueHeadDim = op.getValueHeadDim();
  setScoreTerms(p, op);

  if (op.isPaged() || packedKV) {
    if (kvLenOpt < 1 || kvLenOpt > 1 << 20)
      return fail("paged or packed K/V needs --kv-len (the longest "
                  "sequence) in [1, 2^20]");
    p.kvLen = kvLenOpt;
  } else {
    auto kvLen = resolveRows(kType, "key length (--kv-len)");
    if (failed(kvLen))
      return 1;
    p.kvLen = *kvLen;
  }
  if (op.isPaged()) {
    p.blockSize = op.getBlockSize();
    auto blocks = pagedBlocks(kType, p.batch, p.kvLen, p.blockSize);
    if (failed(blocks))
      return 1;
    std::tie(p.maxBlocks, p.numBlocks) = *blocks;
  }

  uint64_t seed = runSeed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);

  std::vector<int32_t> kvLens, blockTable, cuQ, cuK;
  if (op.getKvLens() || packedKV) {
    auto lens = lengthsFrom(kvLensOpt, "kv-lens", p.batch, 0, p.kvLen,
                            /*anyInList=*/false, rng);
    if (failed(lens))
      return 1;
    kvLens = *lens;
    if (packedKV) {
      cuK.push_back(0);
      for (int32_t len : kvLens)
        cuK.push_back(cuK.back() + len);
      p.cuSeqlensK = cuK.data();
    } else {
      p.kvLens = kvLens.data();
    }
  }
  if (packedQ) {
    auto lens = lengthsFrom(qLensOpt, "q-lens", p.batch, 0, p.qLen,
                            /*anyInList=*/false, rng);
    if (failed(lens))
      return 1;
    cuQ.push_back(0);
    for (int32_t len : *lens)
      cuQ.push_back(cuQ.back() + len);
    p.cuSeqlensQ = cuQ.data();
  }
  if (op.isPaged()) {
    blockTable = shuffledBlocks(p.numBlocks, p.batch * p.maxBlocks, rng);
    p.blockTable = blockTable.data();
  }

  // The reference's work, checked before anything is allocated: static
  // head counts and head dims are not bounded like --batch and the lengths.
  const double work = double(p.batch) * p.qHeads * p.qLen * p.kvLen *
                      double(p.headDim + p.valueHeadDim);
  if (work > maxWork)
    return fail("the run needs " + shortDouble(work) +
                " multiply-adds (B*Hq*Sq*Sk*(D+Dv)), more than --max-work=" +
                shortDouble(maxWork));

  // Buffers, in argument order.
  const int64_t B = p.batch, Hq = p.qHeads, Hkv = p.kvHeads;
  const int64_t kvRows = op.isPaged() ? p.blockSize : p.kvLen;
  const int64_t kvOuter = op.isPaged() ? p.numBlocks : B;
  // Packed operands have exactly their sequences' rows (an unwritten row
  // of O would show as poison).
  const int64_t totalQ = packedQ ? cuQ.back() : 0;
  const int64_t totalK = packedKV ? cuK.back() : 0;
  auto qShape = [&](int64_t width) -> SmallVector<int64_t> {
    if (packedQ)
      return width ? SmallVector<int64_t>{totalQ, Hq, width}
                   : SmallVector<int64_t>{totalQ, Hq};
    return width ? SmallVector<int64_t>{B, Hq, p.qLen, width}
                 : SmallVector<int64_t>{B, Hq, p.qLen};
  };
  auto kvShape = [&](int64_t width) -> SmallVector<int64_t> {
    if (packedKV)
      return {totalK, Hkv, width};
    return {kvOuter, Hkv, kvRows, width};
  };
  Buffer *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *lse = nullptr,
         *sinks = nullptr;
  SmallVector<SmallVector<int64_t>> shapes;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    SmallVector<int64_t> &shape = shapes.emplace_back();
    switch (roles[i]) {
    case Role::Q: shape = qShape(p.headDim); break;
    case Role::K: shape = kvShape(p.headDim); break;
    case Role::V: shape = kvShape(p.valueHeadDim); break;
    case Role::BlockTable: shape = {B, p.maxBlocks}; break;
    case Role::KVLens: shape = {B}; break;
    case Role::CuSeqlensQ:
    case Role::CuSeqlensK: shape = {B + 1}; break;
    case Role::O: shape = qShape(p.valueHeadDim); break;
    case Role::LSE: shape = qShape(0); break;
    case Role::Sinks: shape = {Hq}; break;
    case Role::Capture: {
      auto type = cast<MemRefType>(func.getArgument(i).getType());
      int64_t dynamic =
          captureDim > 0 ? int64_t(captureDim) : std::max(p.qLen, p.kvLen);
      for (int64_t d : type.getShape())
        shape.push_back(ShapedType::isDynamic(d) ? dynamic : d);
      break;
    }
    }
  }
  SmallVector<Extent> extents;
  std::optional<int64_t> totalBytes;
  if (failed(measureArguments(func, shapes, extents, totalBytes)))
    return 1;
  // Checked before allocating: a static size or stride can ask for far
  // more memory than a CPU check should take.
  const int64_t limit = maxMemoryMiB * (int64_t(1) << 20);
  if (!totalBytes || *totalBytes > limit)
    return fail("the run's buffers need " +
                (totalBytes ? Twine(*totalBytes >> 20) + " MiB"
                            : Twine("more than 2^63 bytes")) +
                ", more than --max-memory-mib=" + Twine(maxMemoryMiB));
  SmallVector<Buffer> buffers = allocateArguments(func, shapes, extents);
  for (unsigned i = 0; i < buffers.size(); ++i) {
    Buffer &buf = buffers[i];
    switch (roles[i]) {
    case Role::Q: q = &buf; break;
    case Role::K: k = &buf; break;
    case Role::V: v = &buf; break;
    case Role::O: o = &buf; break;
    case Role::LSE: lse = &buf; break;
    case Role::BlockTable:
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, blockTable[x]);
      continue;
    case Role::KVLens:
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, kvLens[x]);
      continue;
    case Role::Sinks: {
      // Past the scores' usual range too, so that a sink sometimes
      // dominates its row.
      std::uniform_real_distribution<double> logits(-2.0, 4.0);
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, logits(rng));
      sinks = &buf;
      continue;
    }
    case Role::Capture:
      if (buf.elt.isInteger()) {
        // Values the element type holds: [0, 2) for i1, below 2^(w-1).
        const unsigned bits = buf.elt.getIntOrFloatBitWidth();
        int64_t top = std::max<int64_t>(captureIntMax, 1);
        if (bits < 64)
          top =
              std::min<int64_t>(top, bits == 1 ? 2 : int64_t(1) << (bits - 1));
        std::uniform_int_distribution<int64_t> ints(0, top - 1);
        for (int64_t x = 0; x < buf.numElements(); ++x)
          buf.set(x, double(ints(rng)));
      } else {
        for (int64_t x = 0; x < buf.numElements(); ++x)
          buf.set(x, uniform(rng));
      }
      continue;
    case Role::CuSeqlensQ:
    case Role::CuSeqlensK: {
      const std::vector<int32_t> &offsets =
          roles[i] == Role::CuSeqlensQ ? cuQ : cuK;
      for (int64_t x = 0; x < buf.numElements(); ++x)
        buf.set(x, offsets[x]);
      continue;
    }
    }
    bool output = roles[i] == Role::O || roles[i] == Role::LSE;
    for (int64_t x = 0; x < buf.numElements(); ++x)
      buf.set(x, output ? kNaN : uniform(rng)); // poison outputs
  }
  for (auto [arg, role] : aliases)
    if (role == Role::V)
      v = &buffers[arg];

  // The regions, as the reference evaluates them (before the pipeline
  // replaces the op), reading the captures' contents.
  // In the op's capture order, which need not be the arguments'.
  std::vector<::attn::modeval::Capture> captures;
  for (Value capture : op.getCaptures()) {
    const Buffer &buf = buffers[cast<BlockArgument>(capture).getArgNumber()];
    captures.push_back(
        {std::vector<int64_t>(buf.shape.begin(), buf.shape.end()),
         buf.toDense()});
  }
  std::unique_ptr<::attn::modeval::Evaluator> scoreMod, maskMod;
  for (auto [region, kind, eval] :
       {std::tuple<Region *, mlir::attn::ModKind,
                   std::unique_ptr<::attn::modeval::Evaluator> *>{
            &op.getScoreMod(), mlir::attn::ModKind::Score, &scoreMod},
        {&op.getMaskMod(), mlir::attn::ModKind::Mask, &maskMod}}) {
    if (region->empty())
      continue;
    std::string error;
    *eval = ::attn::modeval::Evaluator::compile(
        *region, mlir::attn::numPositionArgs(kind), captures, error);
    if (!*eval)
      return fail(Twine(mlir::attn::modName(kind)) + ": " + error);
  }
  if (scoreMod)
    p.scoreMod = [&](double s, int64_t b, int64_t h, int64_t i, int64_t j) {
      double args[] = {s, double(b), double(h), double(i), double(j)};
      return (*scoreMod)(args);
    };
  if (maskMod)
    p.maskMod = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
      double args[] = {double(b), double(h), double(i), double(j)};
      return (*maskMod)(args) != 0;
    };
  const int64_t numCaptures = captures.size();
  // As the buffer holds them (rounded to its element type).
  std::vector<double> sinkValues;
  if (sinks) {
    sinkValues = sinks->toDense();
    p.sinks = sinkValues.data();
  }

  // The reference first: a region load outside its capture is refused
  // before the kernel makes the same load.
  std::vector<double> refO, refLse;
  ref::attention(p, q->toDense(), k->toDense(), v->toDense(), refO, refLse);
  for (auto [eval, kind] :
       {std::pair{&scoreMod, mlir::attn::ModKind::Score},
        std::pair{&maskMod, mlir::attn::ModKind::Mask}})
    if (*eval && !(*eval)->fault().empty())
      return fail(Twine(mlir::attn::modName(kind)) + ": " +
                  (*eval)->fault() +
                  "; the region's loads must stay inside its captures");

  // Compile. The pipeline replaces `func` and `op`: keep what is needed.
  const std::string kernelName = func.getSymName().str();
  const bool paged = op.isPaged();
  Type elt = qType.getElementType();
  if (failed(compileAndCall(context, *module, func, buffers)))
    return 1;

  if (!saveOutputs.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(saveOutputs, ec);
    if (ec)
      return fail("--save-outputs: " + ec.message());
    out.write(o->bytes.data(), o->bytes.size());
    if (lse)
      out.write(lse->bytes.data(), lse->bytes.size());
  }

  // Check.
  int64_t unwritten = 0;
  double relErr = relativeError(o->toDense(), refO, unwritten);
  double lseErr = 0;
  int64_t emptyRows = 0, lseWrong = 0;
  if (lse) {
    std::vector<double> gotLse = lse->toDense();
    // A row that sees no key has its sink's LSE exactly in the reference
    // (one with keys has more); LSE is [B, Hq, Sq] or packed [total_q, Hq].
    auto sinkOf = [&](size_t i) {
      return sinkValues[packedQ ? i % Hq : i / p.qLen % Hq];
    };
    for (size_t i = 0; i < gotLse.size(); ++i) {
      if (std::isnan(gotLse[i])) {
        ++unwritten;
      } else if (refLse[i] == -kInf) {
        ++emptyRows;
        lseWrong += gotLse[i] != -kInf;
      } else {
        emptyRows += sinks && refLse[i] == sinkOf(i);
        // Relative to the LSE's size: at a huge scale the LSE is huge too,
        // and f32 carries it to about 7 digits, however exact O is.
        lseErr = std::max(lseErr, std::abs(gotLse[i] - refLse[i]) /
                                      std::max(1.0, std::abs(refLse[i])));
      }
    }
  }
  // O is only as precise as the narrowest of the inputs and O itself.
  const bool allF32 = elt.isF32() && o->elt.isF32();
  double tol = tolerance > 0 ? double(tolerance) : allF32 ? 1e-4 : 1e-2;
  const double lseTol = 1e-3;
  bool pass = relErr <= tol && unwritten == 0 && lseErr <= lseTol &&
              lseWrong == 0;
  llvm::outs()
      << "@" << kernelName << " B=" << B << " Hq=" << Hq << " Hkv=" << Hkv
      << " Sq=" << p.qLen << " Sk=" << p.kvLen << " D=" << p.headDim
      << " Dv=" << p.valueHeadDim << " " << elt
      << (paged ? " paged bs=" + std::to_string(p.blockSize) : std::string())
      << (packedQ ? " packed_q=" + std::to_string(totalQ) : std::string())
      << (packedKV ? " packed_kv=" + std::to_string(totalK) : std::string())
      << (scoreMod ? " score_mod" : "") << (maskMod ? " mask_mod" : "")
      << (sinks ? " sinks" : "")
      << (numCaptures ? " captures=" + std::to_string(numCaptures)
                      : std::string())
      << " seed=" << seed << ": rel_err=" << llvm::format("%.3e", relErr)
      << " (tol " << tol << ")";
  if (lse)
    llvm::outs() << " lse_err=" << llvm::format("%.3e", lseErr)
                 << " empty_rows=" << emptyRows;
  llvm::outs() << " unwritten=" << unwritten << (pass ? " PASS" : " FAIL")
               << "\n";
  return pass ? 0 : 1;
}
