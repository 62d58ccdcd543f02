//===- Toolchain.cpp - the external programs a library needs --------------===//

#include "codegen/package/Toolchain.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string package::findPtxas(StringRef explicitPath) {
  if (!explicitPath.empty())
    return explicitPath.str();
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

llvm::Error package::runProgram(StringRef program, ArrayRef<std::string> args) {
  std::vector<StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc == 0)
    return llvm::Error::success();
  std::string line = program.str();
  for (const std::string &a : args)
    line += " " + a;
  return error("'" + line + "' failed" +
               (message.empty() ? "" : ": " + message));
}

llvm::Expected<std::string> package::readFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return error("cannot read " + path + ": " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

llvm::Error package::writeFile(StringRef path, StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return error("cannot write " + path + ": " + ec.message());
  os << contents;
  return llvm::Error::success();
}
