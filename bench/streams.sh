#!/usr/bin/env bash
# streams.sh - 1 stream against 1,024 on one port, per backend, in one run (issue 23's
# speed figure: 1,024 streams should send at least 95 % of one stream's rate).
#
#   bench/streams.sh                                # af_packet tx_ring af_xdp xdp_live, 3 reps
#   BACKENDS="af_xdp" REPS=5 SECONDS_PER_RUN=5 bench/streams.sh
#
# Each run is `upktgen run --config` in the private lab (lab:tx -> lab:rx, the lab's
# receiver counting every stream), 60-byte frames (64 with the FCS, as OTG counts them),
# asked at 10 Mpps in total (far above what this path carries, so the sender runs flat out:
# the timeline hands out what is due in deadline order). The two configs alternate, rep by
# rep, so both see the same machine. Printed per run: frames handed over per second (the
# Result line's pps) and delivered per second (frames the receiver counted / elapsed); per
# backend, the medians and the ratio 1024/1 of each.
#
# Environment: UPKTGEN_BIN (default: this tree's release build), BACKENDS, REPS (3),
# SECONDS_PER_RUN (3). Needs root. xdp_live's program copies each frame from the slot the
# sender wrote it in (docs/streams.md): its 1-stream run is a config's too, not the walk's.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BACKENDS=${BACKENDS:-af_packet tx_ring af_xdp xdp_live}
REPS=${REPS:-3}
SECS=${SECONDS_PER_RUN:-3}
[[ $(id -u) -eq 0 ]] || { echo "streams.sh: must run as root" >&2; exit 1; }
if [[ -n ${UPKTGEN_BIN:-} ]]; then
	BIN=$UPKTGEN_BIN
else
	(cd "$REPO" && cargo build --release --quiet)
	BIN=$REPO/target/release/upktgen
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# config N FILE: N flows sharing 10 Mpps, each to its own UDP port.
config() {
	python3 - "$1" "$SECS" > "$2" <<'PY'
import json, sys
n, secs = int(sys.argv[1]), float(sys.argv[2])
flows = [{
    "name": f"s{i}",
    "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
    "packet": [
        {"choice": "ethernet", "ethernet": {}},
        {"choice": "ipv4", "ipv4": {"src": {"choice": "value", "value": "10.0.0.1"},
                                    "dst": {"choice": "value", "value": "10.0.0.2"}}},
        {"choice": "udp", "udp": {"src_port": {"choice": "value", "value": 9},
                                  "dst_port": {"choice": "value", "value": 10000 + i}}},
    ],
    "size": {"choice": "fixed", "fixed": 64},
    "rate": {"choice": "pps", "pps": 10_000_000 // n},
    "duration": {"choice": "fixed_seconds", "fixed_seconds": {"seconds": secs}},
} for i in range(n)]
print(json.dumps({"ports": [{"name": "p1", "location": "lab:tx"},
                            {"name": "p2", "location": "lab:rx"}], "flows": flows}))
PY
}
config 1 "$TMP/one.json"
config 1024 "$TMP/many.json"

# run CONFIG BACKEND: "handed_pps delivered_pps"
run() {
	"$BIN" run --config "$1" --backend "$2" --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
r = j["outcome"]["result"]
el = r["elapsed_ns"] / 1e9
rx = sum(s["rx_frames"] or 0 for s in j["streams"]["streams"])
print("%.0f %.0f" % (r["sent"] / el, rx / el))'
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

printf '%-10s %-6s %4s %14s %14s\n' backend streams rep handed_pps delivered_pps
for b in $BACKENDS; do
	: > "$TMP/$b.one"; : > "$TMP/$b.many"
	for rep in $(seq 1 "$REPS"); do
		for kind in one many; do
			read -r handed delivered < <(run "$TMP/$kind.json" "$b")
			n=$([[ $kind == one ]] && echo 1 || echo 1024)
			printf '%-10s %-6s %4s %14s %14s\n' "$b" "$n" "$rep" "$handed" "$delivered"
			echo "$handed $delivered" >> "$TMP/$b.$kind"
		done
	done
done
echo
printf '%-10s %14s %14s %8s %14s %14s %8s\n' backend "handed 1" "handed 1024" ratio "delivered 1" "delivered 1024" ratio
for b in $BACKENDS; do
	h1=$(cut -d' ' -f1 "$TMP/$b.one" | median); hm=$(cut -d' ' -f1 "$TMP/$b.many" | median)
	d1=$(cut -d' ' -f2 "$TMP/$b.one" | median); dm=$(cut -d' ' -f2 "$TMP/$b.many" | median)
	awk -v b="$b" -v h1="$h1" -v hm="$hm" -v d1="$d1" -v dm="$dm" \
		'BEGIN {printf "%-10s %14.0f %14.0f %8.3f %14.0f %14.0f %8.3f\n", b, h1, hm, hm/h1, d1, dm, dm/d1}'
done
