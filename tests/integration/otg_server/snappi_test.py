"""A user's snappi script against `upktgen otg`, written for upktgen's tests (its client is
snappi's own). Arguments come in the environment:

  OTG_API     the server's URL
  OTG_P1/P2   the two ports' locations
  OTG_PCAP    where to write port p2's capture (unset: no capture)
  OTG_INJECT  a shell command run while the capture runs (frames for it to see)

It sets a config of two flows (p1 -> p2, 1,000 UDP frames of 128 bytes at 2,000 pps; p2 ->
p1, 500 frames of 256 bytes), starts them, polls flow metrics at 10 Hz until both stopped,
and prints one JSON line: the flow and port metrics as snappi read them.
"""

import json
import os
import subprocess
import sys
import time

import snappi


def main():
    api = snappi.api(location=os.environ["OTG_API"], verify=False)
    cfg = api.config()
    p1, p2 = cfg.ports.port(name="p1", location=os.environ["OTG_P1"]).port(
        name="p2", location=os.environ["OTG_P2"]
    )
    pcap_path = os.environ.get("OTG_PCAP")
    if pcap_path:
        cfg.captures.capture(name="c2", port_names=[p2.name])
    flows = [
        (cfg.flows.flow(name="f1")[-1], p1, p2, 128, 1000),
        (cfg.flows.flow(name="f2")[-1], p2, p1, 256, 500),
    ]
    names = [f[0].name for f in flows]
    for f, tx, rx, size, packets in flows:
        f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = tx.name, [rx.name]
        f.size.fixed = size
        f.rate.pps = 2000
        f.duration.fixed_packets.packets = packets
        f.metrics.enable = True
        f.metrics.loss = True
        f.metrics.timestamps = True
        f.metrics.latency.enable = True
        eth, ip, udp = f.packet.ethernet().ipv4().udp()
        eth.src.value, eth.dst.value = "02:00:00:00:00:01", "02:00:00:00:00:02"
        ip.src.value, ip.dst.value = "198.18.0.1", "198.18.0.2"
        udp.src_port.increment.start, udp.src_port.increment.step = 5000, 2
        udp.src_port.increment.count = 10
        udp.dst_port.values = [4000, 4044]
    api.set_config(cfg)
    got = api.get_config()
    assert [f.name for f in got.flows] == names, got

    if pcap_path:
        cs = api.control_state()
        cs.port.capture.port_names = [p2.name]
        cs.port.capture.state = cs.port.capture.START
        api.set_control_state(cs)

    cs = api.control_state()
    cs.traffic.flow_transmit.state = cs.traffic.flow_transmit.START
    api.set_control_state(cs)

    req = api.metrics_request()
    req.flow.flow_names = names
    deadline = time.time() + 30
    polls = 0
    while True:
        res = api.get_metrics(req)
        polls += 1
        if all(m.transmit == "stopped" for m in res.flow_metrics) and all(
            m.latency.average_ns for m in res.flow_metrics
        ):
            break
        if time.time() > deadline:
            sys.exit("the flows did not stop within 30 s: %s" % res)
        time.sleep(0.1)

    flows = [
        {
            "name": m.name,
            "port_tx": m.port_tx,
            "port_rx": m.port_rx,
            "frames_tx": int(m.frames_tx),
            "frames_rx": int(m.frames_rx),
            "bytes_tx": int(m.bytes_tx),
            "bytes_rx": int(m.bytes_rx),
            "loss": m.loss,
            "latency_ns": m.latency.average_ns,
            "first_ns": m.timestamps.first_timestamp_ns,
            "last_ns": m.timestamps.last_timestamp_ns,
        }
        for m in res.flow_metrics
    ]
    preq = api.metrics_request()
    preq.port.port_names = [p1.name, p2.name]
    ports = [
        {"name": m.name, "frames_tx": int(m.frames_tx), "frames_rx": int(m.frames_rx), "transmit": m.transmit}
        for m in api.get_metrics(preq).port_metrics
    ]
    out = {"flows": flows, "ports": ports, "polls": polls, "version": api.get_version().api_spec_version}

    if pcap_path:
        inject = os.environ.get("OTG_INJECT")
        if inject:
            subprocess.run(inject, shell=True, check=True)
            time.sleep(0.3)
        creq = api.capture_request()
        creq.port_name = p2.name
        pcap = api.get_capture(creq)
        with open(pcap_path, "wb") as f:
            f.write(pcap.read())

    print(json.dumps(out))


if __name__ == "__main__":
    main()
