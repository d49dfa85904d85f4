#!/usr/bin/env bash
# scaling.sh - one sender thread against several (-t N), in upktgen's own lab (a veth pair
# with one queue per thread, XDP drop receiver). Delivered pps is veth-rx's rx_packets over
# the longest thread's elapsed time; the median of REPS runs per point, runs interleaved.
#
#   bench/scaling.sh                                # af_packet, 1 and 2 threads
#   BACKEND=af_xdp THREADS="1 2" bench/scaling.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BACKEND=${BACKEND:-af_packet}
THREADS=${THREADS:-1 2}
COUNT=${COUNT:-2000000}
REPS=${REPS:-3}
EXTRA=${EXTRA:-}
[[ $(id -u) -eq 0 ]] || { echo "scaling.sh: must run as root" >&2; exit 1; }
[[ ${NO_BUILD:-0} == 1 ]] || (cd "$REPO" && cargo build --release --quiet)
BIN=$REPO/target/release/upktgen
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "backend $BACKEND, $COUNT x 60-byte frames per thread, median of $REPS, XDP drop receiver${EXTRA:+, $EXTRA}"
echo
for rep in $(seq "$REPS"); do
	for t in $THREADS; do
		# shellcheck disable=SC2086
		"$BIN" --backend "$BACKEND" -t "$t" --count "$COUNT" --no-live --json $EXTRA >"$TMP/$t.$rep.json"
	done
done
python3 - "$TMP" $THREADS <<'PY'
import json, os, statistics, sys
d, threads = sys.argv[1], sys.argv[2:]
rows = {}
for t in threads:
    v = []
    for f in sorted(os.listdir(d)):
        if f.startswith(t + "."):
            j = json.load(open(os.path.join(d, f)))
            r = j["outcome"]["result"]
            v.append(j["reconciliation"]["rx_packets"] * 1e9 / r["elapsed_ns"])
    rows[t] = (statistics.median(v), min(v), max(v))
base = rows[threads[0]][0]
print("| threads | delivered pps (median) | min - max | vs %s thread(s) |" % threads[0])
print("|---:|---:|---:|---:|")
for t in threads:
    m, lo, hi = rows[t]
    print("| %s | %.0f | %.0f - %.0f | %.2fx |" % (t, m, lo, hi, m / base))
PY
