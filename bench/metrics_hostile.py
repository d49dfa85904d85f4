#!/usr/bin/env python3
"""metrics_hostile.py - the metrics endpoint against one hostile HTTP client at a time.

Run by metrics_hostile.sh inside a network namespace of its own (everything here is on
that namespace's loopback). For each mode, one `upktgen run --duration DURATION` (its own
private lab) serving --metrics-listen 127.0.0.1:PORT, the hostile client started once the
endpoint answers, and a normal scraper beside it every 250 ms (5 s timeout). Prints one
row per mode: the controller's peak RSS (VmHWM), the scrapes answered and their latency,
and when the run ended (seconds from its start; the run is killed at 120 s, or when its
RSS passes 2 GB).

Modes: none (no hostile client), pipeline (GET /metrics pipelined, never read), header (an
endless header line), slowpost (a POST sent one byte a second, head and body),
conns (1,000 connections held open, silent).
"""
import argparse
import os
import socket
import subprocess
import threading
import time

PORT = 19466
MAX_RSS_KB = 2 << 20


def status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def scrape(timeout=5.0):
    """One GET /metrics; (status, seconds) or (None, seconds) on a failure."""
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
        st = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else None
        return st, time.monotonic() - t0
    except OSError:
        return None, time.monotonic() - t0


def hostile(mode, stop):
    """Runs the hostile client `mode` until `stop` is set, reconnecting when closed."""
    if mode == "conns":
        held = []
        for _ in range(1000):
            try:
                held.append(socket.create_connection(("127.0.0.1", PORT), timeout=2))
            except OSError:
                pass
        stop.wait()
        for s in held:
            s.close()
        return
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", PORT), timeout=2)
        except OSError:
            time.sleep(0.1)
            continue
        s.settimeout(0.5)
        try:
            if mode == "pipeline":
                req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 64
                while not stop.is_set():
                    try:
                        s.sendall(req)
                    except socket.timeout:
                        pass
            elif mode == "header":
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Endless: ")
                chunk = b"a" * 65536
                while not stop.is_set():
                    try:
                        s.sendall(chunk)
                    except socket.timeout:
                        pass
            elif mode in ("slowpost", "slowbody"):
                head = b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
                msg = head + b"a" * 1000
                if mode == "slowbody":
                    s.sendall(head)
                    msg = b"a" * 1000
                for b in msg:
                    if stop.is_set():
                        break
                    s.sendall(bytes([b]))
                    stop.wait(1.0)
        except OSError:
            pass
        finally:
            s.close()


def one(binary, mode, duration):
    args = [binary, "run", "--duration", f"{duration}s", "--ratep", "1000", "--no-live",
            "--metrics-listen", f"127.0.0.1:{PORT}"]
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while scrape(1.0)[0] != "200":
        if p.poll() is not None or time.monotonic() - t0 > 30:
            p.kill()
            return f"| {mode} | did not start | | | |"
        time.sleep(0.05)
    stop = threading.Event()
    h = threading.Thread(target=hostile, args=(mode, stop), daemon=True)
    if mode != "none":
        h.start()
        time.sleep(0.5)
    hwm, answered, tried, lat = 0, 0, 0, []
    killed = None
    while p.poll() is None and time.monotonic() - t0 < 120:
        hwm = max(hwm, status_kb(p.pid, "VmHWM") or 0)
        if hwm > MAX_RSS_KB:
            # The machine is shared: an endpoint that buffers what it is sent is stopped here.
            killed = f"killed at {time.monotonic() - t0:.0f} s (RSS over {MAX_RSS_KB >> 20} GB)"
            p.kill()
            break
        if time.monotonic() - t0 < duration - 0.5:
            st, dt = scrape()
            tried += 1
            if st == "200":
                answered += 1
                lat.append(dt)
        time.sleep(0.25)
    if killed:
        end = killed
    elif p.poll() is None:
        hwm = max(hwm, status_kb(p.pid, "VmHWM") or 0)
        p.kill()
        end = "killed at 120 s"
    else:
        end = f"{time.monotonic() - t0:.1f} s"
    p.wait()
    stop.set()
    lat.sort()
    med = f"{lat[len(lat) // 2] * 1e3:.1f}" if lat else "-"
    mx = f"{lat[-1] * 1e3:.1f}" if lat else "-"
    return f"| {mode} | {hwm / 1024:.0f} MB | {answered} of {tried} | {med} / {mx} | {end} |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--modes", default="none pipeline header slowpost slowbody conns")
    a = ap.parse_args()
    print(f"binary {a.bin}, run --duration {a.duration}s, one hostile client per row")
    print("| hostile client | peak RSS | scrapes answered | latency median / max ms | run ended |")
    print("|---|---:|---:|---:|---:|")
    for m in a.modes.split():
        print(one(a.bin, m, a.duration), flush=True)


if __name__ == "__main__":
    main()
