//===- Package.cpp - kernel specs to device code for a library ------------===//

#include "codegen/package/Package.h"

#include "codegen/nvptx/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

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

// Copies of `kernel`'s function beside it in `module`, one per schedule the
// selection pass offers as a small-grid alternative on `sm`.
void addAlternatives(ModuleOp module, const Kernel &kernel, int sm) {
  SmallVector<AlternativeSchedule> schedules =
      smallGridSchedules(kernel.op, sm);
  if (schedules.empty())
    return;
  auto func = cast<func::FuncOp>(module.lookupSymbol(kernel.name));
  OpBuilder builder(func);
  builder.setInsertionPointAfter(func);
  for (const AlternativeSchedule &alternative : schedules) {
    auto copy = cast<func::FuncOp>(builder.clone(*func));
    copy.setSymName(kernel.name + alternative.suffix.str());
    for (auto copied : copy.getOps<AttentionOp>())
      copied.setScheduleAttr(alternative.schedule);
  }
}

} // namespace

FailureOr<DeviceCode> package::lowerKernel(ModuleOp spec, const Kernel &kernel,
                                           StringRef chip, StringRef cudaPath) {
  func::FuncOp func = kernel.func; // emitError is not const
  DeviceCode code;
  code.chip = chip.str();
  FailureOr<int> sm = parseChip(chip);
  if (failed(sm))
    return func.emitError("attn-compile: bad target ") << chip;
  code.sm = *sm;
  code.archSpecific = chip.ends_with("a");
  OwningOpRef<ModuleOp> module = kernelModule(spec, kernel);
  addAlternatives(*module, kernel, code.sm);

  PassManager pm(module->getContext());
  std::string pipeline = "attn-to-ptx{chip=" + chip.str();
  if (!cudaPath.empty())
    pipeline += " cuda-path=" + cudaPath.str();
  pipeline += "}";
  if (failed(parsePassPipeline(pipeline, pm)))
    return func.emitError("attn-compile: bad pipeline ") << pipeline;
  if (failed(pm.run(*module)))
    return func.emitError("attn-compile: @")
           << kernel.name << " cannot be compiled for " << chip
           << " (see above)";
  FailureOr<std::string> ptx = collectPTX(*module);
  if (failed(ptx))
    return failure();
  code.ptx = *ptx;
  code.launches = collectLaunches(*module);
  if (code.launches.empty())
    return func.emitError("attn-compile: no kernel launch for @")
           << kernel.name;

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
