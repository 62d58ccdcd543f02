//===- Toolchain.h - the external programs a library needs ------*- C++ -*-===//
//
// ptxas turns each target's PTX into a cubin; the C compiler and the
// archiver build the library around the generated C. Each failure is an
// error whose message says which file or command line.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_PACKAGE_TOOLCHAIN_H
#define ATTN_CODEGEN_PACKAGE_TOOLCHAIN_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::attn::package {

/// ptxas: `explicitPath` if given, else from $PATH, $CUDA_ROOT, $CUDA_HOME,
/// $CUDA_PATH or /usr/local/cuda; empty if none is found.
std::string findPtxas(StringRef explicitPath);

/// Runs `program` with `args` and waits; an error quoting the command line
/// if it does not succeed.
llvm::Error runProgram(StringRef program, ArrayRef<std::string> args);

llvm::Expected<std::string> readFile(StringRef path);
llvm::Error writeFile(StringRef path, StringRef contents);

} // namespace mlir::attn::package

#endif // ATTN_CODEGEN_PACKAGE_TOOLCHAIN_H
