//===- ModsHost.cpp - a spec's mod regions for hosts without MLIR ---------===//

#include "ModsHost.h"

#include "ModEval.h"
#include "dialect/AttnDialect.h"
#include "dialect/AttnMods.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

using namespace mlir;

namespace attn::modshost {

namespace {
/// What the callbacks keep alive.
struct Loaded {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<modeval::Evaluator> score, mask;
};
} // namespace

bool load(const std::string &path, const std::string &function,
          const std::vector<Capture> &captures, Mods &out, std::string &error) {
  auto loaded = std::make_shared<Loaded>();
  MLIRContext &context = loaded->context;
  context.loadDialect<mlir::attn::AttnDialect, func::FuncDialect,
                      arith::ArithDialect, math::MathDialect,
                      memref::MemRefDialect>();
  std::string diagnostics;
  llvm::raw_string_ostream diagOs(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagOs << d << "\n";
    return success();
  });
  loaded->module = parseSourceFile<ModuleOp>(path, &context);
  if (!loaded->module) {
    error = "cannot parse " + path + ": " + diagnostics;
    return false;
  }
  auto func = loaded->module->lookupSymbol<func::FuncOp>(function);
  mlir::attn::AttentionOp op;
  if (func)
    func.walk([&](mlir::attn::AttentionOp a) { op = a; });
  if (!op) {
    error = "no function '" + function + "' holding attn.attention in " + path;
    return false;
  }
  if (op.getCaptures().size() != captures.size()) {
    error = "the spec has " + std::to_string(op.getCaptures().size()) +
            " captures, the host drew " + std::to_string(captures.size());
    return false;
  }
  std::vector<modeval::Capture> data;
  for (const Capture &c : captures)
    data.push_back({c.shape, c.data});
  for (auto [region, kind, eval] :
       {std::tuple<Region *, mlir::attn::ModKind,
                   std::unique_ptr<modeval::Evaluator> *>{
            &op.getScoreMod(), mlir::attn::ModKind::Score, &loaded->score},
        {&op.getMaskMod(), mlir::attn::ModKind::Mask, &loaded->mask}}) {
    if (region->empty())
      continue;
    *eval = modeval::Evaluator::compile(
        *region, mlir::attn::numPositionArgs(kind), data, error);
    if (!*eval) {
      error = mlir::attn::modName(kind).str() + ": " + error;
      return false;
    }
  }
  out = Mods();
  if (loaded->score)
    out.score = [loaded](double s, int64_t b, int64_t h, int64_t i, int64_t j) {
      double args[] = {s, double(b), double(h), double(i), double(j)};
      return (*loaded->score)(args);
    };
  if (loaded->mask)
    out.mask = [loaded](int64_t b, int64_t h, int64_t i, int64_t j) {
      double args[] = {double(b), double(h), double(i), double(j)};
      return (*loaded->mask)(args) != 0;
    };
  return true;
}

} // namespace attn::modshost
