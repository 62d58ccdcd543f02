//===- CABIWriter.cpp - a library's header and C tables -------------------===//

#include "codegen/package/CABIWriter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::package;

namespace {

// "batch": the size of `operand`'s dimension of role `role` in terms of
// the C functions' sizes ("batch + 1" for the offsets).
std::string sizeText(int operand, Size role) {
  return std::string(kSizeNames[role]) +
         (sizeOffset(operand) ? " + " + std::to_string(sizeOffset(operand))
                              : "");
}

// "[batch, 32, q_len, 128]"
std::string shapeText(int o, const Operand &operand) {
  std::string s = "[";
  for (auto [dim, role] : llvm::enumerate(operand.roles)) {
    int64_t size = operand.type.getDimSize(dim);
    s += dim ? ", " : "";
    s += ShapedType::isDynamic(size) ? sizeText(o, role) : std::to_string(size);
  }
  return s + "]";
}

// The entries of the C tables indexed by operand: the operands before the
// packed forms' offsets, and those where the kernel has them (the rest are
// zero-initialized), so the tables of other kernels read as before.
int tableOperands(const Kernel &kernel) {
  int count = ATTNRT_SLOT_MAPPING + 1;
  for (int o = count; o < ATTNRT_NUM_OPERANDS; ++o)
    if (kernel.operands[o].type)
      count = o + 1;
  return count;
}

// The same for the sizes the C passes around (kPaddedSizes).
int tableSizes(const Kernel &kernel) {
  int count = kPaddedSizes;
  for (int i = count; i < NumSizes; ++i)
    if (kernel.dynamicSize[i])
      count = i + 1;
  return count;
}

// The names of the sizes the C functions take, in order: the operands'
// dynamic sizes, then the captures'.
std::vector<std::string> sizeNames(const Kernel &kernel) {
  std::vector<std::string> names;
  for (int i = 0; i < NumSizes; ++i)
    if (kernel.dynamicSize[i])
      names.push_back(kSizeNames[i]);
  for (const std::string &name : kernel.captureSizes())
    names.push_back(name);
  return names;
}

std::string sizeParams(const Kernel &kernel) {
  std::string s;
  for (const std::string &name : sizeNames(kernel))
    s += std::string(s.empty() ? "" : ", ") + "int64_t " + name;
  return s.empty() ? "void" : s;
}

// The C name of function argument `arg`, an operand or a capture; "" if it
// is neither.
std::string argumentName(const Kernel &kernel, int arg, bool *output) {
  *output = false;
  for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o)
    if (kernel.operands[o].argument == arg) {
      *output = isOutput(kernel, o);
      return operandName(kernel, o);
    }
  if (const Capture *capture = kernel.captureAt(arg))
    return capture->name;
  return "";
}

/// _run's parameters; `splits` adds _run_splits' count before the workspace.
std::string runParams(const Kernel &kernel, bool splits = false) {
  std::string s;
  for (int arg = 0; arg < kernel.numArguments; ++arg) {
    bool output;
    std::string name = argumentName(kernel, arg, &output);
    s += std::string("    ") + (output ? "void *" : "const void *") + name +
         ", const int64_t *" + name + "_strides,\n";
  }
  for (const std::string &name : sizeNames(kernel))
    s += "    int64_t " + name + ",\n";
  if (splits)
    s += "    int64_t num_splits,\n";
  return s + "    void *workspace, size_t workspace_bytes, void *stream";
}

/// The arguments that pass _run's parameters on to _run_splits.
std::string runArguments(const Kernel &kernel) {
  std::string s;
  for (int arg = 0; arg < kernel.numArguments; ++arg) {
    bool output;
    std::string name = argumentName(kernel, arg, &output);
    s += name + ", " + name + "_strides, ";
  }
  for (const std::string &name : sizeNames(kernel))
    s += name + ", ";
  return s;
}

// "[capture0_size0, 64]"
std::string captureShapeText(const Capture &capture) {
  std::string s = "[";
  for (int64_t d = 0; d < capture.type.getRank(); ++d)
    s += (d ? ", " : "") + (capture.type.isDynamicDim(d)
                                ? capture.sizeNames[d]
                                : std::to_string(capture.type.getDimSize(d)));
  return s + "]";
}

// An operand_type initializer: rank, element bytes, row-major, strides.
std::string typeEntry(MemRefType type) {
  bool rowMajor = type.getLayout().isIdentity();
  SmallVector<int64_t> strides(4, 0);
  if (!rowMajor) {
    auto [layoutStrides, offset] = type.getStridesAndOffset();
    for (auto [i, st] : llvm::enumerate(layoutStrides))
      strides[i] = ShapedType::isDynamic(st) ? -1 : st;
  }
  return "{" + std::to_string(type.getRank()) + ", " +
         std::to_string(type.getElementTypeBitWidth() / 8) + ", " +
         (rowMajor ? "1" : "0") + ", {" + std::to_string(strides[0]) + ", " +
         std::to_string(strides[1]) + ", " + std::to_string(strides[2]) + ", " +
         std::to_string(strides[3]) + "}}";
}

std::string describeSpec(const Kernel &kernel) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o) {
    const Operand &operand = kernel.operands[o];
    if (!operand.type)
      continue;
    bool output;
    std::string param = argumentName(kernel, operand.argument, &output);
    os << " *   " << operandName(kernel, o) << " " << shapeText(o, operand)
       << " " << elementName(operand.type.getElementType());
    if (param != operandName(kernel, o))
      os << " (parameter " << param << ", the same buffer)";
    if (!operand.type.getLayout().isIdentity())
      os << ", layout " << operand.type.getLayout();
    os << "\n";
  }
  for (const Capture &capture : kernel.captures) {
    os << " *   " << capture.name << " " << captureShapeText(capture) << " "
       << elementName(capture.type.getElementType());
    if (!capture.type.getLayout().isIdentity())
      os << ", layout " << capture.type.getLayout();
    os << " (a capture: read by the spec's mod regions)\n";
  }
  os << " *   attributes:";
  bool any = false;
  for (NamedAttribute attr : kernel.specOp()->getAttrs()) {
    StringRef attrName = attr.getName().strref();
    if (!llvm::is_contained(
            {"scale", "mask", "softcap", "max_q_len", "schedule"}, attrName))
      continue;
    os << " " << attrName << " = ";
    if (auto integer = dyn_cast<IntegerAttr>(attr.getValue()))
      os << integer.getInt(); // max_q_len
    else
      os << attr.getValue();
    any = true;
  }
  os << (any ? "" : " (defaults)") << "\n *   code:";
  for (const DeviceCode &code : kernel.code) {
    os << " " << code.chip << " (" << code.launches.front().tierName();
    // Prefill alternatives (attnrt_attention.h): the tiles the grid picks.
    auto isPrefill = [](const KernelLaunch &l) {
      return l.contract.getRole() == LaunchRole::Prefill;
    };
    if (llvm::count_if(code.launches, isPrefill) > 1) {
      os << ", block_q";
      bool first = true;
      for (const KernelLaunch &l : code.launches) {
        if (!isPrefill(l))
          continue;
        os << (first ? " " : " or ") << l.blockQ();
        first = false;
        if (l.contract.getThreads() != 128)
          os << " (" << l.contract.getThreads() / 32 << " warps)";
        if (l.contract.getMaxKvLen())
          os << " (first for kv_len <= " << l.contract.getMaxKvLen() << ")";
      }
    }
    os << (code.cubin.empty() ? ", PTX)" : ", cubin + PTX)");
  }
  os << "\n";
  return s;
}

// A packed kernel's layout and what its caller guarantees (empty for a
// padded one), as comment lines.
std::string packedText(const Kernel &kernel) {
  if (!kernel.packedQ() && !kernel.packedKV())
    return "";
  std::vector<std::string> lines;
  lines.push_back("Packed (varlen) batch, FlashAttention's layout: the batch's "
                  "sequences");
  if (kernel.packedQ())
    lines.push_back(
        std::string("back to back. Sequence b's queries are rows "
                    "cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 of q, o") +
        (kernel.operands[ATTNRT_LSE].type ? " and lse" : "") +
        " (total_q rows).");
  if (kernel.packedKV())
    lines.push_back(std::string(kernel.packedQ() ? "Its"
                                                 : "back to back. "
                                                   "Sequence b's") +
                    " keys are rows cu_seqlens_k[b] .. cu_seqlens_k[b + 1] - "
                    "1 of k and v (total_k rows).");
  lines.push_back("The offsets are int32 DEVICE arrays of batch + 1 entries. "
                  "No function reads them, so the caller guarantees that");
  lines.push_back("they rise monotonically from 0, that the last is at most "
                  "the rows of the buffers they index, and that every");
  lines.push_back("sequence's keys fit K and V.");
  std::string zero = kernel.packedQ() && kernel.packedKV()
                         ? "batch, total_q and total_k"
                     : kernel.packedQ() ? "batch and total_q"
                                        : "batch and total_k";
  lines.push_back(zero + " may be 0; a batch of no sequences" +
                  (kernel.packedQ() ? " or no queries" : "") +
                  " launches nothing.");
  if (kernel.packedQ() && kernel.staticMaxQLen)
    lines.push_back("No sequence may have more than " +
                    std::to_string(kernel.staticMaxQLen) +
                    " queries (max_q_len): rows past them stay unwritten.");
  else if (kernel.packedQ())
    lines.push_back("max_q_len: the most queries a sequence has "
                    "(FlashAttention's max_seqlen_q), a promise; 0: not "
                    "known.");
  // Wrapped at 76 columns.
  std::string text, line;
  for (const std::string &sentence : lines)
    for (StringRef rest = sentence; !rest.empty();) {
      auto [word, tail] = rest.split(' ');
      if (!line.empty() && line.size() + 1 + word.size() > 72) {
        text += " * " + line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word.str();
      rest = tail;
    }
  if (!line.empty())
    text += " * " + line + "\n";
  return text;
}

std::string upper(StringRef s) {
  std::string u = s.str();
  for (char &c : u)
    c = llvm::toUpper(c);
  return u;
}

std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

// Device code goes in with .incbin: megabytes of PTX as C initializers
// would take the C compiler seconds. A NUL follows each image (PTX is text)
// outside its size.
std::string incbin(StringRef symbol, StringRef path) {
  return ("__asm__(\".section .rodata\\n.balign 16\\n.hidden " + symbol +
          "\\n.globl " + symbol + "\\n" + symbol + ":\\n.incbin \\\"" + path +
          "\\\"\\n.byte 0\\n.previous\");\n" + "extern const unsigned char " +
          symbol + "[];\n")
      .str();
}

// "ATTNRT_SIZE_GROUP_ROWS": the runtime's name of an enum case.
std::string cName(StringRef prefix, StringRef name) {
  return (prefix + upper(name)).str();
}

std::string termsText(ArrayRef<LaunchTerm> terms) {
  std::string s;
  for (const LaunchTerm &t : terms)
    s += (s.empty() ? "{" : ", {") + std::to_string(t.dim) + ", " +
         cName("ATTNRT_SIZE_", stringifyLaunchSize(t.size)) + ", " +
         std::to_string(t.value) + "}";
  return s.empty() ? "{{0}}" : "{" + s + "}";
}

// One attnrt_launch_facts: `launch`'s contract, as attn-translate prints
// it, then as data.
std::string launchFacts(const KernelLaunch &launch) {
  LaunchAttr c = launch.contract;
  std::string s;
  llvm::raw_string_ostream os(s);
  std::string text;
  llvm::raw_string_ostream(text) << c;
  os << "    /* " << text << " */\n"
     << "    {" << cString(launch.kernel) << ", "
     << cName("ATTNRT_ROLE_", stringifyLaunchRole(c.getRole())) << ", "
     << c.getThreads() << ", " << c.getShared() << ",\n     "
     << c.getGrid().size() << ", " << termsText(c.getGrid()) << ",\n     "
     << c.getParams().size() << ", {";
  for (auto [i, p] : llvm::enumerate(c.getParams()))
    os << (i ? ", " : "") << "{"
       << cName("ATTNRT_PARAM_", stringifyLaunchParamKind(p.kind)) << ", "
       << (p.kind == LaunchParamKind::Workspace ? std::string("0")
           : p.kind == LaunchParamKind::Capture
               ? std::to_string(p.index)
               : cName("ATTNRT_", stringifyLaunchOperand(p.operand)))
       << "}";
  os << "},\n     " << c.getWorkspaceRank() << ", "
     << (c.hasWorkspace() ? c.getWorkspaceType().getIntOrFloatBitWidth() / 8
                          : 0)
     << ", " << c.getWorkspace().size() << ", " << termsText(c.getWorkspace())
     << ",\n     " << c.getBlockQ() << ", " << c.getGroup() << ", "
     << (c.getProgrammatic() ? 1 : 0) << ", " << c.getMaxKvLen() << "},\n";
  return s;
}

} // namespace

/// The header's word on arch-specific images (sm_90a): which devices run
/// them. Empty where the library has none.
static std::string archSpecificNote(const Library &library) {
  SmallVector<StringRef> chips;
  StringRef(library.targets).split(chips, ',', -1, /*KeepEmpty=*/false);
  std::string s;
  for (StringRef chip : chips) {
    if (!chip.ends_with("a"))
      continue;
    // "sm_90a" -> compute capability 9.0.
    StringRef digits = chip.drop_front(3).drop_back();
    std::string cc = (digits.drop_back() + "." + digits.take_back()).str();
    s += " * The " + chip.str() +
         " code is arch-specific: it runs only on devices of compute\n"
         " * capability " +
         cc +
         ", where libattnrt takes it before the other images, and\n"
         " * is not forward compatible: other devices run the library's "
         "other\n * images, and where none fits its calls return "
         "ATTN_ERROR_UNSUPPORTED_DEVICE.\n";
    // attn-compile leaves out the images that would repeat the plain
    // chip's code (DeviceCode::servedBy).
    if (llvm::is_contained(chips, chip.drop_back()))
      s += " * A kernel whose " + chip.str() +
           " code would use none of its own instructions\n * (wgmma) has "
           "no " +
           chip.str() + " image: its " + chip.drop_back().str() +
           " image, the same code, runs there.\n";
  }
  return s;
}

std::string package::headerText(const Library &library) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const std::string &name = library.name, &p = library.prefix;
  std::string guard = upper(name) + "_ATTN_H";
  os << "/* " << name << ".h - attention kernels made by attn-compile from "
     << library.specFile << " for " << library.targets << ".\n"
     << R"( *
 * Each kernel has three functions. All return an ATTN_* code (0 on success);
 * )" << p
     << R"(_last_error() then says what was wrong, on the calling thread.
 *
 *   <kernel>_run(...)              launches the kernel on `stream` (a CUstream
 *                                  or cudaStream_t; NULL: the default stream)
 *                                  and returns once it is queued.
 *   <kernel>_can_implement(sizes)  whether the sizes are ones it can do.
 *   <kernel>_workspace_bytes(sizes, &bytes)
 *                                  the workspace _run needs for these sizes
 *                                  (0 for most; split-K decode kernels need
 *                                  one at more than one split, sized for the
 *                                  current GPU and these sizes, and a
 *                                  mask_mod's block mask lives there). A kernel
 *                                  with a dynamic q_len runs its split-K
 *                                  decode code for q_len 1 to 16 (see its
 *                                  line below): ask with the call's sizes.
 *   <kernel>_run_splits(..., num_splits, workspace, bytes, stream) and
 *   <kernel>_workspace_bytes_splits(sizes, num_splits, &bytes)
 *                                  the same with the count of K/V splits of
 *                                  a split-K kernel fixed by the caller
 *                                  (0: chosen as by _run). With a fixed
 *                                  count each sequence's output depends on
 *                                  its own inputs alone, bit for bit, not on
 *                                  the batch it runs in or the GPU's size.
 *                                  Kernels without splits take 0 or 1.
 *
 * Arguments of _run:
 *  - device pointers, one per operand, in the spec function's order, each
 *    followed by its strides in elements (NULL: row-major). Q, K, V and O
 *    (an append's k_new, v_new, k_cache and v_cache; a merge's o_parts
 *    and o) must be 16-byte aligned, as must their strides in bytes (all
 *    but the last, which is 1); the layout's static strides must match.
 *  - a spec whose score_mod / mask_mod regions read memrefs (captures)
 *    takes them in the same way, named capture0, capture1, ... (device
 *    pointers aligned to their element size); their dynamic dims are sizes
 *    named capture<i>_size<dim>. The kernel reads them at the indices the
 *    regions compute, which no check can see: the caller keeps those
 *    reads inside the captures.
 *  - the sizes the spec leaves dynamic (every size at least 1).
 *  - the workspace (device memory, 16-byte aligned) and its size in bytes.
 *  - the stream.
 * A cache-append kernel (attn.cache_append) writes each sequence's new
 * tokens at positions kv_lens[b], kv_lens[b] + 1, ... of k_cache and
 * v_cache (through block_table when paged), new_lens[b] of them if given,
 * else new_len; tokens past the capacity or the block table, and blocks
 * outside the cache, are skipped. It does not update kv_lens: the caller
 * adds the new counts before an attention reads the new tokens.
 * A merge kernel (attn.merge_states) merges num_parts partial attention
 * states over disjoint key sets: for each (token, head) row,
 * o = sum_n w_n o_parts[n] / sum_n w_n with w_n = exp(lse_parts[n] - max),
 * lse = max + log(sum_n w_n); a part with LSE -inf is skipped (its O is
 * never read) and a row with no other part gets o = 0, lse = -inf.
 * The kernel runs on the GPU of the CUDA context current on the calling
 * thread (the CUDA runtime's current device; device 0 if none is current);
 * its code is loaded on first use per device, thread-safely. A call
 * rejected by a check writes nothing. The CUDA driver is found at run time
 * (libcuda.so.1, or $ATTNRT_CUDA_DRIVER); without one the functions return
 * ATTN_ERROR_NO_DRIVER. Link with -ldl -lpthread.
)" << archSpecificNote(library)
     << R"( */

#ifndef )"
     << guard << "\n#define " << guard << R"(

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ATTN_STATUS_CODES
#define ATTN_STATUS_CODES
)";
#define EMIT_STATUS(code, value, text)                                         \
  os << "#define " #code " " << value << " /* " << text << " */\n";
  ATTN_STATUS_LIST(EMIT_STATUS)
#undef EMIT_STATUS
  os << "#endif\n\n"
     << "/* A constant description of an ATTN_* code. */\n"
     << "const char *" << p << "_status_string(int status);\n"
     << "/* Why the calling thread's last call failed (\"\" if it did not). "
        "*/\n"
     << "const char *" << p << "_last_error(void);\n";
  for (const Kernel &kernel : library.kernels) {
    std::string fn = p + "_" + kernel.name;
    os << "\n/* @" << kernel.name << "\n" << describeSpec(kernel);
    os << packedText(kernel);
    if (kernel.operands[ATTNRT_SINKS].type)
      os << " * sinks: one logit per query head (natural-log units, not "
            "scaled) that joins\n * each row's softmax denominator and "
            "carries no value; the LSE counts it, and\n * a row that sees "
            "no key gets O = 0 and LSE = its head's sink.\n";
    if (kernel.op && AttentionOp(kernel.op).getVFromK())
      os << " * v: the first " << AttentionOp(kernel.op).getValueHeadDim()
         << " columns of k (v_from_k: one latent cache, as MLA's);\n"
            " * there is no v argument.\n";
    if (kernel.op && AttentionOp(kernel.op).isQuantizedKV())
      os << " * k and v: a quantized cache of "
         << elementName(kernel.operands[ATTNRT_K].type.getElementType())
         << " bytes; an element is its decoded byte times\n"
            " * its scale (k_scale, v_scale; absent: 1), one per tensor, "
            "per K/V head or\n * per token (laid out like k without its "
            "last dimension).\n";
    if (!kernel.decodeCode.empty() && kernel.packedQ())
      os << " * max_q_len 1 to " << kernel.decodeCode.front().maxQLen
         << " runs split-K decode code, which may need a workspace\n"
            " * (_workspace_bytes); 0 (not known) or more runs the prefill "
            "code.\n";
    else if (!kernel.decodeCode.empty())
      os << " * q_len 1 to " << kernel.decodeCode.front().maxQLen
         << " runs split-K decode code, which may need a workspace\n"
            " * (_workspace_bytes); longer queries run the prefill code.\n";
    os << " */\n"
       << "int " << fn << "_run(\n"
       << runParams(kernel) << ");\n"
       << "int " << fn << "_can_implement(" << sizeParams(kernel) << ");\n"
       << "int " << fn << "_workspace_bytes(";
    std::string sizes = sizeParams(kernel);
    std::string leading = sizes == "void" ? "" : sizes + ", ";
    os << leading << "size_t *bytes);\n"
       << "int " << fn << "_run_splits(\n"
       << runParams(kernel, /*splits=*/true) << ");\n"
       << "int " << fn << "_workspace_bytes_splits(" << leading
       << "int64_t num_splits, size_t *bytes);\n";
    if (kernel.hasBlockMask())
      os << "/* The block mask alone, into the workspace (for these sizes and\n"
            "   captures; o is not written), and the attention reusing it:\n"
            "   one classification for several calls, e.g. every layer. */\n"
         << "int " << fn << "_block_mask(\n"
         << runParams(kernel) << ");\n"
         << "int " << fn << "_run_block_masked(\n"
         << runParams(kernel) << ");\n";
  }
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return s;
}

// Whether libattnrt's tables can hold `launch`'s contract, and the
// operands it passes are the kernel's: the contract is checked where it is
// read, it is not rebuilt here. An error says what does not fit.
std::string package::contractProblem(const Kernel &kernel,
                                     const KernelLaunch &launch) {
  LaunchAttr contract = launch.contract;
  if (!contract)
    return "it has no attn.launch contract";
  if (contract.getGrid().size() > ATTNRT_MAX_LAUNCH_TERMS ||
      contract.getWorkspace().size() > ATTNRT_MAX_LAUNCH_TERMS)
    return "its grid or workspace has more than " +
           std::to_string(ATTNRT_MAX_LAUNCH_TERMS) + " terms";
  if (contract.getParams().size() > ATTNRT_MAX_LAUNCH_PARAMS)
    return "it has more than " + std::to_string(ATTNRT_MAX_LAUNCH_PARAMS) +
           " parameters";
  if (contract.getWorkspaceRank() > ATTNRT_MAX_RANK)
    return "its workspace has rank " +
           std::to_string(contract.getWorkspaceRank());
  for (const LaunchParam &param : contract.getParams()) {
    if (param.kind == LaunchParamKind::Capture) {
      if (param.index >= kernel.captures.size())
        return "it passes capture(" + std::to_string(param.index) +
               "), but the kernel has " +
               std::to_string(kernel.captures.size()) + " captures";
      continue;
    }
    if (param.kind != LaunchParamKind::Workspace &&
        !kernel.operands[static_cast<int>(param.operand)].type)
      return "it passes operand '" +
             stringifyLaunchOperand(param.operand).str() +
             "', which the kernel does not have";
  }
  return "";
}

std::string package::sourceText(const Library &library, StringRef codeDir) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const std::string &name = library.name, &p = library.prefix;
  os << "/* Generated by attn-compile from " << library.specFile << ". */\n"
     << "#include \"" << name << ".h\"\n#include \"attnrt.h\"\n"
     << "#include \"attnrt_attention.h\"\n\n"
     // Weak: every library of one prefix defines the same two functions
     // over the one libattnrt, so several link into one program.
     << "__attribute__((weak)) const char *" << p
     << "_status_string(int status) {\n"
     << "  return attnrt_attention_status_string(status);\n}\n"
     << "__attribute__((weak)) const char *" << p << "_last_error(void) {\n"
     << "  return attnrt_last_error();\n}\n";
  for (const Kernel &kernel : library.kernels) {
    std::string id = p + "_" + kernel.name;
    if (!kernel.captures.empty()) {
      os << "\nstatic const attnrt_operand_type " << id << "_captures[] = {\n";
      for (const Capture &capture : kernel.captures)
        os << "    " << typeEntry(capture.type) << ", /* " << capture.name
           << " */\n";
      os << "};\n";
    }
    // Device code and launches per target; a dynamic-Sq kernel's
    // decode-tier code beside them, as a second kernel of the same
    // operands that the functions below pick for short queries.
    auto emitKernel = [&](const std::vector<DeviceCode> &codes,
                          const std::string &kid, StringRef fileTag) {
      std::string codeTable;
      int images = 0;
      for (const DeviceCode &code : codes) {
        std::string launches = kid + "_launches_" + code.chip;
        os << "\nstatic const attnrt_launch_facts " << launches << "[] = {\n";
        for (const KernelLaunch &l : code.launches)
          os << launchFacts(l);
        os << "};\n";
        for (bool cubin : {true, false}) {
          if (cubin && code.cubin.empty())
            continue;
          std::string symbol =
              kid + "_" + code.chip + (cubin ? "_cubin" : "_ptx");
          std::string path = (codeDir + "/" + kernel.name + fileTag +
                              code.chip + (cubin ? ".cubin" : ".ptx"))
                                 .str();
          os << incbin(symbol, path);
          size_t size = cubin ? code.cubin.size() : code.ptx.size();
          codeTable += "    {" + std::to_string(code.sm) + ", " +
                       (code.archSpecific ? "1" : "0") + ", " +
                       (cubin ? "1" : "0") + ", " + symbol + ", " +
                       std::to_string(size) + ", " + launches + ", " +
                       std::to_string(code.launches.size()) + "},\n";
          ++images;
        }
      }
      os << "\nstatic const attnrt_device_code " << kid << "_code[] = {\n"
         << codeTable << "};\n";
      os << "static void *" << kid << "_loaded[ATTNRT_MAX_DEVICES];\n";
      os << "static const attnrt_attention_kernel " << kid << "_kernel = {\n"
         << "    " << cString(kernel.name) << ",\n    {\n";
      for (int o = 0, e = tableOperands(kernel); o < e; ++o) {
        const Operand &operand = kernel.operands[o];
        if (!operand.type) {
          os << "        {0, 0, 0, {0, 0, 0, 0}}, /* no "
             << operandName(kernel, o) << " */\n";
          continue;
        }
        os << "        " << typeEntry(operand.type) << ", /* "
           << operandName(kernel, o) << " */\n";
      }
      os << "    },\n    " << (kernel.paged() ? 1 : 0) << ", " << kid
         << "_code, " << images << ", " << kid << "_loaded";
      // A packed Q's max_q_len: the spec's, or the decode code's own.
      int64_t maxQLen = kernel.staticMaxQLen;
      if (kernel.packedQ() && !maxQLen && !codes.empty())
        maxQLen = codes.front().maxQLen;
      if (maxQLen || !kernel.captures.empty())
        os << ", " << maxQLen;
      if (!kernel.captures.empty())
        os << ", " << kernel.captures.size() << ", " << id << "_captures";
      os << "};\n";
    };
    emitKernel(kernel.code, id, ".");
    if (!kernel.decodeCode.empty())
      emitKernel(kernel.decodeCode, id + "_decode", ".decode.");
    // Which kernel a call runs.
    os << "\nstatic const attnrt_attention_kernel *" << id
       << "_for(const attnrt_attention_call *call) {\n";
    if (!kernel.decodeCode.empty() && kernel.packedQ()) {
      int64_t most = kernel.decodeCode.front().maxQLen;
      os << "  /* max_q_len 1 to " << most
         << ": the split-K decode code, not the prefill code. */\n"
         << "  if (call->max_q_len >= 1 && call->max_q_len <= " << most << ")\n"
         << "    return &" << id << "_decode_kernel;\n";
    } else if (!kernel.decodeCode.empty()) {
      int64_t most = kernel.decodeCode.front().maxQLen;
      os << "  /* q_len 1 to " << most
         << ": the split-K decode code, not the prefill code. */\n"
         << "  long long q_len = call->sizes[ATTNRT_Q][2];\n"
         << "  if (q_len >= 1 && q_len <= " << most << ")\n"
         << "    return &" << id << "_decode_kernel;\n";
    } else {
      os << "  (void)call;\n";
    }
    os << "  return &" << id << "_kernel;\n}\n";
    // Sizes of every operand from the dynamic sizes and the type.
    os << "\nstatic void " << id
       << "_sizes(attnrt_attention_call *call, const int64_t *dynamic) {\n";
    for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o) {
      const Operand &operand = kernel.operands[o];
      for (auto [dim, role] : llvm::enumerate(operand.roles)) {
        int64_t size = operand.type.getDimSize(dim);
        os << "  call->sizes[" << o << "][" << dim << "] = ";
        if (ShapedType::isDynamic(size) && sizeOffset(o))
          os << "dynamic[" << role << "] + " << sizeOffset(o) << "; /* "
             << sizeText(o, role) << " */\n";
        else if (ShapedType::isDynamic(size))
          os << "dynamic[" << role << "]; /* " << kSizeNames[role] << " */\n";
        else
          os << size << ";\n";
      }
    }
    os << "}\n";
    std::string dynamicInit = "  const int64_t dynamic[" +
                              std::to_string(tableSizes(kernel)) + "] = {";
    for (int i = 0, e = tableSizes(kernel); i < e; ++i)
      dynamicInit += std::string(i ? ", " : "") +
                     (kernel.dynamicSize[i] ? kSizeNames[i] : "0");
    dynamicInit += "};\n";
    std::string setUp = "  attnrt_attention_call call = {0};\n" + dynamicInit +
                        "  " + id + "_sizes(&call, dynamic);\n";
    // The captures' sizes: their parameters, or the type's.
    for (auto [i, capture] : llvm::enumerate(kernel.captures))
      for (int64_t d = 0; d < capture.type.getRank(); ++d)
        setUp += "  call.capture_sizes[" + std::to_string(i) + "][" +
                 std::to_string(d) + "] = " +
                 (capture.type.isDynamicDim(d)
                      ? capture.sizeNames[d]
                      : std::to_string(capture.type.getDimSize(d))) +
                 ";\n";
    if (kernel.dynamicSize[MaxQLen])
      setUp += "  call.max_q_len = max_q_len;\n";
    // _run_splits, and _run as the runtime's choice of splits, through
    // one launcher that takes the block-mask mode too.
    os << "\nstatic int " << id << "_launch(\n"
       << runParams(kernel, /*splits=*/true) << ", int block_mask) {\n"
       << setUp;
    // Each from the parameter of its function argument: one read-only
    // argument may be two operands (k and v), or an operand and a capture.
    bool output;
    for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o)
      if (kernel.operands[o].type) {
        std::string param =
            argumentName(kernel, kernel.operands[o].argument, &output);
        os << "  call.data[" << o << "] = " << param << ";\n"
           << "  call.strides[" << o << "] = (const long long *)" << param
           << "_strides;\n";
      }
    for (auto [i, capture] : llvm::enumerate(kernel.captures)) {
      std::string param = argumentName(kernel, capture.argument, &output);
      os << "  call.capture_data[" << i << "] = " << param << ";\n"
         << "  call.capture_strides[" << i << "] = (const long long *)" << param
         << "_strides;\n";
    }
    os << "  call.workspace = workspace;\n"
       << "  call.workspace_bytes = workspace_bytes;\n"
       << "  call.stream = stream;\n"
       << "  call.num_splits = num_splits;\n"
       << "  call.block_mask = block_mask;\n"
       << "  return attnrt_attention_run(" << id << "_for(&call), &call);\n}\n";
    os << "\nint " << id << "_run_splits(\n"
       << runParams(kernel, /*splits=*/true) << ") {\n"
       << "  return " << id << "_launch(" << runArguments(kernel)
       << "num_splits, workspace, workspace_bytes, stream, "
          "ATTNRT_BLOCK_MASK_COMPUTE);\n}\n";
    os << "\nint " << id << "_run(\n"
       << runParams(kernel) << ") {\n"
       << "  return " << id << "_run_splits(" << runArguments(kernel)
       << "0, workspace, workspace_bytes, stream);\n}\n";
    if (kernel.hasBlockMask()) {
      os << "\nint " << id << "_block_mask(\n"
         << runParams(kernel) << ") {\n"
         << "  return " << id << "_launch(" << runArguments(kernel)
         << "0, workspace, workspace_bytes, stream, "
            "ATTNRT_BLOCK_MASK_ONLY);\n}\n";
      os << "\nint " << id << "_run_block_masked(\n"
         << runParams(kernel) << ") {\n"
         << "  return " << id << "_launch(" << runArguments(kernel)
         << "0, workspace, workspace_bytes, stream, "
            "ATTNRT_BLOCK_MASK_REUSE);\n}\n";
    }
    std::string sizes = sizeParams(kernel);
    std::string leading = sizes == "void" ? "" : sizes + ", ";
    os << "\nint " << id << "_can_implement(" << sizes << ") {\n"
       << setUp << "  return attnrt_attention_can_implement(" << id
       << "_for(&call), &call);\n}\n";
    os << "\nint " << id << "_workspace_bytes_splits(" << leading
       << "int64_t num_splits, size_t *bytes) {\n"
       << setUp << "  call.num_splits = num_splits;\n"
       << "  return attnrt_attention_workspace_bytes(" << id
       << "_for(&call), &call, bytes);\n}\n";
    os << "\nint " << id << "_workspace_bytes(" << leading
       << "size_t *bytes) {\n"
       << "  return " << id << "_workspace_bytes_splits(";
    for (const std::string &size : sizeNames(kernel))
      os << size << ", ";
    os << "0, bytes);\n}\n";
  }
  static_assert(sizeof(long long) == sizeof(int64_t), "stride casts");
  return s;
}
