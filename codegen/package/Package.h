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
/// largest block_q first, and what attn-select-tier chose. Errors go to the
/// spec's diagnostics; the caller says which kernel and target failed
/// (from its own thread: a summary emitted here while other threads run
/// pass pipelines lost its place in the ordered output). Safe to call for
/// several kernels and chips at once on one multithreaded context: it only
/// reads `spec`.
/// With `runTimeDecode` (decodesAtRunTime), the kernel's decode-tier
/// code instead, which its C functions launch for q_len <= maxQLen.
/// With `plainChip` (sm_90 where `chip` is sm_90a and the library has
/// both), a kernel that uses none of `chip`'s own instructions
/// (usesArchSpecificCode) stops after attn-select-tier with `servedBy` set:
/// its code would be plainChip's, `.target` aside.
FailureOr<DeviceCode> lowerKernel(ModuleOp spec, const Kernel &kernel,
                                  StringRef chip, StringRef cudaPath,
                                  bool runTimeDecode = false,
                                  StringRef plainChip = {});

/// One line for attn-compile to print: the tier and tile `kernel` got
/// for `code`'s target and why, and its small-grid alternatives.
///   "prefill_h16_d128 sm_90: mma tile 128x64 warps 4 stages 2 (sm_90's
///    prefill tier, dynamic Sq; default tile for D128 on sm_90); small-grid
///    alternatives: tile 64x64 warps 4 stages 2, tile 64x128 warps 8
///    stages 2"
std::string describeChoices(const Kernel &kernel, const DeviceCode &code);

} // namespace mlir::attn::package

#endif // ATTN_CODEGEN_PACKAGE_PACKAGE_H
