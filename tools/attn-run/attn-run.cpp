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
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "lib/Pipelines/Pipelines.h"
#include "lib/Reference/HostFloat.h"
#include "lib/Reference/Reference.h"
#include "tools/ToolOptions.h"

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
static cl::opt<int64_t> blockQ("block-q", cl::init(64));
static cl::opt<int64_t> blockKV("block-kv", cl::init(64));
static cl::opt<int64_t> numSplits("num-splits", cl::init(0),
                                  cl::desc("split-K: number of splits"));
static cl::opt<int64_t> kvChunk("kv-chunk", cl::init(0),
                                cl::desc("split-K: keys per split"));
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

/// A memref argument's host buffer: logical shape, element strides, bytes.
struct Buffer {
  Type elt;
  SmallVector<int64_t> shape, strides;
  int64_t offset = 0;
  std::vector<char> bytes;
  std::vector<int64_t> descriptor; // MLIR's memref descriptor, C layout

  int64_t width() const { return elt.getIntOrFloatBitWidth() / 8; }
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
    if (elt.isF32()) {
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
    bytes = llvm::checkedMul<int64_t>(*span, type.getElementTypeBitWidth() / 8);
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

enum class Role { Q, K, V, BlockTable, KVLens, O, LSE };

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

  // The kernel and its attention op.
  func::FuncOp func;
  mlir::attn::AttentionOp op;
  module->walk([&](func::FuncOp f) {
    if (func || (!funcName.empty() && f.getSymName() != funcName))
      return;
    f.walk([&](mlir::attn::AttentionOp a) { op = op ? op : a; });
    if (op)
      func = f;
  });
  if (!func)
    return fail(funcName.empty() ? "no func.func with an attn.attention"
                                 : "no func.func @" + funcName +
                                       " with an attn.attention");
  // Each operand of the op must be an argument of the kernel.
  DenseMap<unsigned, Role> roles;
  auto bind = [&](Value v, Role role, StringRef name) -> LogicalResult {
    if (!v)
      return success();
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner()->getParentOp() != func)
      return fail("operand '" + name + "' must be an argument of @" +
                  func.getSymName()),
             failure();
    roles[arg.getArgNumber()] = role;
    return success();
  };
  if (failed(bind(op.getQ(), Role::Q, "q")) ||
      failed(bind(op.getK(), Role::K, "k")) ||
      failed(bind(op.getV(), Role::V, "v")) ||
      failed(bind(op.getBlockTable(), Role::BlockTable, "block_table")) ||
      failed(bind(op.getKvLens(), Role::KVLens, "kv_lens")) ||
      failed(bind(op.getO(), Role::O, "o")) ||
      failed(bind(op.getLse(), Role::LSE, "lse")))
    return 1;
  if (roles.size() != func.getNumArguments())
    return fail("every argument of @" + func.getSymName() +
                " must be an operand of its attn.attention");

  // Sizes.
  auto qType = cast<MemRefType>(op.getQ().getType());
  auto kType = cast<MemRefType>(op.getK().getType());
  ref::Problem p;
  auto batch = resolve(qType, 0, batchOpt, "batch (--batch)");
  auto qLen = resolve(qType, 2, qLenOpt, "query length (--q-len)");
  if (failed(batch) || failed(qLen))
    return 1;
  if (*batch < 1 || *qLen < 1 || *batch > 4096 || *qLen > 65536)
    return fail("--batch and --q-len must be in [1, 4096] and [1, 65536]");
  p.batch = *batch;
  p.qLen = *qLen;
  p.qHeads = op.getNumQueryHeads();
  p.kvHeads = op.getNumKVHeads();
  p.headDim = op.getHeadDim();
  p.valueHeadDim = op.getValueHeadDim();
  p.scale = op.getScaleOrDefault();
  if (std::optional<APFloat> cap = op.getSoftcap())
    p.softcap = cap->convertToDouble();
  mlir::attn::MaskAttr mask = op.getMaskOrNone();
  p.mask.left = mask.getLeft();
  p.mask.right = mask.getRight();
  p.mask.bottomRight = mask.isBottomRight();

  if (op.isPaged()) {
    if (kvLenOpt < 1 || kvLenOpt > 1 << 20)
      return fail("paged K/V needs --kv-len (the longest sequence) in "
                  "[1, 2^20]");
    p.kvLen = kvLenOpt;
    p.blockSize = op.getBlockSize();
    p.maxBlocks = (p.kvLen + p.blockSize - 1) / p.blockSize;
    // Room for every sequence's blocks plus unused ones, shuffled.
    p.numBlocks = p.batch * p.maxBlocks + 3;
    auto nb = resolve(kType, 0, p.numBlocks, "paged cache block count");
    if (failed(nb))
      return 1;
  } else {
    auto kvLen = resolve(kType, 2, kvLenOpt, "key length (--kv-len)");
    if (failed(kvLen))
      return 1;
    if (*kvLen < 1 || *kvLen > 1 << 20)
      return fail("--kv-len must be in [1, 2^20]");
    p.kvLen = *kvLen;
  }

  uint64_t seed = seedOpt.getNumOccurrences() ? uint64_t(seedOpt)
                                              : std::random_device()();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);

  std::vector<int32_t> kvLens, blockTable;
  if (op.getKvLens()) {
    kvLens.resize(p.batch);
    SmallVector<StringRef> parts;
    StringRef(kvLensOpt).split(parts, ',');
    for (int64_t b = 0; b < p.batch; ++b) {
      if (kvLensOpt == "random")
        kvLens[b] = std::uniform_int_distribution<int64_t>(0, p.kvLen)(rng);
      else if (kvLensOpt == "full")
        kvLens[b] = p.kvLen;
      else if (static_cast<int64_t>(parts.size()) != p.batch ||
               parts[b].getAsInteger(10, kvLens[b]) || kvLens[b] < 0 ||
               kvLens[b] > p.kvLen)
        return fail("--kv-lens must be 'random', 'full' or " +
                    Twine(p.batch) + " lengths in [0, --kv-len]");
    }
    p.kvLens = kvLens.data();
  }
  if (op.isPaged()) {
    std::vector<int32_t> blocks(p.numBlocks);
    for (int64_t i = 0; i < p.numBlocks; ++i)
      blocks[i] = i;
    std::shuffle(blocks.begin(), blocks.end(), rng);
    blockTable.assign(blocks.begin(), blocks.begin() + p.batch * p.maxBlocks);
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
  SmallVector<Buffer> buffers;
  Buffer *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *lse = nullptr;
  SmallVector<SmallVector<int64_t>> shapes;
  SmallVector<Extent> extents;
  std::optional<int64_t> totalBytes = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = cast<MemRefType>(func.getArgument(i).getType());
    SmallVector<int64_t> &shape = shapes.emplace_back();
    switch (roles[i]) {
    case Role::Q: shape = {B, Hq, p.qLen, p.headDim}; break;
    case Role::K: shape = {kvOuter, Hkv, kvRows, p.headDim}; break;
    case Role::V: shape = {kvOuter, Hkv, kvRows, p.valueHeadDim}; break;
    case Role::BlockTable: shape = {B, p.maxBlocks}; break;
    case Role::KVLens: shape = {B}; break;
    case Role::O: shape = {B, Hq, p.qLen, p.valueHeadDim}; break;
    case Role::LSE: shape = {B, Hq, p.qLen}; break;
    }
    for (unsigned d = 0; d < shape.size(); ++d)
      if (!type.isDynamicDim(d) && type.getDimSize(d) != shape[d])
        return fail("argument " + Twine(i) + " dim " + Twine(d) + " is " +
                    Twine(type.getDimSize(d)) + " in the spec but the run "
                    "needs " + Twine(shape[d]));
    FailureOr<Extent> extent = extentOf(type, shape);
    if (failed(extent))
      return fail("argument " + Twine(i) + " would need more than 2^63 "
                  "bytes");
    extents.push_back(*extent);
    totalBytes = llvm::checkedAdd(totalBytes.value_or(INT64_MAX),
                                  extent->bytes);
  }
  // Checked before allocating: a static size or stride can ask for far
  // more memory than a CPU check should take.
  const int64_t limit = maxMemoryMiB * (int64_t(1) << 20);
  if (!totalBytes || *totalBytes > limit)
    return fail("the run's buffers need " +
                (totalBytes ? Twine(*totalBytes >> 20) + " MiB"
                            : Twine("more than 2^63 bytes")) +
                ", more than --max-memory-mib=" + Twine(maxMemoryMiB));
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    buffers.push_back(allocate(cast<MemRefType>(func.getArgument(i).getType()),
                               shapes[i], extents[i]));
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
    }
    bool output = roles[i] == Role::O || roles[i] == Role::LSE;
    for (int64_t x = 0; x < buf.numElements(); ++x)
      buf.set(x, output ? kNaN : uniform(rng)); // poison outputs
  }

  // Compile. The pipeline replaces `func` and `op`: keep what is needed.
  const std::string kernelName = func.getSymName().str();
  const bool paged = op.isPaged();
  Type elt = qType.getElementType();
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
      failed(pm.run(*module)))
    return 1; // diagnostics were printed
  ExecutionEngineOptions engineOptions;
  auto optimize = makeOptimizingTransformer(2, 0, nullptr);
  engineOptions.transformer = optimize;
  auto engine = ExecutionEngine::create(*module, engineOptions);
  if (!engine)
    return fail("JIT: " + llvm::toString(engine.takeError()));

  SmallVector<void *> descriptorPointers, args;
  for (Buffer &buf : buffers)
    descriptorPointers.push_back(buf.descriptor.data());
  for (void *&ptr : descriptorPointers)
    args.push_back(&ptr);
  if (llvm::Error err = (*engine)->invokePacked(
          "_mlir_ciface_" + kernelName, args))
    return fail("JIT call: " + llvm::toString(std::move(err)));

  // Check.
  std::vector<double> refO, refLse;
  ref::attention(p, q->toDense(), k->toDense(), v->toDense(),
                             refO, refLse);
  std::vector<double> gotO = o->toDense();
  double num = 0, den = 0;
  int64_t unwritten = 0;
  for (size_t i = 0; i < gotO.size(); ++i) {
    if (std::isnan(gotO[i])) {
      ++unwritten;
      continue;
    }
    num += (gotO[i] - refO[i]) * (gotO[i] - refO[i]);
    den += refO[i] * refO[i];
  }
  double relErr = std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0);
  double lseErr = 0;
  int64_t emptyRows = 0, lseWrong = 0;
  if (lse) {
    std::vector<double> gotLse = lse->toDense();
    for (size_t i = 0; i < gotLse.size(); ++i) {
      if (std::isnan(gotLse[i])) {
        ++unwritten;
      } else if (refLse[i] == -kInf) {
        ++emptyRows;
        lseWrong += gotLse[i] != -kInf;
      } else {
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
  llvm::outs() << "@" << kernelName << " B=" << B << " Hq=" << Hq
               << " Hkv=" << Hkv << " Sq=" << p.qLen << " Sk=" << p.kvLen
               << " D=" << p.headDim << " Dv=" << p.valueHeadDim << " " << elt
               << (paged ? " paged bs=" + std::to_string(p.blockSize)
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
