#!/usr/bin/env bash
# What `npm run up` runs: install what is missing, compile what changed (dist/), start the real
# services (unless their URLs are given), then `llmgw up`, which migrates, starts every process and
# serves sim-chat.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
bash scripts/gen.sh
# A failed build (a type error) leaves no dist/ to run: llmgw then runs its sources (bin/dist.js).
bash scripts/build.sh --if-stale || echo "build failed: llmgw runs its sources through tsx" >&2
bash scripts/services.sh start
eval "$(bash scripts/services.sh env)"
exec node bin/llmgw.js up
