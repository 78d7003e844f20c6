#!/usr/bin/env bash
# The floor of HTTP/1.1 and HTTP/2 over TLS (docs/BENCHMARKS.md §5.2), by hand: each server
# pinned to CPU 0 with GOMAXPROCS=1, h2load (nghttp2) pinned to CPU 1, keep-alive
# connections (C, default 16), one request in flight per h1 connection (-m1) and
# M (default 4) streams per h2 connection, GET /bench. For each it prints requests
# per server CPU-second, server CPU µs per request, and the server's read and write
# system calls per request (/proc/PID/io syscr, syscw), interleaved over R rounds
# of D seconds. floor-tls is bench/cmd/floor -engine net -tls: one tls.Conn.Read
# and one tls.Conn.Write per request, no HTTP at all; floor is the same in
# plaintext. PROTOS picks from h1tls, h2tls, h1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(OUT=${OUT:-/tmp/celeris-bench-bin} "$here/build.sh")
D=${D:-3}; R=${R:-3}; C=${C:-16}; M=${M:-4}; PORT=${PORT:-18190}
PROTOS=${PROTOS:-"h1tls h2tls h1"}
command -v h2load >/dev/null || { echo "tlsfloor.sh needs h2load (nghttp2-client)" >&2; exit 1; }
tick=$(getconf CLK_TCK)

# measure NAME PROTO CMD...: one server, one measured window.
measure() {
  local name=$1 proto=$2; shift 2
  GOMAXPROCS=1 taskset -c 0 "$@" >/dev/null 2>&1 &
  local pid=$! url args
  case $proto in
    h1tls) url=https://127.0.0.1:$PORT/bench; args=(--h1 -m1) ;;
    h2tls) url=https://127.0.0.1:$PORT/bench; args=(-m"$M") ;;
    h1) url=http://127.0.0.1:$PORT/bench; args=(--h1 -m1) ;;
  esac
  for _ in $(seq 50); do
    taskset -c 1 h2load "${args[@]}" -n1 -c1 "$url" 2>/dev/null | grep -q "1 succeeded" && break
    sleep 0.1
  done
  taskset -c 1 h2load "${args[@]}" -c"$C" -D 1 "$url" >/dev/null 2>&1 # warm-up
  local c0 r0 w0 c1 r1 w1 out done
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  read -r r0 w0 < <(awk '/^syscr/{r=$2} /^syscw/{w=$2} END{print r, w}' /proc/$pid/io)
  out=$(taskset -c 1 h2load "${args[@]}" -c"$C" -D "$D" "$url" 2>&1)
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  read -r r1 w1 < <(awk '/^syscr/{r=$2} /^syscw/{w=$2} END{print r, w}' /proc/$pid/io)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  done=$(echo "$out" | awk '/^requests:/{print $8}')
  if [ -z "$done" ] || [ "$done" = 0 ] || [ "$c1" = "$c0" ]; then
    echo "$name $proto: no measurement"; echo "$out" | tail -3; return
  fi
  awk -v n="$name" -v p="$proto" -v d="$done" -v c=$((c1 - c0)) -v t="$tick" \
      -v r=$((r1 - r0)) -v w=$((w1 - w0)) -v s="$D" 'BEGIN {
    printf "%-10s %-5s rps %7.0f  req/server-CPU-s %7.0f  CPU us/req %5.1f  reads/req %.2f  writes/req %.2f\n",
      n, p, d / s, d * t / c, c * 1e6 / t / d, r / d, w / d }'
}

for round in $(seq "$R"); do
  echo "# round $round/$R $(date -u +%H:%M:%S)"
  for proto in $PROTOS; do
    case $proto in
      h1tls)
        measure floor-tls h1tls "$BIN/floor" -engine net -tls -addr 127.0.0.1:$PORT
        measure celeris h1tls "$BIN/demo" -addr 127.0.0.1:$((PORT + 1)) -tls-addr 127.0.0.1:$PORT
        measure nethttp h1tls "$BIN/peer" -framework nethttp -tls -addr 127.0.0.1:$PORT
        measure fasthttp h1tls "$BIN/peer" -framework fasthttp -tls -addr 127.0.0.1:$PORT ;;
      h2tls)
        measure celeris h2tls "$BIN/demo" -addr 127.0.0.1:$((PORT + 1)) -tls-addr 127.0.0.1:$PORT
        measure nethttp h2tls "$BIN/peer" -framework nethttp -tls -addr 127.0.0.1:$PORT ;;
      h1)
        measure floor h1 "$BIN/floor" -engine net -addr 127.0.0.1:$PORT
        measure celeris-std h1 "$BIN/demo" -engine std -addr 127.0.0.1:$PORT
        measure fasthttp h1 "$BIN/peer" -framework fasthttp -addr 127.0.0.1:$PORT ;;
    esac
  done
done
