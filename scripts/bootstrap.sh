#!/usr/bin/env bash
# Set up (or update) the local virtual environment .venv, then run the given command inside it.
#   bash scripts/bootstrap.sh [--extras dev,bench] COMMAND [ARGS...]
# Installs torch==2.13.0 first (the CPU build on this machine; a bare "torch" would pull CUDA wheels),
# then this project in editable mode with the "dev" extra (plus any --extras). Re-installs only when
# pyproject.toml or the extras change.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="dev"
if [ "${1:-}" = "--extras" ]; then extras="dev,$2"; shift 2; fi
py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
stamp=".venv/.installed-$(cat pyproject.toml | sha1sum | cut -c1-12)-${extras//,/_}"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q torch==2.13.0
  .venv/bin/python -m pip install -q -e ".[${extras}]"
  touch "$stamp"
fi
if [ "$#" -eq 0 ]; then exit 0; fi
export PATH="$PWD/.venv/bin:$PATH"
exec "$@"
