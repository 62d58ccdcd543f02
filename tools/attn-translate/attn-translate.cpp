//===- attn-translate.cpp - attn's artifacts out of MLIR ------------------===//
//
// mlir-translate for attn. `--attn-ptx` takes a module after attn-to-ptx
// and writes the PTX of its kernels, preceded by one comment line per
// kernel launch that says how to launch it, from the launch's contract
// (#attn.launch), on one line:
//
//   // attn.kernel prefill_wmma host=prefill tier=wmma threads=128
//   //   smem=67584 block_q=64 group=4 args=5 role=prefill
//   //   grid=[ceildiv(group_rows,64),kv_heads,batch] params=[q,k,v,o,lse]
//
//   attn-opt spec.mlir --attn-to-ptx=chip=sm_80 | attn-translate --attn-ptx
//
// `--attn-to-msl` takes an L0 spec and writes Metal Shading Language (the
// msl tier, codegen/msl), launch facts in a comment block at the top and,
// with --msl-launch-json=FILE, as JSON:
//
//   attn-translate --attn-to-msl spec.mlir --msl-kernel=decode -o spec.metal
//
//===----------------------------------------------------------------------===//

#include "codegen/msl/MSLEmitter.h"
#include "codegen/nvptx/KernelImage.h"
#include "dialect/AttnDialect.h"
#include "tools/ToolOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

static LogicalResult writePTX(Operation *op, raw_ostream &os) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("--attn-ptx expects a builtin.module");
  FailureOr<std::string> ptx = attn::collectPTX(module);
  if (failed(ptx))
    return failure();
  for (const attn::KernelLaunch &launch : attn::collectLaunches(module))
    os << launch.describe() << "\n";
  os << *ptx;
  return success();
}

static llvm::cl::opt<std::string> mslKernel(
    "msl-kernel",
    llvm::cl::desc("--attn-to-msl kernel: auto (vector when G * Sq <= 8 "
                   "with a static Sq), prefill, vector (MLX-style decode, "
                   "1024 threads a row) or decode (simdgroup_matrix decode)"),
    llvm::cl::init("auto"));
static llvm::cl::opt<int64_t> mslSplits(
    "msl-splits",
    llvm::cl::desc("--attn-to-msl split-K: -1 by Sk (vector decode: two "
                   "passes from 1024 keys), 0 for one pass, N >= 1 for a "
                   "partial kernel over N K/V splits and a merge kernel"),
    llvm::cl::init(-1));
static llvm::cl::opt<std::string> mslLaunchJson(
    "msl-launch-json",
    llvm::cl::desc("--attn-to-msl: also write the launch facts as JSON to "
                   "this file"),
    llvm::cl::init(""));

static LogicalResult writeMSL(Operation *op, raw_ostream &os) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("--attn-to-msl expects a builtin.module");
  attn::MSLOptions options;
  options.kernel = mslKernel;
  options.splits = mslSplits;
  if (mslLaunchJson.empty())
    return attn::translateToMSL(module, os, options);
  std::string json;
  llvm::raw_string_ostream jsonOs(json);
  if (failed(attn::translateToMSL(module, os, options, &jsonOs)))
    return failure();
  std::string error;
  auto file = mlir::openOutputFile(mslLaunchJson, &error);
  if (!file)
    return module.emitError() << "cannot write '" << mslLaunchJson
                              << "': " << error;
  file->os() << json;
  file->keep();
  return success();
}

static llvm::cl::OptionCategory attnTranslateCategory("attn-translate options");

int main(int argc, char **argv) {
  attn::tools::setUpToolOptions(attnTranslateCategory);
  TranslateFromMLIRRegistration ptx(
      "attn-ptx", "write the PTX of attn's kernels with their launch facts",
      writePTX, [](DialectRegistry &registry) {
        registry.insert<attn::AttnDialect>();
        registerAllDialects(registry);
        registerAllExtensions(registry);
      });
  TranslateFromMLIRRegistration msl(
      "attn-to-msl",
      "write Metal Shading Language kernels (msl tier) for an L0 attn spec",
      writeMSL, [](DialectRegistry &registry) {
        registry.insert<attn::AttnDialect>();
        registerAllDialects(registry);
        registerAllExtensions(registry);
      });
  return failed(mlirTranslateMain(argc, argv, "attn translation tool"));
}
