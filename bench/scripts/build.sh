#!/usr/bin/env bash
# Builds the demo (celeris; demo-opt with gnet's poll_opt and gc_opt tags) and the
# peer servers (and bench/cmd/floor) into $OUT (default /tmp/celeris-bench-bin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/celeris-bench-bin}
mkdir -p "$OUT"
(cd "$here/../../cmd/demo" && go build -o "$OUT/demo" .)
(cd "$here/../../cmd/demo" && go build -tags "poll_opt gc_opt" -o "$OUT/demo-opt" .)
(cd "$here/.." && go build -o "$OUT/peer" ./cmd/peer)
(cd "$here/.." && go build -o "$OUT/floor" ./cmd/floor)
echo "$OUT"
