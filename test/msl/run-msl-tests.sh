#!/usr/bin/env bash
# Translates an L0 spec to MSL, compiles the .metal with attn_msl_test.cpp
# through the MSL CPU emulator and runs numerical cases against the float64
# reference.
#
#   run-msl-tests.sh WORK_DIR ATTN_TRANSLATE SPEC.mlir [translate options] \
#       -- FUNCTION:B:Sq:Sk...
#
# Prints one PASS/FAIL line per case and ends with "N passed, M failed".
#
# ATTN_MSL_MATH=fast compiles the kernels as Metal does by default, with
# fast math (tools/msl-emulator/msl-emu-cc.sh), in WORK_DIR/fast-math.
# ATTN_MSL_TEST_EDIT, a sed script, edits the .metal before it is compiled:
# the planted bugs of fast-math.test.
set -euo pipefail

[[ $# -ge 5 ]] || { echo "usage: $0 WORK_DIR ATTN_TRANSLATE SPEC [options] -- CASES" >&2; exit 2; }
work=$1 translate=$2 spec=$3
shift 3
options=()
while [[ $# -gt 0 && $1 != -- ]]; do
  options+=("$1")
  shift
done
[[ ${1:-} == -- ]] && shift

test_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
root=$(cd "$test_dir/../.." && pwd -P)
[[ ${ATTN_MSL_MATH:-ieee} == fast ]] && work=$work/fast-math
mkdir -p "$work"
name=$(basename "$spec" .mlir)
metal="$work/$name.metal" facts="$work/$name.json" table="$work/$name.kernels.inc"

"$translate" --attn-to-msl "$spec" "${options[@]}" \
  --msl-launch-json="$facts" -o "$metal"
if [[ -n ${ATTN_MSL_TEST_EDIT:-} ]]; then
  sed -i -e "$ATTN_MSL_TEST_EDIT" "$metal"
fi
# The host names each kernel at compile time: ATTN_MSL_KERNEL(name).
sed -nE 's/^kernel void ([A-Za-z_][A-Za-z0-9_]*)\(.*/  {"\1", ATTN_MSL_KERNEL(\1)},/p' \
  "$metal" >"$table"
# The mod regions' float64 evaluation (tools/attn-run/ModsHost.h), built
# next to attn-translate.
libdir=$(cd "$(dirname "$(command -v "$translate")")/../lib" && pwd -P)
bash "$root/tools/msl-emulator/msl-emu-cc.sh" "$metal" "$test_dir/attn_msl_test.cpp" \
  -o "$work/$name-test" "$root/lib/Reference/Reference.cpp" -I"$root" \
  -DATTN_TEST_KERNEL_TABLE="\"$table\"" \
  -L"$libdir" -lAttnModsHost -Wl,-rpath,"$libdir"
exec "$work/$name-test" "$facts" --spec="$spec" "$@"
