#!/usr/bin/env bash
# Tests every module of this repository, as CI does: each with its own go.mod
# (GOWORK=off, as its users build it), in dependency order.
#
#   - the core module: go vet, the README's test command (go test -short
#     ./...), then the long tests that -short skips (multi-GiB transfers,
#     10,000 connections): each test that calls testing.Short(), by name;
#   - every other module: go vet and go test, with -race for the libraries
#     whose code is concurrent (grpc, otel, jwt, http3).
#
# Modules are found by their go.mod (scripts/modules order), so a new module
# is tested without a line here. Extra arguments go to every go test (-v,
# -count=1...). The tools some tests need (redis-server, Python's aioquic,
# Chromium) are installed by .ci/run; without them those tests skip.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off
start=$(date +%s)
step() { printf '\n--- %s (%ds)\n' "$*" "$(($(date +%s) - start))"; }
race_modules=" grpc otel jwt http3 "

# longTests prints "DIR REGEXP" for each package of the core module with tests
# that skip under -short: the test functions that call testing.Short().
longTests() {
  local dir names
  for dir in $(go list -f '{{.Dir}}' ./...); do
    # A package without test files: awk has no file to read (exit 2).
    ls "$dir"/*_test.go >/dev/null 2>&1 || continue
    names=$(awk '/^func Test[A-Za-z0-9_]*\(/ { name = $2; sub(/\(.*/, "", name) }
      /testing\.Short\(\)/ && name != "" { print name }' "$dir"/*_test.go | sort -u | paste -sd '|' -)
    [ -n "$names" ] && echo ".${dir#"$PWD"} ^($names)\$"
  done
  return 0
}

for dir in $(go run ./scripts/modules order); do
  if [ "$dir" = . ]; then
    step "core module: go vet, go test -short ./... (the README's test command)"
    go vet ./...
    go test -short "$@" ./...
    step "core module: the long tests that -short skips"
    longTests | while read -r pkg run; do
      echo "$pkg: $run"
      go test -run "$run" "$@" "$pkg" </dev/null # the loop reads the list on stdin
    done
    continue
  fi
  flags=()
  case "$race_modules" in *" $dir "*) flags+=(-race) ;; esac
  step "module $dir: go vet, go test ${flags[*]}"
  (
    cd "$dir"
    go vet ./...
    if [ "$dir" = bench ]; then export CELERIS_BENCH_SMOKE=1; fi # the suite's smoke run
    go test "${flags[@]}" "$@" ./...
  )
done
step "every module passed"
