//===- KernelImage.cpp - attn-to-ptx's output as data ---------------------===//

#include "codegen/nvptx/KernelImage.h"
#include "codegen/nvptx/LaunchContract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

std::string KernelLaunch::tierName() const {
  if (!contract)
    return "unknown";
  switch (contract.getRole()) {
  case LaunchRole::Prefill:
    return stringifyTier(contract.getTier()).str();
  case LaunchRole::DecodeSplit:
    return "decode-split";
  case LaunchRole::DecodeCombine:
    return "decode-combine";
  case LaunchRole::DecodeUnsplit:
    return "decode-unsplit";
  case LaunchRole::Append:
    return "append";
  case LaunchRole::Merge:
    return "merge";
  case LaunchRole::BlockMask:
    return "block-mask";
  }
  return "unknown";
}

// "[ceildiv(group_rows,64),kv_heads,batch]": the contract's dimensions,
// without spaces, so the line splits into words at spaces.
static void printDims(raw_ostream &os, ArrayRef<LaunchTerm> terms) {
  os << "[";
  for (auto [i, term] : llvm::enumerate(terms)) {
    if (i)
      os << (term.dim == terms[i - 1].dim ? "*" : ",");
    if (term.isConstant())
      os << term.value;
    else if (term.value == 1)
      os << stringifyLaunchSize(term.size);
    else
      os << "ceildiv(" << stringifyLaunchSize(term.size) << "," << term.value
         << ")";
  }
  os << "]";
}

std::string KernelLaunch::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// attn.kernel " << kernel << " host=" << host
     << " tier=" << tierName();
  if (!contract) {
    os << " args=" << numArgs;
    return text;
  }
  os << " threads=" << contract.getThreads()
     << " smem=" << contract.getShared();
  if (contract.getBlockQ())
    os << " block_q=" << contract.getBlockQ();
  if (contract.getGroup())
    os << " group=" << contract.getGroup();
  // The combine's rows per block, under the name test/gpu reads.
  if (contract.getRole() == LaunchRole::DecodeCombine)
    os << " rows_per_block=" << contract.getGridDim(0).front().value;
  if (contract.getProgrammatic())
    os << " programmatic=1";
  if (contract.getMaxKvLen())
    os << " max_kv_len=" << contract.getMaxKvLen();
  os << " args=" << numArgs << " role=" << stringifyLaunchRole(contract.getRole())
     << " grid=";
  printDims(os, contract.getGrid());
  os << " params=[";
  llvm::interleave(
      contract.getParams(), os,
      [&](const LaunchParam &p) {
        if (p.kind == LaunchParamKind::Workspace)
          os << "workspace";
        else if (p.kind == LaunchParamKind::Capture)
          os << "capture(" << p.index << ")";
        else if (p.kind == LaunchParamKind::TensorMap)
          os << "tensor_map(" << stringifyLaunchOperand(p.operand) << ")";
        else
          os << stringifyLaunchOperand(p.operand);
      },
      ",");
  os << "]";
  if (contract.hasWorkspace()) {
    os << " workspace=";
    printDims(os, contract.getWorkspace());
    os << ":" << contract.getWorkspaceType();
  }
  return text;
}

std::vector<KernelLaunch> mlir::attn::collectLaunches(ModuleOp module) {
  std::vector<KernelLaunch> launches;
  module.walk([&](gpu::LaunchFuncOp launch) {
    KernelLaunch info;
    info.kernel = launch.getKernelName().getValue().str();
    if (auto host = launch->getParentOfType<func::FuncOp>())
      info.host = host.getSymName().str();
    info.contract = getLaunchContract(launch);
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
