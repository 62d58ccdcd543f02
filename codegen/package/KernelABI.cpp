//===- KernelABI.cpp - a kernel spec as its C functions see it ------------===//

#include "codegen/package/KernelABI.h"

#include "lib/Transforms/CheckKernels.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::package;

#define OPERAND_NAME(id, name) name,
const char *const package::kOperandNames[ATTNRT_NUM_OPERANDS] = {
    ATTNRT_OPERANDS(OPERAND_NAME)};
#undef OPERAND_NAME

const char *const package::kSizeNames[NumSizes] = {
    "batch",     "q_heads",    "kv_heads",   "q_len",      "kv_len",
    "head_dim",  "v_head_dim", "num_blocks", "block_size", "max_blocks",
    "new_len",   "capacity",   "num_tokens", "total_q",    "total_k",
    "max_q_len", "num_parts"};

int64_t package::sizeOffset(int operand) {
  return operand == ATTNRT_CU_SEQLENS_Q || operand == ATTNRT_CU_SEQLENS_K;
}

const char *package::operandName(const Kernel &kernel, int operand) {
  if (kernel.isAppend() && operand == ATTNRT_K)
    return "k_cache";
  if (kernel.isAppend() && operand == ATTNRT_V)
    return "v_cache";
  return kOperandNames[operand];
}

bool package::isOutput(const Kernel &kernel, int operand) {
  if (kernel.isAppend())
    return operand == ATTNRT_K || operand == ATTNRT_V;
  return operand == ATTNRT_O || operand == ATTNRT_LSE;
}

std::vector<Size> package::rolesOf(int operand, bool paged, bool append,
                                   bool slotted, bool packedQ, bool packedKV,
                                   bool merge, int64_t scaleRank) {
  if (merge) {
    switch (operand) {
    case ATTNRT_O_PARTS:
      return {NumParts, NumTokens, QHeads, VHeadDim};
    case ATTNRT_LSE_PARTS:
      return {NumParts, NumTokens, QHeads};
    case ATTNRT_O:
      return {NumTokens, QHeads, VHeadDim};
    default: // ATTNRT_LSE
      return {NumTokens, QHeads};
    }
  }
  switch (operand) {
  case ATTNRT_CU_SEQLENS_Q:
  case ATTNRT_CU_SEQLENS_K:
    return {Batch}; // batch + 1 offsets
  case ATTNRT_K_SCALE:
  case ATTNRT_V_SCALE: {
    if (scaleRank <= 1)
      return scaleRank ? std::vector<Size>{KVHeads} : std::vector<Size>{};
    std::vector<Size> roles =
        rolesOf(ATTNRT_K, paged, append, slotted, packedQ, packedKV, merge);
    roles.pop_back();
    return roles;
  }
  case ATTNRT_SINKS:
    return {QHeads};
  case ATTNRT_Q:
  case ATTNRT_O:
  case ATTNRT_LSE:
    if (packedQ)
      return operand == ATTNRT_LSE
                 ? std::vector<Size>{QTokens, QHeads}
                 : std::vector<Size>{QTokens, QHeads,
                                     operand == ATTNRT_Q ? HeadDim : VHeadDim};
    break;
  case ATTNRT_K:
  case ATTNRT_V:
    if (packedKV)
      return {KVTokens, KVHeads, operand == ATTNRT_K ? HeadDim : VHeadDim};
    break;
  default:
    break;
  }
  if (slotted) {
    switch (operand) {
    case ATTNRT_K_NEW:
      return {NumTokens, KVHeads, HeadDim};
    case ATTNRT_V_NEW:
      return {NumTokens, KVHeads, VHeadDim};
    case ATTNRT_SLOT_MAPPING:
      return {NumTokens};
    case ATTNRT_K:
      return {NumBlocks, KVHeads, BlockSize, HeadDim};
    default:
      return {NumBlocks, KVHeads, BlockSize, VHeadDim};
    }
  }
  if (append && !paged && (operand == ATTNRT_K || operand == ATTNRT_V))
    return {Batch, KVHeads, Capacity, operand == ATTNRT_K ? HeadDim : VHeadDim};
  switch (operand) {
  case ATTNRT_K_NEW:
    return {Batch, KVHeads, NewLen, HeadDim};
  case ATTNRT_V_NEW:
    return {Batch, KVHeads, NewLen, VHeadDim};
  case ATTNRT_NEW_LENS:
    return {Batch};
  case ATTNRT_Q:
    return {Batch, QHeads, QLen, HeadDim};
  case ATTNRT_K:
    return paged ? std::vector<Size>{NumBlocks, KVHeads, BlockSize, HeadDim}
                 : std::vector<Size>{Batch, KVHeads, KVLen, HeadDim};
  case ATTNRT_V:
    return paged ? std::vector<Size>{NumBlocks, KVHeads, BlockSize, VHeadDim}
                 : std::vector<Size>{Batch, KVHeads, KVLen, VHeadDim};
  case ATTNRT_BLOCK_TABLE:
    return {Batch, MaxBlocks};
  case ATTNRT_KV_LENS:
    return {Batch};
  case ATTNRT_O:
    return {Batch, QHeads, QLen, VHeadDim};
  default:
    return {Batch, QHeads, QLen};
  }
}

std::vector<std::string> Kernel::captureSizes() const {
  std::vector<std::string> names;
  for (const Capture &capture : captures)
    for (const std::string &name : capture.sizeNames)
      if (!name.empty())
        names.push_back(name);
  return names;
}

const Capture *Kernel::captureAt(int arg) const {
  for (const Capture &capture : captures)
    if (capture.argument == arg)
      return &capture;
  return nullptr;
}

// The captures as the C functions pass them: each a function argument, of
// rank ATTNRT_MAX_RANK at most, with offset 0.
static LogicalResult describeCaptures(Kernel &kernel) {
  AttentionOp op = kernel.op;
  if (op.getCaptures().size() > ATTNRT_MAX_CAPTURES)
    return op.emitError("attn-compile: ")
           << op.getCaptures().size() << " captures; the C functions pass "
           << ATTNRT_MAX_CAPTURES << " at most";
  ValueRange values = op.getCaptures();
  for (size_t i = 0; i < values.size(); ++i) {
    Value value = values[i];
    Capture capture;
    capture.name = "capture" + std::to_string(i);
    capture.type = cast<MemRefType>(value.getType());
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner()->getParentOp() != kernel.func)
      return op.emitError("attn-compile: capture #")
             << i
             << " must be an argument of the kernel function, so the C "
                "function can take it";
    if (llvm::any_of(op.getCaptures().take_front(i),
                     [&](Value v) { return v == value; }))
      return op.emitError("attn-compile: capture #")
             << i << " repeats an earlier capture; pass each memref once";
    capture.argument = arg.getArgNumber();
    if (capture.type.getRank() > ATTNRT_MAX_RANK)
      return op.emitError("attn-compile: capture #")
             << i << " has rank " << capture.type.getRank()
             << "; the C functions pass ranks up to " << ATTNRT_MAX_RANK;
    if (!capture.type.getLayout().isIdentity()) {
      auto [strides, offset] = capture.type.getStridesAndOffset();
      if (offset != 0)
        return op.emitError("attn-compile: capture #")
               << i << " has a layout offset; only offset 0 is supported";
    }
    for (int64_t d = 0; d < capture.type.getRank(); ++d)
      capture.sizeNames.push_back(capture.type.isDynamicDim(d)
                                      ? capture.name + "_size" +
                                            std::to_string(d)
                                      : std::string());
    kernel.captures.push_back(std::move(capture));
  }
  return success();
}

LogicalResult package::describeKernel(func::FuncOp func, Kernel &kernel) {
  kernel.func = func;
  kernel.name = func.getSymName().str();
  if (failed(checkKernelFunction(func)))
    return failure();
  auto ops = llvm::to_vector(func.getOps<AttentionOp>());
  auto appends = llvm::to_vector(func.getOps<CacheAppendOp>());
  auto merges = llvm::to_vector(func.getOps<MergeStatesOp>());
  if (ops.size() + appends.size() + merges.size() != 1)
    return func.emitError("attn-compile: a kernel function holds exactly one "
                          "attn.attention, attn.cache_append or "
                          "attn.merge_states, this one has ")
           << ops.size() << " attn.attention, " << appends.size()
           << " attn.cache_append and " << merges.size()
           << " attn.merge_states";
  kernel.numArguments = func.getNumArguments();
  Value values[ATTNRT_NUM_OPERANDS] = {};
  if (!ops.empty()) {
    kernel.op = ops.front();
    if (kernel.op.isQuantizedQ())
      return kernel.op.emitError("attn-compile: an fp8 Q (")
             << cast<MemRefType>(kernel.op.getQ().getType()).getElementType()
             << ") has no GPU kernel and no C ABI yet (no NVIDIA or Metal "
                "tier lowers fp8 prefill); the CPU pipeline (attn-opt "
                "--attn-to-cpu) runs it";
    if (failed(describeCaptures(kernel)))
      return failure();
    Value given[] = {kernel.op.getQ(),      kernel.op.getK(),
                     kernel.op.getV(),      kernel.op.getBlockTable(),
                     kernel.op.getKvLens(), kernel.op.getO(),
                     kernel.op.getLse()};
    std::copy(std::begin(given), std::end(given), values);
    values[ATTNRT_CU_SEQLENS_Q] = kernel.op.getCuSeqlensQ();
    values[ATTNRT_CU_SEQLENS_K] = kernel.op.getCuSeqlensK();
    values[ATTNRT_SINKS] = kernel.op.getSinks();
    values[ATTNRT_K_SCALE] = kernel.op.getKScale();
    values[ATTNRT_V_SCALE] = kernel.op.getVScale();
    if (kernel.op.isPackedQ())
      kernel.staticMaxQLen = kernel.op.getMaxQLen().value_or(0);
  } else if (!merges.empty()) {
    MergeStatesOp merge = kernel.merge = merges.front();
    values[ATTNRT_O_PARTS] = merge.getOParts();
    values[ATTNRT_LSE_PARTS] = merge.getLseParts();
    values[ATTNRT_O] = merge.getO();
    values[ATTNRT_LSE] = merge.getLse();
  } else {
    CacheAppendOp append = kernel.append = appends.front();
    if (append.isQuantized())
      return append.emitError("attn-compile: a quantizing cache append (")
             << cast<MemRefType>(append.getKCache().getType()).getElementType()
             << " cache) has no GPU kernel and no C ABI yet; the CPU "
                "pipeline (attn-opt --attn-to-cpu) runs it";
    values[ATTNRT_K] = append.getKCache();
    values[ATTNRT_V] = append.getVCache();
    values[ATTNRT_BLOCK_TABLE] = append.getBlockTable();
    values[ATTNRT_KV_LENS] = append.getKvLens();
    values[ATTNRT_K_NEW] = append.getKNew();
    values[ATTNRT_V_NEW] = append.getVNew();
    values[ATTNRT_NEW_LENS] = append.getNewLens();
    values[ATTNRT_SLOT_MAPPING] = append.getSlotMapping();
  }
  bool paged = values[ATTNRT_BLOCK_TABLE] != nullptr;
  bool isAppend = kernel.append != nullptr;
  Operation *specOp = kernel.specOp();
  std::fill(std::begin(kernel.staticSize), std::end(kernel.staticSize),
            ShapedType::kDynamic);
  bool seen[NumSizes] = {};
  for (int i = 0; i < ATTNRT_NUM_OPERANDS; ++i) {
    if (!values[i])
      continue;
    auto arg = dyn_cast<BlockArgument>(values[i]);
    if (!arg || arg.getOwner()->getParentOp() != func)
      return specOp->emitError("attn-compile: operand '")
             << operandName(kernel, i)
             << "' must be an argument of the kernel function, so the C "
                "function can take it";
    Operand &operand = kernel.operands[i];
    operand.type = cast<MemRefType>(values[i].getType());
    operand.argument = arg.getArgNumber();
    operand.roles =
        rolesOf(i, paged, isAppend, values[ATTNRT_SLOT_MAPPING] != nullptr,
                values[ATTNRT_CU_SEQLENS_Q] != nullptr,
                values[ATTNRT_CU_SEQLENS_K] != nullptr, kernel.isMerge(),
                operand.type.getRank());
    if (!operand.type.getLayout().isIdentity()) {
      auto [strides, offset] = operand.type.getStridesAndOffset();
      if (offset != 0)
        return specOp->emitError("attn-compile: operand '")
               << operandName(kernel, i)
               << "' has a layout offset; only offset 0 "
                  "is supported";
    }
    for (auto [dim, role] : llvm::enumerate(operand.roles)) {
      seen[role] = true;
      int64_t size = operand.type.getDimSize(dim);
      if (!ShapedType::isDynamic(size))
        kernel.staticSize[role] = size - sizeOffset(i);
    }
  }
  // A packed Q without a max_q_len takes the caller's as a size (0: not
  // known), which picks its code (CABIWriter) and sizes its grids.
  seen[MaxQLen] = kernel.op && kernel.op.isPackedQ() && !kernel.staticMaxQLen;
  for (int s = 0; s < NumSizes; ++s)
    kernel.dynamicSize[s] =
        seen[s] && ShapedType::isDynamic(kernel.staticSize[s]);
  for (int i = 0, e = func.getNumArguments(); i < e; ++i)
    if (llvm::none_of(kernel.operands,
                      [&](const Operand &o) { return o.argument == i; }) &&
        !kernel.captureAt(i))
      return func.emitError("attn-compile: argument ")
             << i << " is not an operand of attn.attention";
  return success();
}

FailureOr<std::vector<Kernel>> package::describeKernels(ModuleOp spec) {
  std::vector<Kernel> kernels;
  for (auto func : spec.getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    Kernel kernel;
    if (failed(describeKernel(func, kernel)))
      return failure();
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

std::string package::elementName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}
