#!/usr/bin/env python3
"""Celeris against its peers across rounds of the bench suite.

Reads one results.json per round (the suite run with -rounds 1 into a directory
per round, as multicore.sh does) and prints, as Markdown:

  - per protocol, scenario and framework: median RPS (and the range over
    rounds), requests per server CPU-second, server cores kept busy, the
    loader's share of its cores, p99 and the errors summed over rounds;
  - per round, each Celeris framework's RPS and req/server-CPU-s divided by
    each peer's in the same round: the median ratio and its range.

  bench/scripts/peerratio.py '/tmp/mc/multi/r*/results.json'
  bench/scripts/peerratio.py -mine celeris,celeris-std -peers fasthttp 'DIR/r*/results.json'
"""
import argparse
import glob
import json
import statistics as st
import sys


def load(pattern):
    rows = {}
    files = sorted(glob.glob(pattern))
    for i, f in enumerate(files):
        with open(f) as fh:
            doc = json.load(fh)
        for r in doc["results"]:
            if r.get("status") != "ok" or not r.get("runs"):
                continue
            m = dict(r["runs"][0], file=i)
            rows.setdefault((r["protocol"], r["scenario"], r["framework"]), []).append(m)
    return files, rows


def k(v):
    return f"{v / 1000:,.0f}k"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pattern", help="glob of results.json files, one per round")
    ap.add_argument("-mine", default="celeris,celeris-inline,celeris-std")
    ap.add_argument("-peers", default="fasthttp,nethttp,gin,echo,chi")
    a = ap.parse_args()
    files, rows = load(a.pattern)
    if not rows:
        sys.exit(f"peerratio.py: no results in {a.pattern}")
    print(f"{len(files)} results files ({a.pattern})\n")
    print("| protocol | scenario | framework | RPS, median (range) | req/server-CPU-s | server cores busy | loader busy | p99 | errors |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(rows):
        v = rows[key]
        rps = [m["rps"] for m in v]
        busy = [m["server_cpu_s"] / m["elapsed_s"] for m in v]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {k(st.median(rps))} ({k(min(rps))}–{k(max(rps))}) "
              f"| {k(st.median(m['req_per_server_cpu_s'] for m in v))} | {st.median(busy):.1f} "
              f"| {st.median(m['loader_cpu_share'] for m in v) * 100:.0f} % "
              f"| {st.median(m['p99_ms'] for m in v):.2f} ms | {sum(m['errors'] + m['non_2xx'] for m in v)} |")
    print("\n| protocol | scenario | framework ÷ peer | RPS ratio, median (range) | req/server-CPU-s ratio |")
    print("|---|---|---|---:|---:|")
    for mine in a.mine.split(","):
        for peer in a.peers.split(","):
            for (p, s, f) in sorted(rows):
                if f != mine or (p, s, peer) not in rows:
                    continue
                # Ratios within a round (a results file): both measured there.
                x = {m["file"]: m for m in rows[(p, s, f)]}
                y = {m["file"]: m for m in rows[(p, s, peer)]}
                both = sorted(set(x) & set(y))
                if not both:
                    continue
                rr = [x[i]["rps"] / y[i]["rps"] for i in both]
                cr = [x[i]["req_per_server_cpu_s"] / y[i]["req_per_server_cpu_s"] for i in both]
                print(f"| {p} | {s} | {mine} ÷ {peer} | {st.median(rr):.2f} ({min(rr):.2f}–{max(rr):.2f}) "
                      f"| {st.median(cr):.2f} ({min(cr):.2f}–{max(cr):.2f}) |")


if __name__ == "__main__":
    main()
