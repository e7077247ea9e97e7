#!/usr/bin/env bash
# What `npm run build` runs: the TypeScript compiled once into dist/ (tsconfig.build.json), which
# bin/llmgw.js then runs instead of the sources through tsx (faster starts, no per-closure __name
# wrapping on the hot path), and the web console (console/) into dist/console by Vite. The generated
# code (scripts/gen.sh) must be there first.
#
#   bash scripts/build.sh            compile (incremental: tsc keeps dist/.tsbuildinfo)
#   bash scripts/build.sh --if-stale compile only when dist/ is older than its inputs (bin/dist.js)
#   bash scripts/build.sh --after-install   package.json's prepare (npm ci, npm install): generate,
#       then compile; a failed compile is reported but does not fail the install (without dev
#       dependencies there is no tsc), and bin/llmgw.js runs the sources meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."

# The web console (console/, React + Vite) into dist/console, which the gateway serves under /console
# (gateway/http/console-static.ts); only when it is missing or a file it is built from changed.
build_console() {
  local built=dist/console/index.html
  if [ -f "$built" ] && [ -z "$(find console package-lock.json -newer "$built" -print -quit)" ]; then
    echo "build: dist/console is up to date"
    return 0
  fi
  npx vite build --config console/vite.config.ts --logLevel warn
  echo "build: dist/console built"
}

if [ "${1:-}" = --after-install ]; then
  bash scripts/gen.sh
  bash scripts/build.sh || echo "build: not compiled (see above): llmgw runs its sources through tsx until \`npm run build\` succeeds" >&2
  exit 0
fi
if [ "${1:-}" = --if-stale ] && node -e 'import("./bin/dist.js").then((m) => process.exit(m.distFresh(".") ? 0 : 1))'; then
  echo "build: dist/ is up to date"
  build_console
  exit 0
fi
# The stamp goes first, so a build that fails or is stopped leaves none: bin/llmgw.js then runs the sources.
rm -f dist/.built
# Its time is when tsc began reading: a source saved during the build stays newer than the build.
started="@$(date +%s.%N)"
npx tsc -p tsconfig.build.json
# The gRPC types are CommonJS (scripts/gen.sh marks their folder so); their build keeps that mark.
mkdir -p dist/common/generated/proto
cp common/generated/proto/package.json dist/common/generated/proto/package.json
# Modules compiled code imports from bin/ (plain JavaScript, not compiled).
mkdir -p dist/bin
cp bin/dist.js dist/bin/dist.js
touch -d "$started" dist/.built
echo "build: dist/ compiled"
build_console
