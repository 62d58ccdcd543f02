#!/usr/bin/env bash
# Sets up, builds and runs every attn test (the lit suite, unit and numerical
# tests). README's test command; .ci/run calls it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
bash "$root/scripts/build.sh" check-attn
# The installed tree: find_package(attn) from an outside project, and the
# installed tools (scripts/check-install.sh).
bash "$root/scripts/check-install.sh"
# The Python package installed with pip into a fresh virtual environment,
# its bundled attn-compile compiling outside the checkout.
bash "$root/scripts/check-python-install.sh"
