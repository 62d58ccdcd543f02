//===- LaunchContract.cpp - #attn.launch for the NVIDIA tiers -------------===//

#include "codegen/nvptx/LaunchContract.h"

#include "codegen/nvptx/BlockMask.h"

#include "lib/Transforms/L1Nest.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::attn;

LaunchOperands LaunchOperands::of(const L1Nest &nest) {
  L1Nest n = nest; // the op accessors are not const
  LaunchOperands operands;
  operands.kScale = n.loadK.getScale() != nullptr;
  operands.vScale = n.loadV.getScale() != nullptr;
  operands.blockTable = n.loadK.getBlockTable() != nullptr;
  operands.kvLens = n.kvLens != nullptr;
  operands.cuSeqlensQ = n.cuSeqlensQ != nullptr;
  operands.cuSeqlensK = n.cuSeqlensK != nullptr;
  operands.lse = n.storeLse != nullptr;
  operands.sinks = n.loadSink != nullptr;
  operands.captures = n.captures.size();
  operands.vFromK = n.vFromK();
  return operands;
}

// q, k, v, [k_scale], [v_scale], [cu_seqlens_q], [cu_seqlens_k],
// [block_table], [kv_lens], captures: what every kernel of a nest reads
// (inputOperands' order).
static void addInputs(SmallVectorImpl<LaunchParam> &params,
                      LaunchOperands operands) {
  const LaunchOperand v = operands.vFromK ? LaunchOperand::K : LaunchOperand::V;
  for (LaunchOperand o : {LaunchOperand::Q, LaunchOperand::K, v})
    params.push_back(LaunchParam::memref(o));
  if (operands.kScale)
    params.push_back(LaunchParam::memref(LaunchOperand::KScale));
  if (operands.vScale)
    params.push_back(LaunchParam::memref(
        operands.vFromK ? LaunchOperand::KScale : LaunchOperand::VScale));
  if (operands.cuSeqlensQ)
    params.push_back(LaunchParam::memref(LaunchOperand::CuSeqlensQ));
  if (operands.cuSeqlensK)
    params.push_back(LaunchParam::memref(LaunchOperand::CuSeqlensK));
  if (operands.blockTable)
    params.push_back(LaunchParam::memref(LaunchOperand::BlockTable));
  if (operands.kvLens)
    params.push_back(LaunchParam::memref(LaunchOperand::KVLens));
  for (unsigned i = 0; i < operands.captures; ++i)
    params.push_back(LaunchParam::capture(i));
}

// [sinks], o, [lse]: what a launch that normalizes O reads and writes.
static void addOutputs(SmallVectorImpl<LaunchParam> &params,
                       LaunchOperands operands) {
  if (operands.sinks)
    params.push_back(LaunchParam::memref(LaunchOperand::Sinks));
  params.push_back(LaunchParam::memref(LaunchOperand::O));
  if (operands.lse)
    params.push_back(LaunchParam::memref(LaunchOperand::Lse));
}

// The decode tier's workspace: per query row and split, Dv partial sums,
// the running max and the running sum.
static SmallVector<LaunchTerm> workspaceShape(MemRefType workspace) {
  return {LaunchTerm::of(0, LaunchSize::Rows),
          LaunchTerm::of(1, LaunchSize::Splits),
          LaunchTerm::constant(2, workspace.getDimSize(2))};
}

// The block mask: [batch' * kv_heads', ceildiv(q_len, N), 2,
// ceildiv(kv_len, N)] i32 (BlockMask.h).
static SmallVector<LaunchTerm> blockMaskShape(bool perBatch, bool perHead,
                                              int64_t block) {
  SmallVector<LaunchTerm> shape;
  if (perBatch)
    shape.push_back(LaunchTerm::of(0, LaunchSize::Batch));
  if (perHead)
    shape.push_back(LaunchTerm::of(0, LaunchSize::KVHeads));
  if (shape.empty())
    shape.push_back(LaunchTerm::constant(0, 1));
  shape.append({LaunchTerm::of(1, LaunchSize::QLen, block),
                LaunchTerm::constant(2, 2),
                LaunchTerm::of(3, LaunchSize::KVLen, block)});
  return shape;
}

LaunchAttr mlir::attn::blockMaskLaunch(const L1Nest &nest, int64_t threads,
                                       bool perBatch, bool perHead,
                                       int64_t block) {
  LaunchOperands operands = LaunchOperands::of(nest);
  SmallVector<LaunchParam> params;
  addInputs(params, operands);
  params.push_back(LaunchParam::workspace());
  MLIRContext *ctx = nest.forall->getContext();
  SmallVector<LaunchTerm> grid{LaunchTerm::of(0, LaunchSize::QLen, block),
                               perHead ? LaunchTerm::of(1, LaunchSize::KVHeads)
                                       : LaunchTerm::constant(1, 1),
                               perBatch ? LaunchTerm::of(2, LaunchSize::Batch)
                                        : LaunchTerm::constant(2, 1)};
  return LaunchAttr::get(ctx, LaunchRole::BlockMask, Tier::MMA, threads,
                         /*shared=*/0, grid, params,
                         blockMaskShape(perBatch, perHead, block),
                         IntegerType::get(ctx, 32), /*blockQ=*/0,
                         /*group=*/0, /*programmatic=*/false, /*maxKvLen=*/0);
}

// One block per Q tile (prefillLaunch), in `role`.
static LaunchAttr tileLaunch(LaunchRole role, const L1Nest &nest, Tier tier,
                             int64_t threads, int64_t sharedBytes,
                             int64_t blockQ, int64_t group,
                             std::optional<std::pair<bool, bool>> blockMask,
                             ArrayRef<LaunchOperand> tensorMaps) {
  LaunchOperands operands = LaunchOperands::of(nest);
  SmallVector<LaunchParam> params;
  for (LaunchOperand o : tensorMaps)
    params.push_back(LaunchParam::tensorMap(o));
  addInputs(params, operands);
  addOutputs(params, operands);
  SmallVector<LaunchTerm> workspace;
  Type workspaceType;
  if (blockMask) {
    params.push_back(LaunchParam::workspace());
    workspace =
        blockMaskShape(blockMask->first, blockMask->second, nvptx::kMaskBlock);
    workspaceType = IntegerType::get(nest.forall->getContext(), 32);
  }
  SmallVector<LaunchTerm> grid{LaunchTerm::of(0, LaunchSize::GroupRows, blockQ),
                               LaunchTerm::of(1, LaunchSize::KVHeads),
                               LaunchTerm::of(2, LaunchSize::Batch)};
  // A packed Q's tiles, sequence after sequence, with no padding tiles.
  if (operands.cuSeqlensQ)
    grid = {LaunchTerm::of(0, LaunchSize::PackedQTiles, blockQ),
            LaunchTerm::of(1, LaunchSize::KVHeads), LaunchTerm::constant(2, 1)};
  return LaunchAttr::get(nest.forall->getContext(), role, tier, threads,
                         sharedBytes, grid, params, workspace, workspaceType,
                         blockQ, group,
                         /*programmatic=*/false, /*maxKvLen=*/0);
}

LaunchAttr
mlir::attn::prefillLaunch(const L1Nest &nest, Tier tier, int64_t threads,
                          int64_t sharedBytes, int64_t blockQ, int64_t group,
                          std::optional<std::pair<bool, bool>> blockMask,
                          ArrayRef<LaunchOperand> tensorMaps) {
  return tileLaunch(LaunchRole::Prefill, nest, tier, threads, sharedBytes,
                    blockQ, group, blockMask, tensorMaps);
}

LaunchAttr mlir::attn::decodeUnsplitLaunch(const L1Nest &nest, Tier tier,
                                           int64_t threads, int64_t sharedBytes,
                                           int64_t blockQ, int64_t group) {
  return tileLaunch(LaunchRole::DecodeUnsplit, nest, tier, threads, sharedBytes,
                    blockQ, group, std::nullopt, {});
}

int64_t mlir::attn::packedQTiles(const L1Nest &nest) {
  scf::ForallOp forall = nest.forall; // the accessors are not const
  std::optional<int64_t> tiles =
      getConstantIntValue(forall.getMixedUpperBound()[2]);
  return tiles.value_or(0);
}

LaunchAttr mlir::attn::decodeSplitLaunch(const L1Nest &nest, Tier tier,
                                         int64_t threads, int64_t sharedBytes,
                                         int64_t blockQ, int64_t group,
                                         MemRefType workspace) {
  LaunchOperands operands = LaunchOperands::of(nest);
  SmallVector<LaunchParam> params;
  addInputs(params, operands);
  params.push_back(LaunchParam::workspace());
  SmallVector<LaunchTerm> grid{
      LaunchTerm::of(0, LaunchSize::Splits),
      LaunchTerm::of(1, LaunchSize::KVHeads),
      LaunchTerm::of(2, LaunchSize::Batch),
      LaunchTerm::of(2, LaunchSize::GroupRows, blockQ)};
  // A packed Q: the Q tiles of max_q_len queries a sequence (static).
  if (operands.cuSeqlensQ)
    grid.back() = LaunchTerm::constant(2, packedQTiles(nest));
  return LaunchAttr::get(nest.forall->getContext(), LaunchRole::DecodeSplit,
                         tier, threads, sharedBytes, grid, params,
                         workspaceShape(workspace), workspace.getElementType(),
                         blockQ, group,
                         /*programmatic=*/false, /*maxKvLen=*/0);
}

LaunchAttr mlir::attn::decodeCombineLaunch(const L1Nest &nest, int64_t threads,
                                           int64_t sharedBytes,
                                           int64_t rowsPerBlock,
                                           MemRefType workspace,
                                           bool programmatic) {
  LaunchOperands operands = LaunchOperands::of(nest);
  SmallVector<LaunchParam> params{LaunchParam::workspace()};
  addOutputs(params, operands);
  LaunchTerm grid[] = {LaunchTerm::of(0, LaunchSize::Rows, rowsPerBlock),
                       LaunchTerm::constant(1, 1), LaunchTerm::constant(2, 1)};
  return LaunchAttr::get(nest.forall->getContext(), LaunchRole::DecodeCombine,
                         Tier::Decode, threads, sharedBytes, grid, params,
                         workspaceShape(workspace), workspace.getElementType(),
                         /*blockQ=*/0,
                         /*group=*/0, programmatic, /*maxKvLen=*/0);
}

LaunchAttr mlir::attn::appendLaunch(CacheAppendOp op, int64_t threads,
                                    int64_t tokensPerBlock) {
  SmallVector<LaunchParam> params{LaunchParam::memref(LaunchOperand::KNew),
                                  LaunchParam::memref(LaunchOperand::VNew)};
  if (op.getBlockTable())
    params.push_back(LaunchParam::memref(LaunchOperand::BlockTable));
  if (op.getKvLens())
    params.push_back(LaunchParam::memref(LaunchOperand::KVLens));
  if (op.getNewLens())
    params.push_back(LaunchParam::memref(LaunchOperand::NewLens));
  if (op.getSlotMapping())
    params.push_back(LaunchParam::memref(LaunchOperand::SlotMapping));
  params.push_back(LaunchParam::memref(LaunchOperand::K));
  params.push_back(LaunchParam::memref(LaunchOperand::V));
  // The slot-mapping form has one "sequence": new_len is its T tokens.
  LaunchTerm grid[] = {LaunchTerm::of(0, LaunchSize::NewLen, tokensPerBlock),
                       LaunchTerm::of(1, LaunchSize::KVHeads),
                       op.isSlotMapped()
                           ? LaunchTerm::constant(2, 1)
                           : LaunchTerm::of(2, LaunchSize::Batch)};
  return LaunchAttr::get(op.getContext(), LaunchRole::Append, Tier::Copy,
                         threads, /*shared=*/0, grid, params, {}, Type(),
                         /*blockQ=*/0, /*group=*/0, /*programmatic=*/false,
                         /*maxKvLen=*/0);
}

LaunchAttr mlir::attn::mergeLaunch(MergeStatesOp op, int64_t threads,
                                   int64_t rowsPerBlock) {
  SmallVector<LaunchParam> params{LaunchParam::memref(LaunchOperand::OParts),
                                  LaunchParam::memref(LaunchOperand::LseParts),
                                  LaunchParam::memref(LaunchOperand::O)};
  if (op.getLse())
    params.push_back(LaunchParam::memref(LaunchOperand::Lse));
  LaunchTerm grid[] = {LaunchTerm::of(0, LaunchSize::Rows, rowsPerBlock),
                       LaunchTerm::constant(1, 1), LaunchTerm::constant(2, 1)};
  return LaunchAttr::get(op.getContext(), LaunchRole::Merge, Tier::Copy,
                         threads, /*shared=*/0, grid, params, {}, Type(),
                         /*blockQ=*/0, /*group=*/0, /*programmatic=*/false,
                         /*maxKvLen=*/0);
}

void mlir::attn::setLaunchContract(gpu::LaunchFuncOp launch,
                                   LaunchAttr contract) {
  launch->setAttr(kLaunchAttrName, contract);
}

// The memref of `nest` that `operand` names; null where it has none.
static Value nestOperand(const L1Nest &nest, LaunchOperand operand) {
  L1Nest n = nest; // the op accessors are not const
  switch (operand) {
  case LaunchOperand::Q:
    return n.loadQ.getQ();
  case LaunchOperand::K:
    return n.loadK.getSrc();
  case LaunchOperand::V:
    return n.loadV.getSrc();
  case LaunchOperand::KScale:
    return n.loadK.getScale();
  case LaunchOperand::VScale:
    return n.loadV.getScale();
  case LaunchOperand::BlockTable:
    return n.loadK.getBlockTable();
  case LaunchOperand::KVLens:
    return n.kvLens;
  case LaunchOperand::CuSeqlensQ:
    return n.cuSeqlensQ;
  case LaunchOperand::CuSeqlensK:
    return n.cuSeqlensK;
  case LaunchOperand::Sinks:
    return n.loadSink ? n.loadSink.getSinks() : Value();
  case LaunchOperand::O:
    return n.storeO.getO();
  case LaunchOperand::Lse:
    return n.storeLse ? n.storeLse.getLse() : Value();
  default: // an append's or a merge's
    return Value();
  }
}

LogicalResult mlir::attn::setLaunchContract(gpu::LaunchFuncOp launch,
                                            LaunchAttr contract,
                                            const L1Nest &nest,
                                            Value workspace) {
  ValueRange operands = launch.getKernelOperands();
  ArrayRef<LaunchParam> params = contract.getParams();
  auto disagree = [&](size_t i, StringRef named) {
    return launch.emitError("internal error: the launch of ")
           << launch.getKernelName()
           << " passes another value as kernel operand #" << i
           << " than its attn.launch contract names there (" << named << ")";
  };
  if (params.size() != operands.size())
    return launch.emitError("internal error: the launch of ")
           << launch.getKernelName() << " passes " << operands.size()
           << " kernel operands, its attn.launch contract lists "
           << params.size();
  for (auto [i, param, operand] : llvm::enumerate(params, operands)) {
    switch (param.kind) {
    case LaunchParamKind::Memref:
      if (Value want = nestOperand(nest, param.operand);
          !want || operand != want)
        return disagree(i, stringifyLaunchOperand(param.operand));
      break;
    case LaunchParamKind::TensorMap: {
      // A placeholder pointer cast from the operand (libattnrt encodes
      // the map).
      auto cast = operand.getDefiningOp<UnrealizedConversionCastOp>();
      Value want = nestOperand(nest, param.operand);
      if (!want || !cast || cast.getInputs() != ValueRange(want))
        return disagree(
            i, ("the tensor map of " + stringifyLaunchOperand(param.operand))
                   .str());
      break;
    }
    case LaunchParamKind::Capture:
      if (param.index >= nest.captures.size() ||
          operand != nest.captures[param.index])
        return disagree(i, "capture(" + std::to_string(param.index) + ")");
      break;
    case LaunchParamKind::Workspace:
      if (!workspace || operand != workspace)
        return disagree(i, "the workspace");
      break;
    }
  }
  setLaunchContract(launch, contract);
  return success();
}

LaunchAttr mlir::attn::getLaunchContract(gpu::LaunchFuncOp launch) {
  return launch->getAttrOfType<LaunchAttr>(kLaunchAttrName);
}
