#!/usr/bin/env bash
# Runs a comparison script (h1cmp.sh or h2cmp.sh) ROUNDS times, one path at a time,
# so every server meets the same spells of host noise, then prints each server's
# median requests per CPU-second per path and its ratio to the first server (the
# peer). Environment: ROUNDS (default 5), PATHS, and whatever the script takes.
#   bench/scripts/rounds.sh h1cmp.sh
#   BARE=1 ROUNDS=3 bench/scripts/rounds.sh h2cmp.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=$here/${1:?usage: rounds.sh h1cmp.sh|h2cmp.sh}
ROUNDS=${ROUNDS:-5}
PATHS=${PATHS:-"/bench /json /users/1/posts/2"}
raw=$(mktemp)
for r in $(seq "$ROUNDS"); do
  for p in $PATHS; do
    PATHS=$p bash "$script" | tee -a "$raw" >&2
  done
done
python3 - "$raw" <<'PY'
import re, statistics, sys
runs, order = {}, []
for line in open(sys.argv[1]):
    m = re.match(r'(\S+) (\S+) .*req_per_cpu_s=(\d+)', line)
    if not m:
        continue
    name, path, v = m.group(1), m.group(2), int(m.group(3))
    if name not in order:
        order.append(name)
    runs.setdefault((name, path), []).append(v)
paths = []
for (_, p) in runs:
    if p not in paths:
        paths.append(p)
peer = order[0]
print("median req/CPU-s (ratio to %s), %s" % (peer, ", ".join("%d rounds" % len(runs[(peer, p)]) for p in paths[:1])))
print("| server | " + " | ".join(paths) + " |")
print("|---|" + "---:|" * len(paths))
for name in order:
    cells = []
    for p in paths:
        v = statistics.median(runs[(name, p)])
        base = statistics.median(runs[(peer, p)])
        cells.append("%d (%.2f)" % (v, v / base))
    print("| %s | %s |" % (name, " | ".join(cells)))
PY
rm -f "$raw"
