#!/usr/bin/env bash
# compare.sh - upktgen beside the peer generators (trafgen, iperf3), in one lab, one run.
#
#   bench/compare.sh                                   # af_packet; drop and stack receivers
#   BACKENDS="af_packet tx_ring af_xdp xdp_live" bench/compare.sh
#   RX_MODES="drop" REPS=5 UPKTGEN_ARGS="--batch 128" bench/compare.sh
#
# Uses the shared harness (../shared/bench: lab.sh + peers.sh): every generator runs from
# the same namespace, pinned to the same CPU, and is measured by the *delivered* packets
# counted at the receiving veth (rx_packets), not by its own claim. upktgen is plugged in as
# peers.sh's EXTRA generator, once per backend, each time beside trafgen in the same run.
# Prints, per backend and receive mode, the delivered pps of both, the ratio
# upktgen / trafgen (the figure to quote: absolute numbers vary from machine to machine and
# run to run), the CPU split of the sending CPU and upktgen's kicks per 1000 packets.
#
# Environment: UPKTGEN_BIN (a binary to measure instead of building this tree), PEERS_DIR (default ../shared/bench next to the repo), BACKENDS (af_packet),
# RX_MODES ("drop none"; none = frames climb the receiver's stack; xdp_live runs that as
# "gro", since live frames need NAPI on the receiving veth), REPS (3), TOOLS
# (trafgen; add iperf3 for the stack receiver), UPKTGEN_ARGS (extra upktgen options),
# COUNT (frames per upktgen run: 5,000,000; xdp_live into the drop receiver 35,000,000 so
# that its ~80 ms of set-up stays small against a run of a few seconds).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
PEERS_DIR=${PEERS_DIR:-$REPO/../shared/bench}
BACKENDS=${BACKENDS:-af_packet}
RX_MODES=${RX_MODES:-drop none}
REPS=${REPS:-3}
TOOLS=${TOOLS:-trafgen}
UPKTGEN_ARGS=${UPKTGEN_ARGS:-}

[[ $(id -u) -eq 0 ]] || { echo "compare.sh: must run as root" >&2; exit 1; }
[[ -x $PEERS_DIR/peers.sh ]] || { echo "compare.sh: no peers harness at $PEERS_DIR (set PEERS_DIR)" >&2; exit 1; }
command -v trafgen >/dev/null || "$PEERS_DIR/setup.sh"

# UPKTGEN_BIN: measure that binary instead of this tree's release build (e.g. an older build,
# for a before/after in one run).
if [[ -n ${UPKTGEN_BIN:-} ]]; then
	BIN=$UPKTGEN_BIN
else
	(cd "$REPO" && cargo build --release --quiet)
	BIN=$REPO/target/release/upktgen
fi
VERSION=$("$BIN" --version | awk '{print $2}')-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo dirty)

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r)"
echo "60-byte frames, one sender pinned to CPU 0, delivered pps (rx_packets at veth-rx), median of $REPS"
echo
echo "| backend | receiver | trafgen pps | upktgen pps | ratio | upktgen CPU0 busy (sy/si) | trafgen CPU0 busy (sy/si) | upktgen kicks /1000 pkts |"
echo "|---|---|---:|---:|---:|---|---|---:|"
for backend in $BACKENDS; do
	for mode in $RX_MODES; do
		# Live frames need NAPI on the receiving veth: its stack receiver is GRO mode.
		[[ $backend == xdp_live && $mode == none ]] && mode=gro
		# xdp_live into the drop receiver is fast enough that its set-up needs a long run;
		# into the stack it runs at stack speed, and 5,000,000 keeps within peers.sh's time.
		count=${COUNT:-$([[ $backend == xdp_live && $mode == drop ]] && echo 35000000 || echo 5000000)}
		out=$(mktemp -d)
		OUTDIR=$out TOOLS="$TOOLS" REPS=$REPS RX_MODES=$mode EXTRA_COUNT=$count \
			EXTRA_NAME=upktgen EXTRA_VERSION="$VERSION" \
			EXTRA_GEN="$BIN run --backend $backend --dev \$LAB_TX_IF --dst \$LAB_RX_IP4 --dst-mac \$LAB_RX_MAC --count \$COUNT $UPKTGEN_ARGS" \
			"$PEERS_DIR/peers.sh" >/dev/null 2>"$out/log" || { cat "$out/log" >&2; exit 1; }
		python3 - "$out" "$backend" "$mode" <<'PY'
import csv, re, statistics, sys, glob
out, backend, mode = sys.argv[1:4]
pps = {r["tool"]: float(r["delivered_pps"]) if r["delivered_pps"] != "NA" else 0.0
       for r in csv.DictReader(open(f"{out}/summary.csv"))}
cpu = {}
for line in open(f"{out}/summary.md"):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) > 11 and cells[0] == mode and cells[1] in ("trafgen", "upktgen") and "(" in cells[10]:
        cpu[cells[1]] = cells[10]
kicks = []
for f in glob.glob(f"{out}/{mode}/upktgen/rep*/tool.out"):
    m = re.search(r"kicks \d+ \(([\d.]+) per 1000", open(f).read())
    if m:
        kicks.append(float(m.group(1)))
t, u = pps.get("trafgen", 0), pps.get("upktgen", 0)
print("| %s | %s | %.0f | %.0f | **%.2f** | %s | %s | %s |" % (
    backend, {"none": "stack", "gro": "stack (GRO on)"}.get(mode, mode), t, u, u / t if t else float("nan"),
    cpu.get("upktgen", "?"), cpu.get("trafgen", "?"),
    "%.2f" % statistics.median(kicks) if kicks else "?"))
PY
		echo "  raw data: $out" >&2
	done
done
