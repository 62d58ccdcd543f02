//===- CABIWriter.h - a library's header and C tables -----------*- C++ -*-===//
//
// The C side of a library: the header its users include, and the C source
// that describes each kernel to libattnrt in tables (operands, device code
// per target, and each launch's #attn.launch contract as data) behind the
// three functions per kernel the header declares.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_PACKAGE_CABIWRITER_H
#define ATTN_CODEGEN_PACKAGE_CABIWRITER_H

#include "codegen/package/KernelABI.h"

#include <string>

namespace mlir::attn::package {

/// <name>.h: the status codes, and per kernel its spec in a comment and
/// its _run, _can_implement and _workspace_bytes.
std::string headerText(const Library &library);

/// <name>.c: the tables and functions the header declares. The device
/// code is taken in with .incbin from `codeDir`/<kernel>.<chip>.{ptx,cubin}.
std::string sourceText(const Library &library, StringRef codeDir);

/// Why libattnrt's tables cannot hold `launch`'s contract, or an operand
/// it passes is not `kernel`'s; empty if they can and it is.
std::string contractProblem(const Kernel &kernel, const KernelLaunch &launch);

} // namespace mlir::attn::package

#endif // ATTN_CODEGEN_PACKAGE_CABIWRITER_H
