# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
# Inputs of other tests, not tests themselves.
# install-consumer/ is a CMake project scripts/check-install.sh builds.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs",
                   "install-consumer"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
config.substitutions.append(("%attn_tools_dir", config.attn_tools_dir))
config.substitutions.append(("%attn_version", config.attn_version))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# `not` and `count` are found on PATH; Debian keeps them in the LLVM bin dir.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "attn-run", "attn-translate", "attn-compile", "attnrt-unittests"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# CUDA's ptxas checks every PTX the suite produces, where it is installed
# (DESIGN.md: on every machine of the project).
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# The fake CUDA drivers that tests load through ATTNRT_CUDA_DRIVER;
# test/runtime/CMakeLists.txt builds them into lib/.
lib_dir = os.path.join(config.attn_obj_root, "lib")
# The longer names first: the other is their prefix.
config.substitutions.append(
    ("%fake_cuda_driver_without_launch_ex",
     os.path.join(lib_dir, "libfake_cuda_driver_without_launch_ex.so")))
config.substitutions.append(
    ("%fake_cuda_driver_without_cuinit",
     os.path.join(lib_dir, "libfake_cuda_driver_without_cuinit.so")))
config.substitutions.append(
    ("%fake_cuda_driver", os.path.join(lib_dir, "libfake_cuda_driver.so")))

# The C compiler that built libattnrt, for programs that link what
# attn-compile generates.
config.substitutions.append(
    ("%cc", " ".join(filter(None, [config.c_compiler,
                                   config.sanitizer_link_flags]))))
# An ATTN_SANITIZE build: libraries attn-compile makes hold instrumented
# libattnrt objects, which an uninstrumented host (Python) cannot load.
if config.sanitizer_link_flags:
    config.available_features.add("sanitizer")
config.substitutions.append(
    ("%attnrt_include", os.path.join(config.attn_src_root, "runtime", "include")))
