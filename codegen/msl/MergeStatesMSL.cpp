//===- MergeStatesMSL.cpp - attn.merge_states as a Metal kernel -----------===//
//
// One threadgroup of kThreads threads per R rows (t, h); a row's Dv values
// are split among threadsPerRow threads, each taking vec-element pieces
// threadsPerRow * vec apart. A thread reads the row's N LSEs for their
// max M, then sums w_n o_n with w_n = 2^((L_n - M) log2 e) over the parts
// that are not empty, and writes O = sum / S (0 for an empty row) and,
// from the row's first thread, the LSE M + ln 2 log2 S (-inf).
//
// Metal compiles with fast math, which may fold a comparison with an
// infinity: an empty part's LSE (-inf) is recognized by its bits, M
// starts from the finite ATTN_NO_SCORE, and the LSE's -inf is stored from
// its bits, never computed.
//
// Row-major operands are addressed by row; strided ones (any strides, the
// LSEs' innermost too, O's innermost 1) through their strides at (t, h),
// static ones as constants and dynamic ones from an AttnMergeStrides
// buffer.
//
//===----------------------------------------------------------------------===//

#include "codegen/msl/MergeStatesMSL.h"

#include "codegen/msl/MSLTypes.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::msl;

namespace {
constexpr int64_t kThreads = 128;
constexpr int64_t kMaxThreadsPerRow = 32;
} // namespace

int MergeFacts::version() const {
  return partElt.isBF16() || outElt.isBF16() ? 310 : 230;
}

const char *const msl::kMergeSizesDecl = R"(
// Run-time sizes of a merge kernel; a static dim's field is ignored.
struct AttnMergeSizes {
  int N; // parts
  int T; // rows of heads
};

// A merge part with no key has LSE -inf: recognized by its bits, since
// fast math may fold a comparison with an infinity.
inline bool attn_no_key(float lse) {
  return as_type<uint>(lse) == 0xff800000u;
}
)";

const char *const msl::kMergeStridesDecl = R"(
// Run-time strides, in elements, of a merge's strided operands whose
// layout has dynamic strides: every dim but O's unit innermost. Fields of
// row-major operands and static strides are ignored.
struct AttnMergeStrides {
  long o_parts[3]; // [N, T, H]
  long lse_parts[3]; // [N, T, H]
  long o[2]; // [T, H]
  long lse[2]; // [T, H]
};
)";

namespace {
/// How the kernel addresses operand `role`: null for row-major, else its
/// strides as text (a constant, or its field of AttnMergeStrides).
std::optional<SmallVector<std::string>> strideText(StringRef role,
                                                   Value value,
                                                   bool &dynamic) {
  auto type = cast<MemRefType>(value.getType());
  if (type.getLayout().isIdentity())
    return std::nullopt;
  auto [strides, offset] = type.getStridesAndOffset();
  SmallVector<std::string> text;
  for (auto [i, stride] : llvm::enumerate(strides)) {
    if (!ShapedType::isDynamic(stride)) {
      text.push_back(std::to_string(stride));
      continue;
    }
    dynamic = true;
    text.push_back(("strides." + role + "[" + Twine(i) + "]").str());
  }
  return text;
}
} // namespace

FailureOr<MergeFacts> msl::emitMergeStates(func::FuncOp func,
                                           MergeStatesOp op,
                                           raw_ostream &os) {
  std::pair<StringRef, Value> operands[] = {{"o_parts", op.getOParts()},
                                            {"lse_parts", op.getLseParts()},
                                            {"o", op.getO()},
                                            {"lse", op.getLse()}};
  for (auto [name, value] : operands) {
    if (!value)
      continue;
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner()->getParentOp() != func)
      return op.emitError() << "the msl tier binds each operand to a kernel "
                               "buffer; operand '"
                            << name << "' must be an argument of the function";
    auto type = cast<MemRefType>(value.getType());
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (type.getMemorySpace() ||
        failed(type.getStridesAndOffset(strides, offset)) || offset != 0)
      return op.emitError()
             << "the msl tier's merge takes buffers in the default memory "
                "space that start at their first element (offset 0); "
                "operand '"
             << name << "' is " << type;
  }
  MergeFacts m;
  m.function = func.getSymName().str();
  m.kernel = m.function + "_merge";
  auto partsType = cast<MemRefType>(op.getOParts().getType());
  m.partElt = partsType.getElementType();
  m.outElt = cast<MemRefType>(op.getO().getType()).getElementType();
  m.heads = op.getNumHeads();
  m.dv = op.getValueHeadDim();
  m.parts = partsType.isDynamicDim(0) ? 0 : partsType.getDimSize(0);
  m.rows = partsType.isDynamicDim(1) ? 0 : partsType.getDimSize(1);
  m.lse = op.getLse() != nullptr;
  m.vec = m.dv % 4 == 0 ? 4 : 1;
  m.threadsPerRow = std::min(m.dv / m.vec, kMaxThreadsPerRow);
  m.rowsPerGroup = kThreads / m.threadsPerRow;

  const std::string pt = mslType(m.partElt), ot = mslType(m.outElt);
  std::vector<std::string> params;
  int next = 0;
  auto buffer = [&](StringRef role, const std::string &decl) {
    params.push_back(decl + " [[buffer(" + std::to_string(next) + ")]]");
    m.buffers.push_back({role.str(), next++});
  };
  buffer("o_parts", "device const " + pt + " *o_parts");
  buffer("lse_parts", "device const float *lse_parts");
  buffer("o", "device " + ot + " *o");
  if (m.lse)
    buffer("lse", "device float *lse");
  buffer("sizes", "constant AttnMergeSizes &sizes");
  bool dynamicStrides = false;
  auto partStrides = strideText("o_parts", op.getOParts(), dynamicStrides);
  auto lsePartStrides =
      strideText("lse_parts", op.getLseParts(), dynamicStrides);
  auto oStrides = strideText("o", op.getO(), dynamicStrides);
  std::optional<SmallVector<std::string>> lseStrides;
  if (m.lse)
    lseStrides = strideText("lse", op.getLse(), dynamicStrides);
  for (auto [role, value] : operands) {
    if (!value)
      continue;
    auto type = cast<MemRefType>(value.getType());
    if (type.getLayout().isIdentity())
      continue;
    m.strided.push_back(role.str());
    m.strideValues.push_back(type.getStridesAndOffset().first);
  }
  m.dynamicStrides = dynamicStrides;
  if (dynamicStrides)
    buffer("strides", "constant AttnMergeStrides &strides");
  params.push_back("uint3 group_id [[threadgroup_position_in_grid]]");
  params.push_back("uint tid [[thread_index_in_threadgroup]]");

  const std::string dv = std::to_string(m.dv);
  const std::string stride = std::to_string(m.threadsPerRow * m.vec);
  os << "// attn.merge_states of @" << m.function << ": " << m.rowsPerGroup
     << " rows per threadgroup, " << m.threadsPerRow << " threads a row.\n";
  os << "kernel void " << m.kernel << "(";
  for (auto [i, param] : llvm::enumerate(params))
    os << (i ? ",\n    " : "\n    ") << param;
  os << ") {\n";
  os << "  const int parts = "
     << (m.parts ? std::to_string(m.parts) : "sizes.N") << ";\n";
  os << "  const long rows = long("
     << (m.rows ? std::to_string(m.rows) : "sizes.T") << ") * " << m.heads
     << ";\n";
  os << "  const long row = long(group_id.x) * " << m.rowsPerGroup
     << " + long(tid / " << m.threadsPerRow << ");\n";
  os << "  if (tid >= " << m.rowsPerGroup * m.threadsPerRow
     << " || row >= rows)\n    return;\n";
  os << "  const int first = int(tid % " << m.threadsPerRow << ") * "
     << m.vec << ";\n";
  // Where the operands are: by row when row-major, else by (t, h).
  if (!m.strided.empty())
    os << "  const long t = row / " << m.heads << ", h = row % " << m.heads
       << ";\n";
  auto at = [](const std::optional<SmallVector<std::string>> &strides,
               StringRef rowMajor, StringRef part) -> std::string {
    if (!strides)
      return rowMajor.str();
    const SmallVector<std::string> &s = *strides;
    std::string text = part.empty() ? "" : (part + " * " + s[0] + " + ").str();
    size_t outer = part.empty() ? 0 : 1;
    return text + "t * " + s[outer] + " + h * " + s[outer + 1];
  };
  const std::string lsePartAt =
      at(lsePartStrides, "long(n) * rows + row", "long(n)");
  const std::string partAt =
      at(partStrides, "(long(n) * rows + row) * " + dv, "long(n)");
  const std::string oAt = at(oStrides, "row * " + dv, "");
  const std::string lseAt = at(lseStrides, "row", "");
  os << "  // M: the largest LSE of the parts that saw a key.\n";
  os << "  float m = ATTN_NO_SCORE;\n";
  os << "  for (int n = 0; n < parts; ++n) {\n";
  os << "    const float l = lse_parts[" << lsePartAt << "];\n";
  os << "    if (!attn_no_key(l))\n      m = max(m, l);\n";
  os << "  }\n";
  os << "  float sum = 0.0f;\n";
  os << "  for (int n = 0; n < parts; ++n) {\n";
  os << "    const float l = lse_parts[" << lsePartAt << "];\n";
  os << "    if (!attn_no_key(l))\n";
  os << "      sum += fast::exp2((l - m) * M_LOG2E_F);\n";
  os << "  }\n";
  os << "  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;\n";
  os << "  for (int c = first; c < " << dv << "; c += " << stride << ") {\n";
  os << "    float acc[" << m.vec << "] = {};\n";
  os << "    for (int n = 0; n < parts; ++n) {\n";
  os << "      const float l = lse_parts[" << lsePartAt << "];\n";
  os << "      // An empty part's O is never read (it may hold anything).\n";
  os << "      if (attn_no_key(l))\n        continue;\n";
  os << "      const float w = fast::exp2((l - m) * M_LOG2E_F);\n";
  os << "      const long at = " << partAt << " + c;\n";
  os << "      for (int j = 0; j < " << m.vec << "; ++j)\n";
  os << "        acc[j] += w * float(o_parts[at + j]);\n";
  os << "    }\n";
  os << "    for (int j = 0; j < " << m.vec << "; ++j)\n";
  os << "      o[" << oAt << " + c + j] = " << ot << "(acc[j] * inv);\n";
  os << "  }\n";
  if (m.lse) {
    os << "  if (first == 0)\n";
    os << "    lse[" << lseAt
       << "] = as_type<float>(sum > 0.0f ? as_type<uint>(m + "
          "M_LN2_F * log2(sum))\n"
          "                                         : 0xff800000u);\n";
  }
  os << "}\n\n";
  return m;
}

void msl::writeMergeCommentFacts(raw_ostream &os,
                                 ArrayRef<MergeFacts> merges) {
  for (const MergeFacts &m : merges) {
    os << "// attn.kernel " << m.kernel << " host=" << m.function
       << " tier=msl kind=merge threads=" << kThreads
       << " rows=" << m.rowsPerGroup << "\n";
    os << "//   grid=(ceil(T * " << m.heads << " / " << m.rowsPerGroup
       << "), 1, 1) threadgroup(0)=0 bytes\n";
    os << "//   buffers:";
    for (auto &[role, idx] : m.buffers)
      os << " " << role << "=" << idx;
    os << "\n";
  }
}

/// The strides of the strided operands (-1: dynamic, in AttnMergeStrides),
/// as the launch facts' "strides" member; empty when all are row-major.
static std::string stridesJson(const MergeFacts &m) {
  if (m.strided.empty())
    return "";
  std::string text = "     \"strides\": {";
  for (auto [i, role] : llvm::enumerate(m.strided)) {
    text += (i ? ", \"" : "\"") + role + "\": [";
    for (auto [j, stride] : llvm::enumerate(m.strideValues[i]))
      text += (j ? ", " : "") +
              std::to_string(ShapedType::isDynamic(stride) ? -1 : stride);
    text += "]";
  }
  return text + "},\n";
}

void msl::writeMergeJsonFacts(raw_ostream &os, ArrayRef<MergeFacts> merges) {
  os << ",\n  \"merges\": [";
  for (auto [i, m] : llvm::enumerate(merges)) {
    os << (i ? "," : "") << "\n    {\"name\": \"" << m.function
       << "\", \"kernel\": \"" << m.kernel << "\", \"dtype\": \""
       << dtypeName(m.partElt) << "\", \"out_dtype\": \""
       << dtypeName(m.outElt) << "\",\n     \"heads\": " << m.heads
       << ", \"value_head_dim\": " << m.dv << ", \"parts\": " << m.parts
       << ", \"rows\": " << m.rows << ", \"lse\": "
       << (m.lse ? "true" : "false") << ",\n     \"msl_version\": \""
       << m.version() / 100 << "." << m.version() / 10 % 10
       << "\", \"threads_per_threadgroup\": [" << kThreads
       << ", 1, 1], \"rows_per_threadgroup\": " << m.rowsPerGroup
       << ",\n     \"threadgroups_per_grid\": [\"ceil(T * " << m.heads
       << " / " << m.rowsPerGroup << ")\", \"1\", \"1\"],\n"
       << "     \"sizes\": {\"fields\": [\"N\", \"T\"], \"type\": \"int32\"},\n"
       << stridesJson(m)
       << "     \"buffers\": {";
    for (auto [bi, buffer] : llvm::enumerate(m.buffers))
      os << (bi ? ", " : "") << "\"" << buffer.first << "\": " << buffer.second;
    os << "}}";
  }
  os << "\n  ]";
}
