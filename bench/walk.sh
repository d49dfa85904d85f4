#!/usr/bin/env bash
# walk.sh - xdp_live against af_xdp on the pktgen walk's traffic mixes, in upktgen's own lab.
#
#   bench/walk.sh                          # every case, median of 3
#   REPS=5 CASES="ipv6 imix" bench/walk.sh
#
# Each case runs `upktgen --backend B --count N --json` (a lab of its own, XDP drop receiver
# on veth-rx) with xdp_live and af_xdp, and prints the *delivered* pps (rx_packets counted
# at veth-rx over the sender's elapsed time) of both, the ratio xdp_live / af_xdp, and
# xdp_live against its own plain IPv4 rate (the first row). IMIX also gets the delivered
# bits per second (rx_bytes), the figure to compare there. Random fields come from the
# kernel's generator in xdp_live (not reproducible by --seed), from upktgen's seeded one
# in af_xdp.
#
# Environment: UPKTGEN_BIN (a binary to measure instead of this tree's release build),
# REPS (3), CASES (all: plain ipv6 vlan qinq udp_src_rnd dst_range256 flows1024 imix),
# COUNT_LIVE (frames per xdp_live run, 20,000,000), COUNT_XDP (per af_xdp run, 5,000,000),
# UPKTGEN_ARGS (extra options for both, e.g. "--cpu 0").
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
REPS=${REPS:-3}
CASES=${CASES:-plain ipv6 vlan qinq udp_src_rnd dst_range256 flows1024 imix}
COUNT_LIVE=${COUNT_LIVE:-20000000}
COUNT_XDP=${COUNT_XDP:-5000000}
UPKTGEN_ARGS=${UPKTGEN_ARGS:-}

[[ $(id -u) -eq 0 ]] || { echo "walk.sh: must run as root" >&2; exit 1; }
if [[ -n ${UPKTGEN_BIN:-} ]]; then
	BIN=$UPKTGEN_BIN
else
	(cd "$REPO" && cargo build --release --quiet)
	BIN=$REPO/target/release/upktgen
fi

# The options of each case (pktgen parameters as command-line options).
opts() {
	case $1 in
	plain) echo "" ;;
	ipv6) echo "--flag IPV6 --dst6 fd00::2 --src6 fd00::1" ;;
	vlan) echo "--vlan-id 100" ;;
	qinq) echo "--vlan-id 100 --svlan-id 200" ;;
	udp_src_rnd) echo "--udp-src-min 1024 --udp-src-max 65535 --flag UDPSRC_RND" ;;
	dst_range256) echo "--dst-min 10.99.1.0 --dst-max 10.99.1.255" ;;
	flows1024) echo "--dst-min 10.99.0.2 --dst-max 10.99.255.255 --flows 1024 --flowlen 8" ;;
	imix) echo "--imix-weights 64,7+576,4+1500,1" ;;
	*) echo "walk.sh: unknown case $1" >&2; exit 1 ;;
	esac
}

# One run: prints "pps bps" delivered.
run() {
	local backend=$1 count=$2; shift 2
	local args=()
	for a in "$@"; do args+=("${a//+/ }"); done
	"$BIN" --backend "$backend" --count "$count" --json $UPKTGEN_ARGS "${args[@]}" 2>/dev/null |
		python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["backend"]["name"] == sys.argv[1], j["backend"]["name"]
ns = j["outcome"]["result"]["elapsed_ns"]
print(j["reconciliation"]["rx_packets"] * 1e9 / ns, j["rx_iface"]["rx_bytes"] * 8e9 / ns)' "$backend"
}

median() { python3 -c 'import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
best() { python3 -c 'import sys; print(max(float(x) for x in sys.argv[1:]))' "$@"; }

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r)"
echo "delivered pps at veth-rx (XDP drop receiver), median of $REPS; ratio = xdp_live / af_xdp"
echo
echo "best = the fastest of the $REPS runs (this VM's rate is bimodal, from one run to the next, the"
echo "same binary and options delivering 7 or 12 Mpps: the best run is the undisturbed figure)"
echo "| case | options | xdp_live pps | xdp_live best | af_xdp pps | ratio | xdp_live / its plain IPv4 | best / plain's best | xdp_live Mb/s | af_xdp Mb/s |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
# Repetitions outside, cases inside: each case's samples are spread over the whole
# benchmark, so a slow spell of the machine hits every case alike, not one.
declare -A LP LB XP XB
for _ in $(seq "$REPS"); do
	for c in $CASES; do
		read -r -a o <<<"$(opts "$c")"
		read -r p b < <(run xdp_live "$COUNT_LIVE" "${o[@]}")
		LP[$c]+="$p " LB[$c]+="$b "
		read -r p b < <(run af_xdp "$COUNT_XDP" "${o[@]}")
		XP[$c]+="$p " XB[$c]+="$b "
	done
done
plain_live=
for c in $CASES; do
	read -r -a o <<<"$(opts "$c")"
	# shellcheck disable=SC2086 # the samples are space-separated numbers
	{
		L=$(median ${LP[$c]}) X=$(median ${XP[$c]})
		LB=$(median ${LB[$c]}) XB=$(median ${XB[$c]})
	}
	# shellcheck disable=SC2086
	H=$(best ${LP[$c]})
	[[ $c == plain ]] && plain_live=$L plain_best=$H
	python3 - "$c" "${o[*]:-}" "$L" "$X" "${plain_live:-0}" "$LB" "$XB" "$H" "${plain_best:-0}" <<'PY'
import sys
c, o = sys.argv[1], sys.argv[2].replace("+", " ")
l, x, p, lb, xb, h, ph = map(float, sys.argv[3:])
own = "%.2f" % (l / p) if p else "?"
own_best = "%.2f" % (h / ph) if ph else "?"
print("| %s | `%s` | %.0f | %.0f | %.0f | **%.2f** | %s | %s | %.0f | %.0f |" % (c, o or "(plain IPv4/UDP)", l, h, x, l / x if x else float("nan"), own, own_best, lb / 1e6, xb / 1e6))
PY
done
