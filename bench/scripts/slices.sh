#!/usr/bin/env bash
# HTTP/1.1 against fasthttp in short interleaved slices (docs/BENCHMARKS.md §2). Every
# server runs at once, pinned to CPU 0 with GOMAXPROCS=1 (an unloaded one costs
# nothing), and wrk (-t1 -c128, pinned to CPU 1) loads them in turn for S seconds
# each, N rounds over.
# All servers therefore meet the same host noise within a few seconds of each other.
# For each path it prints, per server, the median over rounds of its requests per
# server CPU-second (from /proc/PID/stat) divided by the peer's in the same round.
#   bench/scripts/slices.sh                  # N=15 S=1, one request per round trip
#   PIPE=1 bench/scripts/slices.sh           # 16 pipelined requests per write
#   BARE=1 bench/scripts/slices.sh           # adds the demo without middleware (-bare)
#   OPT=1 bench/scripts/slices.sh            # adds the demo built with -tags "poll_opt gc_opt"
#   FLOOR=1 bench/scripts/slices.sh          # adds bench/cmd/floor on gnet and on net
#   WORKERS=1 bench/scripts/slices.sh        # adds the demo with every handler on workers
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(OUT=${OUT:-/tmp/celeris-bench-bin} "$here/build.sh")
N=${N:-15}; S=${S:-1}; PIPE=${PIPE:-0}; port=${PORT0:-18100}
PATHS=${PATHS:-"/bench /json /users/1/posts/2"}
specs=("fasthttp=$BIN/peer -framework fasthttp" "celeris=$BIN/demo" "celeris-inline=$BIN/demo -inline")
if [ "${BARE:-0}" = 1 ]; then
  specs+=("celeris-bare=$BIN/demo -bare" "celeris-bare-inline=$BIN/demo -bare -inline")
fi
if [ "${OPT:-0}" = 1 ]; then
  specs+=("celeris-opt=$BIN/demo-opt" "celeris-opt-inline=$BIN/demo-opt -inline")
fi
if [ "${WORKERS:-0}" = 1 ]; then
  specs+=("celeris-workers=$BIN/demo -workers")
fi
if [ "${FLOOR:-0}" = 1 ]; then
  specs+=("floor-gnet=$BIN/floor -engine gnet" "floor-net=$BIN/floor -engine net")
fi
lua=$here/pipeline16.lua
names=(); pids=(); ports=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for spec in "${specs[@]}"; do
  # shellcheck disable=SC2086 # the command is split into words on purpose
  GOMAXPROCS=1 taskset -c 0 ${spec#*=} -addr 127.0.0.1:$port >/dev/null 2>&1 &
  pids+=($!); names+=("${spec%%=*}"); ports+=("$port"); port=$((port+1))
done
sleep 1
load() { # port path seconds
  if [ "$PIPE" = 1 ]; then
    taskset -c 1 wrk -t1 -c128 -d"$3"s -s "$lua" "http://127.0.0.1:$1$2"
  else
    taskset -c 1 wrk -t1 -c128 -d"$3"s "http://127.0.0.1:$1$2"
  fi
}
for path in $PATHS; do
  for i in "${!names[@]}"; do load "${ports[$i]}" "$path" 1 >/dev/null 2>&1; done # warm up
  raw=$(mktemp)
  for r in $(seq "$N"); do
    line="$path round $r"
    for i in "${!names[@]}"; do
      pid=${pids[$i]}
      c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
      out=$(load "${ports[$i]}" "$path" "$S")
      c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
      n=$(echo "$out" | awk '/requests in/{print $1}')
      bad=$(echo "$out" | grep -E 'Non-2xx|Socket errors' | tr '\n' ' ' || true)
      line="$line ${names[$i]}=$n/$((c1-c0)) $bad"
    done
    echo "$line" | tee -a "$raw"
  done
  python3 - "$raw" "$path" "$PIPE" <<'PY'
import re, statistics, sys
rounds = []
for line in open(sys.argv[1]):
    rounds.append([(m.group(1), int(m.group(2)), int(m.group(3))) for m in re.finditer(r'(\S+)=(\d+)/(\d+)', line)])
names = [n for n, _, _ in rounds[0]]
print("%s%s: median over %d rounds of req per server CPU-second, ratio to %s" % (sys.argv[2], " (pipelined x16)" if sys.argv[3] == "1" else "", len(rounds), names[0]))
for k, name in enumerate(names):
    per = [r[k][1] * 100 / r[k][2] for r in rounds]
    ratio = [r[k][1] * 100 / r[k][2] / (r[0][1] * 100 / r[0][2]) for r in rounds]
    print("  %-20s %8.0f req/CPU-s  ratio %.2f  (quartiles %.2f-%.2f)" % (
        name, statistics.median(per), statistics.median(ratio),
        statistics.quantiles(ratio, n=4)[0], statistics.quantiles(ratio, n=4)[2]))
PY
  rm -f "$raw"
done
