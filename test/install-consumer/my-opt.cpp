//===- my-opt.cpp - an mlir-opt that knows attn, built outside attn -------===//
//
// Registers the attn dialect and passes (from the installed attn package)
// with the few upstream dialects a spec is written in, and runs
// MlirOptMain: `my-opt spec.mlir --attn-select-tier --attn-tile`.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"
#include "dialect/AttnDialect.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnNVPTXPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, mlir::func::FuncDialect,
                  mlir::memref::MemRefDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "my-opt: attn from an installed tree\n",
                        registry));
}
