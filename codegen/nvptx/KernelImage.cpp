//===- KernelImage.cpp - attn-to-ptx's output as data ---------------------===//

#include "codegen/nvptx/KernelImage.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

std::string KernelLaunch::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// attn.kernel " << kernel << " host=" << host << " tier=" << tier
     << " threads=" << threads << " smem=" << sharedBytes;
  for (auto [name, value] : facts)
    os << " " << name << "=" << value;
  os << " args=" << numArgs;
  return text;
}

std::vector<KernelLaunch> mlir::attn::collectLaunches(ModuleOp module) {
  std::vector<KernelLaunch> launches;
  module.walk([&](gpu::LaunchFuncOp launch) {
    auto constant = [](Value v) -> int64_t {
      APInt value;
      if (v && matchPattern(v, m_ConstantInt(&value)))
        return value.getSExtValue();
      return -1;
    };
    KernelLaunch info;
    info.kernel = launch.getKernelName().getValue().str();
    if (auto host = launch->getParentOfType<func::FuncOp>())
      info.host = host.getSymName().str();
    auto tier = launch->getAttrOfType<StringAttr>("attn.tier");
    info.tier = tier ? tier.getValue().str() : "unknown";
    info.threads = constant(launch.getBlockSizeX());
    info.sharedBytes = constant(launch.getDynamicSharedMemorySize());
    for (NamedAttribute attr : launch->getDiscardableAttrs()) {
      StringRef name = attr.getName().strref();
      if (auto value = dyn_cast<IntegerAttr>(attr.getValue()))
        if (name.consume_front("attn."))
          info.facts[name] = value.getInt();
    }
    info.numArgs = launch.getKernelOperands().size();
    launches.push_back(std::move(info));
  });
  return launches;
}

FailureOr<std::string> mlir::attn::collectPTX(ModuleOp module) {
  std::string ptx;
  int objects = 0;
  WalkResult result = module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly) {
        binary.emitError("expected PTX objects: run attn-to-ptx with "
                         "format=isa");
        return WalkResult::interrupt();
      }
      ptx += object.getObject().getValue();
      ++objects;
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (objects == 0)
    return module.emitError("found no gpu.binary: run attn-to-ptx first");
  return ptx;
}
