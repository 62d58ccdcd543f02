//===- JSONWriter.cpp - a library's kernels as JSON -----------------------===//

#include "codegen/package/JSONWriter.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::package;

std::string package::jsonText(const Library &library) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "{\n  \"library\": \"" << library.name << "\",\n  \"prefix\": \""
     << library.prefix << "\",\n  \"kernels\": [";
  for (auto [k, kernel] : llvm::enumerate(library.kernels)) {
    os << (k ? "," : "") << "\n    {\"name\": \"" << kernel.name
       << "\", \"tier\": \"" << kernel.code.front().launches.front().tierName()
       << "\",";
    // q_len 1 to this many run the kernel's split-K decode code.
    if (!kernel.decodeCode.empty())
      os << " \"decode_max_q_len\": " << kernel.decodeCode.front().maxQLen
         << ",";
    // A mask_mod's block mask: _block_mask and _run_block_masked exist.
    if (kernel.hasBlockMask())
      os << " \"block_mask\": true,";
    // A packed Q's max_q_len fixed by the spec.
    if (kernel.staticMaxQLen)
      os << " \"max_q_len\": " << kernel.staticMaxQLen << ",";
    os << "\n     \"operands\": [";
    bool first = true;
    for (int arg = 0; arg < kernel.numArguments; ++arg) {
      // One entry an argument: an operand (the first, where one read-only
      // argument is two, k and v), else a capture.
      bool named = false;
      for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o) {
        const Operand &operand = kernel.operands[o];
        if (!operand.type || operand.argument != arg)
          continue;
        os << (first ? "" : ",") << "\n       {\"name\": \"" << operandName(kernel, o)
           << "\", \"dtype\": \"" << elementName(operand.type.getElementType())
           << "\", \"shape\": [";
        for (auto [dim, role] : llvm::enumerate(operand.roles)) {
          int64_t size = operand.type.getDimSize(dim);
          os << (dim ? ", " : "");
          // The offsets: "batch + 1".
          if (ShapedType::isDynamic(size) && sizeOffset(o))
            os << "\"" << kSizeNames[role] << " + " << sizeOffset(o) << "\"";
          else if (ShapedType::isDynamic(size))
            os << "\"" << kSizeNames[role] << "\"";
          else
            os << size;
        }
        os << "]}";
        first = false;
        named = true;
        break;
      }
      // A capture: its dims are the type's or its own sizes.
      if (const Capture *capture = kernel.captureAt(arg); capture && !named) {
        os << (first ? "" : ",") << "\n       {\"name\": \"" << capture->name
           << "\", \"dtype\": \""
           << elementName(capture->type.getElementType())
           << "\", \"capture\": true, \"shape\": [";
        for (int64_t d = 0; d < capture->type.getRank(); ++d) {
          os << (d ? ", " : "");
          if (capture->type.isDynamicDim(d))
            os << "\"" << capture->sizeNames[d] << "\"";
          else
            os << capture->type.getDimSize(d);
        }
        os << "]}";
        first = false;
      }
    }
    os << "],\n     \"sizes\": [";
    first = true;
    for (int i = 0; i < NumSizes; ++i)
      if (kernel.dynamicSize[i]) {
        os << (first ? "" : ", ") << "\"" << kSizeNames[i] << "\"";
        first = false;
      }
    for (const std::string &size : kernel.captureSizes()) {
      os << (first ? "" : ", ") << "\"" << size << "\"";
      first = false;
    }
    os << "]}";
  }
  os << "\n  ]\n}\n";
  return s;
}
