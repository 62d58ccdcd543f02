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
// --cascade=prefix,suffix,merge composes cascade attention from three
// kernels of the spec (runCascade): a shared prefix's level, each
// request's suffix level and the merge of their states.
//
//   attn-run cascade.mlir --cascade=prefix,suffix,merge --batch=4
//            --prefix-len=100 --kv-len=30 --q-len=3 [--prefix-chunks=3]
//
//===----------------------------------------------------------------------===//

#include "tools/attn-run/Run.h"

#include "dialect/AttnDialect.h"
#include "lib/Transforms/CheckKernels.h"
#include "tools/ToolOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

namespace cl = llvm::cl;

namespace attn_run {

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<spec.mlir>"),
                               cl::Required);
cl::opt<std::string> funcName("func", cl::desc("kernel to run "
                                               "(default: the first)"));
cl::opt<int64_t> batchOpt("batch", cl::desc("B"), cl::init(1));
cl::opt<int64_t> qLenOpt("q-len", cl::desc("Sq (dynamic Sq only)"),
                         cl::init(-1));
cl::opt<int64_t> kvLenOpt("kv-len",
                          cl::desc("Sk; for paged K/V the longest "
                                   "sequence"),
                          cl::init(-1));
cl::opt<std::string>
    kvLensOpt("kv-lens",
              cl::desc("per-sequence K/V lengths: 'random' (default), 'full' "
                       "or a comma-separated list"),
              cl::init("random"));
cl::opt<std::string>
    qLensOpt("q-lens",
             cl::desc("packed Q (cu_seqlens_q): per-sequence query lengths, "
                      "'random' in [0, --q-len] (default), 'full' or a "
                      "comma-separated list"),
             cl::init("random"));
cl::opt<int64_t> newLenOpt("new-len",
                           cl::desc("attn.cache_append: S_new (dynamic "
                                    "S_new only)"),
                           cl::init(-1));
cl::opt<std::string> newLensOpt(
    "new-lens",
    cl::desc("attn.cache_append with new_lens: 'random' (default), 'full' "
             "or a comma-separated list"),
    cl::init("random"));
cl::opt<int64_t> invalidBlocks(
    "invalid-blocks",
    cl::desc("attn.cache_append, paged: the last block-table entry of this "
             "many sequences names no block (-1, num_blocks + 7, ...)"),
    cl::init(0));
cl::opt<int64_t> blockQ("block-q", cl::init(64));
cl::opt<int64_t> blockKV("block-kv", cl::init(64));
cl::opt<int64_t> numSplits("num-splits", cl::init(0),
                           cl::desc("split-K: number of splits"));
cl::opt<int64_t> kvChunk("kv-chunk", cl::init(0),
                         cl::desc("split-K: keys per split"));
cl::opt<int64_t> captureDim(
    "capture-dim",
    cl::desc("size of each dynamic dim of a capture (default: the larger "
             "of Sq and Sk)"),
    cl::init(0));
cl::opt<int64_t>
    captureIntMax("capture-int-max",
                  cl::desc("integer captures are filled with random values in "
                           "[0, N) (default 4)"),
                  cl::init(4));
cl::opt<std::string> saveOutputs(
    "save-outputs",
    cl::desc("write O's bytes, then LSE's, to this file after the run (two "
             "runs with one --seed bit-compare with cmp)"));
cl::opt<uint64_t> seedOpt("seed", cl::desc("RNG seed (default: fresh)"));
cl::opt<int64_t> maxMemoryMiB(
    "max-memory-mib",
    cl::desc("refuse runs whose host buffers need more MiB (default 4096)"),
    cl::init(4096));
cl::opt<double>
    maxWork("max-work",
            cl::desc("refuse runs with more multiply-adds B*Hq*Sq*Sk*(D+Dv) "
                     "(default 2^31; the float64 reference computes them all)"),
            cl::init(0x1p31));
cl::opt<double> tolerance(
    "tolerance",
    cl::desc("max ||o - ref|| / ||ref|| (default 1e-4 for f32, 1e-2 else)"),
    cl::init(0));
cl::opt<bool> quantizeFromFloat(
    "quantize-from-float",
    cl::desc("quantized Q, K, V hold fresh floats quantized as an engine "
             "would (each scale absmax / the format's largest, by its "
             "granularity), and the reference reads the floats: the error "
             "is the format's plus the kernel's (set --tolerance)"),
    cl::init(false));
cl::list<std::string> cascadeKernels(
    "cascade", cl::CommaSeparated,
    cl::desc("prefix,suffix,merge: run cascade attention from these three "
             "kernels (CascadeRun.cpp); --kv-len bounds the suffixes"));
cl::opt<int64_t> prefixLen("prefix-len",
                           cl::desc("--cascade: the shared prefix's tokens"),
                           cl::init(0));
cl::opt<int64_t>
    prefixChunks("prefix-chunks",
                 cl::desc("--cascade: sequences the prefix level is cut into"),
                 cl::init(1));
} // namespace attn_run

using namespace attn_run;

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

  if (!cascadeKernels.empty())
    return runCascade(
        context, *module,
        SmallVector<std::string>(cascadeKernels.begin(), cascadeKernels.end()));

  // The kernel and its attention op (or its cache append, which has a run
  // of its own).
  func::FuncOp func;
  mlir::attn::AttentionOp op;
  mlir::attn::CacheAppendOp append;
  mlir::attn::MergeStatesOp merge;
  module->walk([&](func::FuncOp f) {
    if (func || (!funcName.empty() && f.getSymName() != funcName))
      return;
    f.walk([&](mlir::attn::CacheAppendOp a) { append = append ? append : a; });
    f.walk([&](mlir::attn::AttentionOp a) { op = op ? op : a; });
    f.walk([&](mlir::attn::MergeStatesOp m) { merge = merge ? merge : m; });
    if (op || append || merge)
      func = f;
  });
  // Names, results and op counts, as every path checks them: attn-run's
  // model covers one attention and one append a function.
  if (func && failed(mlir::attn::checkKernelFunction(func)))
    return 1;
  if (append)
    return runAppend(context, *module, func, append);
  if (merge && op)
    return fail("@" + func.getSymName() +
                ": attn-run runs an attn.merge_states alone, not with an "
                "attn.attention in the same function");
  if (merge)
    return runMerge(context, *module, func, merge);
  if (!func)
    return fail(funcName.empty()
                    ? "no func.func with an attn.attention, "
                      "attn.cache_append or attn.merge_states"
                    : "no func.func @" + funcName +
                          " with an attn.attention, attn.cache_append or "
                          "attn.merge_states");
  return runAttention(context, *module, func, op);
}
