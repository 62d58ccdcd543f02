#!/usr/bin/env bash
# Builds attn with -DATTN_FUZZ=ON in build-fuzz/ (ASan + UBSan + libFuzzer)
# and runs one of its fuzz targets; extra arguments go to libFuzzer:
#   scripts/fuzz.sh [text] -max_total_time=600
#       fuzz/attn-fuzz on spec text: a seed corpus of every spec in
#       examples/ and test/ (split at `// -----`), with fuzz/attn.dict;
#       new entries in build-fuzz/corpus/
#   scripts/fuzz.sh specs -runs=100000
#       fuzz/attn-fuzz-specs on specs built from the input bytes; corpus in
#       build-fuzz/corpus-specs/
#   scripts/fuzz.sh mods -max_total_time=600
#       fuzz/attn-fuzz-mods on score_mod / mask_mod regions built from the
#       input bytes, verified and evaluated with attn-run's ModEval; corpus
#       in build-fuzz/corpus-mods/. ATTN_FUZZ_MODS_LOWER=1 also runs each
#       spec that verifies through the lowerings (slow: to replay a corpus,
#       e.g. `ATTN_FUZZ_MODS_LOWER=1 scripts/fuzz.sh mods -runs=0`).
# Crashes land in build-fuzz/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
mode=text
case "${1:-}" in
  text|specs|mods) mode="$1"; shift ;;
esac
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DATTN_FUZZ=ON
fi
target=attn-fuzz
[ "$mode" = specs ] && target=attn-fuzz-specs
[ "$mode" = mods ] && target=attn-fuzz-mods
ninja -C "$build" -j "${ATTN_JOBS:-2}" "$target"

# libMLIR.so is not instrumented: its containers cannot be checked, and the
# poisoning that LLVM's inline allocators do in instrumented code is not
# undone by its uninstrumented copies (false use-after-poison reports).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_container_overflow=0:allow_user_poisoning=0:detect_leaks=1}"
cd "$build"
if [ "$mode" = specs ]; then
  mkdir -p corpus-specs
  exec ./bin/attn-fuzz-specs -max_len=256 -timeout=60 -rss_limit_mb=4096 \
    -print_final_stats=1 "$@" corpus-specs
fi
if [ "$mode" = mods ]; then
  mkdir -p corpus-mods
  exec ./bin/attn-fuzz-mods -max_len=1024 -timeout=60 -rss_limit_mb=4096 \
    -print_final_stats=1 "$@" corpus-mods
fi

seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "$seeds" "$build/corpus"
python3 - "$root" "$seeds" <<'PY'
import pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for f in sorted(list(root.glob("examples/*.mlir")) + list(root.glob("test/**/*.mlir"))):
    for part in f.read_text(errors="replace").split("// -----"):
        if "attn." in part and len(part.encode()) <= 8192:
            (out / f"{n:04d}.mlir").write_text(part)
            n += 1
print(f"fuzz.sh: {n} seeds")
PY
exec ./bin/attn-fuzz -dict="$root/fuzz/attn.dict" -max_len=8192 \
  -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 "$@" corpus "$seeds"
