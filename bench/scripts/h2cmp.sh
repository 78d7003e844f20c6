#!/usr/bin/env bash
# h2c against net/http (docs/BENCHMARKS.md §3): the server pinned to CPU 0 with GOMAXPROCS=1,
# h2load -t1 -c16 -m32 pinned to CPU 1, requests per server CPU-second against
# net/http's h2c server (http.Protocols UnencryptedHTTP2) with the same handlers.
# BARE=1 adds the demo without middleware; WORKERS=1 the demo with -workers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(OUT=${OUT:-/tmp/celeris-bench-bin} "$here/build.sh")
D=${D:-5}; PORT=${PORT:-18090}
# H2LOAD_ARGS adds h2load options, e.g. -H 'accept-encoding: identity' to keep
# the demo's /json uncompressed like the peer's (h2load asks for gzip by default).
read -r -a extra <<<"${H2LOAD_ARGS:-}"
PATHS=${PATHS:-"/bench /json /users/1/posts/2"}
run() {
  local name=$1; shift
  GOMAXPROCS=1 taskset -c 0 "$@" >/dev/null 2>&1 &
  local pid=$!
  sleep 0.8
  for p in $PATHS; do
    taskset -c 1 h2load -t1 -c16 -m32 -D1 "${extra[@]}" "http://127.0.0.1:$PORT$p" >/dev/null 2>&1
    local c0 c1 out done cpu
    c0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(taskset -c 1 h2load -t1 -c16 -m32 -D$D "${extra[@]}" "http://127.0.0.1:$PORT$p")
    c1=$(awk '{print $14+$15}' /proc/$pid/stat)
    done=$(echo "$out" | awk '/^requests:/{print $8}')
    cpu=$(( c1 - c0 ))
    echo "$name $p rps=$(echo "$out" | awk '/^finished in/{print $4}') server_cpu_s=$(echo "scale=2; $cpu/100" | bc) req_per_cpu_s=$(echo "$done*100/$cpu" | bc) $(echo "$out" | grep '^requests:' | tr -s ' ')"
  done
  kill $pid; wait $pid 2>/dev/null || true
}
run nethttp "$BIN/peer" -framework nethttp -addr 127.0.0.1:$PORT
run celeris "$BIN/demo" -addr 127.0.0.1:$PORT
run celeris-inline "$BIN/demo" -addr 127.0.0.1:$PORT -inline
if [ "${WORKERS:-0}" = 1 ]; then
  # Every handler on a worker (Config.HandlersOnWorkers), against the default's in place.
  run celeris-workers "$BIN/demo" -addr 127.0.0.1:$PORT -workers
fi
if [ "${BARE:-0}" = 1 ]; then
  # The demo without its middleware (request id, CORS, metrics, gzip), like the peer.
  run celeris-bare "$BIN/demo" -addr 127.0.0.1:$PORT -bare
  run celeris-bare-inline "$BIN/demo" -addr 127.0.0.1:$PORT -bare -inline
fi
