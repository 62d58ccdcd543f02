//===- AttnNVDialect.cpp - attn_nv registration and verifiers -------------===//

#include "codegen/nvptx/AttnNVDialect.h"

#include "dialect/AttnMods.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::attn::nv;

#include "codegen/nvptx/AttnNVDialect.cpp.inc"
#include "codegen/nvptx/AttnNVEnums.cpp.inc"

void AttnNVDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "codegen/nvptx/AttnNVOps.cpp.inc"
      >();
}

void CopyTileOp::build(OpBuilder &builder, OperationState &state, Value src,
                       Value dst, Value thread, int64_t threads, int64_t rows,
                       int64_t width, int64_t srcWidth, TileLayout layout,
                       bool async) {
  state.addOperands({src, dst, thread});
  Properties &props = state.getOrAddProperties<Properties>();
  props.threads = builder.getI64IntegerAttr(threads);
  props.rows = builder.getI64IntegerAttr(rows);
  props.width = builder.getI64IntegerAttr(width);
  props.src_width = builder.getI64IntegerAttr(srcWidth);
  props.layout = TileLayoutAttr::get(builder.getContext(), layout);
  if (async)
    props.async = builder.getUnitAttr();
  // The source region: one block taking the tile's row.
  Region *source = state.addRegion();
  source->push_back(new Block);
  source->front().addArgument(builder.getIndexType(), state.location);
}

LogicalResult CopyTileOp::verify() {
  const int64_t rows = getRows(), width = getWidth(),
                srcWidth = getSrcWidth();
  if (getThreads() <= 0 || rows <= 0)
    return emitOpError("'threads' and 'rows' must be positive, got ")
           << getThreads() << " and " << rows;
  auto src = cast<MemRefType>(getSrc().getType());
  auto dst = getDst().getType();
  const int64_t perChunk = chunkElements();
  if (width <= 0 || width % perChunk)
    return emitOpError("'width' must be a positive multiple of ")
           << perChunk << " (16-byte chunks of " << dst.getElementType()
           << "), got " << width;
  if (srcWidth <= 0 || srcWidth > width || srcWidth % perChunk)
    return emitOpError("'src_width' must be a multiple of ")
           << perChunk << " in (0, width = " << width << "], got " << srcWidth;
  if (src.getElementType() != dst.getElementType())
    return emitOpError("'src' and 'dst' must hold one element type, got ")
           << src.getElementType() << " and " << dst.getElementType();
  if (!nvgpu::NVGPUDialect::hasSharedMemoryAddressSpace(dst))
    return emitOpError("'dst' must be in shared memory, got ") << dst;
  if ((getLayout() == TileLayout::Bytes) != (perChunk == 16))
    return emitOpError("the bytes layout is the one of one-byte elements: ")
           << stringifyTileLayout(getLayout()) << " with "
           << dst.getElementType();
  if (getLayout() == TileLayout::Bytes && !llvm::isPowerOf2_64(width / 16))
    return emitOpError("a bytes tile's rows must be a power of two of "
                       "16-byte chunks, got width ")
           << width;
  if (getLayout() != TileLayout::Plain && getLayout() != TileLayout::Bytes &&
      width % 64)
    return emitOpError("a ")
           << stringifyTileLayout(getLayout())
           << " tile's width must be a multiple of 64 (128-byte rows), got "
           << width;
  SmallVector<int64_t, 2> shape{rows, width};
  if (getLayout() == TileLayout::Blocked)
    shape = {width / 64 * rows, 64};
  ArrayRef<int64_t> have = dst.getShape();
  bool fits = getLayout() == TileLayout::Plain
                  ? have[0] == shape[0] && have[1] >= shape[1]
                  : have == ArrayRef<int64_t>(shape);
  if (!fits)
    return emitOpError("'dst' must be ")
           << shape[0] << "x" << shape[1]
           << (getLayout() == TileLayout::Plain ? " (or wider rows)" : "")
           << " for " << rows << " rows of " << width << " in the "
           << stringifyTileLayout(getLayout()) << " layout, got " << dst;
  return success();
}

LogicalResult CopyTileOp::verifyRegions() {
  Block &block = getSource().front();
  if (block.getNumArguments() != 1 ||
      !block.getArgument(0).getType().isIndex())
    return emitOpError("'source' must take one index (the tile's row)");
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("'source' must end in attn_nv.yield");
  auto src = cast<MemRefType>(getSrc().getType());
  ValueRange values = yield.getValues();
  if (static_cast<int64_t>(values.size()) != src.getRank() ||
      !values.front().getType().isInteger(1) ||
      llvm::any_of(values.drop_front(),
                   [](Value v) { return !v.getType().isIndex(); }))
    return emitOpError("'source' must yield an i1 (the row exists) and ")
           << src.getRank() - 1
           << " indices of 'src' (all but the column), got "
           << values.size() << " values";
  return success();
}

LogicalResult ForEachChunkOp::verify() {
  if (getThreads() <= 0 || getRows() <= 0 || getChunk() <= 0)
    return emitOpError("'threads', 'rows' and 'chunk' must be positive, got ")
           << getThreads() << ", " << getRows() << " and " << getChunk();
  if (getWidth() <= 0 || getWidth() % getChunk())
    return emitOpError("'width' must be a positive multiple of 'chunk' (")
           << getChunk() << "), got " << getWidth();
  return success();
}

LogicalResult ForEachChunkOp::verifyRegions() {
  Block &block = getBody().front();
  if (block.getNumArguments() != 2 ||
      llvm::any_of(block.getArgumentTypes(),
                   [](Type t) { return !t.isIndex(); }))
    return emitOpError("'body' must take two indices (the chunk's row and "
                       "column)");
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || !yield.getValues().empty())
    return emitOpError("'body' must end in an attn_nv.yield of nothing");
  return success();
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
  if (!getLane().empty() && getLane().size() != 2)
    return emitOpError("'lane' takes 2 offsets (row, column), got ")
           << getLane().size();
  if (getSwizzle() && getLane().empty())
    return emitOpError("'swizzle' needs 'lane': the mask applies to a "
                       "lane's column in a tile");
  if (getSwizzle() && type.getDimSize(1) % 64)
    return emitOpError("'swizzle' needs rows of a multiple of 64 elements "
                       "(the swizzled layout's groups), got ")
           << type;
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

/// The register tile ops' shared rules: some tiles, a GQA group of 1+.
static LogicalResult verifyRegisterTiles(Operation *op, size_t tiles,
                                         StringRef what, int64_t group) {
  if (tiles == 0)
    return op->emitOpError("needs at least one ") << what;
  if (group < 1)
    return op->emitOpError("'group' must be at least 1, got ") << group;
  return success();
}

/// One result per vector operand (a tile in, a tile out).
static void vectorOperandTypes(ValueRange operands,
                               SmallVectorImpl<Type> &types) {
  for (Value v : operands)
    if (isa<VectorType>(v.getType()))
      types.push_back(v.getType());
}

LogicalResult MaskTileOp::verify() {
  if (failed(verifyRegisterTiles(*this, getScores().size(), "score tile",
                                 getGroup())))
    return failure();
  const bool hasMod = !getMaskMod().empty();
  if (hasMod != bool(getBatch()) || bool(getBatch()) != bool(getKvHead()))
    return emitOpError("takes 'at(batch, kv_head)' exactly when it has a "
                       "'mask_mod' region (the region's b and h)");
  if (!hasMod && !getCaptures().empty())
    return emitOpError("has captures but no 'mask_mod' region to read them");
  if (hasMod)
    return verifyModRegion(*this, getMaskMod(), ModKind::Mask, getCaptures());
  return success();
}

LogicalResult ScoreTileOp::verify() {
  if (failed(verifyRegisterTiles(*this, getDots().size(),
                                 "tile of dot products", getGroup())))
    return failure();
  if (!(getScale().convertToDouble() > 0))
    return emitOpError("'scale' must be positive, got ")
           << getScale().convertToDouble();
  if (std::optional<APFloat> cap = getSoftcap();
      cap && !(cap->convertToDouble() > 0))
    return emitOpError("'softcap' must be positive, got ")
           << cap->convertToDouble();
  return verifyModRegion(*this, getScoreMod(), ModKind::Score, getCaptures());
}

LogicalResult ScoreTileOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &types) {
  vectorOperandTypes(operands, types);
  return success();
}

LogicalResult MaskTileOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &types) {
  vectorOperandTypes(operands, types);
  return success();
}

LogicalResult OnlineSoftmaxOp::verify() {
  if (getScores().empty())
    return emitOpError("needs at least one score tile");
  if (!getWeights().empty() && getWeights().size() != getScores().size())
    return emitOpError("'weights' must be one tile per score tile (")
           << getScores().size() << "), got " << getWeights().size();
  if (FloatAttr scale = getScaleAttr(); scale && !(scale.getValueAsDouble() > 0))
    return emitOpError("'scale' must be positive (the mask and the maximum "
                       "work on the dots), got ")
           << scale.getValueAsDouble();
  return success();
}

LogicalResult OnlineSoftmaxOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location>, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &types) {
  // One P fragment per score tile, then the state, alpha and moved.
  auto f32 = Float32Type::get(context);
  Adaptor adaptor(operands, attributes, properties, regions);
  int64_t tiles = adaptor.getScores().size();
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
