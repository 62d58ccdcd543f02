//===- AttnNVDialect.cpp - attn_nv registration and verifiers -------------===//

#include "codegen/nvptx/AttnNVDialect.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::attn::nv;

#include "codegen/nvptx/AttnNVDialect.cpp.inc"

void AttnNVDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "codegen/nvptx/AttnNVOps.cpp.inc"
      >();
}

LogicalResult LdMatrixOp::verify() {
  auto type = getSrc().getType();
  if (!nvgpu::NVGPUDialect::hasSharedMemoryAddressSpace(type))
    return emitOpError("'src' must be in shared memory (address space 3), "
                       "got ")
           << type;
  if (getIndices().size() != 2)
    return emitOpError("takes 2 indices into 'src', got ")
           << getIndices().size();
  return success();
}

LogicalResult WgmmaOp::verify() {
  const int64_t k = getK(), tiles = getD().size();
  if (k <= 0 || k % 16)
    return emitOpError("'k' must be a positive multiple of 16, got ") << k;
  // wgmma's N is at most 256: 16 accumulator tiles of 16 columns.
  if (tiles < 1 || tiles > 16)
    return emitOpError("must give 1 to 16 accumulators (N = 16 per "
                       "accumulator, at most 256), got ")
           << tiles;
  if (getA().empty()) {
    if (!getATile() || !getARows())
      return emitOpError("with A in shared memory (no 'a') needs 'a_tile' "
                         "and 'a_rows'");
    if (!getAcc().empty())
      return emitOpError("with A in shared memory starts from zero: 'acc' "
                         "must be empty, got ")
             << getAcc().size() << " accumulators";
    if (*getARows() <= 0 || *getARows() % 64)
      return emitOpError("'a_rows' must be a positive multiple of 64 (the "
                         "warpgroup's rows), got ")
             << *getARows();
    return success();
  }
  if (getATile() || getARows())
    return emitOpError("with A in registers ('a') takes no 'a_tile' or "
                       "'a_rows'");
  if (static_cast<int64_t>(getA().size()) != k / 16)
    return emitOpError("'a' must hold k / 16 = ")
           << k / 16 << " fragments, got " << getA().size();
  if (static_cast<int64_t>(getAcc().size()) != tiles)
    return emitOpError("'acc' must hold one accumulator per result (")
           << tiles << "), got " << getAcc().size();
  return success();
}

LogicalResult OnlineSoftmaxOp::verify() {
  if (getScores().empty())
    return emitOpError("needs at least one score tile");
  if (FloatAttr scale = getScaleAttr(); scale && !(scale.getValueAsDouble() > 0))
    return emitOpError("'scale' must be positive (the mask and the maximum "
                       "work on the dots), got ")
           << scale.getValueAsDouble();
  return success();
}

LogicalResult OnlineSoftmaxOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &types) {
  // One P fragment per score tile (the vector operands), then the state,
  // alpha and moved.
  auto f32 = Float32Type::get(context);
  int64_t tiles = llvm::count_if(
      operands, [](Value v) { return isa<VectorType>(v.getType()); });
  types.append(tiles, VectorType::get({4}, IntegerType::get(context, 32)));
  types.append(4, f32);
  types.push_back(VectorType::get({8}, f32));
  types.push_back(IntegerType::get(context, 1));
  return success();
}

LogicalResult FenceRegistersOp::verify() {
  if (getValues().empty())
    return emitOpError("needs at least one value");
  Type first = getValues().front().getType();
  for (auto [i, v] : llvm::enumerate(getValues()))
    if (v.getType() != first)
      return emitOpError("values must share one type: #")
             << i << " is " << v.getType() << ", #0 is " << first;
  return success();
}

LogicalResult FenceRegistersOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &types) {
  llvm::append_range(types, operands.getTypes());
  return success();
}

#define GET_OP_CLASSES
#include "codegen/nvptx/AttnNVOps.cpp.inc"
