"""Bundles this checkout's attn-compile and libattnrt into the package, as
attn/_toolchain/{bin/attn-compile, lib/libattnrt.a, include/attn/*.h}: the
layout attn-compile looks for beside itself (an installed prefix), and
where attn.find_compiler looks first after $ATTN_COMPILE. attn-compile
links the system's LLVM 22 (libMLIR.so, libLLVM.so), so the package runs
where those are installed. The build comes from $ATTN_BUILD_DIR, else
build/ (scripts/build.sh); without one the install stops and says so."""
import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithToolchain(build_py):
    def run(self):
        super().run()
        build = os.environ.get("ATTN_BUILD_DIR") or os.path.join(ROOT,
                                                                "build")
        files = {
            os.path.join(build, "bin", "attn-compile"): "bin",
            os.path.join(build, "lib", "libattnrt.a"): "lib",
        }
        headers = os.path.join(ROOT, "runtime", "include")
        for name in sorted(os.listdir(headers)):
            if name.endswith(".h"):
                files[os.path.join(headers, name)] = os.path.join("include",
                                                                  "attn")
        missing = [p for p in files if not os.path.isfile(p)]
        if missing:
            raise SystemExit(
                f"attn: {', '.join(missing)} not found: build attn first "
                f"(bash scripts/build.sh), or point ATTN_BUILD_DIR at a "
                f"build")
        target = os.path.join(self.build_lib, "attn", "_toolchain")
        for path, folder in files.items():
            os.makedirs(os.path.join(target, folder), exist_ok=True)
            shutil.copy2(path, os.path.join(target, folder))


class BinaryDistribution(Distribution):
    """A wheel for this platform (it holds attn-compile), not py3-none-any."""

    def has_ext_modules(self):
        return True


# setuptools' own build folder: build/ is CMake's.
setup(cmdclass={"build_py": BuildWithToolchain},
      distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join(ROOT, "build-python")},
               "egg_info": {"egg_base": os.path.join(ROOT, "build-python")}})
