#!/bin/sh
# The image's entrypoint: node started with the flags the command is to have on this host (V8
# settings a running process cannot change: gateway/heap-tuning.ts), worked out by llmgw itself,
# then the command. exec: node is the container's process and gets its signals.
set -e
flags=$(node bin/llmgw.js node-flags "$@")
# Unquoted on purpose: zero or more flags, none with spaces.
# shellcheck disable=SC2086
exec node $flags bin/llmgw.js "$@"
