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
                     "default there), wmma (the default below sm_80) or "
                     "wgmma (sm_90a)"),
      llvm::cl::init("")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX), bin, fatbin"),
      llvm::cl::init("isa")};
  Option<std::string> defaultSchedule{
      *this, "default-schedule",
      llvm::cl::desc("attn-select-tier's default-schedule: an "
                     "#attn.schedule<...> whose pipeline fields are the "
                     "defaults of the ops that leave them auto (for A/B "
                     "runs, e.g. #attn.schedule<producer=off>)"),
      llvm::cl::init("")};
  Option<bool> decodeTensorCores{
      *this, "decode-tensor-cores",
      llvm::cl::desc("attn-select-tier's decode-tensor-cores: f16/bf16 "
                     "decode on sm_90+ on the tensor-core split kernel "
                     "(false: SIMT up to 8 rows a K/V head)"),
      llvm::cl::init(true)};
  Option<int64_t> decodeTensorCoreStages{
      *this, "decode-tensor-core-stages",
      llvm::cl::desc("attn-select-tier's decode-tensor-core-stages: K/V "
                     "tiles in flight in the tensor-core split kernel"),
      llvm::cl::init(kDecodeTensorCoreStages)};
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
  std::string prefill = options.prefill;
  if (prefill.empty())
    prefill = stringifyTier(defaultPrefillTier(options.chip)).str();
  std::optional<Tier> tier = symbolizeTier(prefill);
  if (!tier || *tier == Tier::Decode || *tier == Tier::Copy) {
    llvm::errs() << "attn-to-ptx: option 'prefill' must be mma, wmma or "
                    "wgmma, got '"
                 << prefill << "'\n";
    return failure();
  }
  if (*tier == Tier::WGMMA && !hasWgmma(options.chip)) {
    llvm::errs() << "attn-to-ptx: the wgmma tier needs chip=sm_90a (wgmma "
                    "is arch-specific); got "
                 << options.chip << "\n";
    return failure();
  }
  if (*sm < minimumSm(*tier)) {
    llvm::errs() << "attn-to-ptx: the " << prefill << " tier needs sm_"
                 << minimumSm(*tier) << " or newer; got " << options.chip
                 << "\n";
    return failure();
  }
  // The selection pass chooses every schedule field; attn-tile and the
  // tiers read them from the ops.
  AttnSelectTierOptions select;
  select.prefill = prefill;
  select.sm = *sm;
  select.defaultSchedule = options.defaultSchedule;
  select.decodeTensorCores = options.decodeTensorCores;
  select.decodeTensorCoreStages = options.decodeTensorCoreStages;
  pm.addPass(createAttnCheckKernels());
  // Cache appends get their copy kernels first; the attention ops of the
  // module go on to the tiers.
  pm.addPass(createAttnToCopy());
  // Regions the built-ins can say become attributes first, so the tiers
  // skip the tiles they hide (lib/Transforms/FoldMods.h).
  pm.addNestedPass<func::FuncOp>(createAttnFoldMods());
  pm.addNestedPass<func::FuncOp>(createAttnSelectTier(select));
  pm.addNestedPass<func::FuncOp>(createAttnTile());
  // Both prefill tiers: the option picks the default, but a spec may name
  // the other (attn.tier); each pass lowers only the nests marked for it.
  pm.addPass(createAttnToMMA(AttnToMMAOptions{options.chip}));
  pm.addPass(createAttnToWMMA(AttnToWMMAOptions{options.chip}));
  // The wgmma tier reads its pipeline from the nests' schedules, which
  // attn-select-tier has filled in.
  pm.addPass(createAttnToWGMMA(AttnToWGMMAOptions{options.chip}));
  pm.addPass(createAttnToDecode(AttnToDecodeOptions{options.chip}));
  // The tiers' tile instructions (attn_nv) become nvvm, nvgpu and inline
  // PTX before anything folds them.
  pm.addPass(createAttnNVToNVVM());
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
  StringRef ptx = ptxFeatures(*sm);
  std::string text =
      "canonicalize,cse,nvvm-attach-target{chip=" + options.chip +
      " features=" + ptx.str() + " O=3},"
      "gpu.module(convert-scf-to-cf,convert-nvgpu-to-nvvm,"
      "convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,"
      "reconcile-unrealized-casts,"
      "attn-extern-dynamic-shared,attn-tensor-map-params),"
      "gpu-module-to-binary{format=" + options.format +
      " toolkit=" + toolkit + "}";
  return parsePassPipeline(text, pm);
}
} // namespace

void mlir::attn::registerNVPTXPipelines() {
  registerPassPipeline(
      "attn-to-ptx",
      "lower attn.attention to PTX kernels (decode, mma, wgmma or wmma "
      "tier) and their launches",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)>) -> LogicalResult {
        PTXPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        return buildPTXPipeline(pm, options);
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(PTXPipelineOptions());
      });
}
