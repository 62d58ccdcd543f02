//===- MSLAppend.cpp - attn.cache_append as a Metal kernel
//------------------===//
//
// One copy kernel per attn.cache_append spec function: the new tokens
// into the contiguous, paged or slot-mapped caches.
//
//===----------------------------------------------------------------------===//

#include "codegen/msl/MSLKernel.h"

#include "codegen/msl/ModsToEmitC.h"
#include "dialect/AttnSemantics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::msl;

namespace mlir::attn::msl::detail {

//===----------------------------------------------------------------------===//
// attn.cache_append: one copy kernel per spec function
//===----------------------------------------------------------------------===//

constexpr int64_t kAppendThreads = 128;
constexpr int64_t kAppendTokens = 32;

MetalNeeds needsOf(const AppendFacts &a) {
  MetalNeeds needs;
  if (a.elt.isBF16())
    needs.version = 310;
  return needs;
}

LogicalResult checkSupported(CacheAppendOp op) {
  if (op.isQuantized())
    return op.emitError()
           << "the msl tier does not lower a quantizing cache append ("
           << cast<MemRefType>(op.getKCache().getType()).getElementType()
           << " cache) yet; the CPU pipeline (attn-to-cpu) runs it";
  std::pair<StringRef, Value> operands[] = {
      {"k_new", op.getKNew()},
      {"v_new", op.getVNew()},
      {"block_table", op.getBlockTable()},
      {"kv_lens", op.getKvLens()},
      {"new_lens", op.getNewLens()},
      {"slot_mapping", op.getSlotMapping()},
      {"k_cache", op.getKCache()},
      {"v_cache", op.getVCache()}};
  return checkBuffers(op, operands);
}

/// "32" for a static dim, else `sizes.<field>`.
std::string sizeOf(Value memref, int64_t dim, StringRef field) {
  int64_t size = cast<MemRefType>(memref.getType()).getDimSize(dim);
  if (!ShapedType::isDynamic(size))
    return std::to_string(size);
  return ("sizes." + field).str();
}

/// The kernel of `op`: threadgroups (ceil(S_new / T), Hkv, B) of 128
/// threads; each thread copies vec-element pieces of the T tokens' K rows,
/// then V rows, with the op's rules for what is skipped.
FailureOr<AppendFacts> emitAppend(func::FuncOp func, CacheAppendOp op,
                                  raw_ostream &os) {
  if (failed(checkSupported(op)))
    return failure();
  AppendFacts a;
  a.func = func;
  a.op = op;
  a.name = (func.getSymName() + "_append").str();
  a.elt = cast<MemRefType>(op.getKNew().getType()).getElementType();
  a.hkv = op.getNumKVHeads();
  a.d = op.getHeadDim();
  a.dv = op.getValueHeadDim();
  a.blockSize = op.isSlotMapped() ? 0 : op.getBlockSize();
  a.vec = a.d % 4 == 0 && a.dv % 4 == 0 ? 4 : 1;
  const bool slotted = op.isSlotMapped();
  int64_t sNew =
      cast<MemRefType>(op.getKNew().getType()).getDimSize(slotted ? 0 : 2);
  a.tokens = ShapedType::isDynamic(sNew)
                 ? kAppendTokens
                 : std::min<int64_t>(kAppendTokens, llvm::PowerOf2Ceil(sNew));
  const std::string t = mslType(a.elt);
  const std::string piece = a.vec == 4 ? t + "4" : t;

  SmallVector<std::string> params;
  int next = 0;
  auto buffer = [&](StringRef role, StringRef decl) {
    params.push_back(decl.str() + " [[buffer(" + std::to_string(next) + ")]]");
    a.buffers.push_back({role.str(), next++});
  };
  buffer("k_new", "device const " + t + " *k_new");
  buffer("v_new", "device const " + t + " *v_new");
  if (op.getBlockTable())
    buffer("block_table", "device const int *block_table");
  if (op.getKvLens())
    buffer("kv_lens", "device const int *kv_lens");
  if (op.getNewLens())
    buffer("new_lens", "device const int *new_lens");
  if (slotted)
    buffer("slot_mapping", "device const int *slot_mapping");
  buffer("k_cache", "device " + t + " *k_cache");
  buffer("v_cache", "device " + t + " *v_cache");
  buffer("sizes", "constant AttnAppendSizes &sizes");
  params.push_back("uint3 group_id [[threadgroup_position_in_grid]]");
  params.push_back("uint tid [[thread_index_in_threadgroup]]");

  Value kn = op.getKNew(), kc = op.getKCache();
  const std::string sNewText = sizeOf(kn, slotted ? 0 : 2, "S_new");
  if (slotted) {
    // Packed tokens [T, Hkv, D] to slot_mapping's slots of [N, Hkv, R, D]
    // (sizes: S_new = T, num_blocks = N, capacity = R).
    os << "// attn.cache_append of @" << func.getSymName() << ": " << a.tokens
       << " packed tokens per threadgroup to their slots, " << a.vec
       << "-element pieces.\n";
    os << "kernel void " << a.name << "(";
    for (auto [i, param] : llvm::enumerate(params))
      os << (i ? ",\n    " : "\n    ") << param;
    os << ") {\n";
    os << "  const int h = int(group_id.y);\n";
    os << "  const int first = int(group_id.x) * " << a.tokens << ";\n";
    os << "  const int tokens = " << sNewText << ";\n";
    os << "  const int rows = " << sizeOf(kc, 2, "capacity") << ";\n";
    os << "  const long slots = long(" << sizeOf(kc, 0, "num_blocks")
       << ") * rows;\n";
    for (auto [src, dst, width] :
         {std::tuple<StringRef, StringRef, int64_t>{"k_new", "k_cache", a.d},
          {"v_new", "v_cache", a.dv}}) {
      const int64_t perRow = width / a.vec;
      os << "  for (int i = int(tid); i < " << a.tokens * perRow
         << "; i += " << kAppendThreads << ") {\n";
      os << "    const int t = first + i / " << perRow << ";\n";
      os << "    const int col = i % " << perRow << " * " << a.vec << ";\n";
      os << "    if (t >= tokens)\n      continue;\n";
      os << "    // A slot outside the cache (vLLM's padding -1) is "
            "skipped.\n";
      os << "    const long s = slot_mapping[t];\n";
      os << "    if (s < 0 || s >= slots)\n      continue;\n";
      os << "    const long to = ((s / rows * " << a.hkv
         << " + h) * rows + s % rows) * " << width << " + col;\n";
      os << "    const long from = (long(t) * " << a.hkv << " + h) * " << width
         << " + col;\n";
      if (a.vec == 1)
        os << "    " << dst << "[to] = " << src << "[from];\n";
      else
        os << "    *(device " << piece << " *)(" << dst << " + to) = *(device "
           << "const " << piece << " *)(" << src << " + from);\n";
      os << "  }\n";
    }
    os << "}\n\n";
    return a;
  }
  os << "// attn.cache_append of @" << func.getSymName() << ": " << a.tokens
     << " new tokens per threadgroup, " << a.vec << "-element pieces.\n";
  os << "kernel void " << a.name << "(";
  for (auto [i, param] : llvm::enumerate(params))
    os << (i ? ",\n    " : "\n    ") << param;
  os << ") {\n";
  os << "  const int b = int(group_id.z), h = int(group_id.y);\n";
  os << "  const int first = int(group_id.x) * " << a.tokens << ";\n";
  os << "  const int s_new = " << sNewText << ";\n";
  os << "  // The sequence's rows start at max(kv_lens[b], 0); the first "
        "`count`\n  // of its new tokens fit (the capacity or the block "
        "table), the rest\n  // are skipped.\n";
  os << "  const int start = max(kv_lens[b], 0);\n";
  if (op.getNewLens())
    os << "  const int n = min(max(new_lens[b], 0), s_new);\n";
  else
    os << "  const int n = s_new;\n";
  if (a.blockSize)
    os << "  const int limit = " << sizeOf(op.getBlockTable(), 1, "max_blocks")
       << " * " << a.blockSize << ";\n";
  else
    os << "  const int limit = " << sizeOf(kc, 2, "capacity") << ";\n";
  os << "  const int count = clamp(limit - start, 0, n);\n";
  if (a.blockSize)
    os << "  const int num_blocks = " << sizeOf(kc, 0, "num_blocks") << ";\n"
       << "  const int max_blocks = "
       << sizeOf(op.getBlockTable(), 1, "max_blocks") << ";\n";
  for (auto [src, dst, width] :
       {std::tuple<StringRef, StringRef, int64_t>{"k_new", "k_cache", a.d},
        {"v_new", "v_cache", a.dv}}) {
    const int64_t perRow = width / a.vec;
    os << "  for (int i = int(tid); i < " << a.tokens * perRow
       << "; i += " << kAppendThreads << ") {\n";
    os << "    const int t = first + i / " << perRow << ";\n";
    os << "    const int col = i % " << perRow << " * " << a.vec << ";\n";
    os << "    if (t >= count)\n      continue;\n";
    os << "    const int pos = start + t;\n";
    if (a.blockSize) {
      os << "    const int slot = block_table[long(b) * max_blocks + pos / "
         << a.blockSize << "];\n";
      os << "    if (slot < 0 || slot >= num_blocks)\n      continue;\n";
      os << "    const long to = ((long(slot) * " << a.hkv << " + h) * "
         << a.blockSize << " + pos % " << a.blockSize << ") * " << width
         << " + col;\n";
    } else {
      os << "    const long to = ((long(b) * " << a.hkv << " + h) * long("
         << sizeOf(kc, 2, "capacity") << ") + pos) * " << width << " + col;\n";
    }
    os << "    const long from = ((long(b) * " << a.hkv
       << " + h) * long(s_new) + t) * " << width << " + col;\n";
    if (a.vec == 1)
      os << "    " << dst << "[to] = " << src << "[from];\n";
    else
      os << "    *(device " << piece << " *)(" << dst << " + to) = *(device "
         << "const " << piece << " *)(" << src << " + from);\n";
    os << "  }\n";
  }
  os << "}\n\n";
  return a;
}

void writeAppendCommentFacts(raw_ostream &os, ArrayRef<AppendFacts> appends) {
  for (AppendFacts a : appends) { // the op accessors are not const
    os << "// attn.kernel " << a.name << " host=" << a.func.getSymName()
       << " tier=msl kind=append threads=" << kAppendThreads
       << " tokens=" << a.tokens << "\n";
    os << "//   grid=(ceil(S_new / " << a.tokens << "), " << a.hkv
       << ", B) threadgroup(0)=0 bytes\n";
    os << "//   buffers:";
    for (auto &[role, idx] : a.buffers)
      os << " " << role << "=" << idx;
    os << "\n";
  }
}

void writeAppendJsonFacts(raw_ostream &os, ArrayRef<AppendFacts> appends) {
  os << ",\n  \"appends\": [";
  for (auto [i, facts] : llvm::enumerate(appends)) {
    AppendFacts a = facts; // the op accessors are not const
    MetalNeeds needs = needsOf(a);
    os << (i ? "," : "") << "\n    {\"name\": \"" << a.func.getSymName()
       << "\", \"kernel\": \"" << a.name << "\", \"dtype\": \""
       << dtypeName(a.elt) << "\",\n     \"kv_heads\": " << a.hkv
       << ", \"head_dim\": " << a.d << ", \"value_head_dim\": " << a.dv
       << ", \"block_size\": " << a.blockSize
       << ", \"new_lens\": " << (a.op.getNewLens() ? "true" : "false")
       << ", \"slot_mapping\": " << (a.op.getSlotMapping() ? "true" : "false")
       << ",\n     \"msl_version\": \"" << needs.versionText()
       << "\", \"threads_per_threadgroup\": [" << kAppendThreads
       << ", 1, 1], \"tokens_per_threadgroup\": " << a.tokens
       << ",\n     \"threadgroups_per_grid\": [\"ceil(S_new / " << a.tokens
       << ")\", \"" << a.hkv << "\", \"B\"],\n"
       << "     \"sizes\": {\"fields\": [\"B\", \"S_new\", \"capacity\", "
          "\"max_blocks\", \"num_blocks\"], \"type\": \"int32\"},\n"
       << "     \"buffers\": {";
    for (auto [bi, buffer] : llvm::enumerate(a.buffers))
      os << (bi ? ", " : "") << "\"" << buffer.first << "\": " << buffer.second;
    os << "}}";
  }
  os << "\n  ]";
}

} // namespace mlir::attn::msl::detail
