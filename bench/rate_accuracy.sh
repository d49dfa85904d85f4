#!/usr/bin/env bash
# rate_accuracy.sh - does the rate limiter deliver the rate asked for? For each requested
# rate, one run of DURATION seconds in upktgen's own lab (XDP drop receiver); the delivered
# rate is veth-rx's rx_packets over the sender's elapsed time, compared with the request.
# Also prints the sender's own view: the achieved handover rate and how late handovers were.
#
#   bench/rate_accuracy.sh                          # af_packet, 1k..1M pps, 2 s each
#   BACKEND=tx_ring RATES="1000 50000" bench/rate_accuracy.sh
#   EXTRA="--burst 8" bench/rate_accuracy.sh        # any other upktgen options
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BACKEND=${BACKEND:-af_packet}
RATES=${RATES:-1000 10000 100000 300000 1000000}
DURATION=${DURATION:-2}
EXTRA=${EXTRA:-}
[[ $(id -u) -eq 0 ]] || { echo "rate_accuracy.sh: must run as root" >&2; exit 1; }
[[ ${NO_BUILD:-0} == 1 ]] || (cd "$REPO" && cargo build --release --quiet)
BIN=$REPO/target/release/upktgen

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "backend $BACKEND, ${DURATION} s per rate, 60-byte frames, sender pinned to CPU 0, XDP drop receiver${EXTRA:+, $EXTRA}"
echo
echo "| requested pps | delivered pps | error | handover rate | late p50 us | late p99 us | late max us |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for r in $RATES; do
	# shellcheck disable=SC2086
	"$BIN" --backend "$BACKEND" --ratep "$r" --count 0 --duration "$DURATION" --cpu 0 --no-live --json $EXTRA |
		python3 -c '
import json, sys
j = json.load(sys.stdin)
o = j["outcome"]; r = o["result"]; p = o.get("pacing") or {}
want = int(sys.argv[1])
el = r["elapsed_ns"]; rx = j["reconciliation"]["rx_packets"]
got = rx * 1e9 / el
print("| %d | %.0f | %+.2f %% | %.0f | %.1f | %.1f | %.1f |" % (
    want, got, (got - want) * 100 / want, p.get("achieved_pps", 0),
    p.get("late_p50_ns", 0) / 1e3, p.get("late_p99_ns", 0) / 1e3, p.get("late_max_ns", 0) / 1e3))
' "$r"
done
