//===- attn-translate.cpp - attn's artifacts out of MLIR ------------------===//
//
// mlir-translate for attn. `--attn-ptx` takes a module after attn-to-ptx
// and writes the PTX of its kernels, preceded by one comment line per
// kernel launch that says how to launch it:
//
//   // attn.kernel prefill_wmma host=prefill tier=wmma threads=128
//   //   smem=76800 block_q=64 group=4 args=5
//
//   attn-opt spec.mlir --attn-to-ptx=chip=sm_80 | attn-translate --attn-ptx
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

static LogicalResult writePTX(Operation *op, raw_ostream &os) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("--attn-ptx expects a builtin.module");
  int kernels = 0;
  module.walk([&](gpu::LaunchFuncOp launch) {
    auto intAttr = [&](StringRef name) -> int64_t {
      auto attr = launch->getAttrOfType<IntegerAttr>(name);
      return attr ? attr.getInt() : -1;
    };
    auto constant = [&](Value v) -> int64_t {
      APInt value;
      if (matchPattern(v, m_ConstantInt(&value)))
        return value.getSExtValue();
      return -1;
    };
    auto tier = launch->getAttrOfType<StringAttr>("attn.tier");
    os << "// attn.kernel " << launch.getKernelName().getValue()
       << " host=" << launch->getParentOfType<func::FuncOp>().getSymName()
       << " tier=" << (tier ? tier.getValue() : "unknown")
       << " threads=" << constant(launch.getBlockSizeX())
       << " smem=" << constant(launch.getDynamicSharedMemorySize())
       << " block_q=" << intAttr("attn.block_q")
       << " group=" << intAttr("attn.group")
       << " args=" << launch.getKernelOperands().size() << "\n";
    ++kernels;
  });
  int objects = 0;
  WalkResult result = module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly) {
        binary.emitError("--attn-ptx needs PTX objects: run attn-to-ptx "
                         "with format=isa");
        return WalkResult::interrupt();
      }
      os << object.getObject().getValue();
      ++objects;
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (objects == 0)
    return module.emitError("--attn-ptx found no gpu.binary: run attn-opt "
                            "--attn-to-ptx first"),
           failure();
  return success();
}

int main(int argc, char **argv) {
  TranslateFromMLIRRegistration ptx(
      "attn-ptx", "write the PTX of attn's kernels with their launch facts",
      writePTX, [](DialectRegistry &registry) {
        registry.insert<attn::AttnDialect>();
        registerAllDialects(registry);
        registerAllExtensions(registry);
      });
  return failed(mlirTranslateMain(argc, argv, "attn translation tool"));
}
