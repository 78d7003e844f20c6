#!/usr/bin/env bash
# Builds the demo (celeris) and the peer servers into $OUT (default /tmp/celeris-bench-bin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/celeris-bench-bin}
mkdir -p "$OUT"
(cd "$here/../.." && go build -o "$OUT/demo" ./cmd/demo)
(cd "$here/.." && go build -o "$OUT/peer" ./cmd/peer)
echo "$OUT"
