#!/usr/bin/env bash
# Installs what attn needs to build and test on Debian 12 (bookworm):
# LLVM/MLIR 22, clang 22, CMake, Ninja, pytest (python/tests), venv,
# setuptools and wheel (the offline `pip install .`), and
# Debian's CPU PyTorch (1.13, without its recommended libtorch-dev) for the
# tests of attn.flash_attn's argument routing. Idempotent; runs as root or
# via sudo.
set -euo pipefail

packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
          cmake ninja-build python3 python3-pytest python3-venv
          python3-setuptools python3-wheel)
bare_packages=(python3-torch)  # installed without their recommends

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}
missing=() missing_bare=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
for p in "${bare_packages[@]}"; do installed "$p" || missing_bare+=("$p"); done
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_bare[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]} ${missing_bare[*]}"
$SUDO apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
if [ ${#missing_bare[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "${missing_bare[@]}"
fi
