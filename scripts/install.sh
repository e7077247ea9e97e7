#!/usr/bin/env bash
# The dependencies, installed with `npm ci` unless a finished install of this package-lock.json is
# in node_modules. Used by scripts/up.sh, scripts/test.sh and .ci/run alike.
#
# A finished install is told by node_modules/.llmgw-installed, which holds package-lock.json's
# sha256 and is written only after `npm ci` succeeded. node_modules/.package-lock.json is no such
# sign: an `npm ci` stopped midway (Ctrl-C, a lost terminal) can leave it beside missing packages,
# and the next run then died with "npx canceled due to missing packages … prisma". npm ci empties
# node_modules first, so a stopped install leaves no marker and the next run installs again.
#
#   bash scripts/install.sh           npm ci when needed
#   bash scripts/install.sh --check   exit 0 when installed, 1 when not (installs nothing)
#
# An install made before this marker existed has none: the first run installs again (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

marker=node_modules/.llmgw-installed
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then exit 0; fi
[ "${1:-}" != --check ] || exit 1

# A linked node_modules is another checkout's install, shared: npm ci here would replace it under
# whoever uses it. That checkout installs it.
if [ -L node_modules ]; then
  echo "install: node_modules links to $(readlink -f node_modules), which holds no finished install of this package-lock.json: run bash scripts/install.sh in the checkout it belongs to" >&2
  exit 1
fi

echo "==> npm ci (no finished install of this package-lock.json in node_modules)"
npm ci
printf '%s\n' "$want" > "$marker"
