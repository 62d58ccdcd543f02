//===- AttnDialect.cpp - attn dialect registration ------------------------===//

#include "dialect/AttnDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "dialect/AttnDialect.cpp.inc"

void AttnDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialect/AttnOps.cpp.inc"
      >();
}

// The discardable attributes attn's passes set, each with its type.
static constexpr llvm::StringLiteral kKnownAttrs[] = {
    "attn.launch", kTierAttrName, kScheduleAttrName, kKVLoopAttrName,
    kTensorMapParamsAttrName};

// attn.launch on a gpu.launch_func: its params must match the kernel
// operands, its threads and shared memory the launch's own constants.
static LogicalResult verifyLaunchContract(Operation *op, LaunchAttr contract) {
  auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
  if (!launch)
    return op->emitError("'attn.launch' belongs on gpu.launch_func, not on '")
           << op->getName() << "'";
  ValueRange operands = launch.getKernelOperands();
  ArrayRef<LaunchParam> params = contract.getParams();
  if (params.size() != operands.size())
    return op->emitError("'attn.launch' lists ")
           << params.size() << " params, but the launch passes "
           << operands.size() << " kernel operands";
  for (auto [i, param, operand] : llvm::enumerate(params, operands)) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (param.kind == LaunchParamKind::TensorMap) {
      // The host IR passes a placeholder pointer (a cast of the operand);
      // the host that launches encodes the map (libattnrt).
      if (!isa<LLVM::LLVMPointerType>(operand.getType()))
        return op->emitError("'attn.launch' param #")
               << i << " is a tensor map, but kernel operand #" << i << " is "
               << operand.getType() << ", not an !llvm.ptr";
      continue;
    }
    if (!type)
      return op->emitError("'attn.launch' param #")
             << i << " is a memref, but kernel operand #" << i << " is "
             << operand.getType();
    if (param.kind == LaunchParamKind::Workspace &&
        (type.getRank() != int64_t(contract.getWorkspaceRank()) ||
         type.getElementType() != contract.getWorkspaceType()))
      return op->emitError("'attn.launch' workspace has rank ")
             << contract.getWorkspaceRank() << " and element type "
             << contract.getWorkspaceType() << ", but kernel operand #" << i
             << " is " << type;
  }
  APInt value;
  if (matchPattern(launch.getBlockSizeX(), m_ConstantInt(&value)) &&
      value.getSExtValue() != contract.getThreads())
    return op->emitError("'attn.launch' says threads = ")
           << contract.getThreads() << ", but the launch's block has "
           << value.getSExtValue();
  if (Value shared = launch.getDynamicSharedMemorySize();
      shared && matchPattern(shared, m_ConstantInt(&value)) &&
      value.getSExtValue() != contract.getShared())
    return op->emitError("'attn.launch' says shared = ")
           << contract.getShared() << ", but the launch asks for "
           << value.getSExtValue() << " bytes";
  // libattnrt launches threads x 1 x 1 blocks.
  std::pair<char, Value> blockYZ[] = {{'y', launch.getBlockSizeY()},
                                      {'z', launch.getBlockSizeZ()}};
  for (auto [axis, size] : blockYZ)
    if (matchPattern(size, m_ConstantInt(&value)) && value.getSExtValue() != 1)
      return op->emitError("'attn.launch' blocks are threads x 1 x 1, but "
                           "the launch's block has ")
             << axis << " = " << value.getSExtValue();
  // A grid dimension of constant terms alone is that product (1 without
  // terms): where the launch's is a constant too, they must agree.
  Value grid[] = {launch.getGridSizeX(), launch.getGridSizeY(),
                  launch.getGridSizeZ()};
  for (unsigned dim = 0; dim < 3; ++dim) {
    int64_t product = 1;
    bool constant = true;
    for (const LaunchTerm &term : contract.getGrid())
      if (term.dim == dim) {
        constant &= term.isConstant();
        product *= term.value;
      }
    if (constant && matchPattern(grid[dim], m_ConstantInt(&value)) &&
        value.getSExtValue() != product)
      return op->emitError("'attn.launch' grid ")
             << "xyz"[dim] << " is " << product << ", but the launch's is "
             << value.getSExtValue();
  }
  return success();
}

LogicalResult AttnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (!llvm::is_contained(kKnownAttrs, name)) {
    std::string known;
    for (StringRef k : kKnownAttrs)
      known += (known.empty() ? "" : ", ") + k.str();
    return op->emitError("unknown attn attribute '")
           << name << "'; attn declares " << known
           << (name.starts_with("attn.block_q") ||
                       name.starts_with("attn.group") ||
                       name.starts_with("attn.rows_per_block")
                   ? " (launch facts are fields of attn.launch)"
                   : "");
  }
  Attribute value = attr.getValue();
  if (name == kTierAttrName && !isa<TierAttr>(value))
    return op->emitError()
           << "'" << name
           << "' must be a #attn.tier<wmma|mma|wgmma|decode|copy>, got "
           << value;
  if (name == kScheduleAttrName && !isa<ScheduleAttr>(value))
    return op->emitError() << "'" << name
                           << "' must be a #attn.schedule<...>, got " << value;
  // The op's own schedule is its `schedule = ...` field; the discardable
  // name marks L1 nests, and on the op it would be silently ignored.
  if (name == kScheduleAttrName && isa<AttentionOp>(op))
    return op->emitError()
           << "'" << name
           << "' is not read on attn.attention: write its schedule as the "
              "op's 'schedule = #attn.schedule<...>'";
  if (name == kKVLoopAttrName &&
      (!isa<UnitAttr>(value) || op->getName().getStringRef() != "scf.for"))
    return op->emitError() << "'" << name
                           << "' is a unit attribute of an scf.for";
  if (name == kTensorMapParamsAttrName) {
    auto count = dyn_cast<IntegerAttr>(value);
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!count || !count.getType().isInteger(64) || !func)
      return op->emitError()
             << "'" << name << "' is an i64 on a kernel function";
    if (count.getInt() < 1 || count.getInt() > int64_t(func.getNumArguments()))
      return op->emitError() << "'" << name << "' = " << count.getInt()
                             << " must count some of the kernel's "
                             << func.getNumArguments() << " parameters";
    for (int64_t i = 0; i < count.getInt(); ++i)
      if (!isa<LLVM::LLVMPointerType>(func.getArgumentTypes()[i]))
        return op->emitError() << "'" << name << "': parameter #" << i
                               << " must be an !llvm.ptr (a tensor map), got "
                               << func.getArgumentTypes()[i];
    return success();
  }
  if (name == "attn.launch") {
    auto contract = dyn_cast<LaunchAttr>(attr.getValue());
    if (!contract)
      return op->emitError("'attn.launch' must be a #attn.launch attribute, "
                           "got ")
             << attr.getValue();
    return verifyLaunchContract(op, contract);
  }
  return success();
}
