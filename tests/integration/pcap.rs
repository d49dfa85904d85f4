//! End-to-end: `--pcap` writes the frames a run would send (no privilege, no lab), and
//! `--replay` sends a file's frames: a tap (AF_PACKET ETH_P_ALL ring) on veth-rx of a lab
//! the test made captures them, and they must equal the file's bytes, in order, looping.

use crate::common::*;
use etherparse::{LinkSlice, NetSlice, SlicedPacket, TransportSlice};
use std::path::{Path, PathBuf};
use upktgen::lab::{self, Lab, RxMode};
use upktgen::pcap::{self, PcapWriter};

/// A fresh directory anyone may write to (the unprivileged run writes there), removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("upktgen-pcap-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        TempDir(d)
    }
    fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const MAGIC: u32 = 0xbe9b_e955;

fn udp_payload<'a>(p: &SlicedPacket<'a>) -> Option<&'a [u8]> {
    match &p.transport {
        Some(TransportSlice::Udp(u)) => Some(u.payload()),
        _ => None,
    }
}

/// The frames of a file, read by upktgen's reader; checked against etherparse too.
fn read(path: &str) -> pcap::Pcap {
    let p = pcap::read_file(Path::new(path)).unwrap();
    assert!(p.nanos && !p.big_endian && p.link_type == 1);
    p
}

/// `upktgen run --pcap` as user nobody (when the tests run as root) or as the current
/// user: it needs no privilege and builds no lab.
fn pcap_writes_the_run_without_privilege() {
    let dir = TempDir::new("unpriv");
    let f = dir.file("vlan.pcap");
    let args = [
        "run",
        "--pcap",
        f.as_str(),
        "--count",
        "5",
        "--vlan-id",
        "100",
        "--ratep",
        "1000",
        "--udp-src-min",
        "1000",
        "--udp-src-max",
        "1002",
    ];
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    let o = if root {
        let Some(o) = crate::common::upktgen_as_nobody(&args) else {
            return;
        };
        o
    } else {
        upktgen(&args)
    };
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("wrote 5 frames (310 bytes) to {f}")),
        "{}",
        stderr(&o)
    );
    let p = read(&f);
    assert_eq!(p.records.len(), 5);
    // On the run's schedule: 1 ms apart at ratep 1000.
    for w in p.records.windows(2) {
        assert_eq!(w[1].ts_ns - w[0].ts_ns, 1_000_000);
    }
    let mut ports = Vec::new();
    for (i, r) in p.records.iter().enumerate() {
        let s = SlicedPacket::from_ethernet(&r.data).unwrap();
        let Some(LinkSlice::Ethernet2(eth)) = &s.link else {
            panic!("not Ethernet II")
        };
        assert_eq!(eth.source(), lab::TX_MAC.0, "the lab's source MAC");
        assert_eq!(eth.destination(), lab::RX_MAC.0);
        assert_eq!(r.data[12..16], [0x81, 0x00, 0x00, 100], "VLAN 100");
        let Some(NetSlice::Ipv4(ip)) = &s.net else {
            panic!("not IPv4")
        };
        assert_eq!(ip.header().source_addr(), lab::TX_IP);
        let pl = udp_payload(&s).unwrap();
        assert_eq!(pl[..4], MAGIC.to_be_bytes());
        assert_eq!(
            u32::from_be_bytes(pl[4..8].try_into().unwrap()),
            i as u32 + 1
        );
        // pktgen's header carries the record's time (seconds, microseconds).
        let sec = u32::from_be_bytes(pl[8..12].try_into().unwrap());
        let usec = u32::from_be_bytes(pl[12..16].try_into().unwrap());
        assert_eq!(
            u64::from(sec) * 1_000_000 + u64::from(usec),
            r.ts_ns / 1000,
            "frame {i}"
        );
        if let Some(TransportSlice::Udp(u)) = &s.transport {
            ports.push(u.source_port());
        }
    }
    // The port walk is half-open as the kernel's: 1000..1002 is 1000 and 1001, from min + 1.
    assert_eq!(ports, [1001, 1000, 1001, 1000, 1001]);
    // count 0 needs --pcap-count; then it writes that many, 1 ns apart at delay 0.
    let o = upktgen(&["run", "--pcap", &f, "--count", "0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--pcap-count"), "{}", stderr(&o));
    let o = upktgen(&["run", "--pcap", &f, "--count", "0", "--pcap-count", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = read(&f);
    assert_eq!(p.records.len(), 3);
    assert_eq!(p.records[2].ts_ns - p.records[0].ts_ns, 2);
    // --dev: the interface's MAC (from sysfs) and IPv4 address (which needs CAP_NET_RAW),
    // still without a lab.
    let o = upktgen(&[
        "run",
        "--pcap",
        &f,
        "--count",
        "1",
        "--dev",
        "lo",
        "--dst",
        "10.0.0.9",
        "--dst-mac",
        "02:00:00:00:00:09",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &read(&f).records[0].data;
    assert_eq!(r[6..12], [0; 6], "lo's MAC");
    let src = if root { [127, 0, 0, 1] } else { [0; 4] };
    assert_eq!(r[26..30], src, "{}", stderr(&o));
    assert_eq!(
        !root,
        stderr(&o).contains("IPv4 address is unknown"),
        "{}",
        stderr(&o)
    );
}

/// What arrived at veth-rx while `args` ran in the sending namespace, pktgen frames only, with
/// the VLAN tag veth-rx moved into metadata put back in place.
fn capture(lab: &Lab, args: &[&str], want: usize) -> (std::process::Output, Vec<Vec<u8>>) {
    capture_frames(lab, args, want, |f| {
        SlicedPacket::from_ethernet(f)
            .ok()
            .and_then(|p| udp_payload(&p).map(|pl| pl.starts_with(&MAGIC.to_be_bytes())))
            .unwrap_or(false)
    })
}

fn replay_sends_the_file_in_order_looping() {
    if !root_or_skip() {
        return;
    }
    let dir = TempDir::new("replay");
    let f = dir.file("imix.pcap");
    // Sizes that vary (a short frame after a long one must not carry the long one's tail),
    // VLAN-tagged, random ports.
    let o = upktgen(&[
        "run",
        "--pcap",
        &f,
        "--count",
        "7",
        "--imix-weights",
        "64,2 300,1 1000,1",
        "--vlan-id",
        "42",
        "--flag",
        "UDPSRC_RND",
        "--udp-src-min",
        "1",
        "--udp-src-max",
        "60000",
        "--seed",
        "11",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file: Vec<Vec<u8>> = read(&f).records.into_iter().map(|r| r.data).collect();
    assert_eq!(file.len(), 7);
    let sizes: std::collections::BTreeSet<usize> = file.iter().map(Vec::len).collect();
    assert!(sizes.len() > 1, "sizes vary: {sizes:?}");
    let lab = Lab::create(RxMode::Stack).unwrap();
    let dev = ["run", "--dev", lab::TX_IF, "--replay", &f];
    for backend in ["af_packet", "tx_ring", "af_xdp"] {
        // The whole file twice.
        let mut a = dev.to_vec();
        a.extend(["--replay-loops", "2", "--backend", backend, "--json"]);
        let (o, got) = capture(&lab, &a, 14);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["count"], 14, "{backend}");
        let want: Vec<Vec<u8>> = file.iter().chain(&file).cloned().collect();
        assert_eq!(got.len(), want.len(), "{backend}: frames captured");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{backend}: frame {i} differs from the file's");
        }
    }
    // --count caps the loops; paced by --ratep.
    let mut a = dev.to_vec();
    a.extend(["--replay-loops", "3", "--count", "9", "--ratep", "2000"]);
    let (o, got) = capture(&lab, &a, 9);
    assert!(o.status.success(), "{}", stderr(&o));
    let want: Vec<Vec<u8>> = file.iter().chain(&file).take(9).cloned().collect();
    assert_eq!(got, want);
}

fn replay_refuses_what_the_device_cannot_carry() {
    if !root_or_skip() {
        return;
    }
    let dir = TempDir::new("mtu");
    let f = dir.file("big.pcap");
    let mut w = PcapWriter::new(std::fs::File::create(&f).unwrap()).unwrap();
    w.write(1, &[0u8; 60]).unwrap();
    w.write(2, &[0u8; 1515]).unwrap();
    w.finish().unwrap();
    let (pid, o) = crate::common::upktgen_with_pid(&["run", "--replay", &f, "--count", "2"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("record 2 is a 1515-byte frame") && e.contains("1500 MTU"),
        "{e}"
    );
    assert!(
        namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty(),
        "lab left behind"
    );
    // xdp_live refuses, before any lab is made.
    let o = upktgen(&["run", "--replay", &f, "--backend", "xdp_live"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("xdp_live cannot --replay"),
        "{}",
        stderr(&o)
    );
}

/// `--replay-timing file` follows the file's gaps: the last of two passes over a file of
/// frames 100 ms apart cannot leave before 500 ms (a pass is the 200 ms span plus the mean
/// gap), or 125 ms at --replay-speed 4; the frames are the file's either way.
fn replay_follows_the_file_timing() {
    if !root_or_skip() {
        return;
    }
    let dir = TempDir::new("timing");
    let f = dir.file("slow.pcap");
    let o = upktgen(&["run", "--pcap", &f, "--count", "3", "--ratep", "10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file: Vec<Vec<u8>> = read(&f).records.into_iter().map(|r| r.data).collect();
    let lab = Lab::create(RxMode::Stack).unwrap();
    for (speed, at_least_ns) in [("1", 500_000_000u64), ("4", 125_000_000)] {
        let args = [
            "run",
            "--dev",
            lab::TX_IF,
            "--replay",
            &f,
            "--replay-loops",
            "2",
            "--replay-timing",
            "file",
            "--replay-speed",
            speed,
            "--json",
        ];
        let (o, got) = capture(&lab, &args, 6);
        assert!(o.status.success(), "{}", stderr(&o));
        let want: Vec<Vec<u8>> = file.iter().chain(&file).cloned().collect();
        assert_eq!(got, want, "speed {speed}");
        let j = json(&o);
        let elapsed = j["outcome"]["result"]["elapsed_ns"].as_u64().unwrap();
        assert!(elapsed >= at_least_ns, "speed {speed}: {elapsed} ns");
    }
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    pcap_writes_the_run_without_privilege,
    replay_sends_the_file_in_order_looping,
    replay_refuses_what_the_device_cannot_carry,
    replay_follows_the_file_timing,
];
