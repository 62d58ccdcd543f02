//===- attn-compile.cpp - kernel specs to a static library with a C ABI ---===//
//
//   attn-compile spec.mlir --targets=sm_80,sm_90 -o out/ [--shared]
//
// writes out/lib<name>.a and out/<name>.h (and out/lib<name>.so): for each
// func.func of the spec (one attn.attention each) the device code for every
// target - a cubin from ptxas where it is found, and the PTX, which the
// driver compiles for newer GPUs - and three C functions:
//
//   <prefix>_<kernel>_run(<operands>, <sizes>, workspace, bytes, stream)
//   <prefix>_<kernel>_can_implement(<sizes>)
//   <prefix>_<kernel>_workspace_bytes(<sizes>, &bytes)
//
// The functions describe the kernel in tables and call libattnrt
// (runtime/include/attnrt_attention.h), which checks the arguments, loads
// the code once per device and launches; libattnrt's objects go into the
// archive, so a program links lib<name>.a alone (with -ldl -lpthread).
//
//===----------------------------------------------------------------------===//

#include "attnrt_attention.h"
#include "codegen/nvptx/KernelImage.h"
#include "codegen/nvptx/Passes.h"
#include "dialect/AttnDialect.h"
#include "lib/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<kernel spec .mlir>"));
static cl::opt<std::string> targetList(
    "targets", cl::desc("GPU targets, comma-separated (sm_75 ... sm_90a)"),
    cl::init("sm_80,sm_90"));
static cl::opt<std::string> outputDir("o", cl::desc("output directory"),
                                      cl::init("."));
static cl::opt<std::string>
    libraryName("name", cl::desc("library name: lib<name>.a, <name>.h "
                                 "(default: the spec's file name)"));
static cl::opt<std::string> prefix("prefix",
                                   cl::desc("prefix of the C functions"),
                                   cl::init("attn"));
static cl::opt<bool> shared("shared",
                            cl::desc("also write lib<name>.so (for dlopen, "
                                     "ctypes)"));
static cl::opt<bool> noCubin("no-cubin",
                             cl::desc("embed PTX only, even where ptxas is "
                                      "found"));
static cl::opt<std::string> ptxasPath("ptxas",
                                      cl::desc("ptxas (default: $PATH, then "
                                               "the CUDA toolkit)"));
static cl::opt<std::string> cudaPath("cuda-path",
                                     cl::desc("CUDA toolkit for libdevice"));
static cl::opt<std::string> ccPath("cc", cl::desc("C compiler"),
                                   cl::init(ATTN_DEFAULT_CC));
static cl::opt<std::string> arPath("ar", cl::desc("archiver"),
                                   cl::init(ATTN_DEFAULT_AR));
static cl::opt<bool> keepTemps("keep-temps",
                               cl::desc("keep the generated C, PTX and "
                                        "cubins in <out>/<name>.tmp"));
static cl::opt<bool> timing("time",
                            cl::desc("print how long each step took"));

namespace {

// Where the intermediate files go; removed on every exit unless kept.
SmallString<128> tempDir;

void removeTemps() {
  if (!keepTemps && !tempDir.empty())
    llvm::sys::fs::remove_directories(tempDir);
}

// Exit with a message; attn-compile's own errors (not the spec's).
[[noreturn]] void fatal(const llvm::Twine &message) {
  llvm::errs() << "attn-compile: " << message << "\n";
  removeTemps();
  std::exit(1);
}

struct StepTimer {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  std::vector<std::pair<std::string, double>> steps;
  Clock::time_point last = start;
  void step(std::string name) {
    auto now = Clock::now();
    steps.push_back(
        {std::move(name), std::chrono::duration<double>(now - last).count()});
    last = now;
  }
  double total() const {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
};

bool isIdentifier(StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

//===----------------------------------------------------------------------===//
// What a kernel spec says
//===----------------------------------------------------------------------===//

const char *const kOperandNames[ATTNRT_NUM_OPERANDS] = {
    "q", "k", "v", "block_table", "kv_lens", "o", "lse"};

// The size roles, in the order the C functions take them.
const char *const kSizeNames[] = {"batch",      "q_heads",   "kv_heads",
                                  "q_len",      "kv_len",    "head_dim",
                                  "v_head_dim", "num_blocks", "block_size",
                                  "max_blocks"};
enum Size {
  Batch, QHeads, KVHeads, QLen, KVLen, HeadDim, VHeadDim, NumBlocks,
  BlockSize, MaxBlocks, NumSizes
};

struct Operand {
  MemRefType type;
  std::vector<Size> roles; // per dimension
  int argument = -1;       // of the function
};

struct DeviceCode {
  std::string chip;
  int sm = 0;
  bool archSpecific = false;
  std::string ptx, cubin; // cubin empty without ptxas
  std::vector<attn::KernelLaunch> launches;
};

struct Kernel {
  func::FuncOp func;
  attn::AttentionOp op;
  std::string name;
  Operand operands[ATTNRT_NUM_OPERANDS];
  int64_t staticSize[NumSizes];
  bool dynamicSize[NumSizes] = {};
  std::vector<DeviceCode> code;
  int numArguments = 0;
  bool paged() const { return operands[ATTNRT_BLOCK_TABLE].type != nullptr; }
};

// Which size each dimension of each operand is.
std::vector<Size> rolesOf(int operand, bool paged) {
  switch (operand) {
  case ATTNRT_Q:
    return {Batch, QHeads, QLen, HeadDim};
  case ATTNRT_K:
    return paged ? std::vector<Size>{NumBlocks, KVHeads, BlockSize, HeadDim}
                 : std::vector<Size>{Batch, KVHeads, KVLen, HeadDim};
  case ATTNRT_V:
    return paged ? std::vector<Size>{NumBlocks, KVHeads, BlockSize, VHeadDim}
                 : std::vector<Size>{Batch, KVHeads, KVLen, VHeadDim};
  case ATTNRT_BLOCK_TABLE:
    return {Batch, MaxBlocks};
  case ATTNRT_KV_LENS:
    return {Batch};
  case ATTNRT_O:
    return {Batch, QHeads, QLen, VHeadDim};
  default:
    return {Batch, QHeads, QLen};
  }
}

LogicalResult describeKernel(func::FuncOp func, Kernel &kernel) {
  kernel.func = func;
  kernel.name = func.getSymName().str();
  if (!isIdentifier(kernel.name))
    return func.emitError("attn-compile: the function name must be a C "
                          "identifier");
  auto ops = llvm::to_vector(func.getOps<attn::AttentionOp>());
  if (ops.size() != 1)
    return func.emitError("attn-compile: a kernel function holds exactly one "
                          "attn.attention, this one has ")
           << ops.size();
  kernel.op = ops.front();
  kernel.numArguments = func.getNumArguments();
  Value values[ATTNRT_NUM_OPERANDS] = {
      kernel.op.getQ(),          kernel.op.getK(),  kernel.op.getV(),
      kernel.op.getBlockTable(), kernel.op.getKvLens(), kernel.op.getO(),
      kernel.op.getLse()};
  bool paged = values[ATTNRT_BLOCK_TABLE] != nullptr;
  std::fill(std::begin(kernel.staticSize), std::end(kernel.staticSize),
            ShapedType::kDynamic);
  bool seen[NumSizes] = {};
  for (int i = 0; i < ATTNRT_NUM_OPERANDS; ++i) {
    if (!values[i])
      continue;
    auto arg = dyn_cast<BlockArgument>(values[i]);
    if (!arg || arg.getOwner()->getParentOp() != func)
      return kernel.op.emitError("attn-compile: operand '")
             << kOperandNames[i]
             << "' must be an argument of the kernel function, so the C "
                "function can take it";
    Operand &operand = kernel.operands[i];
    operand.type = cast<MemRefType>(values[i].getType());
    operand.argument = arg.getArgNumber();
    operand.roles = rolesOf(i, paged);
    if (!operand.type.getLayout().isIdentity()) {
      auto [strides, offset] = operand.type.getStridesAndOffset();
      if (offset != 0)
        return kernel.op.emitError("attn-compile: operand '")
               << kOperandNames[i] << "' has a layout offset; only offset 0 "
                                      "is supported";
    }
    for (auto [dim, role] : llvm::enumerate(operand.roles)) {
      seen[role] = true;
      int64_t size = operand.type.getDimSize(dim);
      if (!ShapedType::isDynamic(size))
        kernel.staticSize[role] = size;
    }
  }
  for (int s = 0; s < NumSizes; ++s)
    kernel.dynamicSize[s] =
        seen[s] && ShapedType::isDynamic(kernel.staticSize[s]);
  for (int i = 0, e = func.getNumArguments(); i < e; ++i)
    if (llvm::none_of(kernel.operands,
                      [&](const Operand &o) { return o.argument == i; }))
      return func.emitError("attn-compile: argument ")
             << i << " is not an operand of attn.attention";
  return success();
}

//===----------------------------------------------------------------------===//
// Device code
//===----------------------------------------------------------------------===//

std::string findPtxas() {
  if (noCubin)
    return "";
  if (!ptxasPath.empty())
    return ptxasPath;
  if (auto found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  for (const char *root : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(root)) {
      std::string candidate = std::string(dir) + "/bin/ptxas";
      if (llvm::sys::fs::can_execute(candidate))
        return candidate;
    }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  return "";
}

std::string readFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    fatal("cannot read " + path + ": " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

void writeFile(StringRef path, StringRef contents) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    fatal("cannot write " + path + ": " + error.message());
  os << contents;
}

void run(StringRef program, std::vector<std::string> args) {
  std::vector<StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, {}, 0, 0,
                                     &error);
  if (rc != 0) {
    std::string line = program.str();
    for (const std::string &a : args)
      line += " " + a;
    fatal("'" + line + "' failed" + (error.empty() ? "" : ": " + error));
  }
}

// `module` through attn-to-ptx for `chip`: its PTX and launches.
LogicalResult lowerForChip(ModuleOp module, Kernel &kernel, StringRef chip,
                           DeviceCode &code) {
  PassManager pm(module.getContext());
  std::string pipeline = "attn-to-ptx{chip=" + chip.str();
  if (!cudaPath.empty())
    pipeline += " cuda-path=" + cudaPath;
  pipeline += "}";
  if (failed(parsePassPipeline(pipeline, pm)))
    fatal("bad pipeline " + pipeline);
  if (failed(pm.run(module)))
    return kernel.func.emitError("attn-compile: @")
           << kernel.name << " cannot be compiled for " << chip
           << " (see above)";
  FailureOr<std::string> ptx = attn::collectPTX(module);
  if (failed(ptx))
    return failure();
  code.ptx = *ptx;
  code.launches = attn::collectLaunches(module);
  if (code.launches.empty())
    return kernel.func.emitError("attn-compile: no kernel launch for @")
           << kernel.name;
  return success();
}

// The spec with `kernel`'s function alone.
OwningOpRef<ModuleOp> kernelModule(ModuleOp spec, const Kernel &kernel) {
  OwningOpRef<ModuleOp> module(spec.clone());
  for (auto func : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (func.getSymName() != kernel.name)
      func.erase();
  return module;
}

// Copies of `kernel`'s function beside it in `module`, one per schedule the
// selection pass offers as a small-grid alternative on `sm`.
void addAlternatives(ModuleOp module, const Kernel &kernel, int sm) {
  SmallVector<attn::AlternativeSchedule> schedules =
      attn::smallGridSchedules(kernel.op, sm);
  if (schedules.empty())
    return;
  auto func = cast<func::FuncOp>(module.lookupSymbol(kernel.name));
  OpBuilder builder(func);
  builder.setInsertionPointAfter(func);
  for (const attn::AlternativeSchedule &alternative : schedules) {
    auto copy = cast<func::FuncOp>(builder.clone(*func));
    copy.setSymName(kernel.name + alternative.suffix.str());
    for (auto copied : copy.getOps<attn::AttentionOp>())
      copied.setScheduleAttr(alternative.schedule);
  }
}

// Lowers `kernel` for `chip`: its PTX (one module, with the small-grid
// copies where they apply) and launches, largest tile first.
LogicalResult compileForChip(ModuleOp spec, Kernel &kernel, StringRef chip,
                             StringRef ptxas, StringRef tempDir) {
  DeviceCode code;
  code.chip = chip.str();
  code.sm = *attn::parseChip(chip);
  code.archSpecific = chip.ends_with("a");
  OwningOpRef<ModuleOp> module = kernelModule(spec, kernel);
  addAlternatives(*module, kernel, code.sm);
  if (failed(lowerForChip(*module, kernel, chip, code)))
    return failure();
  // Largest block_q first; equal block_q keep the order above (64x64
  // before 64 rows on 8 warps, the runtime's last resort).
  auto order = llvm::to_vector(llvm::seq<size_t>(0, code.launches.size()));
  llvm::sort(order, [&](size_t a, size_t b) {
    int64_t qa = code.launches[a].blockQ(), qb = code.launches[b].blockQ();
    return qa != qb ? qa > qb : a < b;
  });
  std::vector<attn::KernelLaunch> sorted;
  for (size_t i : order)
    sorted.push_back(std::move(code.launches[i]));
  code.launches = std::move(sorted);
  // The library's C takes the PTX (and the cubin) in with .incbin.
  std::string base = (tempDir + "/" + kernel.name + "." + chip).str();
  writeFile(base + ".ptx", code.ptx);
  if (!ptxas.empty()) {
    run(ptxas, {"-arch=" + chip.str(), "-O3", base + ".ptx", "-o",
                base + ".cubin"});
    code.cubin = readFile(base + ".cubin");
  }
  kernel.code.push_back(std::move(code));
  return success();
}

// Whether libattnrt's tables can hold `launch`'s contract, and the
// operands it passes are the kernel's: the contract is checked where it is
// read, it is not rebuilt here. An error says what does not fit.
std::string contractProblem(const Kernel &kernel,
                            const attn::KernelLaunch &launch) {
  attn::LaunchAttr contract = launch.contract;
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
  for (const attn::LaunchParam &param : contract.getParams())
    if (param.kind != attn::LaunchParamKind::Workspace &&
        !kernel.operands[static_cast<int>(param.operand)].type)
      return "it passes operand '" +
             attn::stringifyLaunchOperand(param.operand).str() +
             "', which the kernel does not have";
  return "";
}

//===----------------------------------------------------------------------===//
// The header and the C source
//===----------------------------------------------------------------------===//

std::string elementName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

// "[batch, 32, q_len, 128]"
std::string shapeText(const Operand &operand) {
  std::string s = "[";
  for (auto [dim, role] : llvm::enumerate(operand.roles)) {
    int64_t size = operand.type.getDimSize(dim);
    s += dim ? ", " : "";
    s += ShapedType::isDynamic(size) ? kSizeNames[role] : std::to_string(size);
  }
  return s + "]";
}

std::string sizeParams(const Kernel &kernel) {
  std::string s;
  for (int i = 0; i < NumSizes; ++i)
    if (kernel.dynamicSize[i])
      s += std::string(s.empty() ? "" : ", ") + "int64_t " + kSizeNames[i];
  return s.empty() ? "void" : s;
}

std::string runParams(const Kernel &kernel) {
  std::string s;
  for (int arg = 0; arg < kernel.numArguments; ++arg)
    for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o)
      if (kernel.operands[o].argument == arg) {
        bool output = o == ATTNRT_O || o == ATTNRT_LSE;
        s += std::string("    ") + (output ? "void *" : "const void *") +
             kOperandNames[o] + ", const int64_t *" + kOperandNames[o] +
             "_strides,\n";
      }
  for (int i = 0; i < NumSizes; ++i)
    if (kernel.dynamicSize[i])
      s += std::string("    int64_t ") + kSizeNames[i] + ",\n";
  return s + "    void *workspace, size_t workspace_bytes, void *stream";
}

std::string describeSpec(const Kernel &kernel) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o) {
    const Operand &operand = kernel.operands[o];
    if (!operand.type)
      continue;
    os << " *   " << kOperandNames[o] << " " << shapeText(operand) << " "
       << elementName(operand.type.getElementType());
    if (!operand.type.getLayout().isIdentity())
      os << ", layout " << operand.type.getLayout();
    os << "\n";
  }
  os << " *   attributes:";
  bool any = false;
  for (NamedAttribute attr : kernel.op->getAttrs()) {
    StringRef attrName = attr.getName().strref();
    if (!llvm::is_contained({"scale", "mask", "softcap", "schedule"}, attrName))
      continue;
    os << " " << attrName << " = " << attr.getValue();
    any = true;
  }
  os << (any ? "" : " (defaults)") << "\n *   code:";
  for (const DeviceCode &code : kernel.code) {
    os << " " << code.chip << " (" << code.launches.front().tierName();
    // Prefill alternatives (attnrt_attention.h): the tiles the grid picks.
    auto isPrefill = [](const attn::KernelLaunch &l) {
      return l.contract.getRole() == attn::LaunchRole::Prefill;
    };
    if (llvm::count_if(code.launches, isPrefill) > 1) {
      os << ", block_q";
      for (const attn::KernelLaunch &l : code.launches) {
        os << (&l == &code.launches.front() ? " " : " or ") << l.blockQ();
        if (l.contract.getThreads() != 128)
          os << " (" << l.contract.getThreads() / 32 << " warps)";
      }
    }
    os << (code.cubin.empty() ? ", PTX)" : ", cubin + PTX)");
  }
  os << "\n";
  return s;
}

std::string upper(StringRef s) {
  std::string u = s.str();
  for (char &c : u)
    c = llvm::toUpper(c);
  return u;
}

std::string headerText(StringRef name, const std::vector<Kernel> &kernels,
                       StringRef targets) {
  std::string s;
  llvm::raw_string_ostream os(s);
  std::string guard = upper(name) + "_ATTN_H";
  std::string p = prefix;
  os << "/* " << name << ".h - attention kernels made by attn-compile from "
     << llvm::sys::path::filename(inputFile) << " for " << targets << ".\n"
     << R"( *
 * Each kernel has three functions. All return an ATTN_* code (0 on success);
 * )" << p << R"(_last_error() then says what was wrong, on the calling thread.
 *
 *   <kernel>_run(...)              launches the kernel on `stream` (a CUstream
 *                                  or cudaStream_t; NULL: the default stream)
 *                                  and returns once it is queued.
 *   <kernel>_can_implement(sizes)  whether the sizes are ones it can do.
 *   <kernel>_workspace_bytes(sizes, &bytes)
 *                                  the workspace _run needs (0 for most;
 *                                  split-K decode kernels need one, sized for
 *                                  the current GPU).
 *
 * Arguments of _run:
 *  - device pointers, one per operand, in the spec function's order, each
 *    followed by its strides in elements (NULL: row-major). Q, K, V and O
 *    must be 16-byte aligned, as must their strides in bytes (all but the
 *    last, which is 1); the layout's static strides must match.
 *  - the sizes the spec leaves dynamic (every size at least 1).
 *  - the workspace (device memory, 16-byte aligned) and its size in bytes.
 *  - the stream.
 * The kernel runs on the GPU of the CUDA context current on the calling
 * thread (the CUDA runtime's current device; device 0 if none is current);
 * its code is loaded on first use per device, thread-safely. A call
 * rejected by a check writes nothing. The CUDA driver is found at run time
 * (libcuda.so.1, or $ATTNRT_CUDA_DRIVER); without one the functions return
 * ATTN_ERROR_NO_DRIVER. Link with -ldl -lpthread.
 */

#ifndef )" << guard << "\n#define " << guard << R"(

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
     << "/* Why the calling thread's last call failed (\"\" if it did not). */\n"
     << "const char *" << p << "_last_error(void);\n";
  for (const Kernel &kernel : kernels) {
    std::string fn = p + "_" + kernel.name;
    os << "\n/* @" << kernel.name << "\n" << describeSpec(kernel) << " */\n"
       << "int " << fn << "_run(\n" << runParams(kernel) << ");\n"
       << "int " << fn << "_can_implement(" << sizeParams(kernel) << ");\n"
       << "int " << fn << "_workspace_bytes(";
    std::string sizes = sizeParams(kernel);
    os << (sizes == "void" ? "" : sizes + ", ") << "size_t *bytes);\n";
  }
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return s;
}

// <name>.json: the same facts for programs that build calls at run time
// (examples/python).
std::string jsonText(StringRef name, const std::vector<Kernel> &kernels) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "{\n  \"library\": \"" << name << "\",\n  \"prefix\": \"" << prefix
     << "\",\n  \"kernels\": [";
  for (auto [k, kernel] : llvm::enumerate(kernels)) {
    os << (k ? "," : "") << "\n    {\"name\": \"" << kernel.name
       << "\", \"tier\": \""
       << kernel.code.front().launches.front().tierName()
       << "\",\n     \"operands\": [";
    bool first = true;
    for (int arg = 0; arg < kernel.numArguments; ++arg)
      for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o) {
        const Operand &operand = kernel.operands[o];
        if (operand.argument != arg)
          continue;
        os << (first ? "" : ",") << "\n       {\"name\": \"" << kOperandNames[o]
           << "\", \"dtype\": \""
           << elementName(operand.type.getElementType()) << "\", \"shape\": [";
        for (auto [dim, role] : llvm::enumerate(operand.roles)) {
          int64_t size = operand.type.getDimSize(dim);
          os << (dim ? ", " : "");
          if (ShapedType::isDynamic(size))
            os << "\"" << kSizeNames[role] << "\"";
          else
            os << size;
        }
        os << "]}";
        first = false;
      }
    os << "],\n     \"sizes\": [";
    first = true;
    for (int i = 0; i < NumSizes; ++i)
      if (kernel.dynamicSize[i]) {
        os << (first ? "" : ", ") << "\"" << kSizeNames[i] << "\"";
        first = false;
      }
    os << "]}";
  }
  os << "\n  ]\n}\n";
  return s;
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

std::string termsText(ArrayRef<attn::LaunchTerm> terms) {
  std::string s;
  for (const attn::LaunchTerm &t : terms)
    s += (s.empty() ? "{" : ", {") + std::to_string(t.dim) + ", " +
         cName("ATTNRT_SIZE_", attn::stringifyLaunchSize(t.size)) + ", " +
         std::to_string(t.value) + "}";
  return s.empty() ? "{{0}}" : "{" + s + "}";
}

// One attnrt_launch_facts: `launch`'s contract, as attn-translate prints
// it, then as data.
std::string launchFacts(const attn::KernelLaunch &launch) {
  attn::LaunchAttr c = launch.contract;
  std::string s;
  llvm::raw_string_ostream os(s);
  std::string text;
  llvm::raw_string_ostream(text) << c;
  os << "    /* " << text << " */\n"
     << "    {" << cString(launch.kernel) << ", "
     << cName("ATTNRT_ROLE_", attn::stringifyLaunchRole(c.getRole())) << ", "
     << c.getThreads() << ", " << c.getShared() << ",\n     "
     << c.getGrid().size() << ", " << termsText(c.getGrid()) << ",\n     "
     << c.getParams().size() << ", {";
  for (auto [i, p] : llvm::enumerate(c.getParams()))
    os << (i ? ", " : "") << "{"
       << cName("ATTNRT_PARAM_", attn::stringifyLaunchParamKind(p.kind))
       << ", "
       << (p.kind == attn::LaunchParamKind::Workspace
               ? std::string("0")
               : cName("ATTNRT_", attn::stringifyLaunchOperand(p.operand)))
       << "}";
  os << "},\n     " << c.getWorkspaceRank() << ", "
     << (c.hasWorkspace() ? c.getWorkspaceType().getIntOrFloatBitWidth() / 8
                          : 0)
     << ", " << c.getWorkspace().size() << ", "
     << termsText(c.getWorkspace()) << "},\n";
  return s;
}

std::string sourceText(StringRef name, const std::vector<Kernel> &kernels,
                       StringRef tempDir) {
  std::string s;
  llvm::raw_string_ostream os(s);
  std::string p = prefix;
  os << "/* Generated by attn-compile from "
     << llvm::sys::path::filename(inputFile) << ". */\n"
     << "#include \"" << name << ".h\"\n#include \"attnrt.h\"\n"
     << "#include \"attnrt_attention.h\"\n\n"
     << "const char *" << p << "_status_string(int status) {\n"
     << "  return attnrt_attention_status_string(status);\n}\n"
     << "const char *" << p << "_last_error(void) {\n"
     << "  return attnrt_last_error();\n}\n";
  for (const Kernel &kernel : kernels) {
    std::string id = p + "_" + kernel.name;
    // Device code and launches per target.
    std::string codeTable;
    int images = 0;
    for (const DeviceCode &code : kernel.code) {
      std::string launches = id + "_launches_" + code.chip;
      os << "\nstatic const attnrt_launch_facts " << launches << "[] = {\n";
      for (const attn::KernelLaunch &l : code.launches)
        os << launchFacts(l);
      os << "};\n";
      for (bool cubin : {true, false}) {
        if (cubin && code.cubin.empty())
          continue;
        std::string symbol =
            id + "_" + code.chip + (cubin ? "_cubin" : "_ptx");
        std::string path = (tempDir + "/" + kernel.name + "." + code.chip +
                            (cubin ? ".cubin" : ".ptx"))
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
    os << "\nstatic const attnrt_device_code " << id << "_code[] = {\n"
       << codeTable << "};\n";
    os << "static void *" << id << "_loaded[ATTNRT_MAX_DEVICES];\n";
    os << "static const attnrt_attention_kernel " << id << "_kernel = {\n"
       << "    " << cString(kernel.name) << ",\n    {\n";
    for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o) {
      const Operand &operand = kernel.operands[o];
      if (!operand.type) {
        os << "        {0, 0, 0, {0, 0, 0, 0}}, /* no " << kOperandNames[o]
           << " */\n";
        continue;
      }
      bool rowMajor = operand.type.getLayout().isIdentity();
      SmallVector<int64_t> strides(4, 0);
      if (!rowMajor) {
        auto [layoutStrides, offset] = operand.type.getStridesAndOffset();
        for (auto [i, st] : llvm::enumerate(layoutStrides))
          strides[i] = ShapedType::isDynamic(st) ? -1 : st;
      }
      os << "        {" << operand.type.getRank() << ", "
         << operand.type.getElementTypeBitWidth() / 8 << ", "
         << (rowMajor ? 1 : 0) << ", {" << strides[0] << ", " << strides[1]
         << ", " << strides[2] << ", " << strides[3] << "}}, /* "
         << kOperandNames[o] << " */\n";
    }
    os << "    },\n    " << (kernel.paged() ? 1 : 0) << ", " << id
       << "_code, " << images << ", " << id << "_loaded};\n";
    // Sizes of every operand from the dynamic sizes and the type.
    os << "\nstatic void " << id
       << "_sizes(attnrt_attention_call *call, const int64_t *dynamic) {\n";
    for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o) {
      const Operand &operand = kernel.operands[o];
      for (auto [dim, role] : llvm::enumerate(operand.roles)) {
        int64_t size = operand.type.getDimSize(dim);
        os << "  call->sizes[" << o << "][" << dim << "] = ";
        if (ShapedType::isDynamic(size))
          os << "dynamic[" << role << "]; /* " << kSizeNames[role] << " */\n";
        else
          os << size << ";\n";
      }
    }
    os << "}\n";
    std::string dynamicInit = "  const int64_t dynamic[" +
                              std::to_string(NumSizes) + "] = {";
    for (int i = 0; i < NumSizes; ++i)
      dynamicInit += std::string(i ? ", " : "") +
                     (kernel.dynamicSize[i] ? kSizeNames[i] : "0");
    dynamicInit += "};\n";
    std::string setUp = "  attnrt_attention_call call = {0};\n" + dynamicInit +
                        "  " + id + "_sizes(&call, dynamic);\n";
    // _run
    os << "\nint " << id << "_run(\n" << runParams(kernel) << ") {\n"
       << setUp;
    for (int o = 0; o < ATTNRT_NUM_OPERANDS; ++o)
      if (kernel.operands[o].type)
        os << "  call.data[" << o << "] = " << kOperandNames[o] << ";\n"
           << "  call.strides[" << o << "] = (const long long *)"
           << kOperandNames[o] << "_strides;\n";
    os << "  call.workspace = workspace;\n"
       << "  call.workspace_bytes = workspace_bytes;\n"
       << "  call.stream = stream;\n"
       << "  return attnrt_attention_run(&" << id << "_kernel, &call);\n}\n";
    std::string sizes = sizeParams(kernel);
    os << "\nint " << id << "_can_implement(" << sizes << ") {\n" << setUp
       << "  return attnrt_attention_can_implement(&" << id
       << "_kernel, &call);\n}\n";
    os << "\nint " << id << "_workspace_bytes("
       << (sizes == "void" ? "" : sizes + ", ") << "size_t *bytes) {\n"
       << setUp << "  return attnrt_attention_workspace_bytes(&" << id
       << "_kernel, &call, bytes);\n}\n";
  }
  static_assert(sizeof(long long) == sizeof(int64_t), "stride casts");
  return s;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  attn::registerAttnPasses();
  attn::registerAttnNVPTXPasses();
  attn::registerNVPTXPipelines();
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: kernel specs to a static library with a C ABI\n");
  StepTimer timer;

  DialectRegistry registry;
  registry.insert<attn::AttnDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllGPUToLLVMIRTranslations(registry);
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // The spec's own lines say where; the lowered IR would bury them.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> spec = parseSourceFile<ModuleOp>(inputFile, sourceMgr,
                                                          &context);
  if (!spec)
    return 1;

  std::string name = libraryName;
  if (name.empty()) {
    // "llama-3.mlir" -> "llama_3"
    name = llvm::sys::path::stem(inputFile).str();
    for (char &c : name)
      if (!llvm::isAlnum(c))
        c = '_';
    if (!name.empty() && llvm::isDigit(name[0]))
      name = "_" + name;
  }
  if (!isIdentifier(name))
    fatal("library name '" + name + "' is not a C identifier; pass --name");
  if (!isIdentifier(prefix))
    fatal("prefix '" + prefix + "' is not a C identifier");

  SmallVector<StringRef> chips;
  StringRef(targetList).split(chips, ',', -1, /*KeepEmpty=*/false);
  if (chips.empty())
    fatal("no targets given (--targets=sm_80,sm_90)");
  for (StringRef chip : chips)
    if (failed(attn::parseChip(chip)))
      fatal("target '" + chip + "' is not sm_XY[a] (e.g. sm_80, sm_90a)");

  std::vector<Kernel> kernels;
  for (auto func : spec->getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    Kernel kernel;
    if (failed(describeKernel(func, kernel)))
      return 1;
    kernels.push_back(std::move(kernel));
  }
  if (kernels.empty())
    fatal(inputFile + " has no kernel function");
  timer.step("parse");

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    fatal("cannot create " + outputDir + ": " + ec.message());
  llvm::scope_exit cleanUp(removeTemps);
  if (keepTemps) {
    tempDir = outputDir + "/" + name + ".tmp";
    llvm::sys::fs::create_directories(tempDir);
  } else if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
                 "attn-compile", tempDir)) {
    fatal("cannot create a temporary directory: " + ec.message());
  }
  std::string ptxas = findPtxas();
  for (Kernel &kernel : kernels)
    for (StringRef chip : chips) {
      if (failed(compileForChip(*spec, kernel, chip, ptxas, tempDir)))
        return 1;
      for (const attn::KernelLaunch &l : kernel.code.back().launches)
        if (std::string problem = contractProblem(kernel, l); !problem.empty())
          fatal("internal error: cannot describe the launch of " + l.kernel +
                " to libattnrt: " + problem + " (" + l.describe() + ")");
    }
  timer.step("lower to PTX" + std::string(ptxas.empty() ? "" : " + ptxas"));

  std::string header = headerText(name, kernels, targetList);
  std::string headerPath = outputDir + "/" + name + ".h";
  writeFile(headerPath, header);
  writeFile(outputDir + "/" + name + ".json", jsonText(name, kernels));
  // The runtime's header: its device memory and stream helpers are in
  // the library too.
  if (std::error_code ec = llvm::sys::fs::copy_file(
          ATTN_RUNTIME_INCLUDE_DIR "/attnrt.h", outputDir + "/attnrt.h"))
    fatal("cannot copy attnrt.h: " + ec.message());
  std::string source = sourceText(name, kernels, tempDir);
  std::string sourcePath = (tempDir + "/" + name + ".c").str();
  writeFile(sourcePath, source);
  std::string object = (tempDir + "/" + name + ".o").str();
  run(ccPath, {"-std=gnu11", "-O2", "-fPIC", "-c", sourcePath, "-o", object,
               "-I" + outputDir, "-I" ATTN_RUNTIME_INCLUDE_DIR});
  timer.step("compile the C");

  // libattnrt's objects first, then the kernels: one archive to link.
  std::string archive = outputDir + "/lib" + name + ".a";
  llvm::sys::fs::remove(archive);
  if (std::error_code ec =
          llvm::sys::fs::copy_file(ATTN_RUNTIME_ARCHIVE, archive))
    fatal("cannot copy " ATTN_RUNTIME_ARCHIVE ": " + ec.message());
  run(arPath, {"rs", archive, object});
  if (shared)
    run(ccPath, {"-shared", "-o", outputDir + "/lib" + name + ".so",
                 object, "-Wl,--whole-archive", ATTN_RUNTIME_ARCHIVE,
                 "-Wl,--no-whole-archive", "-ldl", "-lpthread"});
  timer.step("archive");

  if (timing) {
    llvm::errs() << "attn-compile: " << kernels.size() << " kernel(s) x "
                 << chips.size() << " target(s) in "
                 << llvm::format("%.2f", timer.total()) << " s:";
    for (auto &[step, seconds] : timer.steps)
      llvm::errs() << " " << step << " " << llvm::format("%.2f", seconds)
                   << " s;";
    llvm::errs() << "\n";
  }
  return 0;
}
