#!/usr/bin/env bash
# Builds every module of this repository as a user outside it would: from a
# module proxy (GOPROXY=file://...) that serves the working tree's modules at
# the version the modules require of each other (scripts/modules proxy), each
# module copied out of the proxy with its replace lines dropped, so that its
# go.mod alone must resolve, and a library module's code (tests aside) may not
# import the core's internal/ packages. Modules from elsewhere (quic-go, otel...) come
# from the module cache's download directory, then GOPROXY.
#
# The module cache is the usual one, so that the packages from elsewhere are
# compiled already; this repository's modules at that version are removed
# from it before and after (the tree's snapshot must not stay there as if it
# were the release).
#
# The go command also indexes a module-cache directory once, in the build
# cache, taking a version's files as immutable (its "module index"); the
# tree's snapshot changes under one version, so the index is turned off
# (GODEBUG goindex=0), or a later run compiles the file list of an earlier one.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off GOTOOLCHAIN=local
export GODEBUG="${GODEBUG:+$GODEBUG,}goindex=0"
version=$(cd http3 && go list -m -f '{{.Version}}' github.com/celeris-dev/celeris)
cache=$(go env GOMODCACHE)
tmp=$(mktemp -d)
forget() {
  local d
  for d in "$cache"/github.com/celeris-dev/celeris@"$version" "$cache"/github.com/celeris-dev/celeris/*@"$version" \
      "$cache"/github.com/celeris-dev/celeris/*/*@"$version" "$cache"/cache/download/github.com/celeris-dev; do
    [ -e "$d" ] && chmod -R u+w "$d" && rm -rf "$d"
  done
  return 0
}
trap 'forget; rm -rf "$tmp"' EXIT
forget
go run ./scripts/modules proxy "$tmp/proxy" "$version"
upstream=$(go env GOPROXY)
export GOPROXY="file://$tmp/proxy,file://$cache/cache/download${upstream:+,$upstream}"
export GOFLAGS="-mod=mod -buildvcs=false" GOSUMDB=off GONOSUMDB='*'
for dir in $(go run ./scripts/modules order); do
  [ "$dir" = . ] && continue
  path=$(cd "$dir" && go list -m)
  src=$(go mod download -json "$path@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  if [ -z "$src" ] || [ ! -f "$src/go.mod" ]; then echo "$path@$version: not served by the proxy"; exit 1; fi
  work="$tmp/src/$dir"
  mkdir -p "$work" && cp -R "$src/." "$work" && chmod -R u+w "$work"
  (
    cd "$work"
    sed -i '/^replace (/,/^)/d; /^replace /d' go.mod
    if grep -q '^replace' go.mod; then echo "$dir: replace lines left in go.mod"; exit 1; fi
    go build ./... || { echo "$path@$version does not build from the module proxy"; exit 1; }
    # A library module uses the core's exported API only (the tools, bench and
    # cmd/demo, may reach inside).
    case "$dir" in bench | cmd/*) ;; *)
      bad=$(go list -f '{{range .Imports}}{{$.ImportPath}} imports {{.}}{{"\n"}}{{end}}' ./... | grep ' imports github.com/celeris-dev/celeris/internal/' || true)
      if [ -n "$bad" ]; then echo "$bad"; echo "$dir: use the core's exported API (package transport...), not its internal/ packages"; exit 1; fi
    esac
  )
  echo "ok  $path@$version"
done
