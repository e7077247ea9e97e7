#!/usr/bin/env bash
# What `npm run up` runs: install what is missing, compile (dist/) what changed, start the real services (unless their URLs are
# given), then `llmgw up`, which migrates, starts every process and serves sim-chat.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
bash scripts/gen.sh
bash scripts/build.sh --if-stale
bash scripts/services.sh start
eval "$(bash scripts/services.sh env)"
exec node bin/llmgw.js up
