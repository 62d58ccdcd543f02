//===- Lowerings.cpp - what attn's fuzz targets run on a spec -------------===//

#include "fuzz/Lowerings.h"

#include "codegen/msl/MSLEmitter.h"
#include "codegen/nvptx/Passes.h"
#include "dialect/AttnDialect.h"
#include "lib/Pipelines/Pipelines.h"
#include "lib/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace attnfuzz;

namespace {

/// Everything the tools register, once per process.
const DialectRegistry &registry() {
  static DialectRegistry *registry = [] {
    registerAllPasses();
    attn::registerAttnPasses();
    attn::registerPipelines();
    attn::registerAttnNVPTXPasses();
    attn::registerNVPTXPipelines();
    auto *r = new DialectRegistry;
    r->insert<attn::AttnDialect, attn::nv::AttnNVDialect>();
    registerAllDialects(*r);
    registerAllExtensions(*r);
    registerAllGPUToLLVMIRTranslations(*r);
    registerAllToLLVMIRTranslations(*r);
    return r;
  }();
  return *registry;
}

/// Counts the error diagnostics of a context and keeps them off stderr
/// (ATTN_FUZZ_VERBOSE=1 prints them, to see what an input does).
struct ErrorCounter {
  explicit ErrorCounter(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error)
            ++errors;
          static const bool verbose = std::getenv("ATTN_FUZZ_VERBOSE");
          if (verbose)
            llvm::errs() << "attn-fuzz: diagnostic: " << diag << "\n";
          return success();
        }) {}
  int errors = 0;
  ScopedDiagnosticHandler handler;
};

[[noreturn]] void silentFailure(llvm::StringRef what, llvm::StringRef spec) {
  std::fprintf(stderr,
               "attn-fuzz: %.*s failed without an error diagnostic on:\n%.*s\n",
               (int)what.size(), what.data(), (int)spec.size(), spec.data());
  std::abort();
}

/// Runs `pipeline` on a copy of `module`; a failure must come with an error.
bool lower(ModuleOp module, ErrorCounter &counter, llvm::StringRef pipeline,
           llvm::StringRef spec) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsePassPipeline(pipeline, pm, errorStream))) {
    std::fprintf(stderr, "attn-fuzz: bad pipeline '%s': %s\n",
                 pipeline.str().c_str(), error.c_str());
    std::abort();
  }
  int before = counter.errors;
  bool ok = succeeded(pm.run(*copy));
  if (std::getenv("ATTN_FUZZ_VERBOSE"))
    llvm::errs() << "attn-fuzz: " << pipeline << (ok ? ": ok" : ": failed")
                 << "\n";
  if (!ok && counter.errors == before)
    silentFailure(pipeline, spec);
  // Every pipeline here lowers attn.attention, and the full ones
  // (attn-to-*) attn.cache_append too; one that succeeds and leaves an op
  // ran on nothing (a harness bug) or skipped it silently.
  bool left = false;
  copy->walk([&](attn::AttentionOp) { left = true; });
  if (pipeline.starts_with("attn-to-"))
    copy->walk([&](attn::CacheAppendOp) { left = true; });
  if (ok && left) {
    std::fprintf(stderr, "attn-fuzz: %.*s succeeded but left an attn op "
                 "in place, on:\n%.*s\n",
                 (int)pipeline.size(), pipeline.data(), (int)spec.size(),
                 spec.data());
    std::abort();
  }
  return ok;
}

} // namespace

Outcome attnfuzz::runLowerings(llvm::StringRef spec, unsigned ptxChoice) {
  Outcome outcome;
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  ErrorCounter counter(context);
  // MLIR's lexer relies on the NUL after its buffer, which every tool's
  // file reading provides; libFuzzer's bytes have none.
  std::string text = spec.str();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(llvm::StringRef(text), &context);
  if (!module)
    return outcome;
  // Only specs: the lowerings start from attn.attention or
  // attn.cache_append.
  bool hasAttention = false;
  module->walk([&](attn::AttentionOp) { hasAttention = true; });
  module->walk([&](attn::CacheAppendOp) { hasAttention = true; });
  if (!hasAttention)
    return outcome;
  outcome.parsed = true;

  // Pipelines without the builtin.module anchor: parsePassPipeline adds
  // them to a module pass manager (with the anchor they would nest on
  // modules inside the module, and run on nothing).
  static const char *const ptx[] = {
      "attn-to-ptx{chip=sm_90}",
      "attn-to-ptx{chip=sm_80 prefill=wmma}",
      "attn-to-ptx{chip=sm_75}",
  };
  for (const char *pipeline :
       {"func.func(attn-tile)",
        "func.func(attn-tile,attn-split-kv{num-splits=3})", "attn-to-cpu",
        ptx[ptxChoice % 3]}) {
    if (lower(*module, counter, pipeline, spec))
      ++outcome.lowered;
    else
      ++outcome.refused;
  }

  OwningOpRef<ModuleOp> copy = module->clone();
  std::string msl;
  llvm::raw_string_ostream os(msl);
  int before = counter.errors;
  if (succeeded(attn::translateToMSL(*copy, os, attn::MSLOptions()))) {
    ++outcome.lowered;
  } else {
    if (counter.errors == before)
      silentFailure("the MSL translation", spec);
    ++outcome.refused;
  }
  return outcome;
}
