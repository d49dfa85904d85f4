#!/usr/bin/env bash
# compare.sh - upktgen beside the peer generators (trafgen, iperf3), in one lab, one run.
#
#   bench/compare.sh                 # drop and stack receivers, 3 reps, 60-byte frames
#   RX_MODES="drop" REPS=5 bench/compare.sh
#
# Uses the shared harness (../shared/bench: lab.sh + peers.sh): every generator runs from
# the same namespace, pinned to the same CPU, and is measured by the *delivered* packets
# counted at the receiving veth (rx_packets), not by its own claim. upktgen is plugged in as
# peers.sh's EXTRA generator. Prints the harness's CSV per receive mode, then the ratio
# upktgen / trafgen of delivered pps, which is the figure to quote (absolute numbers vary
# from machine to machine and run to run).
#
# Environment: PEERS_DIR (default ../shared/bench next to the repo), RX_MODES (default
# "drop none"), REPS (3), TOOLS (default "trafgen"; add iperf3 for the stack receiver),
# UPKTGEN_ARGS (extra options for upktgen, e.g. "--batch 128").
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
PEERS_DIR=${PEERS_DIR:-$REPO/../shared/bench}
RX_MODES=${RX_MODES:-drop none}
REPS=${REPS:-3}
TOOLS=${TOOLS:-trafgen}
UPKTGEN_ARGS=${UPKTGEN_ARGS:-}

[[ $(id -u) -eq 0 ]] || { echo "compare.sh: must run as root" >&2; exit 1; }
[[ -x $PEERS_DIR/peers.sh ]] || { echo "compare.sh: no peers harness at $PEERS_DIR (set PEERS_DIR)" >&2; exit 1; }
command -v trafgen >/dev/null || "$PEERS_DIR/setup.sh"

(cd "$REPO" && cargo build --release --quiet)
BIN=$REPO/target/release/upktgen
VERSION=$("$BIN" --version | awk '{print $2}')-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo dirty)

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r)"
for mode in $RX_MODES; do
	out=$(mktemp -d)
	OUTDIR=$out TOOLS="$TOOLS" REPS=$REPS RX_MODES=$mode \
		EXTRA_NAME=upktgen EXTRA_VERSION="$VERSION" \
		EXTRA_GEN="$BIN run --dev \$LAB_TX_IF --dst \$LAB_RX_IP4 --dst-mac \$LAB_RX_MAC --count \$COUNT $UPKTGEN_ARGS" \
		"$PEERS_DIR/peers.sh" >/dev/null 2>"$out/log" || { cat "$out/log" >&2; exit 1; }
	echo
	echo "== receiver: $mode (delivered pps, median of $REPS)"
	cat "$out/summary.csv"
	awk -F, 'NR>1 {pps[$1]=$6} END {
		if (pps["trafgen"] > 0) printf "ratio upktgen/trafgen: %.3f\n", pps["upktgen"] / pps["trafgen"] }' "$out/summary.csv"
	echo "raw data: $out"
done
