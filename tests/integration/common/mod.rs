//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

pub mod fleet;
pub mod hosts;
pub mod nft;
pub mod schema;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory for one test, removed when dropped (also when the test fails).
pub struct Tmp(PathBuf);

impl std::ops::Deref for Tmp {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `upktgen-e2e-SUITE-TAG-PID` under the temporary directory, empty.
pub fn tmp_dir(suite: &str, tag: &str) -> Tmp {
    let d = std::env::temp_dir().join(format!("upktgen-e2e-{suite}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Tmp(d)
}

/// End-to-end tests need root (namespaces, veth, packet sockets). For other users the test
/// is skipped (reported as such, not as passed); in CI (CI=true) a missing privilege fails.
pub fn root_or_skip() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    let euid: u32 = uid_line.split_whitespace().nth(2).unwrap().parse().unwrap();
    if euid == 0 {
        return true;
    }
    crate::harness::skip("needs root (it makes network namespaces): run the tests as root");
    false
}

/// Root, and a kernel that runs XDP programs on live frames (5.18+).
pub fn live_frames_or_skip() -> bool {
    if !root_or_skip() {
        return false;
    }
    let rel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut it = rel
        .trim()
        .split(['.', '-'])
        .map(|x| x.parse::<u32>().unwrap_or(0));
    let (major, minor) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    if (major, minor) < (5, 18) {
        crate::harness::skip(format!(
            "needs BPF_F_TEST_XDP_LIVE_FRAMES (kernel 5.18+; this is {})",
            rel.trim()
        ));
        return false;
    }
    true
}

pub fn upktgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(args)
        .output()
        .unwrap()
}

/// `upktgen ARGS` and its pid (the pid names its lab's namespaces).
pub fn upktgen_with_pid(args: &[&str]) -> (u32, Output) {
    let child = Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Namespaces under /run/netns whose names start with `prefix`.
pub fn namespaces_with_prefix(prefix: &str) -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}

/// The live lines (`--json-lines`) on standard error: (the final one, those before it). At
/// least two, the last one marked final and only that one.
#[allow(dead_code)]
pub fn live_lines(o: &Output) -> (serde_json::Value, Vec<serde_json::Value>) {
    let err = stderr(o);
    let mut lines: Vec<serde_json::Value> = err
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.len() >= 2, "fewer than two live lines:\n{err}");
    let last = lines.pop().expect("two lines");
    assert_eq!(last["final"], true, "{err}");
    assert!(lines.iter().all(|l| l["final"] == false), "{err}");
    (last, lines)
}

/// rx_packets of `iface` inside namespace `ns` (None if it is not there yet).
pub fn rx_packets_in(ns: &str, iface: &str) -> Option<u64> {
    let o = Command::new("ip")
        .args(["netns", "exec", ns, "cat", "/proc/net/dev"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{iface}:")))?;
    line.split(':')
        .nth(1)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Waits until a run with pid `pid` has its lab up and packets arriving at veth-rx.
pub fn wait_for_traffic(pid: u32) {
    let prefix = format!("upktgen-{pid}-");
    let t0 = std::time::Instant::now();
    loop {
        let rx = namespaces_with_prefix(&prefix)
            .into_iter()
            .find(|n| n.ends_with("-rx"));
        if let Some(ns) = rx
            && rx_packets_in(&ns, "veth-rx").unwrap_or(0) > 0
        {
            return;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(20),
            "no traffic from run {pid}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The lab's 60-byte frame (veth-tx to veth-rx), with or without the UDP checksum.
pub fn lab_template(udp_csum: bool) -> upktgen::wire::Udp4Template {
    use upktgen::lab;
    upktgen::wire::Udp4Template::new(&upktgen::wire::FrameSpec {
        dst_mac: lab::RX_MAC,
        src_mac: lab::TX_MAC,
        src_ip: lab::TX_IP,
        dst_ip: lab::RX_IP,
        tos: 0,
        pkt_size: 60,
        udp_csum,
    })
    .unwrap()
}

/// Starts `upktgen ARGS` in its own lab, waits until its packets arrive, sends SIGINT and
/// checks the run stops with status 130, a partial report and no lab left behind. Returns
/// its standard output.
pub fn interrupt_lab_run(args: &[&str]) -> String {
    let child = Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for_traffic(pid);
    let st = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("Result: OK: "), "{t}");
    assert!(t.contains("interrupted (partial run)"), "{t}");
    assert!(
        namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty(),
        "lab left behind"
    );
    t
}

/// Slows the lab's veth-tx with a tbf qdisc at `rate` (e.g. "20mbit"), so frames wait in the
/// qdisc holding their skbs and completions come back one at a time as it releases them.
pub fn slow_tx_link(lab: &upktgen::lab::Lab, rate: &str) {
    let st = Command::new("tc")
        .args([
            "-n",
            &lab.tx_ns,
            "qdisc",
            "add",
            "dev",
            upktgen::lab::TX_IF,
            "root",
            "tbf",
        ])
        .args(["rate", rate, "burst", "4kb", "limit", "10mb"])
        .status()
        .unwrap();
    assert!(st.success(), "tc qdisc add tbf failed");
}

/// A network namespace named `upk-TAG-PID`, removed on drop (every path out of a test).
pub struct VethNs(pub String);

impl VethNs {
    /// The namespace, empty.
    pub fn empty(tag: &str) -> VethNs {
        let ns = VethNs(format!("upk-{tag}-{}", std::process::id()));
        ns.ip(&["netns", "add", &ns.0]);
        ns
    }

    /// The namespace holding a veth pair `va`/`vb`, both up.
    pub fn new(tag: &str) -> VethNs {
        let ns = VethNs::empty(tag);
        ns.veth("va", "vb");
        ns
    }

    /// `ip ARGS`, which must succeed.
    pub fn ip(&self, args: &[&str]) {
        let o = Command::new("ip").args(args).output().unwrap();
        assert!(o.status.success(), "ip {args:?}: {}", stderr(&o));
    }

    /// A veth pair `a`/`b` in the namespace, both up.
    pub fn veth(&self, a: &str, b: &str) {
        let n = self.0.as_str();
        self.ip(&["-n", n, "link", "add", a, "type", "veth", "peer", "name", b]);
        self.ip(&["-n", n, "link", "set", a, "up"]);
        self.ip(&["-n", n, "link", "set", b, "up"]);
    }

    /// `netns:NAME/IFACE`, a config port's location.
    pub fn port(&self, iface: &str) -> String {
        format!("netns:{}/{iface}", self.0)
    }
}

impl Drop for VethNs {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// `upktgen ARGS` inside network namespace `ns`.
pub fn in_ns(ns: &str, args: &[&str]) -> std::process::Output {
    Command::new("ip")
        .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_upktgen")])
        .args(args)
        .output()
        .unwrap()
}

/// `upktgen run --dev veth-tx` inside the lab's sending namespace, aimed at veth-rx unless
/// `extra` gives its own `--dst`/`--dst-mac`.
pub fn dev_run(lab: &upktgen::lab::Lab, extra: &[&str]) -> std::process::Output {
    let m = upktgen::lab::RX_MAC.to_string();
    let mut a = vec!["run", "--dev", upktgen::lab::TX_IF];
    // Defaults first: pktgen's parameters apply in order, so the test's own come later and win.
    if !extra.contains(&"--dst") {
        a.extend_from_slice(&["--dst", "10.99.0.2"]);
    }
    if !extra.contains(&"--dst-mac") {
        a.extend_from_slice(&["--dst-mac", &m]);
    }
    a.extend_from_slice(extra);
    in_ns(&lab.tx_ns, &a)
}

/// What arrived at veth-rx of `lab` while `args` ran in its sending namespace (an
/// AF_PACKET ETH_P_ALL ring, up to `want` frames or 5 s), the frames `keep` accepts, with
/// the VLAN tag veth-rx moved into metadata put back in place (its VID: the PCP and DEI
/// bits are not in the metadata).
pub fn capture_frames(
    lab: &upktgen::lab::Lab,
    args: &[&str],
    want: usize,
    keep: impl Fn(&[u8]) -> bool,
) -> (Output, Vec<Vec<u8>>) {
    use std::time::{Duration, Instant};
    use upktgen::sys::{self, netns, rx_ring::RxRing, rx_ring::RxRingConfig};
    let mut ring = netns::in_netns(&lab.rx_path(), || {
        RxRing::open(
            sys::if_nametoindex(upktgen::lab::RX_IF)?,
            RxRingConfig {
                all_frames: true,
                ..RxRingConfig::default()
            },
        )
    })
    .unwrap();
    // The ring is read while the sender runs: its blocks are handed over every 4 ms even when
    // nearly empty, so the 16 of them hold only 64 ms of a slow or stretched run (a sender
    // started late by a loaded machine), and a reader that waited for the sender's end lost
    // the rest.
    let child = Command::new("ip")
        .args(["netns", "exec", &lab.tx_ns, env!("CARGO_BIN_EXE_upktgen")])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let sender = std::thread::spawn(move || child.wait_with_output().unwrap());
    let mut got = Vec::new();
    let mut ended: Option<Instant> = None;
    loop {
        if ended.is_none() && sender.is_finished() {
            ended = Some(Instant::now());
        }
        if ended.is_some_and(|t| got.len() >= want || t.elapsed() > Duration::from_secs(5)) {
            break;
        }
        ring.wait(50).unwrap();
        while ring
            .next_block(|f, m| {
                let mut data = f.to_vec();
                if let Some(vid) = m.vlan {
                    let tag = [0x81, 0x00, (vid >> 8) as u8, vid as u8];
                    data.splice(12..12, tag);
                }
                if keep(&data) {
                    got.push(data)
                }
            })
            .is_some()
        {}
    }
    (sender.join().unwrap(), got)
}

/// Waits (at most 20 s) until an XDP program is on `dev` in `ns`: a receiver using AF_XDP
/// is ready.
pub fn wait_for_xdp(ns: &str, dev: &str) {
    let t0 = std::time::Instant::now();
    loop {
        let o = Command::new("ip")
            .args(["-n", ns, "link", "show", "dev", dev])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&o.stdout).contains("prog/xdp") {
            return;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(20),
            "no XDP program on {dev}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `upktgen ARGS` run as user nobody with no capabilities (util-linux's setpriv), from a copy
/// of the binary in a directory anyone may enter (the build's own target/ may sit under a
/// home directory nobody cannot reach). None, with the test skipped, without setpriv.
pub fn upktgen_as_nobody(args: &[&str]) -> Option<Output> {
    use std::os::unix::fs::PermissionsExt;
    if !crate::harness::tool_or_skip("setpriv", "apt-get install util-linux") {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("upktgen-e2e-nobody-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    // One copy per call (tests run in parallel), under a unique name.
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let bin = dir.join(format!("upktgen-{n}"));
    std::fs::copy(env!("CARGO_BIN_EXE_upktgen"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Another test's fork may still hold the copy's write descriptor for an instant (until
    // that child execs and O_CLOEXEC closes it): executing the copy then fails with ETXTBSY.
    // That is the test's own race, not upktgen's, so it is tried again.
    let mut tries = 0;
    let o = loop {
        let o = Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
            ])
            .arg(&bin)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        tries += 1;
        if tries < 20 && String::from_utf8_lossy(&o.stderr).contains("Text file busy") {
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        }
        break o;
    };
    let _ = std::fs::remove_file(&bin);
    let _ = std::fs::remove_dir(&dir);
    Some(o)
}

/// OpenSSH's server and client (a real sshd per test host), or the test is skipped.
pub fn ssh_or_skip() -> bool {
    use crate::harness::tool_or_skip;
    tool_or_skip("sshd", "apt-get install openssh-server")
        && tool_or_skip("ssh", "apt-get install openssh-client")
        && tool_or_skip("ssh-keygen", "apt-get install openssh-client")
}

/// Runs `f` while dumpcap captures what `iface` in namespace `ns` receives into `file`
/// (`extra`: dumpcap's further options, `-P` for pcap rather than pcapng): started and its
/// file's header written before `f`; stopped (SIGINT) once the file has stopped growing
/// after it, since dumpcap may still be reading the last frames from its socket (a signal
/// before that lost the last ~14 ms of each flow on a loaded machine).
pub fn capture_while<T>(
    ns: &str,
    iface: &str,
    file: &Path,
    extra: &[&str],
    f: impl FnOnce() -> T,
) -> T {
    let mut dumpcap = Command::new("ip")
        .args(["netns", "exec", ns, "dumpcap", "-q"])
        .args(extra)
        .args(["-i", iface, "-w"])
        .arg(file)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // dumpcap writes the file's header once it captures.
    let t0 = std::time::Instant::now();
    while std::fs::metadata(file).map_or(0, |m| m.len()) == 0 {
        assert!(t0.elapsed().as_secs() < 20, "dumpcap did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = f();
    let (mut len, mut still) = (0, std::time::Instant::now());
    let t0 = std::time::Instant::now();
    while still.elapsed().as_millis() < 500 && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let now = std::fs::metadata(file).map_or(0, |m| m.len());
        if now != len {
            (len, still) = (now, std::time::Instant::now());
        }
    }
    let _ = Command::new("kill")
        .args(["-INT", &dumpcap.id().to_string()])
        .status();
    let _ = dumpcap.wait();
    out
}
