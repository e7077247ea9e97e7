#!/usr/bin/env bash
# pgvector for PostgreSQL 15: the similar answer cache stores its embeddings with it (docs/cache.md).
# Debian 12's main archive lacks it, so its Debian source package (0.8.0, from trixie) is built
# once against postgresql-server-dev-15, portably (no -march=native), and the built files are
# cached under ${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/pgvector-VERSION, as the Temporal CLI is cached.
# A later install copies them from the cache without apt or a compiler.
#
#   scripts/pgvector.sh install     build (or take from the cache) and install; root only
#   scripts/pgvector.sh installed   exit 0 when PostgreSQL 15 has the extension's files
#
# Without root the extension stays absent and the similar cache says why it is off; the exact cache
# does not need it.
set -euo pipefail

PGVECTOR_VERSION=0.8.0
PG_MAJOR=15
PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config"
[ -x "$PG_CONFIG" ] || PG_CONFIG=/usr/bin/pg_config
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/pgvector-$PGVECTOR_VERSION-pg$PG_MAJOR"
SRC_LIST=/etc/apt/sources.list.d/llmgw-trixie-src.list

say() { echo "pgvector: $*" >&2; }
die() { echo "pgvector: error: $*" >&2; exit 1; }

pkglibdir() { "$PG_CONFIG" --pkglibdir 2>/dev/null || echo "/usr/lib/postgresql/$PG_MAJOR/lib"; }
sharedir() { echo "$("$PG_CONFIG" --sharedir 2>/dev/null || echo "/usr/share/postgresql/$PG_MAJOR")/extension"; }

installed() {
  [ -f "$(pkglibdir)/vector.so" ] && [ -f "$(sharedir)/vector.control" ]
}

# Copies the cached build into PostgreSQL's directories.
install_from_cache() {
  [ -f "$CACHE/lib/vector.so" ] && [ -f "$CACHE/extension/vector.control" ] || return 1
  install -m 0755 "$CACHE/lib/vector.so" "$(pkglibdir)/vector.so"
  if [ -d "$CACHE/bitcode" ]; then
    mkdir -p "$(pkglibdir)/bitcode"
    cp -a "$CACHE/bitcode/." "$(pkglibdir)/bitcode/"
  fi
  install -m 0644 "$CACHE"/extension/* "$(sharedir)/"
  say "installed $PGVECTOR_VERSION from $CACHE"
}

build() {
  local work
  [ -f "$SRC_LIST" ] || echo "deb-src http://deb.debian.org/debian trixie main" >"$SRC_LIST"
  apt-get update -qq
  local pkgs=() server
  # The headers of the server that is installed, never a newer one: apt would upgrade the server's
  # files under a running PostgreSQL, whose next backend then fails to load its libraries (plpgsql).
  server="$(dpkg-query -W -f='${Version}' "postgresql-$PG_MAJOR" 2>/dev/null || true)"
  dpkg -s "postgresql-server-dev-$PG_MAJOR" >/dev/null 2>&1 || pkgs+=("postgresql-server-dev-$PG_MAJOR${server:+=$server}")
  dpkg -s build-essential >/dev/null 2>&1 || pkgs+=(build-essential)
  dpkg -s dpkg-dev >/dev/null 2>&1 || pkgs+=(dpkg-dev)
  if [ ${#pkgs[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
  fi
  PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config"
  [ -x "$PG_CONFIG" ] || PG_CONFIG=/usr/bin/pg_config
  work="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" RETURN
  (cd "$work" && 
  apt-get source -qq --download-only pgvector) || die "apt-get source pgvector failed"
  (cd "$work" && dpkg-source -x --no-check ./*.dsc src >/dev/null)
  # OPTFLAGS= : no -march=native, so the cached build runs on any x86-64 machine.
  make -s -C "$work/src" PG_CONFIG="$PG_CONFIG" OPTFLAGS= >/dev/null
  mkdir -p "$CACHE.tmp/lib" "$CACHE.tmp/extension"
  cp "$work/src/vector.so" "$CACHE.tmp/lib/"
  cp "$work/src/vector.control" "$CACHE.tmp/extension/"
  cp "$work/src"/sql/vector--*.sql "$CACHE.tmp/extension/"
  rm -rf "$CACHE"
  mv "$CACHE.tmp" "$CACHE"
  say "built $PGVECTOR_VERSION into $CACHE"
}

case "${1:-}" in
  installed) installed ;;
  install)
    if installed; then say "already installed"; exit 0; fi
    [ "$(id -u)" = 0 ] || die "installing pgvector needs root (the similar answer cache stays off without it)"
    install_from_cache || { build && install_from_cache; } || die "install failed"
    ;;
  *) echo "usage: $0 install|installed" >&2; exit 2 ;;
esac
