#!/usr/bin/env bash
# `pip install .` offline into a fresh virtual environment (Debian's
# setuptools and wheel, no index, no build isolation), then, from a folder
# outside the checkout with nothing of it on PYTHONPATH: import attn, find
# the bundled attn-compile, compile a spec with it into a fresh cache and
# load the library (scripts/test.sh runs it after the build).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 -m venv --system-site-packages "$work/venv"
(cd "$root" && "$work/venv/bin/python" -m pip install -q \
   --no-build-isolation --no-index --no-cache-dir .)
mkdir "$work/elsewhere"
cd "$work/elsewhere"
env -i PATH=/usr/bin:/bin HOME="$work" "$work/venv/bin/python" - <<'PY'
import os, sys, tempfile
import attn
from attn.spec import AttentionFacts
here = os.path.dirname(attn.__file__)
assert here.startswith(sys.prefix), (here, sys.prefix)
tool = attn.find_compiler()
assert tool == attn.compiler.BUNDLED_COMPILER and os.access(tool, os.X_OK), tool
facts = AttentionFacts("f16", 8, 2, 128, mask="causal", lse=True)
lib = facts.compile(targets=["sm_80"], cache_dir=tempfile.mkdtemp())
kernel = lib.kernels["attention"]
assert kernel.tier == "mma", kernel.tier
assert [o["name"] for o in kernel.operands] == ["q", "k", "v", "o", "lse"]
print(f"check-python-install: attn {attn.__version__} from {here}; "
      f"bundled attn-compile built {lib.name} ({kernel.tier})")
PY
