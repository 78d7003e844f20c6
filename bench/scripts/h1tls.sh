#!/usr/bin/env bash
# HTTP/1.1 over TLS per server CPU-second against fasthttp and the floor, by hand:
# the bench suite's h1tls rows (GET /bench, /json, /users/42/posts/7: simple, json,
# params) with an external loader, C keep-alive connections (default 128), one
# request in flight each. Each server is pinned to CPU 0 with GOMAXPROCS=1, the
# loader to CPU 1; the servers take turns per scenario, over R interleaved rounds
# of D seconds (after a one-second warm-up). floor-tls is bench/cmd/floor -engine
# net -tls (one tls.Conn.Read and one tls.Conn.Write per request, no HTTP at all):
# what crypto/tls, the runtime and the kernel cost. For each measurement it prints
# requests per server CPU-second, server CPU µs per request, and the server's read
# and write system calls per request (/proc/PID/io syscr, syscw); at the end, per
# scenario, the medians and the ratios celeris ÷ fasthttp, floor ÷ fasthttp and
# celeris ÷ floor.
#
#   LOADER=wrk (default: wrk -t1) or h2load (h2load --h1 -m1)
#   SERVERS="floor-tls celeris fasthttp" (also: nethttp, celeris-bare, celeris-inline)
#   R=3 D=3 C=128 PORT=18190
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(OUT=${OUT:-/tmp/celeris-bench-bin} "$here/build.sh")
D=${D:-3}; R=${R:-3}; C=${C:-128}; PORT=${PORT:-18190}
LOADER=${LOADER:-wrk}
SERVERS=${SERVERS:-"floor-tls celeris fasthttp"}
command -v "$LOADER" >/dev/null || { echo "h1tls.sh needs $LOADER (apt: wrk or nghttp2-client)" >&2; exit 1; }
tick=$(getconf CLK_TCK)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# load SECONDS URL: runs the loader on CPU 1 and prints the requests it completed.
load() {
  case $LOADER in
    wrk) taskset -c 1 wrk -t1 -c"$C" -d"$1"s "$2" 2>&1 | awk '/requests in/{print $1}' ;;
    h2load) taskset -c 1 h2load --h1 -m1 -c"$C" -D "$1" "$2" 2>&1 | awk '/^requests:/{print $8}' ;;
  esac
}

# measure NAME SCENARIO PATH: one server, one measured window.
measure() {
  local name=$1 scen=$2 path=$3 cmd
  case $name in
    floor-tls) cmd=("$BIN/floor" -engine net -tls -addr 127.0.0.1:$PORT) ;;
    celeris) cmd=("$BIN/demo" -addr 127.0.0.1:$((PORT + 1)) -tls-addr 127.0.0.1:$PORT) ;;
    celeris-bare) cmd=("$BIN/demo" -bare -addr 127.0.0.1:$((PORT + 1)) -tls-addr 127.0.0.1:$PORT) ;;
    celeris-inline) cmd=("$BIN/demo" -inline -addr 127.0.0.1:$((PORT + 1)) -tls-addr 127.0.0.1:$PORT) ;;
    *) cmd=("$BIN/peer" -framework "$name" -tls -addr 127.0.0.1:$PORT) ;;
  esac
  GOMAXPROCS=1 taskset -c 0 "${cmd[@]}" >/dev/null 2>&1 &
  local pid=$! url=https://127.0.0.1:$PORT$path
  for _ in $(seq 50); do
    curl -sk -o /dev/null --http1.1 "$url" && break
    sleep 0.1
  done
  load 1 "$url" >/dev/null # warm-up
  local c0 r0 w0 c1 r1 w1 done
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  read -r r0 w0 < <(awk '/^syscr/{r=$2} /^syscw/{w=$2} END{print r, w}' /proc/$pid/io)
  done=$(load "$D" "$url")
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  read -r r1 w1 < <(awk '/^syscr/{r=$2} /^syscw/{w=$2} END{print r, w}' /proc/$pid/io)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  if [ -z "$done" ] || [ "$done" = 0 ] || [ "$c1" = "$c0" ]; then
    echo "$name $scen: no measurement"; return
  fi
  awk -v n="$name" -v p="$scen" -v d="$done" -v c=$((c1 - c0)) -v t="$tick" \
      -v r=$((r1 - r0)) -v w=$((w1 - w0)) -v s="$D" 'BEGIN {
    printf "%-14s %-6s rps %7.0f  req/server-CPU-s %7.0f  CPU us/req %5.2f  reads/req %.2f  writes/req %.2f\n",
      n, p, d / s, d * t / c, c * 1e6 / t / d, r / d, w / d }'
  echo "$scen $name $((done * tick / (c1 - c0)))" >>"$results"
}

echo "# h1tls, $LOADER -c$C, $R rounds of ${D}s, $(date -u +%FT%TZ), $(git -C "$here" rev-parse --short HEAD)"
for round in $(seq "$R"); do
  echo "# round $round/$R $(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)"
  for scen in simple json params; do
    case $scen in
      simple) path=/bench ;;
      json) path=/json ;;
      params) path=/users/42/posts/7 ;;
    esac
    for s in $SERVERS; do measure "$s" "$scen" "$path"; done
  done
done

# Medians per scenario and server, and the ratios.
echo "# medians (requests per server CPU-second)"
for scen in simple json params; do
  line="$scen"
  declare -A med=()
  for s in $SERVERS; do
    m=$(awk -v a="$scen" -v b="$s" '$1 == a && $2 == b {print $3}' "$results" | sort -n |
      awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}')
    med[$s]=${m:-0}
    line="$line  $s ${m:-?}"
  done
  echo "$line"
  ratio() { awk -v a="${med[$1]:-0}" -v b="${med[$2]:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else printf "?" }'; }
  if [[ -n ${med[fasthttp]:-} ]]; then
    echo "  $scen: celeris/fasthttp $(ratio celeris fasthttp)  floor/fasthttp $(ratio floor-tls fasthttp)  celeris/floor $(ratio celeris floor-tls)"
  fi
  unset med
done
