#!/usr/bin/env bash
# otg-poll.sh - what a client polling `upktgen otg`'s metrics at 10 Hz costs the senders:
# the same flow (64-byte UDP, asked at 10 Mpps, far above what the path carries, so the sender runs flat out, for DURATION seconds) over a veth
# pair in a namespace made here, once with no call during the flow's DURATION (then one a
# second until it stopped) and once with get_metrics called every 100 ms throughout; prints the frames sent by each and their ratio.
# Issue 24 asks the polled run to send at least 99 % of the quiet one. Run it on a quiet
# machine, a few times (ROUNDS), as root.
#
#   bench/otg-poll.sh                                     # this tree's release build
#   DURATION=10 ROUNDS=5 UPKTGEN_BIN=/tmp/upktgen bench/otg-poll.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18480}
[[ $(id -u) -eq 0 ]] || { echo "otg-poll.sh: must run as root" >&2; exit 1; }
if [[ -z ${UPKTGEN_BIN:-} ]]; then
	(cd "$REPO" && cargo build --release --quiet)
	UPKTGEN_BIN=$REPO/target/release/upktgen
fi
NS=upk-bench-otg-$$
ip netns add "$NS"
SERVER=
cleanup() {
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null || true
	ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
ip -n "$NS" link set lo up
ip -n "$NS" link add va type veth peer name vb
ip -n "$NS" link set va up
ip -n "$NS" link set vb up
"$UPKTGEN_BIN" otg --listen "127.0.0.1:$PORT" --allow "netns:$NS/*" >/dev/null &
SERVER=$!
URL=http://127.0.0.1:$PORT
for _ in $(seq 50); do curl -sf "$URL/capabilities/version" >/dev/null && break; sleep 0.1; done
call() { curl -sf -X POST "$URL$1" -H 'Content-Type: application/json' -d "$2"; }
call /config "{\"ports\": [{\"name\": \"p1\", \"location\": \"netns:$NS/va\"}, {\"name\": \"p2\", \"location\": \"netns:$NS/vb\"}],
  \"flows\": [{\"name\": \"f\", \"tx_rx\": {\"port\": {\"tx_name\": \"p1\", \"rx_names\": [\"p2\"]}},
    \"packet\": [{\"ethernet\": {\"dst\": {\"choice\": \"value\", \"value\": \"02:00:00:00:00:02\"}}}, {\"ipv4\": {}}, {\"udp\": {}}], \"size\": {\"fixed\": 64},
    \"rate\": {\"pps\": 10000000}, \"duration\": {\"fixed_seconds\": {\"seconds\": $DURATION}}}]}" >/dev/null
STATE='{"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": {"state": "%s"}}}'
METRICS='{"choice": "flow"}'
# One test: start, (poll), wait for the flow to stop, print its frames_tx. The polling
# client is one process (python's urllib, one connection a call) for the whole test, so
# what the run loses is the server's answering and one light client, not a process
# spawned per call.
one() {
	call /control/state "$(printf "$STATE" start)" >/dev/null
	if [[ $1 == poll ]]; then
		python3 - "$URL/monitor/metrics" "$METRICS" "$((DURATION + 30))" <<'PY'
import sys, time, urllib.request
url, body, limit = sys.argv[1], sys.argv[2].encode(), float(sys.argv[3])
end = time.monotonic() + limit
while time.monotonic() < end:
    r = urllib.request.urlopen(urllib.request.Request(url, body, {"Content-Type": "application/json"}))
    if b'"transmit":"stopped"' in r.read():
        break
    time.sleep(0.1)
PY
	else
		sleep "$DURATION"
	fi
	local end=$((SECONDS + 30)) m
	while ((SECONDS < end)); do
		m=$(call /monitor/metrics "$METRICS")
		grep -q '"transmit":"stopped"' <<<"$m" && break
		sleep 1
	done
	sed -n 's/.*"frames_tx":\([0-9]*\).*/\1/p' <<<"$m"
}
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	quiet=$(one quiet)
	polled=$(one poll)
	awk -v r="$r" -v q="$quiet" -v p="$polled" \
		'BEGIN { printf "round %d: quiet %d frames, polled at 10 Hz %d frames, ratio %.4f\n", r, q, p, p / q }'
done
