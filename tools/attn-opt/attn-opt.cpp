//===- attn-opt.cpp - mlir-opt with the attn dialect and passes -----------===//
//
// Registers every upstream dialect, pass and extension the attn pipelines use
// (gpu, nvgpu, nvvm, llvm, scf, ...) together with attn's own.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"
#include "dialect/AttnDialect.h"
#include "lib/Pipelines/Pipelines.h"
#include "lib/Transforms/Passes.h"
#include "tools/ToolOptions.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

// attn-opt has no options of its own; MlirOptMain registers mlir-opt's.
static llvm::cl::OptionCategory attnOptCategory("attn-opt options");

int main(int argc, char **argv) {
  mlir::attn::tools::setUpToolOptions(attnOptCategory);
  mlir::registerAllPasses();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerPipelines();
  mlir::attn::registerAttnNVPTXPasses();
  mlir::attn::registerNVPTXPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, mlir::attn::nv::AttnNVDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates GPU modules to LLVM IR in-process.
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::registerAllToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn optimizer driver\n", registry));
}
