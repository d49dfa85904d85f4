#!/usr/bin/env bash
# rx_ceiling.sh - the highest rate each receiver takes without loss, in the lab.
#
#   bench/rx_ceiling.sh                          # xdp_live sender; af_packet, af_xdp, xdp_count
#   SENDER=af_xdp SECONDS_PER_PROBE=2 bench/rx_ceiling.sh
#   RECEIVERS="af_xdp" HI=3000000 STEPS=8 bench/rx_ceiling.sh
#
# For each receiver, bisects over --ratep: a probe is one `upktgen run --backend SENDER
# --ratep R --count R*SECONDS_PER_PROBE` in a fresh lab; it passes when every frame sent
# reached the receiver:
#   af_packet, af_xdp  `--rx-analyze --rx-backend B`: distinct sequence numbers received ==
#                      sent, no hole, none lost after the last one (the report's own figures;
#                      its socket-drop counters say where the rest went);
#   xdp_count          the lab's counting XDP drop sink (`--lab-rx drop`): counted == sent.
# The bisection starts from [0, HI] and stops after STEPS probes or when the bracket is
# within 5 %. The pass rate is the floor; the achieved send rate of that probe is printed
# beside it (if the sender cannot reach the asked rate the ceiling is the sender's, not the
# receiver's: the table says so).
#
# Environment: SENDER (xdp_live; af_xdp or af_packet also work), RECEIVERS ("af_packet
# af_xdp xdp_count"), HI (4000000 pps), STEPS (7), SECONDS_PER_PROBE (2), PKT_SIZE (60),
# UPKTGEN (path to the binary; default: a release build of this tree).
#
# The machine must be quiet: another process on either CPU steals time from the receiver
# and lowers its ceiling. Figures from a shared machine are indicative only.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SENDER=${SENDER:-xdp_live}
RECEIVERS=${RECEIVERS:-af_packet af_xdp xdp_count}
HI=${HI:-4000000}
STEPS=${STEPS:-7}
SECS=${SECONDS_PER_PROBE:-2}
PKT_SIZE=${PKT_SIZE:-60}

[[ $(id -u) -eq 0 ]] || { echo "rx_ceiling.sh: must run as root (the lab)" >&2; exit 1; }
command -v jq >/dev/null || { echo "rx_ceiling.sh: needs jq" >&2; exit 1; }
if [[ -z ${UPKTGEN:-} ]]; then
	(cd "$REPO" && cargo build --release --quiet)
	UPKTGEN=$REPO/target/release/upktgen
fi

# probe RECEIVER RATE -> prints "pass|fail sent received achieved_pps"
probe() {
	local rx=$1 rate=$2 count=$(($2 * SECS)) args j
	args=(run --backend "$SENDER" --pkt-size "$PKT_SIZE" --ratep "$rate" --count "$count" --json --no-live)
	if [[ $rx == xdp_count ]]; then
		args+=(--lab-rx drop)
	else
		args+=(--rx-analyze --rx-backend "$rx")
	fi
	if ! j=$("$UPKTGEN" "${args[@]}" 2>/dev/null); then
		echo "fail 0 0 0"
		return
	fi
	jq -r --arg rx "$rx" '
		.outcome.result as $r
		| ($r.sent) as $sent
		| (if $rx == "xdp_count" then .xdp_sink_packets
		   else .rx_analysis.receiver.sink.totals.received end) as $got
		| (if $rx == "xdp_count" then ($got == $sent)
		   else ($got == $sent and .rx_analysis.path.seq_lost == 0 and .rx_analysis.path.tail_lost == 0) end) as $ok
		| "\(if $ok and $sent > 0 then "pass" else "fail" end) \($sent) \($got) \(if $r.elapsed_ns > 0 then ($sent * 1000000000 / $r.elapsed_ns | floor) else 0 end)"
	' <<<"$j"
}

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sender: $SENDER, ${PKT_SIZE}-byte frames, ${SECS} s per probe, bisection over [0, $HI] pps, $STEPS probes"
echo
echo "| receiver | max pps without loss | achieved send pps at it | first failing rate | probes (rate:result:received/sent) |"
echo "|---|---:|---:|---:|---|"
for rx in $RECEIVERS; do
	lo=0 hi=$HI lo_achieved=0 log=""
	# First try the top: a receiver that keeps up with everything the sender does.
	read -r res sent got ach < <(probe "$rx" "$hi")
	log+="$hi:$res:$got/$sent "
	if [[ $res == pass ]]; then
		lo=$hi lo_achieved=$ach hi="-"
	else
		for ((i = 1; i < STEPS; i++)); do
			mid=$(((lo + hi) / 2))
			((hi - lo > lo / 20)) || break
			read -r res sent got ach < <(probe "$rx" "$mid")
			log+="$mid:$res:$got/$sent "
			if [[ $res == pass ]]; then
				lo=$mid lo_achieved=$ach
			else
				hi=$mid
			fi
		done
	fi
	note=""
	if ((lo > 0 && lo_achieved < lo * 95 / 100)); then
		note=" (sender-bound)"
	fi
	echo "| $rx | $lo$note | $lo_achieved | $hi | $log|"
done
