#!/usr/bin/env bash
# Runs helm, first building it from source with Go when it is not cached yet: the Go module proxy
# serves helm's source, and no prebuilt binary is downloaded. The binary is cached in
# ${EXACTLY_HELM_DIR:-build/tools}/helm-VERSION/, so only the first run pays for the build (about
# two minutes on 2 cores with empty Go caches, under ten seconds with warm ones).
#   scripts/helm.sh ARGS...       helm ARGS...
#   scripts/helm.sh --path        build if needed, print the binary's path
#   scripts/helm.sh --check-go    exit 0 when the Go here can build it, else say why and exit 1
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=v3.21.4
go_needed=1.26.0  # the go line of helm v3.21.4's go.mod
# The Kubernetes version helm assumes without a cluster (template, lint): helm's Makefile derives
# it from the k8s.io/client-go it is built with (v0.36.2 for v3.21.4: Kubernetes 1.36); without
# these flags a source build assumes 1.20.
kube_major=1
kube_minor=36
dir=${EXACTLY_HELM_DIR:-$root/build/tools}/helm-$version
helm=$dir/helm

# Debian 12 has no usable Go package; the machine image puts one in /usr/local/go.
find_go() {
  command -v go && return
  if [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go; fi
}

check_go() {
  local go have
  go=$(find_go)
  if [ -z "$go" ]; then
    echo "helm.sh: Go not found: helm $version is built from source and needs Go >= $go_needed" \
         "(Debian 12's golang-go is 1.19, too old)" >&2
    return 1
  fi
  have=$("$go" env GOVERSION)
  have=${have#go}
  if ! printf '%s\n%s\n' "$go_needed" "$have" | sort -V -C; then
    echo "helm.sh: $go is Go $have; helm $version needs Go >= $go_needed" >&2
    return 1
  fi
}

build() {
  check_go || exit 1
  local go tmp start=$SECONDS
  go=$(find_go)
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/build.XXXXXX")
  echo "helm.sh: building helm $version with $go into $dir (once; cached there)" >&2
  # GOTOOLCHAIN=local: never switch to another toolchain behind our back; check_go said this one
  # is new enough.
  GOBIN=$tmp GOFLAGS=-mod=mod GOTOOLCHAIN=local "$go" install \
    -ldflags "-X helm.sh/helm/v3/internal/version.version=$version
              -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$kube_major
              -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$kube_minor
              -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$kube_major
              -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$kube_minor" \
    "helm.sh/helm/v3/cmd/helm@$version" >&2
  mv -f "$tmp/helm" "$helm"
  rmdir "$tmp"
  echo "helm.sh: built helm $version in $((SECONDS - start)) s" >&2
}

case "${1:-}" in
  --check-go) check_go; exit ;;
esac
[ -x "$helm" ] || build
if [ "${1:-}" = --path ]; then echo "$helm"; exit 0; fi
# Keep helm's own files (repositories, cache) beside the binary, not in the user's home.
export HELM_CONFIG_HOME=${HELM_CONFIG_HOME:-$dir/home/config}
export HELM_CACHE_HOME=${HELM_CACHE_HOME:-$dir/home/cache}
export HELM_DATA_HOME=${HELM_DATA_HOME:-$dir/home/data}
exec "$helm" "$@"
