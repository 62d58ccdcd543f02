//===- Package.h - kernel specs to device code for a library ----*- C++ -*-===//
//
// attn-compile's steps between a spec and the files of its library: the
// kernels of the spec (KernelABI.h), each lowered for every target, then
// written out as a header, C tables (CABIWriter.h) and JSON (JSONWriter.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_PACKAGE_PACKAGE_H
#define ATTN_CODEGEN_PACKAGE_PACKAGE_H

#include "codegen/package/KernelABI.h"

namespace mlir::attn::package {

/// `kernel`'s function of `spec` through attn-to-ptx for `chip` (libdevice
/// from `cudaPath`, if given), in one module with the alternatives
/// libattnrt chooses among (smallGridSchedules): the PTX and the launches,
/// largest block_q first. Errors go to the spec's diagnostics.
FailureOr<DeviceCode> lowerKernel(ModuleOp spec, const Kernel &kernel,
                                  StringRef chip, StringRef cudaPath);

} // namespace mlir::attn::package

#endif // ATTN_CODEGEN_PACKAGE_PACKAGE_H
