//===- AttnNVDialect.h - attn_nv: the NVIDIA tile instructions -*- C++ -*-===//
//
// AttnNVOps.td describes the ops; attn-nv-to-nvvm (AttnNVToNVVM.cpp)
// expands them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_ATTNNVDIALECT_H
#define ATTN_CODEGEN_NVPTX_ATTNNVDIALECT_H

#include "dialect/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "codegen/nvptx/AttnNVDialect.h.inc"
#include "codegen/nvptx/AttnNVEnums.h.inc"

#define GET_OP_CLASSES
#include "codegen/nvptx/AttnNVOps.h.inc"

#endif // ATTN_CODEGEN_NVPTX_ATTNNVDIALECT_H
