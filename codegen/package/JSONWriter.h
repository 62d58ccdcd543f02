//===- JSONWriter.h - a library's kernels as JSON ---------------*- C++ -*-===//

#ifndef ATTN_CODEGEN_PACKAGE_JSONWRITER_H
#define ATTN_CODEGEN_PACKAGE_JSONWRITER_H

#include "codegen/package/KernelABI.h"

#include <string>

namespace mlir::attn::package {

/// <name>.json: the header's facts (each kernel's tier, operands with
/// dtype and shape, dynamic sizes) for programs that build calls at run
/// time (examples/python).
std::string jsonText(const Library &library);

} // namespace mlir::attn::package

#endif // ATTN_CODEGEN_PACKAGE_JSONWRITER_H
