#!/usr/bin/env bash
# Installs the build (scripts/build.sh) into a temporary prefix, moves the
# prefix (nothing may point back into the build tree), and checks that:
#   - test/install-consumer (my-opt, an MLIR tool outside attn) configures
#     against it with find_package(attn), builds with its imported targets
#     only, and runs attn's passes on a spec (FileCheck on the IR);
#   - the installed tools run, and attn-compile packages a spec with the
#     installed libattnrt.
# scripts/test.sh runs it after the lit suite. ATTN_BUILD_DIR, ATTN_JOBS as
# for build.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
filecheck="${FILECHECK:-/usr/lib/llvm-22/bin/FileCheck}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
mv "$work/prefix" "$work/moved"
prefix="$work/moved"

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root/test/install-consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-22 \
  -DCMAKE_CXX_COMPILER=clang++-22 "${launcher[@]}" \
  -Dattn_DIR="$prefix/lib/cmake/attn" > "$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
grep -- "-- attn " "$work/configure.log"
ninja -C "$work/consumer" -j "${ATTN_JOBS:-2}" > "$work/build.log" ||
  { cat "$work/build.log"; exit 1; }

"$work/consumer/my-opt" "$root/examples/llama3_8b_prefill.mlir" \
    --attn-select-tier=sm=90 --attn-tile |
  "$filecheck" "$root/test/install-consumer/attn-tile.check"
echo "check-install: my-opt (built against $prefix) ran attn-select-tier and attn-tile"

"$prefix/bin/attn-opt" --version | grep -q '^attn '
# attn-compile takes libattnrt from the prefix it is installed in.
strace_cmd=()
if command -v strace >/dev/null; then
  strace_cmd=(strace -f -qq -e trace=openat -o "$work/compile.trace")
fi
"${strace_cmd[@]}" "$prefix/bin/attn-compile" "$root/examples/paged_decode.mlir" \
  --targets=sm_90 --no-cubin --quiet -o "$work/lib"
test -s "$work/lib/libpaged_decode.a" && test -s "$work/lib/paged_decode.h"
if [ -f "$work/compile.trace" ]; then
  grep -q "$prefix/lib/libattnrt.a" "$work/compile.trace"
  if grep -q "$build/lib/libattnrt.a" "$work/compile.trace"; then
    echo "check-install: attn-compile read the build tree's libattnrt.a" >&2
    exit 1
  fi
  echo "check-install: the installed attn-compile packaged a spec with the installed libattnrt"
else
  echo "check-install: the installed attn-compile packaged a spec (no strace: which libattnrt it took is not checked)"
fi
