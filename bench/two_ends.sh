#!/usr/bin/env bash
# two_ends.sh - what a two-ended run costs and what a DUT forwards, on this machine.
#
#   bench/two_ends.sh                    # REPS=3 COUNT=2000000 BACKENDS="af_packet tx_ring af_xdp xdp_live"
#
# 1. The DUT lab: each backend's delivered pps through the DUT (kernel IPv4 forwarding between
#    two veth pairs, the XDP drop receiver at the end) beside the same run in the two-namespace
#    lab. Delivered = veth-rx's rx_packets over the run's elapsed time.
# 2. The control channel: the same 60-byte af_packet run between two namespaces joined by a
#    veth pair, received by upktgen's af_xdp receiver, once as the lab's own (--rx-analyze) and
#    once as a far end through its agent (--peer netns:...): the sender's pps in both.
# Median of REPS runs each, interleaved. Needs root.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
REPS=${REPS:-3}
COUNT=${COUNT:-2000000}
BACKENDS=${BACKENDS:-af_packet tx_ring af_xdp xdp_live}
[[ $(id -u) -eq 0 ]] || { echo "two_ends.sh: must run as root" >&2; exit 1; }
if [[ -n ${UPKTGEN_BIN:-} ]]; then BIN=$UPKTGEN_BIN; else
	(cd "$REPO" && cargo build --release --quiet); BIN=$REPO/target/release/upktgen
fi
median() { python3 -c 'import sys,statistics; print(int(statistics.median(float(x) for x in sys.argv[1:])))' "$@"; }
delivered() { python3 -c '
import json,sys
j=json.load(sys.stdin)
rx=j["reconciliation"]["rx_packets"] or 0
print(int(rx*1e9/max(1,j["outcome"]["result"]["elapsed_ns"])))'; }
sender_pps() { python3 -c 'import json,sys; r=json.load(sys.stdin)["outcome"]["result"]; print(int(r["sent"]*1e9/max(1,r["elapsed_ns"])))'; }

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r), load $(cut -d' ' -f1 /proc/loadavg)"
echo "60-byte frames, $COUNT per run, one sender, median of $REPS"
echo
echo "| backend | two-namespace lab, delivered pps | DUT lab (IPv4 forwarding), delivered pps | DUT / lab |"
echo "|---|---:|---:|---:|"
for b in $BACKENDS; do
	lab=(); dut=()
	for _ in $(seq "$REPS"); do
		lab+=("$("$BIN" run --backend "$b" --count "$COUNT" --json --no-live 2>/dev/null | delivered)")
		dut+=("$("$BIN" run --lab dut --backend "$b" --count "$COUNT" --json --no-live 2>/dev/null | delivered)")
	done
	l=$(median "${lab[@]}"); d=$(median "${dut[@]}")
	echo "| $b | $l | $d | $(python3 -c "print('%.2f' % ($d/$l))") |"
done

# 2. The control channel's cost: one veth pair between two namespaces of our own.
a=upkt-bench-$$-a; z=upkt-bench-$$-b
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$z" 2>/dev/null || true; }
trap cleanup EXIT
for n in $a $z; do ip netns add "$n"; ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1; ip -n "$n" link set lo up; done
ip -n "$a" link add dat-a address 02:00:00:98:00:01 type veth peer name dat-b address 02:00:00:98:00:02 netns "$z"
ip -n "$a" addr add 10.98.250.1/24 dev dat-a; ip -n "$z" addr add 10.98.250.2/24 dev dat-b
ip -n "$a" link set dat-a up; ip -n "$z" link set dat-b up
sleep 1
own=(); far=()
for _ in $(seq "$REPS"); do
	own+=("$("$BIN" run --count "$COUNT" --rx-analyze --rx-backend af_xdp --json --no-live 2>/dev/null | sender_pps)")
	far+=("$(ip netns exec "$a" "$BIN" run --dev dat-a --dst 10.98.250.2 --dst-mac 02:00:00:98:00:02 --count "$COUNT" \
		--peer "netns:$z" --peer-dev dat-b --rx-backend af_xdp --json --no-live 2>/dev/null | sender_pps)")
done
o=$(median "${own[@]}"); f=$(median "${far[@]}")
echo
echo "| receiver (af_xdp, af_packet sender) | sender pps | ratio |"
echo "|---|---:|---:|"
echo "| the lab's own (--rx-analyze) | $o | 1.00 |"
echo "| far end through its agent (--peer netns:) | $f | $(python3 -c "print('%.2f' % ($f/$o))") |"
