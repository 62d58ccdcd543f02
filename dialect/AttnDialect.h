//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNDIALECT_H
#define ATTN_DIALECT_ATTNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/AttnDialect.h.inc"
#include "dialect/AttnEnums.h.inc"
#include "dialect/AttnLaunch.h"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTNDIALECT_H
