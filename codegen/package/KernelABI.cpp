//===- KernelABI.cpp - a kernel spec as its C functions see it ------------===//

#include "codegen/package/KernelABI.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::package;

const char *const package::kOperandNames[ATTNRT_NUM_OPERANDS] = {
    "q", "k", "v", "block_table", "kv_lens", "o", "lse"};

const char *const package::kSizeNames[NumSizes] = {
    "batch",    "q_heads",    "kv_heads",   "q_len",      "kv_len",
    "head_dim", "v_head_dim", "num_blocks", "block_size", "max_blocks"};

std::vector<Size> package::rolesOf(int operand, bool paged) {
  switch (operand) {
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

bool package::isIdentifier(StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

LogicalResult package::describeKernel(func::FuncOp func, Kernel &kernel) {
  kernel.func = func;
  kernel.name = func.getSymName().str();
  if (!isIdentifier(kernel.name))
    return func.emitError("attn-compile: the function name must be a C "
                          "identifier");
  auto ops = llvm::to_vector(func.getOps<AttentionOp>());
  if (ops.size() != 1)
    return func.emitError("attn-compile: a kernel function holds exactly one "
                          "attn.attention, this one has ")
           << ops.size();
  kernel.op = ops.front();
  kernel.numArguments = func.getNumArguments();
  Value values[ATTNRT_NUM_OPERANDS] = {
      kernel.op.getQ(),          kernel.op.getK(),      kernel.op.getV(),
      kernel.op.getBlockTable(), kernel.op.getKvLens(), kernel.op.getO(),
      kernel.op.getLse()};
  bool paged = values[ATTNRT_BLOCK_TABLE] != nullptr;
  std::fill(std::begin(kernel.staticSize), std::end(kernel.staticSize),
            ShapedType::kDynamic);
  bool seen[NumSizes] = {};
  for (int i = 0; i < ATTNRT_NUM_OPERANDS; ++i) {
    if (!values[i])
      continue;
    auto arg = dyn_cast<BlockArgument>(values[i]);
    if (!arg || arg.getOwner()->getParentOp() != func)
      return kernel.op.emitError("attn-compile: operand '")
             << kOperandNames[i]
             << "' must be an argument of the kernel function, so the C "
                "function can take it";
    Operand &operand = kernel.operands[i];
    operand.type = cast<MemRefType>(values[i].getType());
    operand.argument = arg.getArgNumber();
    operand.roles = rolesOf(i, paged);
    if (!operand.type.getLayout().isIdentity()) {
      auto [strides, offset] = operand.type.getStridesAndOffset();
      if (offset != 0)
        return kernel.op.emitError("attn-compile: operand '")
               << kOperandNames[i]
               << "' has a layout offset; only offset 0 "
                  "is supported";
    }
    for (auto [dim, role] : llvm::enumerate(operand.roles)) {
      seen[role] = true;
      int64_t size = operand.type.getDimSize(dim);
      if (!ShapedType::isDynamic(size))
        kernel.staticSize[role] = size;
    }
  }
  for (int s = 0; s < NumSizes; ++s)
    kernel.dynamicSize[s] =
        seen[s] && ShapedType::isDynamic(kernel.staticSize[s]);
  for (int i = 0, e = func.getNumArguments(); i < e; ++i)
    if (llvm::none_of(kernel.operands,
                      [&](const Operand &o) { return o.argument == i; }))
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
