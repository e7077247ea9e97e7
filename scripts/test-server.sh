#!/usr/bin/env bash
# The Temporal time-skipping test server for tests/workflow (@temporalio/testing's
# createTimeSkipping). It is not the Temporal CLI: the CLI's dev server cannot skip time. The SDK
# would download a native build of it from GitHub, which cannot be reached here; the same server is
# published to Maven Central as io.temporal:temporal-test-server (a jar), so it is fetched with
# Maven into the cache and started by a small launcher that runs it on Java 17.
#
#   scripts/test-server.sh install    fetch it into the cache (a no-op when there)
#   scripts/test-server.sh path       print the launcher's path, installing it first
#
# LLMGW_TEMPORAL_TEST_SERVER=PATH uses that executable instead (a native temporal-test-server).
set -euo pipefail
VERSION=1.32.1
DIR="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/temporal-test-server-$VERSION"
LAUNCHER="$DIR/temporal-test-server"

say() { echo "test-server: $*" >&2; }
die() { echo "test-server: error: $*" >&2; exit 1; }

# shellcheck source=scripts/apt-install.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

install() {
  [ -x "$LAUNCHER" ] && return 0
  command -v java >/dev/null || apt_install openjdk-17-jre-headless
  command -v mvn >/dev/null || apt_install maven
  say "fetching io.temporal:temporal-test-server:$VERSION from Maven Central into $DIR"
  mkdir -p "$DIR"
  cat >"$DIR/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>llmgw</groupId><artifactId>temporal-test-server</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$VERSION</version></dependency>
  </dependencies>
</project>
EOF
  rm -rf "$DIR/lib"
  mvn -q -B -f "$DIR/pom.xml" dependency:copy-dependencies -DoutputDirectory="$DIR/lib" >&2 || die "maven could not fetch the test server"
  # The SDK starts it as `EXE PORT`; exec, so stopping the launcher's process stops the JVM.
  # C1 only and the serial GC: it starts sooner, and the server's load is light.
  cat >"$LAUNCHER.tmp" <<EOF
#!/bin/sh
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx512m -cp "$DIR/lib/*" io.temporal.testserver.TestServer "\$@"
EOF
  chmod +x "$LAUNCHER.tmp"
  mv "$LAUNCHER.tmp" "$LAUNCHER"
}

case "${1:-}" in
  install) if [ -z "${LLMGW_TEMPORAL_TEST_SERVER:-}" ]; then install; fi ;;
  path)
    if [ -n "${LLMGW_TEMPORAL_TEST_SERVER:-}" ]; then echo "$LLMGW_TEMPORAL_TEST_SERVER"; exit 0; fi
    install
    echo "$LAUNCHER"
    ;;
  *) echo "usage: $0 install|path" >&2; exit 2 ;;
esac
