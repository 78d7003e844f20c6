#!/usr/bin/env bash
# User-space instructions per request, counted by valgrind's cachegrind: unlike time
# on this shared host, the count repeats to within a few instructions, so it shows
# changes of 1 % that slices.sh cannot. It does not count the kernel (syscalls,
# TCP), cache misses or the cost of locked instructions: use it to compare code,
# and slices.sh for what a server costs.
#   bench/scripts/instr.sh server BIN [ARGS...]  # a server under wrk -t1 -c16 (PIPE=1: x16)
#   PROTO=h2c bench/scripts/instr.sh server ...  # h2c under h2load -t1 -c16 -m32 (needs h2load)
#   CACHE=1 bench/scripts/instr.sh server ...    # also simulated L1 data misses, wrk -c128
#   bench/scripts/instr.sh micro 'BenchmarkServeDemoStack/middleware/bench/single$' [REQS_PER_OP]
# A server gets -addr 127.0.0.1:$PORT appended (PORT: 18400; the demo and bench/cmd/peer
# take it); PATHQ sets the path (/bench). The figure is the difference between a short and a
# long run, divided by the difference in requests, so start-up and shutdown cancel.
set -euo pipefail
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=${1:?server or micro}; shift
case $mode in
server)
  path=${PATHQ:-/bench} port=${PORT:-18400} proto=${PROTO:-h1}
  if [ "$proto" = h2c ]; then command -v h2load >/dev/null || { echo "PROTO=h2c needs h2load (apt-get install nghttp2-client)" >&2; exit 1; }; fi
  run() { # seconds bin args...
    local secs=$1; shift
    GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim="$sim" --cachegrind-out-file=/dev/null \
      "$@" -addr "127.0.0.1:$port" >/dev/null 2>"$tmp/vg.log" &
    local vp=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/bench" && break; sleep 0.2; done
    local n
    if [ "$proto" = h2c ]; then
      n=$(h2load -t1 -c16 -m32 -D "$secs" "http://127.0.0.1:$port$path" 2>/dev/null | awk '/^requests:/{print $8}')
    else
      n=$(wrk -t1 -c"$conns" -d"${secs}"s ${PIPE:+-s "$root/bench/scripts/pipeline16.lua"} "http://127.0.0.1:$port$path" | awk '/requests in/{print $1}')
    fi
    kill -INT "$vp"; wait "$vp" 2>/dev/null || true
    echo "$n $(awk '/I *refs/{gsub(",","",$NF); print $NF}' "$tmp/vg.log") $(awk '/D1  misses/{gsub(",","",$4); print $4}' "$tmp/vg.log")"
  }
  sim=no conns=16
  if [ "${CACHE:-}" = 1 ]; then sim=yes conns=128; fi
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  read -r n1 i1 d1 < <(run 2 "$@"); read -r n2 i2 d2 < <(run 8 "$@")
  python3 -c "print('%s %s %s%s: %.0f instructions per request' % ('$proto', '$*', '$path', ' (pipelined x16)' if '${PIPE:-}' else '', ($i2-$i1)/($n2-$n1)) + ('; %.1f L1 data misses (simulated, -c128)' % ((${d2:-0}-${d1:-0})/($n2-$n1)) if '${CACHE:-}' == '1' else ''))"
  ;;
micro)
  pat=${1:?benchmark regexp}; k=${2:-1}
  bin=$(mktemp); trap 'rm -f "$bin"' EXIT
  (cd "$root" && go test -c -o "$bin" .)
  count() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bin" -test.run XXX \
      -test.bench "$pat" -test.benchtime "${1}x" -test.cpu 1 2>&1 | awk '/I *refs/{gsub(",","",$NF); print $NF}'
  }
  a=$(count 10000); b=$(count 30000)
  python3 -c "print('%s: %.0f instructions per request' % ('$pat', ($b-$a)/20000/$k))"
  ;;
*) echo "usage: $0 server BIN [ARGS...] | micro PATTERN [REQS_PER_OP]" >&2; exit 2 ;;
esac
