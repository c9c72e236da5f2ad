#!/usr/bin/env bash
# Set up (or update) the local virtual environment .venv, then run the given command inside it.
#   bash scripts/bootstrap.sh [--extras dev,bench] COMMAND [ARGS...]
# Installs torch==2.13.0 first (the CPU build on this machine; a bare "torch" would pull CUDA wheels),
# then this project in editable mode with the "dev" extra (plus any --extras). Re-installs only when
# pyproject.toml changes or an extra is asked for that no earlier install (of this pyproject.toml) covered.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="dev"
if [ "${1:-}" = "--extras" ]; then extras="dev,$2"; shift 2; fi
py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
extras="$(echo "$extras" | tr ',' '\n' | sed '/^$/d' | sort -u | paste -sd, -)"  # order and repeats do not matter
hash="$(sha1sum < pyproject.toml | cut -c1-12)"
stamp=".venv/.installed-${hash}-${extras//,/_}"
# Skip the install when an earlier one, from this pyproject.toml, already covered every requested extra.
covered=""
for done_stamp in .venv/.installed-"${hash}"-*; do
  [ -f "$done_stamp" ] || continue
  have="_${done_stamp#.venv/.installed-${hash}-}_"
  all=1
  for e in ${extras//,/ }; do [[ "$have" == *"_${e}_"* ]] || all=0; done
  if [ "$all" = 1 ]; then covered=1; break; fi
done
if [ -z "$covered" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q torch==2.13.0
  .venv/bin/python -m pip install -q -e ".[${extras}]"
  touch "$stamp"
fi
if [ "$#" -eq 0 ]; then exit 0; fi
export PATH="$PWD/.venv/bin:$PATH"
exec "$@"
