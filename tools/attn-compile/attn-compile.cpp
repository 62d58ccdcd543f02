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
// The packaging itself is codegen/package; this file runs it and the
// external tools (ptxas, the C compiler, the archiver).
//
// Each (kernel, target) is lowered and put through ptxas on its own, -j of
// them at once (default: the hardware threads), on threads of their own
// sharing one multithreaded MLIRContext; results and diagnostics are
// gathered in kernel and target order, so the files and messages do not
// depend on -j. For each it
// prints (unless --quiet) the tier and schedule attn-select-tier chose and
// why, on stderr:
//
//   attn-compile: prefill sm_90: mma tile 128x64 warps 4 stages 2 (...)
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/Passes.h"
#include "codegen/package/CABIWriter.h"
#include "codegen/package/JSONWriter.h"
#include "codegen/package/Package.h"
#include "codegen/package/Toolchain.h"
#include "dialect/AttnDialect.h"
#include "lib/Transforms/CheckKernels.h"
#include "lib/Transforms/Passes.h"
#include "tools/ToolOptions.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::attn::package;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<kernel spec .mlir>"));
static cl::opt<std::string>
    targetList("targets",
               cl::desc("GPU targets, comma-separated (sm_75 ... sm_90a)"),
               cl::init("sm_80,sm_90"));
static cl::opt<bool> archSpecific(
    "arch-specific",
    cl::desc("with sm_90 among the targets, also build the arch-specific "
             "sm_90a image (the wgmma tier), which libattnrt runs on "
             "compute capability 9.0 only; =false leaves it out"),
    cl::init(true));
static cl::opt<std::string> outputDir("o", cl::desc("output directory"),
                                      cl::init("."));
static cl::opt<std::string>
    libraryName("name", cl::desc("library name: lib<name>.a, <name>.h "
                                 "(default: the spec's file name)"));
static cl::opt<std::string>
    prefix("prefix", cl::desc("prefix of the C functions"), cl::init("attn"));
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
                            cl::desc("print how long each step took, and each "
                                     "kernel and target's lowering and ptxas"));
static cl::opt<unsigned>
    jobs("j", cl::Prefix,
         cl::desc("-j N or --jobs=N: kernels and targets lowered (and "
                  "ptxas runs) at once; 0: the hardware "
                  "threads. The files written do not depend on it"),
         cl::init(0));
static cl::alias jobsLong("jobs", cl::desc("alias for -j"), cl::aliasopt(jobs));
static cl::opt<bool> quiet("quiet",
                           cl::desc("do not print the tier and tile each "
                                    "kernel got"));
static cl::OptionCategory attnCompileCategory("attn-compile options");

namespace {

// Where the intermediate files go; removed on every exit unless kept.
SmallString<128> tempDir;
// The outputs this run has written: a failed run takes them back, so an
// error leaves no header or JSON without its library.
std::vector<std::string> outputsWritten;
bool libraryWritten = false;

void removeTemps() {
  if (!keepTemps && !tempDir.empty())
    llvm::sys::fs::remove_directories(tempDir);
  if (!libraryWritten)
    for (const std::string &path : outputsWritten)
      llvm::sys::fs::remove(path);
}

// The same on a crash (a signal, or an LLVM fatal error, which aborts).
void removeTempsOnCrash(void *) { removeTemps(); }

// And on an interrupt (Ctrl-C, SIGTERM, SIGHUP), whose signals LLVM's
// handlers pass over (they run AddSignalHandler's callbacks on crashes
// only). The handler may interrupt malloc, so it allocates nothing: it
// reads paths copied here beforehand and removes them with system calls,
// then dies of the same signal, as the caller expects.
struct InterruptCleanup {
  char tempDir[PATH_MAX] = "";    // flat: attn-compile writes no subfolder
  char outputs[4][PATH_MAX] = {}; // header, JSON, archive, shared library
  std::atomic<int> numOutputs{0};
  std::atomic<bool> libraryWritten{false};
} interruptCleanup;

void copyPath(char (&to)[PATH_MAX], llvm::StringRef path) {
  size_t n = std::min(path.size(), sizeof to - 1);
  std::memcpy(to, path.data(), n);
  to[n] = '\0';
}

// Removes a folder of files, async-signal-safely (open, getdents64,
// unlinkat, rmdir). Unlinking while reading the folder may skip entries,
// so it reads again until a pass removes nothing.
void removeFlatDirectory(const char *path) {
#ifdef __linux__
  for (bool removed = true; removed;) {
    removed = false;
    int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      return;
    alignas(struct dirent64) char buffer[4096];
    for (ssize_t n; (n = ::getdents64(fd, buffer, sizeof buffer)) > 0;)
      for (ssize_t at = 0; at < n;) {
        auto *entry = reinterpret_cast<struct dirent64 *>(buffer + at);
        at += entry->d_reclen;
        const char *name = entry->d_name;
        if (std::strcmp(name, ".") && std::strcmp(name, "..") &&
            ::unlinkat(fd, name, 0) == 0)
          removed = true;
      }
    ::close(fd);
  }
#endif
  ::rmdir(path);
}

void removeTempsOnInterrupt(int signal) {
  if (interruptCleanup.tempDir[0])
    removeFlatDirectory(interruptCleanup.tempDir);
  if (!interruptCleanup.libraryWritten)
    for (int i = 0; i < interruptCleanup.numOutputs; ++i)
      ::unlink(interruptCleanup.outputs[i]);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

// Exit with a message; attn-compile's own errors (not the spec's).
[[noreturn]] void fatal(const llvm::Twine &message) {
  llvm::errs() << "attn-compile: error: " << message << "\n";
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

// Runs `run` on every task, `threads` of them at once, on this thread and
// threads of its own. The context's thread pool is left to the pass
// managers' nested work. Diagnostics come out in task order, as from
// mlir::parallelForEach.
template <typename Task, typename Run>
void runTasks(MLIRContext &context, std::vector<Task> &tasks, unsigned threads,
              Run run) {
  if (threads <= 1 || tasks.size() <= 1) {
    for (Task &task : tasks)
      run(task);
    return;
  }
  ParallelDiagnosticHandler handler(&context);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      handler.setOrderIDForThread(i);
      run(tasks[i]);
      handler.eraseOrderIDForThread();
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1, n = std::min<size_t>(threads, tasks.size()); t < n; ++t)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
}

// attn-compile's own error, or the value.
void check(llvm::Error error) {
  if (error)
    fatal(llvm::toString(std::move(error)));
}
template <typename T> T check(llvm::Expected<T> value) {
  if (!value)
    fatal(llvm::toString(value.takeError()));
  return std::move(*value);
}

// "llama-3.mlir" -> "llama_3"
std::string defaultLibraryName(StringRef specPath) {
  std::string name = llvm::sys::path::stem(specPath).str();
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
  if (!name.empty() && llvm::isDigit(name[0]))
    name = "_" + name;
  return name;
}

// libattnrt's headers and archive, which every library takes in.
struct RuntimePaths {
  std::string include, archive;
};

// Beside an installed attn-compile (P/bin/attn-compile: P/include/attn,
// P/lib/libattnrt.a), else where the build put them.
RuntimePaths findRuntime(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&findRuntime));
  StringRef prefix =
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe));
  RuntimePaths installed{(prefix + "/include/attn").str(),
                         (prefix + "/lib/libattnrt.a").str()};
  if (!prefix.empty() &&
      llvm::sys::fs::exists(installed.include + "/attnrt.h") &&
      llvm::sys::fs::exists(installed.archive))
    return installed;
  return {ATTN_RUNTIME_INCLUDE_DIR, ATTN_RUNTIME_ARCHIVE};
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  attn::tools::setUpToolOptions(attnCompileCategory);
  registerAllPasses();
  attn::registerAttnPasses();
  attn::registerAttnNVPTXPasses();
  attn::registerNVPTXPipelines();
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: kernel specs to a static library with a C ABI\n");
  StepTimer timer;
  const RuntimePaths runtime = findRuntime(argv[0]);

  DialectRegistry registry;
  // Every dialect the pipelines build, attn_nv too: the context loads them
  // all before its thread pool runs the kernels (a dialect loaded during a
  // multithreaded run races).
  registry.insert<attn::AttnDialect, attn::nv::AttnNVDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllGPUToLLVMIRTranslations(registry);
  registerAllToLLVMIRTranslations(registry);
  // Kernels and targets are lowered on -j threads of attn-compile's own
  // (runTasks); the context's pool, as many threads, serves only the pass
  // managers' nested work. When the tasks ran on the context's pool too, a
  // task waiting for its nested work ran other tasks' work in its place,
  // and bench/kernels.mlir took one core of two with 2 or 3 threads (33 s
  // against 19 s with 4).
  unsigned threads = jobs ? jobs.getValue()
                          : llvm::hardware_concurrency().compute_thread_count();
  std::optional<llvm::DefaultThreadPool> pool;
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  if (threads > 1) {
    pool.emplace(llvm::hardware_concurrency(threads));
    context.setThreadPool(*pool);
  }
  // Every dialect is loaded before any thread starts: loading one while
  // others run passes is not safe.
  context.loadAllAvailableDialects();
  // The spec's own lines say where; the lowered IR would bury them.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> spec =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  if (!spec)
    return 1;

  Library library;
  library.name =
      libraryName.empty() ? defaultLibraryName(inputFile) : libraryName;
  library.prefix = prefix;
  library.specFile = llvm::sys::path::filename(inputFile).str();
  const std::string &name = library.name;
  if (!mlir::attn::isCIdentifier(name))
    fatal("library name '" + name + "' is not a C identifier; pass --name");
  if (!mlir::attn::isCIdentifier(prefix))
    fatal("prefix '" + prefix + "' is not a C identifier");

  SmallVector<StringRef> chips;
  StringRef(targetList).split(chips, ',', -1, /*KeepEmpty=*/false);
  if (chips.empty())
    fatal("no targets given (--targets=sm_80,sm_90)");
  for (StringRef chip : chips)
    if (failed(attn::parseChip(chip)))
      fatal("target '" + chip + "' is not sm_XY[a] (e.g. sm_80, sm_90a)");
  // sm_90 brings sm_90a, the wgmma tier's image, unless told not to: on an
  // H100 it is 1.3-1.6x the sm_90 image's mma tier (bench/RESULTS.md), and
  // libattnrt falls back to sm_90 on other devices.
  auto sm90 = llvm::find(chips, "sm_90");
  if (archSpecific && sm90 != chips.end() &&
      !llvm::is_contained(chips, "sm_90a")) {
    chips.insert(std::next(sm90), "sm_90a");
    if (!quiet)
      llvm::errs() << "attn-compile: sm_90 brings sm_90a (the wgmma tier, "
                      "run on compute capability 9.0 only); "
                      "--arch-specific=false leaves it out\n";
  }
  library.targets = llvm::join(chips, ",");

  FailureOr<std::vector<Kernel>> kernels = describeKernels(*spec);
  if (failed(kernels))
    return 1;
  if (kernels->empty())
    fatal(inputFile + " has no kernel function (a func.func holding one "
                      "attn.attention or attn.cache_append)");
  library.kernels = std::move(*kernels);
  timer.step("parse");

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    fatal("cannot create " + outputDir + ": " + ec.message());
  llvm::scope_exit cleanUp(removeTemps);
  llvm::sys::AddSignalHandler(removeTempsOnCrash, nullptr);
  if (keepTemps) {
    tempDir = outputDir + "/" + name + ".tmp";
    llvm::sys::fs::create_directories(tempDir);
  } else if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
                 "attn-compile", tempDir)) {
    fatal("cannot create a temporary directory: " + ec.message());
  }
  if (!keepTemps)
    copyPath(interruptCleanup.tempDir, tempDir);
  for (int signal : {SIGINT, SIGTERM, SIGHUP})
    std::signal(signal, removeTempsOnInterrupt);
  std::string ptxas = noCubin ? "" : findPtxas(ptxasPath);
  // One task a (kernel, target): lower it, then run ptxas on its PTX. The
  // tasks only read the spec, each writes its own result and files, and
  // runTasks replays their diagnostics in task order, so what is
  // printed and written does not depend on -j.
  // A kernel with a dynamic Sq also gets its decode-tier code, which its C
  // functions launch for short queries (decodesAtRunTime).
  struct Task {
    Kernel *kernel;
    StringRef chip;
    bool runTimeDecode;
    FailureOr<DeviceCode> code = failure();
    std::string error; // attn-compile's own (ptxas, files)
    double lowerSeconds = 0, ptxasSeconds = 0; // for --time
  };
  std::vector<Task> tasks;
  for (Kernel &kernel : library.kernels)
    for (bool runTimeDecode : {false, true})
      for (StringRef chip : chips)
        if (!runTimeDecode || (kernel.op && attn::decodesAtRunTime(kernel.op)))
          tasks.push_back(
              Task{&kernel, chip, runTimeDecode, failure(), "", 0, 0});
  runTasks(context, tasks, threads, [&](Task &task) {
    auto started = StepTimer::Clock::now();
    // sm_90a's code is left to sm_90's image where it would be the same.
    StringRef plain = task.chip.drop_back();
    bool hasPlain =
        task.chip.ends_with("a") && llvm::is_contained(chips, plain);
    task.code = lowerKernel(*spec, *task.kernel, task.chip, cudaPath,
                            task.runTimeDecode, hasPlain ? plain : "");
    auto lowered = StepTimer::Clock::now();
    task.lowerSeconds =
        std::chrono::duration<double>(lowered - started).count();
    if (failed(task.code) || !task.code->servedBy.empty())
      return;
    // The library's C takes the PTX (and the cubin) in with .incbin.
    std::string base = (tempDir + "/" + task.kernel->name +
                        (task.runTimeDecode ? ".decode." : ".") + task.chip)
                           .str();
    llvm::Error error = writeFile(base + ".ptx", task.code->ptx);
    if (!error && !ptxas.empty())
      error = runProgram(ptxas, {"-arch=" + task.chip.str(), "-O3",
                                 base + ".ptx", "-o", base + ".cubin"});
    if (!error && !ptxas.empty()) {
      llvm::Expected<std::string> cubin = readFile(base + ".cubin");
      if (cubin)
        task.code->cubin = std::move(*cubin);
      else
        error = cubin.takeError();
    }
    task.ptxasSeconds =
        std::chrono::duration<double>(StepTimer::Clock::now() - lowered)
            .count();
    if (error)
      task.error = llvm::toString(std::move(error));
  });
  bool lowered = true;
  for (Task &task : tasks) {
    if (failed(task.code)) {
      lowered = false;
      task.kernel->func.emitError("attn-compile: @")
          << task.kernel->name << " cannot be compiled for " << task.chip
          << (task.runTimeDecode ? " (decode-tier code for q_len <= 16)" : "")
          << " (see above)";
      continue;
    }
    if (!task.error.empty())
      fatal(task.error);
    for (const attn::KernelLaunch &l : task.code->launches)
      if (std::string problem = contractProblem(*task.kernel, l);
          !problem.empty())
        fatal("internal error: cannot describe the launch of " + l.kernel +
              " to libattnrt: " + problem + " (" + l.describe() + ")");
  }
  if (!lowered)
    return 1;
  for (Task &task : tasks) {
    if (!quiet)
      llvm::errs() << "attn-compile: "
                   << describeChoices(*task.kernel, *task.code) << "\n";
    if (!task.code->servedBy.empty())
      continue;
    (task.runTimeDecode ? task.kernel->decodeCode : task.kernel->code)
        .push_back(std::move(*task.code));
  }
  timer.step("lower to PTX" + std::string(ptxas.empty() ? "" : " + ptxas"));

  std::string header = outputDir + "/" + name + ".h";
  std::string json = outputDir + "/" + name + ".json";
  std::string archive = outputDir + "/lib" + name + ".a";
  std::string sharedLib = outputDir + "/lib" + name + ".so";
  // attnrt.h stays: other libraries in the folder may include it.
  outputsWritten = {header, json, archive};
  if (shared)
    outputsWritten.push_back(sharedLib);
  for (const std::string &path : outputsWritten)
    copyPath(interruptCleanup.outputs[interruptCleanup.numOutputs++], path);
  check(writeFile(header, headerText(library)));
  check(writeFile(json, jsonText(library)));
  // The runtime's header: its device memory and stream helpers are in
  // the library too.
  if (std::error_code ec = llvm::sys::fs::copy_file(
          runtime.include + "/attnrt.h", outputDir + "/attnrt.h"))
    fatal("cannot copy attnrt.h: " + ec.message());
  std::string sourcePath = (tempDir + "/" + name + ".c").str();
  check(writeFile(sourcePath, sourceText(library, tempDir)));
  std::string object = (tempDir + "/" + name + ".o").str();
  check(
      runProgram(ccPath, {"-std=gnu11", "-O2", "-fPIC", "-c", sourcePath, "-o",
                          object, "-I" + outputDir, "-I" + runtime.include}));
  timer.step("compile the C");

  // libattnrt's objects first, then the kernels: one archive to link.
  llvm::sys::fs::remove(archive);
  if (std::error_code ec = llvm::sys::fs::copy_file(runtime.archive, archive))
    fatal("cannot copy " + runtime.archive + ": " + ec.message());
  check(runProgram(arPath, {"rs", archive, object}));
  if (shared)
    check(runProgram(ccPath, {"-shared", "-o", sharedLib, object,
                              "-Wl,--whole-archive", runtime.archive,
                              "-Wl,--no-whole-archive", "-ldl", "-lpthread"}));
  timer.step("archive");

  if (timing) {
    llvm::errs() << "attn-compile: " << library.kernels.size()
                 << " kernel(s) x " << chips.size() << " target(s) in "
                 << llvm::format("%.2f", timer.total()) << " s:";
    for (auto &[step, seconds] : timer.steps)
      llvm::errs() << " " << step << " " << llvm::format("%.2f", seconds)
                   << " s;";
    llvm::errs() << "\n";
    // Where the lowering went: each (kernel, target)'s own seconds (they
    // overlap under -j).
    for (const Task &task : tasks)
      llvm::errs() << "attn-compile:   " << task.kernel->name
                   << (task.runTimeDecode ? " (decode)" : "") << " "
                   << task.chip << ": lower "
                   << llvm::format("%.2f", task.lowerSeconds) << " s, ptxas "
                   << llvm::format("%.2f", task.ptxasSeconds) << " s\n";
  }
  libraryWritten = interruptCleanup.libraryWritten = true;
  return 0;
}
