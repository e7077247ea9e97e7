#!/usr/bin/env bash
# What `npm run up` runs: install what is missing, start the real services (unless their URLs are
# given), then `llmgw up`, which migrates, starts every process and serves sim-chat.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ ! -e node_modules/.package-lock.json ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> npm ci"
  npm ci
fi
bash scripts/gen.sh
bash scripts/services.sh start
eval "$(bash scripts/services.sh env)"
exec node bin/llmgw.js up
