//===- ToolOptions.h - what every attn tool's --help and --version say ---*- C++ -*-===//
//
// attn's tools link libLLVM.so and libMLIR.so, whose static initializers
// register hundreds of command-line options for every LLVM backend
// (--amdgpu-*, --aarch64-*, --x86-*, ...). setUpToolOptions, called first
// thing in main, hides all of them from --help (--help-hidden still lists
// them; they still work) and keeps:
//   - the options the tool's own executable defines, under "<tool> options";
//   - LLVM's generic ones (--help, --version, ...);
//   - every option registered after it, which is where MLIR registers its
//     usual ones (MlirOptMain, mlirTranslateMain: --mlir-print-ir-*,
//     --mlir-timing, the pass list, ...).
// An option counts as the tool's own when its object lies in the
// executable's image rather than in a shared library, so an
// option added to a tool shows up without further registration.
//
// --version prints "attn <version> (LLVM <version>)".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_TOOLOPTIONS_H
#define ATTN_TOOLS_TOOLOPTIONS_H

#include "tools/Version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <link.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace mlir::attn::tools {

inline void printVersion(llvm::raw_ostream &os) {
  os << "attn " ATTN_VERSION " (LLVM " LLVM_VERSION_STRING ")\n";
}

/// The address ranges (PT_LOAD segments) of the loaded object, executable
/// or shared library, that holds `address`. (dladdr would say too, but
/// it scans libLLVM.so's symbols on each call: ~1 s for all options.)
struct Segments {
  const void *address;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  bool contains(const void *p) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    for (auto [begin, end] : ranges)
      if (a >= begin && a < end)
        return true;
    return false;
  }
};
inline Segments segmentsOf(const void *address) {
  Segments found{address, {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto &found = *static_cast<Segments *>(data);
        Segments object{found.address, {}};
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto &header = info->dlpi_phdr[i];
          if (header.p_type == PT_LOAD)
            object.ranges.push_back(
                {info->dlpi_addr + header.p_vaddr,
                 info->dlpi_addr + header.p_vaddr + header.p_memsz});
        }
        if (!object.contains(found.address))
          return 0;
        found = std::move(object);
        return 1;
      },
      &found);
  return found;
}

/// See the file comment. `category` must be the tool's own, defined in
/// its executable like its options.
inline void setUpToolOptions(llvm::cl::OptionCategory &category) {
  const Segments executable = segmentsOf(&category);
  std::vector<llvm::cl::Option *> shown;
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    if (executable.contains(option))
      option->addCategory(category);
    if (option->getOptionHiddenFlag() == llvm::cl::NotHidden)
      shown.push_back(option);
  }
  // HideUnrelatedOptions keeps LLVM's generic options and makes the rest
  // "really hidden"; hidden is enough, so that --help-hidden lists them.
  llvm::cl::HideUnrelatedOptions(category);
  for (llvm::cl::Option *option : shown)
    if (option->getOptionHiddenFlag() == llvm::cl::ReallyHidden)
      option->setHiddenFlag(llvm::cl::Hidden);
  llvm::cl::SetVersionPrinter(printVersion);
}

} // namespace mlir::attn::tools

#endif // ATTN_TOOLS_TOOLOPTIONS_H
