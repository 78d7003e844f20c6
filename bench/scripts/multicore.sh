#!/usr/bin/env bash
# Multi-core scaling: the suite from a static bundle
# (bench/scripts/bundle.sh), servers on 8 cores against the same servers on
# 1 core, the loader on 8 other cores, in interleaved rounds (one round of
# each side in turn, the order alternating), then a scaling table: median
# RPS per framework, scenario and protocol on each side and their ratio.
# Needs 16 CPUs with the defaults; refuses to run unpinned.
#
#   tar xzf celeris-bench-linux-amd64.tar.gz && cd celeris-bench-linux-amd64
#   ./multicore.sh                                   # about 20 minutes
#   CONNS=512 ROUNDS=5 ./multicore.sh                # more load, more rounds
#   SERVER_CPUS=0 LOADER_CPUS=1 BASE_CPUS=0 CONNS=16 ROUNDS=1 DURATION=1s \
#       PROTOCOLS=h1,h2c ./multicore.sh              # a 2-CPU rehearsal
#
# Settings (environment), defaults in brackets:
#   BUNDLE       the bundle directory [this script's directory]
#   SERVER_CPUS  servers' CPUs on the multi-core side [0-7]
#   PROCS        their GOMAXPROCS and the demo's -loops [the count of SERVER_CPUS]
#   BASE_CPUS    servers' CPU on the single-core side (GOMAXPROCS 1, -loops 1) [0]
#   LOADER_CPUS  the loader's CPUs; it sets its GOMAXPROCS to their count [8-15]
#   CONNS        connections (fixed mode; h2c/h2tls: times STREAMS concurrent
#                requests), the same on both sides [256]
#   STREAMS      concurrent streams per h2 connection [4]
#   FRAMEWORKS   [celeris,celeris-inline,fasthttp,nethttp] (fasthttp: h1 and h1tls only)
#   SCENARIOS    [simple,json]     PROTOCOLS [h1,h2c,h1tls,h2tls]
#   DURATION     measured time per run [5s]   WARMUP [1s]   ROUNDS [3]
#   OUT          output directory [./multicore-<UTC time>]
#   EXTRA        more flags for the suite (e.g. "-ready-timeout 30s")
#   SMT_SHARE    1: run even where a server CPU and a loader CPU are threads
#                of one physical core (refused otherwise) [0]
#
# Writes OUT/base/rN/ and OUT/multi/rN/ (each a results.md, results.json and
# charts), OUT/machine.txt, OUT/scaling.md and OUT/peers.md (also printed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUNDLE=${BUNDLE:-$here}
SERVER_CPUS=${SERVER_CPUS:-0-7}
BASE_CPUS=${BASE_CPUS:-0}
LOADER_CPUS=${LOADER_CPUS:-8-15}
CONNS=${CONNS:-256}
STREAMS=${STREAMS:-4}
FRAMEWORKS=${FRAMEWORKS:-celeris,celeris-inline,fasthttp,nethttp}
SCENARIOS=${SCENARIOS:-simple,json}
PROTOCOLS=${PROTOCOLS:-h1,h2c,h1tls,h2tls}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-$PWD/multicore-$(date -u +%Y%m%d-%H%M%S)}
EXTRA=${EXTRA:-}

die() { echo "multicore.sh: $*" >&2; exit 2; }

# count "0-7,9" -> 9
count() {
  local n=0 part lo hi
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    [[ $part =~ ^([0-9]+)(-([0-9]+))?$ ]] || die "bad CPU list $1"
    lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}
    [ "$hi" -ge "$lo" ] || die "bad CPU list $1"
    n=$((n + hi - lo + 1))
  done
  echo "$n"
}
PROCS=${PROCS:-$(count "$SERVER_CPUS")}
[ "$(count "$BASE_CPUS")" = 1 ] || die "BASE_CPUS=$BASE_CPUS is not one CPU"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS=$ROUNDS is not a count"
[ -x "$BUNDLE/bench" ] && [ -x "$BUNDLE/demo" ] && [ -x "$BUNDLE/peer" ] \
  || die "$BUNDLE has no bench, demo and peer: run bench/scripts/bundle.sh and use its directory (or set BUNDLE)"
command -v taskset >/dev/null || die "taskset not found (util-linux): a scaling table needs pinning"
# taskset accepts a list as long as one of its CPUs exists: check every CPU.
ncpu=$(nproc)
for list in "$SERVER_CPUS" "$BASE_CPUS" "$LOADER_CPUS"; do
  top=$(tr ',-' '\n\n' <<<"$list" | sort -n | tail -1)
  [ "$top" -lt "$ncpu" ] && taskset -c "$list" true 2>/dev/null \
    || die "CPU list $list does not fit this machine ($ncpu CPUs); set SERVER_CPUS, BASE_CPUS and LOADER_CPUS"
done

# expand "0-2,5" -> "0 1 2 5"
expand() {
  local part lo hi c
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    lo=${part%-*} hi=${part#*-}
    for ((c = lo; c <= hi; c++)); do echo "$c"; done
  done
}
# SMT: a server CPU whose sibling thread is a loader CPU shares one physical
# core with the loader, and the table would not say what it claims. Choose
# lists by core (lscpu -e, or /sys/devices/system/cpu/cpuN/topology), or set
# SMT_SHARE=1 to run anyway.
loader_set=" $(expand "$LOADER_CPUS" | tr '\n' ' ') "
for c in $(expand "$SERVER_CPUS") $(expand "$BASE_CPUS"); do
  sib=$(cat "/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list" 2>/dev/null) || continue
  for t in $(expand "$sib"); do
    if [ "$t" != "$c" ] && [[ $loader_set == *" $t "* ]] && [ "${SMT_SHARE:-0}" != 1 ]; then
      die "server CPU $c and loader CPU $t are threads of one core ($sib); pick lists by core or set SMT_SHARE=1"
    fi
  done
done

mkdir -p "$OUT"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host CPUs: $(nproc)"
  grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
  echo "multi: servers on $SERVER_CPUS, GOMAXPROCS $PROCS; base: servers on $BASE_CPUS, GOMAXPROCS 1; loader on $LOADER_CPUS"
  echo "conns $CONNS, h2 streams per connection $STREAMS, duration $DURATION, warmup $WARMUP, rounds $ROUNDS"
  echo "frameworks $FRAMEWORKS; scenarios $SCENARIOS; protocols $PROTOCOLS"
  if [ -f "$BUNDLE/README.md" ]; then sed -n 3p "$BUNDLE/README.md"; fi
} | tee "$OUT/machine.txt"

# side NAME CPUS PROCS ROUND: one round of one side, its own results.json.
# A server that fails makes the suite exit 1 but the others were measured:
# the table shows the failed rows, so the script goes on.
side() {
  local name=$1 cpus=$2 procs=$3 r=$4
  echo "=== round $r/$ROUNDS, $name: servers on $cpus, GOMAXPROCS $procs"
  # shellcheck disable=SC2086 # EXTRA is a list of flags
  "$BUNDLE/bench" -bin-dir "$BUNDLE" -frameworks "$FRAMEWORKS" -scenarios "$SCENARIOS" \
    -protocols "$PROTOCOLS" -mode fixed -conns "$CONNS" -streams "$STREAMS" \
    -duration "$DURATION" -warmup "$WARMUP" -rounds 1 -progress off \
    -server-cpus "$cpus" -loader-cpus "$LOADER_CPUS" -server-procs "$procs" \
    -out "$OUT/$name/r$r" $EXTRA || echo "(round $r of $name: some server failed; see $OUT/$name/r$r/results.md)"
}
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then
    side base "$BASE_CPUS" 1 "$r"; side multi "$SERVER_CPUS" "$PROCS" "$r"
  else
    side multi "$SERVER_CPUS" "$PROCS" "$r"; side base "$BASE_CPUS" 1 "$r"
  fi
done

"$BUNDLE/bench" scaling -base "$OUT/base/r*/results.json" -multi "$OUT/multi/r*/results.json" | tee "$OUT/scaling.md"
echo "wrote $OUT/scaling.md"
"$BUNDLE/bench" peers -results "$OUT/multi/r*/results.json" | tee "$OUT/peers.md"
echo "wrote $OUT/peers.md"
