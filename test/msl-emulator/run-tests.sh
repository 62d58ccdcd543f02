#!/usr/bin/env bash
# Builds and runs the MSL emulator tests, one compile at a time.
#
#   run-tests.sh [BUILD_DIR]   (default: $TMPDIR/attn-msl-emulator-tests)
#
# NAME.metal + NAME.cpp: a kernel file and its host program; it passes when
# the program exits 0. compile-fail-*.metal: must fail to compile with the
# text of its `// EXPECT-COMPILE-ERROR:` line in the compiler's output, in
# the math mode of its `// EMULATOR-MATH:` line (default ieee).
# Ends with "N passed, M failed" and exits non-zero if anything failed.
set -uo pipefail

test_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
compile="$test_dir/../../tools/msl-emulator/msl-emu-cc.sh"
build_dir=${1:-"${TMPDIR:-/tmp}/attn-msl-emulator-tests"}
mkdir -p "$build_dir"
passed=0
failed=0

pass() {
  echo "PASS $1"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL $1"
  sed 's/^/    /' "$2"
  failed=$((failed + 1))
}

# run_test NAME KERNEL HOST [clang++ arguments]
run_test() {
  local name=$1 kernel=$2 host=$3
  shift 3
  local exe="$build_dir/$name" log="$build_dir/$name.log"
  if ! bash "$compile" "$kernel" "$host" -o "$exe" "$@" >"$log" 2>&1; then
    fail "$name (does not compile)" "$log"
    return
  fi
  # A hang would be an emulator bug; the timeout turns it into a failure.
  if timeout 300 "$exe" >>"$log" 2>&1; then
    pass "$name"
  else
    fail "$name" "$log"
  fi
}

for kernel in "$test_dir"/*.metal; do
  name=$(basename "$kernel" .metal)
  [[ $name == compile-fail-* ]] && continue
  run_test "$name" "$kernel" "$test_dir/$name.cpp"
done

# Metal's default fast math (msl-emu-cc.sh's ATTN_MSL_MATH=fast).
ATTN_MSL_MATH=fast run_test "fast-math-fast" "$test_dir/fast-math.metal" \
  "$test_dir/fast-math.cpp"

# The portable ucontext fibers, used where the x86-64 switch is not.
run_test "errors-ucontext" "$test_dir/errors.metal" "$test_dir/errors.cpp" \
  -DATTN_MSL_USE_UCONTEXT
run_test "simdgroup-matrix-ucontext" "$test_dir/simdgroup-matrix.metal" \
  "$test_dir/simdgroup-matrix.cpp" -DATTN_MSL_USE_UCONTEXT

for kernel in "$test_dir"/compile-fail-*.metal; do
  name=$(basename "$kernel" .metal)
  log="$build_dir/$name.log"
  expected=$(sed -n 's|^// EXPECT-COMPILE-ERROR: ||p' "$kernel")
  if [[ -z $expected ]]; then
    echo "no EXPECT-COMPILE-ERROR line" >"$log"
    fail "$name" "$log"
  elif ATTN_MSL_MATH=$(sed -n 's|^// EMULATOR-MATH: ||p' "$kernel") \
      bash "$compile" "$kernel" "$test_dir/compile-fail-host.cpp" \
      -o "$build_dir/$name" >"$log" 2>&1; then
    echo "compiled, but should have failed with: $expected" >>"$log"
    fail "$name" "$log"
  elif ! grep -qF -- "$expected" "$log"; then
    echo "failed to compile, but without: $expected" >>"$log"
    fail "$name" "$log"
  else
    pass "$name"
  fi
done

# The README's example kernel is the one readme-example.metal runs.
log="$build_dir/readme-example-in-sync.log"
readme="$test_dir/../../tools/msl-emulator/README.md"
if diff <(sed -n '/^```metal$/,/^```$/p' "$readme" | sed '1d;$d') \
    <(sed -n '/^#include <metal_stdlib>$/,/^\/\/ End of the README example\.$/p' \
      "$test_dir/readme-example.metal" | sed '$d') >"$log" 2>&1; then
  pass "readme-example-in-sync"
else
  fail "readme-example-in-sync" "$log"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
