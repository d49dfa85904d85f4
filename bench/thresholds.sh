#!/usr/bin/env bash
# thresholds.sh - the seed's experiment on a real ring: pps, stops, wakes and kicks against
# the ring size and the start (wake) threshold, in upktgen's own lab.
#
#   bench/thresholds.sh                                  # af_xdp, rings 64/256/2048, W 1/16/64
#   BACKEND=tx_ring RINGS="64 1024" STARTS="1 32" bench/thresholds.sh
#   EXTRA="--batch 64" bench/thresholds.sh               # any other upktgen options
#
# One sender thread pinned to CPU 0, 60-byte frames, COUNT packets per point (default
# 2,000,000), the XDP drop receiver. Points whose start threshold exceeds the ring are
# skipped. Prints a markdown table.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BACKEND=${BACKEND:-af_xdp}
RINGS=${RINGS:-64 256 2048}
STARTS=${STARTS:-1 16 64}
COUNT=${COUNT:-2000000}
EXTRA=${EXTRA:-}
[[ $(id -u) -eq 0 ]] || { echo "thresholds.sh: must run as root" >&2; exit 1; }
[[ ${NO_BUILD:-0} == 1 ]] || (cd "$REPO" && cargo build --release --quiet)
BIN=$REPO/target/release/upktgen

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r)"
echo "backend $BACKEND, $COUNT x 60-byte frames per point, sender pinned to CPU 0, XDP drop receiver ${EXTRA:+, $EXTRA}"
echo
echo "| ring | start W | delivered pps | stops | wakes /1000 pkts | kicks /1000 pkts | stopped ms | busy (c) ms | idle (d) ms |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for ring in $RINGS; do
	for w in $STARTS; do
		((w <= ring)) || continue
		# shellcheck disable=SC2086
		"$BIN" --backend "$BACKEND" --ring "$ring" --start-thresh "$w" --count "$COUNT" --cpu 0 --json $EXTRA |
			python3 -c '
import json, sys
j = json.load(sys.stdin)
o = j["outcome"]; r = o["result"]; b = o["backend"]; q = b["queue"]
el = r["elapsed_ns"]; rx = j["reconciliation"]["rx_packets"]
sent = max(r["sent"], 1)
print("| %s | %s | %d | %d | %.2f | %.2f | %.1f | %.1f | %.1f |" % (
    sys.argv[1], sys.argv[2], rx * 10**9 // el, q["stops"], q["wakes"] * 1000 / sent,
    b["kicks"] * 1000 / sent, b["stopped_ns"] / 1e6, (el - r["idle_ns"]) / 1e6, r["idle_ns"] / 1e6))
' "$ring" "$w"
	done
done
