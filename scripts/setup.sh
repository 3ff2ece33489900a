#!/usr/bin/env bash
# Installs everything AsmEvo needs on Debian/Ubuntu: LLVM 19 (llvm-mc, llvm-objdump, ld.lld, clang),
# a virtualenv in .venv, and the Python dependencies (with Triton, the test tools and the PyPI LLVM 22
# toolchain that serves gfx950). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for tool in llvm-mc-19 llvm-objdump-19 ld.lld-19 clang-19; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool")
done
if ((${#need_apt[@]})) && [[ -z "${ASMEVO_LLVM_BIN:-}" ]]; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq llvm-19 lld-19 clang-19 python3-venv >/dev/null
fi

if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
# Reinstall only when the project's dependencies changed since the last install.
stamp=.venv/.asmevo-deps
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[triton,test,gfx950]'
  echo "$want" > "$stamp"
fi
