#!/usr/bin/env bash
# HTTP/1.1 against fasthttp, one server after the other (docs/BENCHMARKS.md §2): the
# server pinned to CPU 0 with GOMAXPROCS=1, wrk pinned to CPU 1 (-t1 -c128), requests
# per server CPU-second from /proc/PID/stat.
# PIPE=1 sends 16 pipelined requests per write. D is the duration in seconds.
# BARE=1 adds the demo without its middleware (-bare), like for like with the peer.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(OUT=${OUT:-/tmp/celeris-bench-bin} "$here/build.sh")
D=${D:-5}; PIPE=${PIPE:-0}; PORT=${PORT:-18090}
PATHS=${PATHS:-"/bench /json /users/1/posts/2"}
lua=$here/pipeline16.lua
run() {
  local name=$1; shift
  GOMAXPROCS=1 taskset -c 0 "$@" >/dev/null 2>&1 &
  local pid=$!
  sleep 0.8
  for p in $PATHS; do
    taskset -c 1 wrk -t1 -c128 -d1s "http://127.0.0.1:$PORT$p" >/dev/null 2>&1
    local c0 c1 out
    c0=$(awk '{print $14+$15}' /proc/$pid/stat)
    if [ "$PIPE" = 1 ]; then
      out=$(taskset -c 1 wrk -t1 -c128 -d${D}s -s "$lua" "http://127.0.0.1:$PORT$p")
    else
      out=$(taskset -c 1 wrk -t1 -c128 -d${D}s "http://127.0.0.1:$PORT$p")
    fi
    c1=$(awk '{print $14+$15}' /proc/$pid/stat)
    local total rps cpu
    total=$(echo "$out" | awk '/requests in/{print $1}')
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
    cpu=$(( c1 - c0 ))
    echo "$name $p rps=$rps server_cpu_s=$(echo "scale=2; $cpu/100" | bc) req_per_cpu_s=$(echo "$total*100/$cpu" | bc) $(echo "$out" | grep -E 'Non-2xx|Socket errors' | tr '\n' ' ')"
  done
  kill $pid; wait $pid 2>/dev/null || true
}
run fasthttp "$BIN/peer" -framework fasthttp -addr 127.0.0.1:$PORT
run celeris "$BIN/demo" -addr 127.0.0.1:$PORT
run celeris-inline "$BIN/demo" -addr 127.0.0.1:$PORT -inline
if [ "${BARE:-0}" = 1 ]; then
  # The demo without its middleware (request id, CORS, metrics, gzip), like the peer.
  run celeris-bare "$BIN/demo" -addr 127.0.0.1:$PORT -bare
  run celeris-bare-inline "$BIN/demo" -addr 127.0.0.1:$PORT -bare -inline
fi
