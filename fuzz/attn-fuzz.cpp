//===- attn-fuzz.cpp - libFuzzer target over attn's passes ----------------===//
//
// Each input is a spec. One that parses and verifies goes through every
// lowering a user can ask for, each on its own copy: attn-tile alone,
// attn-tile with attn-split-kv, attn-to-cpu (to the LLVM dialect), attn-to-ptx
// (to PTX with LLVM's NVPTX backend; ptxas is not run) and the MSL
// translation. A finding is a crash, a sanitizer report, or a lowering that
// fails without saying why (no error diagnostic): attn's rule is that bad
// input gets a clear error.
//
// Built with -DATTN_FUZZ=ON (clang only); scripts/fuzz.sh runs it with the
// seed corpus and dictionary.
//
//===----------------------------------------------------------------------===//

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
    r->insert<attn::AttnDialect>();
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
void lower(ModuleOp module, ErrorCounter &counter, llvm::StringRef pipeline,
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
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Specs are small; long inputs only slow the search down.
  if (size > 8192)
    return 0;
  llvm::StringRef spec(reinterpret_cast<const char *>(data), size);
  // MLIR 22's parser crashes on dense arrays of `index` (README, "Known
  // issues"); no attn code is involved, so such inputs are not findings.
  std::string squeezed;
  for (char c : spec)
    if (!llvm::isSpace(c))
      squeezed += c;
  if (llvm::StringRef(squeezed).contains("array<index"))
    return 0;
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  ErrorCounter counter(context);
  // MLIR's lexer relies on the NUL after its buffer, which every tool's
  // file reading provides; libFuzzer's bytes have none.
  std::string text = spec.str();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(llvm::StringRef(text), &context);
  if (!module)
    return 0;
  // Only specs: the lowerings start from attn.attention.
  bool hasAttention = false;
  module->walk([&](attn::AttentionOp) { hasAttention = true; });
  if (!hasAttention)
    return 0;

  lower(*module, counter, "builtin.module(func.func(attn-tile))", spec);
  lower(*module, counter,
        "builtin.module(func.func(attn-tile,attn-split-kv{num-splits=3}))",
        spec);
  lower(*module, counter, "builtin.module(attn-to-cpu)", spec);
  // One NVIDIA target per input, chosen by its length: the NVPTX backend is
  // the slow part, and every tier still gets inputs.
  static const char *const ptx[] = {
      "builtin.module(attn-to-ptx{chip=sm_90})",
      "builtin.module(attn-to-ptx{chip=sm_80 prefill=wmma})",
      "builtin.module(attn-to-ptx{chip=sm_75})",
  };
  lower(*module, counter, ptx[size % 3], spec);

  OwningOpRef<ModuleOp> copy = module->clone();
  std::string msl;
  llvm::raw_string_ostream os(msl);
  int before = counter.errors;
  if (failed(attn::translateToMSL(*copy, os, attn::MSLOptions())) &&
      counter.errors == before)
    silentFailure("the MSL translation", spec);
  return 0;
}
