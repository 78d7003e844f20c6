#!/usr/bin/env bash
# Builds a static bundle of the benchmark suite: every binary that the suite
# (bench/cmd/bench) and the documented scripts start, with CGO_ENABLED=0 and
# -trimpath, into one directory plus a .tar.gz beside it, with a README. On
# the target machine nothing but the bundle (and taskset, for pinning) is
# needed: no Go toolchain, no source tree, no network.
#
#   bench/scripts/bundle.sh                      # linux/amd64 into $TMPDIR/celeris-bench-linux-amd64
#   GOARCH=arm64 bench/scripts/bundle.sh         # another target
#   bench/scripts/bundle.sh -o /some/dir         # the bundle directory (created; emptied first)
#   NOTAR=1 bench/scripts/bundle.sh -o DIR       # no .tar.gz
#
# Prints the directory and the archive.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$(cd "$here/.." && pwd)
root=$(cd "$bench/.." && pwd)
export GOOS=${GOOS:-linux} GOARCH=${GOARCH:-amd64} CGO_ENABLED=0
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) [ $# -ge 2 ] || { echo "bundle.sh: -o needs a directory" >&2; exit 2; }; out=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bundle.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
done
name="celeris-bench-$GOOS-$GOARCH"
out=${out:-${TMPDIR:-/tmp}/$name}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
[ "$out" != / ] || { echo "bundle.sh: refusing -o /" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"

b() { # b DIR OUTPUT PKG [build flags]: go build in DIR (its own go.mod)
  local dir=$1 o=$2 pkg=$3
  shift 3
  (cd "$dir" && go build -trimpath "$@" -o "$out/$o" "$pkg")
}
# The demo is built in its own module (cmd/demo), with its go.mod, as the suite does.
b "$root/cmd/demo" demo .
b "$root/cmd/demo" demo-opt . -tags "poll_opt gc_opt"
for cmd in bench peer floor grpcbench wsload pacedread; do
  b "$bench" "$cmd" "./cmd/$cmd"
done
cp "$here/multicore.sh" "$out/"
chmod +x "$out/multicore.sh"

rev=$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(cd "$root" && git status --porcelain 2>/dev/null | head -1)
cat >"$out/README.md" <<EOF
# Celeris benchmark bundle ($GOOS/$GOARCH)

Built $(date -u +%Y-%m-%dT%H:%MZ) from commit $rev${dirty:+ (with uncommitted changes)} with $(go env GOVERSION),
CGO_ENABLED=0 and -trimpath: static binaries, no Go toolchain, source tree or
network needed. \`taskset\` (util-linux) is used for pinning when present.

| binary | what |
|---|---|
| bench | the suite (bench/cmd/bench); run it with \`-bin-dir .\` so it takes the servers below instead of building them |
| demo | the Celeris server the suite measures (cmd/demo): frameworks celeris, celeris-inline, celeris-std |
| demo-opt | the same built with -tags "poll_opt gc_opt" (bench/scripts/slices.sh, OPT=1) |
| peer | nethttp, gin, echo, chi, fasthttp, fiber and the WebSocket peers (bench/cmd/peer) |
| floor | the raw-epoll floor server (bench/cmd/floor) |
| grpcbench | the gRPC comparison, driver, servers and loader in one (bench/cmd/grpcbench) |
| wsload | the WebSocket driver on its own (bench/cmd/wsload) |
| pacedread | the paced reader (bench/cmd/pacedread) |
| multicore.sh | 1 server core against 8: h1, h2c, h1tls, h2tls, with a scaling table and the 8-core peer ratios (bench peers) |

Run from this directory:

    ./bench -bin-dir . -frameworks celeris,nethttp,fasthttp -scenarios simple,json \\
        -protocols h1,h2c -mode fixed -duration 5s -rounds 3 -out results/
    ./multicore.sh              # needs 16 CPUs: servers on 0-7 (and 0), loader on 8-15
    ./bench -h                  # every flag; bench/README.md in the repository explains them

Results: results/results.md, results/results.json, one SVG chart per scenario
and protocol. multicore.sh writes multicore-<time>/scaling.md and peers.md.
EOF

# Every binary must be static: CGO_ENABLED=0 in its build settings.
for f in demo demo-opt bench peer floor grpcbench wsload pacedread; do
  if ! go version -m "$out/$f" | grep -q 'CGO_ENABLED=0'; then
    echo "bundle.sh: $f was not built with CGO_ENABLED=0" >&2
    exit 1
  fi
done

echo "$out"
if [ -z "${NOTAR:-}" ]; then
  tar -C "$(dirname "$out")" -czf "$out.tar.gz" "$(basename "$out")"
  echo "$out.tar.gz"
fi
