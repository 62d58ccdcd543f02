//===- Pipeline.cpp - attn-to-ptx -----------------------------------------===//
//
// L0 -> PTX for one chip: attn-tile with the tier's tile sizes, the tier's
// kernel lowering, then upstream NVVM lowering and gpu-module-to-binary.
// The result keeps the host function (with gpu.launch_func saying how to
// launch) beside a gpu.binary holding the PTX.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"

#include "lib/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
struct PTXPipelineOptions : PassPipelineOptions<PTXPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("target GPU, e.g. sm_80, sm_90a"),
                           llvm::cl::init("sm_80")};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit holding nvvm/libdevice (default: "
                     "$CUDA_ROOT, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda)")};
  Option<std::string> prefill{
      *this, "prefill",
      llvm::cl::desc("prefill tier: mma (scores in registers, sm_80+; the "
                     "default there) or wmma (the default below sm_80)"),
      llvm::cl::init("")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX), bin, fatbin"),
      llvm::cl::init("isa")};
};

LogicalResult buildPTXPipeline(OpPassManager &pm,
                               const PTXPipelineOptions &options) {
  FailureOr<int> sm = parseChip(options.chip);
  if (failed(sm)) {
    llvm::errs() << "attn-to-ptx: option 'chip' must be sm_XY (e.g. sm_80), "
                    "got '"
                 << options.chip << "'\n";
    return failure();
  }
  // The wmma tier's tile: 64 query rows (4 warps) x 32 keys. Measured on
  // an H100 (bench/RESULTS.md): 32 keys beat 64 (136 vs 114 TFLOP/s at
  // D128, 107 vs 97 at D64) because the smaller score tile and fewer
  // registers let three blocks share an SM instead of two; 128-row tiles
  // were no faster. It also keeps D = 128 inside Turing's 64 KiB. An op's
  // own schedule attribute overrides this.
  AttnTileOptions tile;
  tile.blockQ = 64;
  tile.blockKV = 32;
  std::string prefill = options.prefill;
  if (prefill.empty())
    prefill = defaultPrefillTier(*sm).str();
  if (prefill != "mma" && prefill != "wmma") {
    llvm::errs() << "attn-to-ptx: option 'prefill' must be mma or wmma, got '"
                 << prefill << "'\n";
    return failure();
  }
  AttnSelectTierOptions select;
  select.mmaTiles = prefill == "mma";
  select.sm = *sm;
  pm.addNestedPass<func::FuncOp>(createAttnSelectTier(select));
  pm.addNestedPass<func::FuncOp>(createAttnTile(tile));
  AttnToWMMAOptions wmma;
  wmma.chip = options.chip;
  wmma.softmax = prefill == "mma" ? "registers" : "shared";
  pm.addPass(createAttnToWMMA(wmma));
  pm.addPass(createAttnToSplitDecode());
  // exp2, log2 and friends become libdevice calls that gpu-module-to-binary
  // links from the toolkit: find it here rather than leave unresolved
  // externs in the PTX.
  std::string toolkit = options.cudaPath;
  if (toolkit.empty())
    toolkit = NVVM::getCUDAToolkitPath().str();
  auto hasLibDevice = [](StringRef root) {
    return !root.empty() &&
           llvm::sys::fs::exists(root + "/nvvm/libdevice/libdevice.10.bc");
  };
  if (!hasLibDevice(toolkit) && options.cudaPath.empty())
    toolkit = "/usr/local/cuda";
  if (!hasLibDevice(toolkit)) {
    llvm::errs() << "attn-to-ptx: no CUDA libdevice under '" << toolkit
                 << "/nvvm/libdevice'; pass cuda-path=<CUDA toolkit>\n";
    return failure();
  }
  // PTX ISA 8.0 is understood by CUDA 12.0+ drivers and covers sm_90a;
  // Blackwell needs 8.6 (sm_100) or 8.7 (sm_120), and CUDA 12.8+.
  const char *ptx = *sm >= 120 ? "+ptx87" : *sm >= 100 ? "+ptx86" : "+ptx80";
  std::string text =
      "canonicalize,cse,nvvm-attach-target{chip=" + options.chip +
      " features=" + ptx + " O=3},"
      "gpu.module(convert-scf-to-cf,convert-nvgpu-to-nvvm,"
      "convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts,"
      "attn-extern-dynamic-shared),"
      "gpu-module-to-binary{format=" + options.format +
      " toolkit=" + toolkit + "}";
  return parsePassPipeline(text, pm);
}
} // namespace

void mlir::attn::registerNVPTXPipelines() {
  registerPassPipeline(
      "attn-to-ptx",
      "lower attn.attention to PTX kernels (wmma tier) and their launches",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)>) -> LogicalResult {
        PTXPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        return buildPTXPipeline(pm, options);
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(PTXPipelineOptions());
      });
}
