#!/usr/bin/env bash
# zitadel's example OpenID provider (github.com/zitadel/oidc/v3/example/server), a real provider for
# tests/integration/sign-in-zitadel.test.ts: built from Go modules at a pinned version into
# ${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/bin (as scripts/k8s-tools.sh caches helm). Dex is not served
# by the module proxy here beyond 2018's v2.13.0+incompatible; this one builds in under a minute.
# The binary has no --version: the version it was built from is recorded in a file beside it.
#
#   scripts/zitadel-op.sh install     build it unless the pinned version is cached (then a no-op)
#   scripts/zitadel-op.sh installed   exit 0 if the pinned version is cached
#   scripts/zitadel-op.sh path        print the binary's path (exit 1 if not installed)
set -euo pipefail

MODULE=github.com/zitadel/oidc/v3
VERSION=v3.52.0
CACHE_BIN="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/bin"
BIN="$CACHE_BIN/zitadel-example-op"
STAMP="$BIN.version"

say() { echo "zitadel-op: $*" >&2; }
die() { echo "zitadel-op: error: $*" >&2; exit 1; }

installed() { [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$MODULE@$VERSION" ]; }

install() {
  installed && return 0
  [ -d /usr/local/go/bin ] && export PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || die "no Go to build zitadel's example OpenID provider with (https://go.dev/dl)"
  mkdir -p "$CACHE_BIN"
  local tmp t0=$SECONDS
  # Its package is named "server": built into a directory of its own, then moved in under its name.
  tmp="$(mktemp -d)"
  say "building $MODULE/example/server@$VERSION from Go modules into $CACHE_BIN"
  if ! CGO_ENABLED=0 GOBIN="$tmp" nice -n 10 go install "$MODULE/example/server@$VERSION" >&2; then rm -rf "$tmp"; die "building $MODULE/example/server@$VERSION failed (output above)"; fi
  mv "$tmp/server" "$BIN"
  rm -rf "$tmp"
  echo "$MODULE@$VERSION" >"$STAMP"
  say "built in $((SECONDS - t0))s"
  installed || die "$BIN is still not $VERSION after building"
}

case "${1:-}" in
  install) install ;;
  installed) installed ;;
  path) installed || die "not installed: run scripts/zitadel-op.sh install"; echo "$BIN" ;;
  *) echo "usage: $0 install|installed|path" >&2; exit 2 ;;
esac
