//===- Package.cpp - kernel specs to device code for a library ------------===//

#include "codegen/package/Package.h"

#include "codegen/nvptx/Passes.h"
#include "lib/Transforms/FoldMods.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <utility>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::package;

namespace {

// The spec with `kernel`'s function alone.
OwningOpRef<ModuleOp> kernelModule(ModuleOp spec, const Kernel &kernel) {
  OwningOpRef<ModuleOp> module(spec.clone());
  for (auto func : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (func.getSymName() != kernel.name)
      func.erase();
  return module;
}

// The name of `kernel`'s copy with `alternative`'s schedule: its function,
// and so the host of its launches.
std::string alternativeName(const Kernel &kernel,
                            const AlternativeSchedule &alternative) {
  return kernel.name + alternative.suffix.str();
}

// Copies of `kernel`'s function beside it in `module`, one per schedule the
// selection pass offers as a small-grid alternative on `sm`; returns those.
SmallVector<AlternativeSchedule>
addAlternatives(ModuleOp module, const Kernel &kernel, StringRef chip, int sm) {
  if (!kernel.op)
    return {}; // a cache append or a merge has one kernel
  SmallVector<AlternativeSchedule> schedules =
      smallGridSchedules(kernel.op, sm, defaultPrefillTier(chip));
  if (schedules.empty())
    return {};
  auto func = cast<func::FuncOp>(module.lookupSymbol(kernel.name));
  OpBuilder builder(func);
  builder.setInsertionPointAfter(func);
  for (const AlternativeSchedule &alternative : schedules) {
    auto copy = cast<func::FuncOp>(builder.clone(*func));
    copy.setSymName(alternativeName(kernel, alternative));
    for (auto copied : copy.getOps<AttentionOp>())
      copied.setScheduleAttr(alternative.schedule);
  }
  return schedules;
}

// The contract with `max_kv_len` set: the tier that built the kernel does
// not know it is an alternative; attn-compile does.
LaunchAttr withMaxKvLen(LaunchAttr c, int64_t maxKvLen) {
  return LaunchAttr::get(
      c.getContext(), c.getRole(), c.getTier(), c.getThreads(), c.getShared(),
      c.getGrid(), c.getParams(), c.getWorkspace(), c.getWorkspaceType(),
      c.getBlockQ(), c.getGroup(), c.getProgrammatic(), maxKvLen);
}

} // namespace

FailureOr<DeviceCode> package::lowerKernel(ModuleOp spec, const Kernel &kernel,
                                           StringRef chip, StringRef cudaPath,
                                           bool runTimeDecode,
                                           StringRef plainChip) {
  func::FuncOp func = kernel.func; // emitError is not const
  DeviceCode code;
  code.chip = chip.str();
  FailureOr<int> sm = parseChip(chip);
  if (failed(sm))
    return func.emitError("attn-compile: bad target ") << chip;
  code.sm = *sm;
  code.archSpecific = chip.ends_with("a");
  OwningOpRef<ModuleOp> module = kernelModule(spec, kernel);
  SmallVector<AlternativeSchedule> alternatives;
  if (runTimeDecode) {
    // The spec's schedule is the prefill kernel's; the decode tier picks
    // its own.
    // A packed Q without max_q_len: the decode tier's Q tiles need a
    // static count, and this code runs only for a max_q_len hint of at
    // most 16 (the C functions' choice).
    module->walk([&](AttentionOp op) {
      op->setAttr(kTierAttrName, TierAttr::get(op.getContext(), Tier::Decode));
      op->removeAttr(op.getScheduleAttrName());
      if (op.isPackedQ() && !op.getMaxQLen())
        op.setMaxQLen(kDecodeMaxQueries);
    });
    code.maxQLen = kDecodeMaxQueries;
  } else {
    alternatives = addAlternatives(*module, kernel, chip, code.sm);
  }

  // attn-to-ptx starts with attn-select-tier; running it first here lets
  // attn-compile say what it chose (attn-to-ptx's run keeps the choices).
  PassManager select(module->getContext());
  AttnSelectTierOptions selectOptions;
  selectOptions.prefill = stringifyTier(defaultPrefillTier(chip)).str();
  selectOptions.sm = code.sm;
  select.addNestedPass<func::FuncOp>(createAttnFoldMods());
  select.addNestedPass<func::FuncOp>(createAttnSelectTier(selectOptions));
  if (failed(select.run(*module)))
    return failure();
  module->walk([&](AttentionOp op) {
    auto tier = op->getAttrOfType<TierAttr>(kTierAttrName);
    if (!tier || !op.getScheduleAttr())
      return;
    code.choices.push_back(
        {op->getParentOfType<func::FuncOp>().getSymName().str(),
         tier.getValue(), op.getScheduleAttr()});
  });
  // sm_90a code without wgmma is sm_90's: the library's sm_90 image serves
  // compute capability 9.0 as well (bench/kernels.mlir: 10 of its 17
  // sm_90a modules, a quarter of the build's time).
  if (code.archSpecific && !plainChip.empty()) {
    WalkResult own = module->walk([&](AttentionOp op) {
      return usesArchSpecificCode(op, chip) ? WalkResult::interrupt()
                                            : WalkResult::advance();
    });
    if (!own.wasInterrupted()) {
      code.servedBy = plainChip.str();
      return code;
    }
  }

  PassManager pm(module->getContext());
  std::string pipeline = "attn-to-ptx{chip=" + chip.str();
  if (!cudaPath.empty())
    pipeline += " cuda-path=" + cudaPath.str();
  pipeline += "}";
  if (failed(parsePassPipeline(pipeline, pm)))
    return func.emitError("attn-compile: bad pipeline ") << pipeline;
  if (failed(pm.run(*module)))
    return failure();
  FailureOr<std::string> ptx = collectPTX(*module);
  if (failed(ptx))
    return failure();
  code.ptx = *ptx;
  code.launches = collectLaunches(*module);
  if (code.launches.empty())
    return func.emitError("attn-compile: no kernel launch for @")
           << kernel.name;

  // An alternative measured to win on short sequences says up to which K/V
  // length libattnrt should prefer it (max_kv_len).
  for (const AlternativeSchedule &alternative : alternatives) {
    if (!alternative.maxKvLen)
      continue;
    std::string host = alternativeName(kernel, alternative);
    for (KernelLaunch &l : code.launches)
      if (l.contract && l.contract.getRole() == LaunchRole::Prefill &&
          l.host == host)
        l.contract = withMaxKvLen(l.contract, alternative.maxKvLen);
  }
  // The small-grid alternatives each made the same block-mask launch (its
  // blocks do not depend on the tile): the runtime runs the first.
  bool maskSeen = false;
  llvm::erase_if(code.launches, [&](const KernelLaunch &l) {
    if (!l.contract || l.contract.getRole() != LaunchRole::BlockMask)
      return false;
    return std::exchange(maskSeen, true);
  });
  // Largest block_q first; equal block_q keep the order above (64x64
  // before 64 rows on 8 warps, the runtime's last resort).
  auto order = llvm::to_vector(llvm::seq<size_t>(0, code.launches.size()));
  llvm::sort(order, [&](size_t a, size_t b) {
    int64_t qa = code.launches[a].blockQ(), qb = code.launches[b].blockQ();
    return qa != qb ? qa > qb : a < b;
  });
  std::vector<KernelLaunch> sorted;
  for (size_t i : order)
    sorted.push_back(std::move(code.launches[i]));
  code.launches = std::move(sorted);
  return code;
}

// "tile 128x64 warps 4 stages 2"; the decode tier has rows per block and
// says which instructions its tensor-core split kernel (`split`, the tier
// of its split launch) runs on, or its SIMT kernel's shape (`split`
// Decode), and whether it has a one-split form (`unsplit`).
static std::string describeSchedule(Tier tier, ScheduleAttr s,
                                    Tier split = Tier::Decode,
                                    bool unsplit = false) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (tier == Tier::Decode) {
    os << "rows " << s.getBlockQ();
    if (split != Tier::Decode)
      os << " on tensor cores ("
         << (split == Tier::WGMMA ? "wgmma" : "mma.sync") << "), "
         << s.getBlockKv() << "-key tiles";
    else
      os << ", " << s.getWarps() * 32 << " threads, unroll " << s.getUnroll()
         << ", stages " << s.getStages();
    if (unsplit)
      os << "; one split runs without the combine";
    return text;
  }
  os << "tile " << s.getBlockQ() << "x" << s.getBlockKv() << " warps "
     << s.getWarps() << " stages " << s.getStages();
  return text;
}

std::string package::describeChoices(const Kernel &kernel,
                                     const DeviceCode &code) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << kernel.name << " " << code.chip << ": ";
  if (!code.servedBy.empty()) {
    os << "no image of its own: it has no " << code.chip
       << " instruction (wgmma), so its code is " << code.servedBy
       << "'s, whose image runs there too";
    if (code.maxQLen)
      os << " (decode-tier code for q_len <= " << code.maxQLen << ")";
    return text;
  }
  if (kernel.isAppend()) {
    // The copy kernel's one launch: its tokens per block and threads.
    const KernelLaunch &launch = code.launches.front();
    int64_t tokens = 0;
    for (const LaunchTerm &term : launch.contract.getGrid())
      if (term.size == LaunchSize::NewLen)
        tokens = term.value;
    os << "copy " << tokens << " tokens x " << launch.contract.getThreads()
       << " threads per block (attn.cache_append)";
    return text;
  }
  if (kernel.isMerge()) {
    // The merge's one launch: its rows per block and threads.
    const KernelLaunch &launch = code.launches.front();
    int64_t rows = 0;
    for (const LaunchTerm &term : launch.contract.getGrid())
      if (term.size == LaunchSize::Rows)
        rows = term.value;
    os << "copy " << rows << " rows x " << launch.contract.getThreads()
       << " threads per block (attn.merge_states)";
    return text;
  }
  if (code.choices.empty())
    return text + "no attn.attention";
  const TierChoice &own = code.choices.front();
  Tier split = Tier::Decode;
  bool unsplit = false;
  for (const KernelLaunch &l : code.launches) {
    if (l.contract && l.contract.getRole() == LaunchRole::DecodeSplit)
      split = l.contract.getTier();
    unsplit |= l.contract && l.contract.getRole() == LaunchRole::DecodeUnsplit;
  }
  os << stringifyTier(own.tier) << " "
     << describeSchedule(own.tier, own.schedule, split, unsplit);
  // Why: what the spec asked for, else the selection pass's rule.
  AttentionOp op = kernel.op;
  os << " (";
  // The most queries a sequence has (a packed Q's max_q_len), if static.
  int64_t sq = op.getStaticQueryLength().value_or(ShapedType::kDynamic);
  if (op->hasAttr(kTierAttrName))
    os << "tier set in the spec";
  else if (own.tier == Tier::Decode && code.maxQLen && op.isPackedQ())
    os << "packed Q without max_q_len: launched for a max_q_len of at most "
       << code.maxQLen << " in place of the prefill kernel";
  else if (own.tier == Tier::Decode && code.maxQLen)
    os << "dynamic Sq: launched for q_len <= " << code.maxQLen
       << " in place of the prefill kernel";
  else if (own.tier == Tier::Decode && op.isPackedQ())
    os << "packed Q, max_q_len " << sq << " <= 16, " << sq * op.getGroupSize()
       << " query rows per K/V head";
  else if (own.tier == Tier::Decode)
    os << "Sq " << sq << " <= 16, " << sq * op.getGroupSize()
       << " query rows per K/V head";
  else if (ShapedType::isDynamic(sq) && op.isPackedQ())
    os << code.chip << "'s prefill tier, packed Q without max_q_len";
  else if (ShapedType::isDynamic(sq))
    os << code.chip << "'s prefill tier, dynamic Sq";
  else if (sq > 16 && op.isPackedQ())
    os << code.chip << "'s prefill tier, max_q_len " << sq << " > 16";
  else if (sq > 16)
    os << code.chip << "'s prefill tier, Sq " << sq << " > 16";
  else
    os << code.chip << "'s prefill tier, D " << op.getHeadDim() << " / Dv "
       << op.getValueHeadDim()
       << " not in the decode tier's 16-byte slices (at most 32 per key)";
  // The SIMT split kernel: why not the tensor-core one (the selection
  // pass's own rule).
  if (own.tier == Tier::Decode && split == Tier::Decode)
    if (FailureOr<int> sm = parseChip(code.chip); succeeded(sm))
      if (std::string why = whyDecodeSimt(op, *sm); !why.empty())
        os << "; SIMT split kernel: " << why;
  if (own.tier != Tier::Decode) {
    int64_t dims = std::max(op.getHeadDim(), op.getValueHeadDim());
    if (op.getScheduleAttr())
      os << "; schedule from the spec";
    else
      os << "; default tile for D" << dims << " on " << code.chip;
  }
  // The chip's default is wgmma, but not for this op: say why.
  if (own.tier == Tier::MMA &&
      defaultPrefillTier(StringRef(code.chip)) == Tier::WGMMA &&
      !op->hasAttr(kTierAttrName))
    os << "; mma, not wgmma: " << whyNotWgmma(op);
  // The wgmma tier's pipeline, as its schedule says after
  // attn-select-tier, and why where it lacks TMA or a producer: the spec's
  // own choice, else the rule that refused it (resolveWgmmaPipeline, run
  // as attn-select-tier ran it, on the spec's schedule).
  if (own.tier == Tier::WGMMA && own.schedule) {
    ScheduleAttr s = own.schedule, spec = op.getScheduleAttr();
    WgmmaPipeline rules =
        resolveWgmmaPipeline(wgmmaKernelShape(op, s), spec,
                             /*defaults=*/nullptr, [](StringRef, StringRef) {});
    auto because = [&](StringRef field, StringRef value, bool specAsked,
                       StringRef rule) {
      if (specAsked)
        return ("the spec's " + field + " = " + value).str();
      return !rule.empty() ? rule.str()
                           : ("the schedule's " + field + " = " + value).str();
    };
    bool tma = s.getKvLoad() == Transfer::Tma;
    bool qTma = s.getQLoad() == Transfer::Tma;
    bool oTma = s.getOStore() == Transfer::Tma;
    bool producer = s.getProducer() == Toggle::On;
    if (!tma)
      os << "; K/V by cp.async ("
         << because("kv_load", "threads",
                    spec && spec.getKvLoad() == Transfer::Threads,
                    rules.whyNoKvTma)
         << ")";
    else
      os << (qTma ? "; Q, K and V by TMA" : "; K/V by TMA");
    if (producer)
      os << " from a producer warpgroup";
    else if (tma)
      os << ", no producer warpgroup ("
         << because("producer", "off",
                    spec && spec.getProducer() == Toggle::Off,
                    rules.whyNoProducer)
         << ")";
    if (s.getQkAhead() == Toggle::On)
      os << ", Q K^T a tile ahead";
    if (s.getPingPong() == Toggle::On)
      os << ", consumers in ping-pong";
    if (tma && !qTma)
      os << "; Q by cp.async ("
         << because("q_load", "threads",
                    spec && spec.getQLoad() == Transfer::Threads,
                    rules.whyNoQTma)
         << ")";
    if (oTma)
      os << "; O by a TMA store";
    else if (tma)
      os << "; O by 16-byte stores ("
         << because("o_store", "threads",
                    spec && spec.getOStore() == Transfer::Threads,
                    rules.whyNoOTma)
         << ")";
  }
  os << ")";
  // The mod regions' cost, said: what attn-fold-mods turns into the
  // built-ins; a mask_mod left goes through a block mask, or where the
  // form has none every K/V tile the built-in mask leaves takes the
  // masked path.
  ModFolds folds = analyzeMods(op);
  if (folds.softcap)
    os << "; score_mod folded into softcap = "
       << llvm::format("%g", *folds.softcap);
  else if (op.hasScoreMod())
    os << "; score_mod inlined on every score";
  if (folds.mask)
    os << "; mask_mod's band folded into mask = " << *folds.mask;
  bool blockMask = llvm::any_of(code.launches, [](const KernelLaunch &l) {
    return l.contract && l.contract.getRole() == LaunchRole::BlockMask;
  });
  if (op.hasMaskMod() && !folds.maskModFolded && blockMask)
    os << "; mask_mod through a block mask (128x128 blocks in the "
          "workspace: empty ones skipped, full ones unmasked)";
  else if (op.hasMaskMod() && !folds.maskModFolded)
    os << "; mask_mod on every tile (no block mask: "
       << (own.tier == Tier::Decode ? "the decode tier"
                                    : "the tile straddles its blocks")
       << ")";
  if (code.choices.size() > 1) {
    os << "; small-grid alternatives:";
    for (auto [i, alternative] :
         llvm::enumerate(ArrayRef(code.choices).drop_front())) {
      os << (i ? ", " : " ");
      // An alternative can land on another tier (wgmma's whole
      // warpgroups): name it then.
      if (alternative.tier != own.tier)
        os << stringifyTier(alternative.tier) << " ";
      os << describeSchedule(alternative.tier, alternative.schedule);
      // Preferred to the larger tiles on short sequences (max_kv_len).
      for (const KernelLaunch &l : code.launches)
        if (l.host == alternative.function && l.contract &&
            l.contract.getMaxKvLen())
          os << " (first for kv_len <= " << l.contract.getMaxKvLen() << ")";
    }
  }
  return text;
}
