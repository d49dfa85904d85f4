#!/usr/bin/env bash
# metrics_hostile.sh - the metrics endpoint of `upktgen run` against hostile HTTP clients,
# one at a time, with a normal scraper beside each: peak RSS of the controller, scrapes
# answered and their latency, and when the run ended (see metrics_hostile.py).
#
#   bench/metrics_hostile.sh                                  # this tree's release build
#   UPKTGEN_BIN=/tmp/upktgen-old bench/metrics_hostile.sh     # another binary (before/after)
#   DURATION=5 MODES="pipeline conns" bench/metrics_hostile.sh
#
# Everything runs inside a network namespace made here (and removed on every path): the
# endpoint listens on its loopback, the run makes its private lab from there.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
DURATION=${DURATION:-10}
MODES=${MODES:-none pipeline header slowpost slowbody conns}
[[ $(id -u) -eq 0 ]] || { echo "metrics_hostile.sh: must run as root" >&2; exit 1; }
if [[ -z ${UPKTGEN_BIN:-} ]]; then
	(cd "$REPO" && cargo build --release --quiet)
	UPKTGEN_BIN=$REPO/target/release/upktgen
fi
NS=upktgen-bench-http-$$
ip netns add "$NS"
trap 'ip netns del "$NS" 2>/dev/null || true' EXIT
ip -n "$NS" link set lo up
# 1,000 held connections and the process's own descriptors.
ulimit -n 4096
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
ip netns exec "$NS" python3 "$HERE/metrics_hostile.py" --bin "$UPKTGEN_BIN" \
	--duration "$DURATION" --modes "$MODES"
