#!/usr/bin/env bash
# Generates what the sources import but git does not keep: the Prisma client and the gRPC types.
set -euo pipefail
cd "$(dirname "$0")/.."

# Prisma only needs the schema engine for migrations, which we apply ourselves; pointing the
# variable at any existing file stops it from trying to download one.
if [ -z "${PRISMA_SCHEMA_ENGINE_BINARY:-}" ] || [ ! -e "${PRISMA_SCHEMA_ENGINE_BINARY}" ]; then
  export PRISMA_SCHEMA_ENGINE_BINARY="$PWD/scripts/no-schema-engine"
fi
npx prisma generate >/dev/null

rm -rf common/generated/proto
npx proto-loader-gen-types --longs=Number --enums=String --defaults --oneofs --grpcLib=@grpc/grpc-js \
  --outDir=common/generated/proto --includeComments proto/llmgw/agent/v1/agent.proto >/dev/null
echo '{"type":"commonjs"}' > common/generated/proto/package.json
echo "generated: common/generated/prisma, common/generated/proto"
