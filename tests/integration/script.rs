//! `upktgen script` and `upktgen functions-sh`: scripts in pktgen's control language and
//! bash scripts in the style of the kernel's samples/pktgen, run against a lab.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use upktgen::lab::{self, Lab, RxMode};

/// A fresh directory for one test, removed by the guard.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let p =
            std::env::temp_dir().join(format!("upktgen-e2e-script-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The report's device section: from `Params: ` of the device with `ifname` to its Result.
fn device_text<'a>(out: &'a str, ifname: &str) -> &'a str {
    let key = format!("ifname: {ifname}\n");
    let at = out
        .find(&key)
        .unwrap_or_else(|| panic!("no {ifname} in {out}"));
    let start = out[..at].rfind("Params: ").unwrap();
    let res = out[at..].find("\nResult: ").map(|i| at + i).unwrap();
    let end = out[res..].find("errors: ").map(|i| res + i).unwrap();
    let end = out[end..].find('\n').map_or(out.len(), |i| end + i);
    &out[start..end]
}

fn a_script_runs_every_device_at_once_and_shows_the_kernels_files() {
    if !root_or_skip() {
        return;
    }
    let t = TempDir::new("file");
    let second = if cpus() > 1 { 1 } else { 0 };
    let script = t.write(
        "two.pg",
        &format!(
            "# two devices, one per thread\n\
             pgctrl reset\n\
             kpktgend_0 add_device eth0@0\n\
             kpktgend_{second} add_device eth0@1\n\
             kpktgend_0 add_device eth0@0\n\
             eth0@0 count 300\n\
             echo \"count 500\" > /proc/net/pktgen/eth0@1\n\
             /proc/net/pktgen/eth0@1 src_min 198.18.2.1\n\
             eth0@0 bogus 1\n\
             pgctrl start\n\
             show eth0@0\n\
             cat /proc/net/pktgen/eth0@1\n\
             show kpktgend_{second}\n"
        ),
    );
    let (pid, o) = crate::common::upktgen_with_pid(&["script", "--lab", script.to_str().unwrap()]);
    let (out, err) = (stdout(&o), stderr(&o));
    // Two commands failed (the second add_device, the unknown parameter); the rest ran.
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("two.pg:5: kpktgend_0: ERROR: can not add device eth0@0"),
        "{err}"
    );
    assert!(
        err.contains("two.pg:9: eth0@0: ERROR: No such parameter \"bogus\""),
        "{err}"
    );
    assert!(err.contains("2 commands failed (lines 5, 9)"), "{err}");
    assert!(out.contains("Delivered:   800 of 800 sent"), "{out}");
    // In the lab the file names the interface that sent: veth-tx@0 for eth0@0.
    let d0 = device_text(&out, "veth-tx@0");
    assert!(d0.contains("pkts-sofar: 300  errors: 0"), "{d0}");
    // The walk's state after 300 frames to the lab's receiver.
    assert!(d0.contains("seq_num: 301  "), "{d0}");
    assert!(
        d0.contains("cur_saddr: 10.99.0.1  cur_daddr: 10.99.0.2"),
        "{d0}"
    );
    assert!(
        d0.contains("Result: OK: ") && d0.contains(", 300 (60byte,0frags)"),
        "{d0}"
    );
    let d1 = device_text(&out, "veth-tx@1");
    assert!(d1.contains("src_min: 198.18.2.1"), "{d1}");
    assert!(d1.contains("pkts-sofar: 500  errors: 0"), "{d1}");
    assert!(d1.contains(", 500 (60byte,0frags)"), "{d1}");
    assert!(out.contains("Stopped: eth0@1 \n"), "{out}");
    // The report names the senders as the script does.
    assert!(
        out.contains(&format!("  eth0@1 on CPU {second}: Result: OK: ")),
        "{out}"
    );
    assert!(out.contains(&format!("netns upktgen-{pid}-")), "{out}");
    assert!(namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty());
}

fn strict_stops_at_the_first_failure_and_check_does_not_send() {
    let t = TempDir::new("strict");
    let script = t.write(
        "s.pg",
        "kpktgend_0 add_device eth0\neth0 count x\neth0 flows 4\npgctrl start\n",
    );
    let s = script.to_str().unwrap();
    // --check: no lab, no root needed; flows without flowlen fails at start.
    let o = upktgen(&["script", "--lab", "--check", "-v", s]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(stdout(&o).contains("s.pg:1: kpktgend_0: OK: add_device=eth0"));
    assert!(err.contains("s.pg:2: eth0: ERROR: count"), "{err}");
    assert!(
        err.contains("s.pg:4: pgctrl: ERROR: start: eth0: flows is set but flowlen is 0"),
        "{err}"
    );
    let o = upktgen(&["script", "--lab", "--check", "--strict", s]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("line 2)") && !err.contains("s.pg:4"), "{err}");
    // A script that cannot be read, a bad option: a message and status 2.
    let o = upktgen(&["script", "/nonexistent/x.pg"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/x.pg"));
}

/// Writes the generated functions.sh into `dir`.
fn functions_sh(dir: &Path) {
    let o = upktgen(&["functions-sh"]);
    assert!(o.status.success());
    std::fs::write(dir.join("functions.sh"), &o.stdout).unwrap();
}

/// `bash SCRIPT ARGS` with the temporary directory for sessions under `dir`, in the
/// private lab (UPKTGEN_ARGS=--lab) unless `env` gives UPKTGEN_ARGS: a script that names
/// eth0 never sends on the host's eth0.
fn bash(dir: &Path, script: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = Command::new("bash");
    c.arg(script)
        .args(args)
        .env("TMPDIR", &tmp)
        .env("UPKTGEN_ARGS", "--lab");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// A script in the style of the kernel's samples: -i DEV -t THREADS -n COUNT, one device
/// per thread named DEV@N, a source address per thread, results read back from /proc.
const SAMPLE_STYLE: &str = r#"#!/bin/bash
source "$(dirname "$0")/functions.sh"
root_check_run_with_sudo "$@"
THREADS=1
COUNT=1000
while getopts "i:t:n:d:" o; do
    case $o in
        i) DEV=$OPTARG ;;
        t) THREADS=$OPTARG ;;
        n) COUNT=$OPTARG ;;
        d) DEST=$OPTARG ;;
        *) err 2 "usage" ;;
    esac
done
[ -n "$DEV" ] || err 2 "give -i DEV"
trap_exit
validate_addr ${DEST:=10.99.0.2/31}
read -r DST_MIN DST_MAX <<< "$(parse_addr "$DEST")"
validate_ports 9 9
pg_ctrl "reset"
for ((t = 0; t < THREADS; t++)); do
    dev=${DEV}@${t}
    pg_thread $t "rem_device_all"
    pg_thread $t "add_device" $dev
    pg_set $dev "flag QUEUE_MAP_CPU"
    pg_set $dev "count $COUNT"
    pg_set $dev "pkt_size 64"
    pg_set $dev "dst_mac 02:00:00:99:00:02"
    pg_set $dev "dst_min $DST_MIN"
    pg_set $dev "dst_max $DST_MAX"
    pg_set $dev "src_min 198.18.$((t + 1)).1"
    pg_set $dev "src_max 198.18.$((t + 1)).1"
done
trap true SIGINT
pg_ctrl "start"
for ((t = 0; t < THREADS; t++)); do
    echo "Device: ${DEV}@${t}"
    cat /proc/net/pktgen/${DEV}@${t} | grep -A2 "Result:"
done
cat /proc/net/pktgen/${DEV}@0 | grep "dst_min"
"#;

/// Each of the sample's devices eth0@0..n printed its Result line, with `sent` in it (`, N
/// (SIZEbyte,0frags)`).
fn assert_device_results(out: &str, n: u64, sent: &str) {
    for i in 0..n {
        let at = out
            .find(&format!("Device: eth0@{i}\nResult: OK: "))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(out[at..].contains(sent), "{out}");
    }
}

fn a_sample_style_script_runs_with_functions_sh() {
    if !root_or_skip() {
        return;
    }
    let t = TempDir::new("sample");
    functions_sh(&t.0);
    let script = t.write("sample.sh", SAMPLE_STYLE);
    let threads = cpus().min(2).to_string();
    let o = bash(
        &t.0,
        &script,
        &["-i", "eth0", "-t", &threads, "-n", "700"],
        &[],
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    let n: u64 = threads.parse().unwrap();
    assert!(
        out.contains(&format!("Delivered:   {} of {} sent", 700 * n, 700 * n)),
        "{out}"
    );
    assert_device_results(&out, n, ", 700 (64byte,0frags)\n  ");
    // parse_addr gave the /31's two addresses.
    assert!(
        out.contains("dst_min: 10.99.0.2  dst_max: 10.99.0.3"),
        "{out}"
    );
    // The session is gone.
    assert_eq!(std::fs::read_dir(t.0.join("tmp")).unwrap().count(), 0);
}

/// A script in the style of the kernel's receive-path benchmark
/// (pktgen_bench_xmit_mode_netif_receive.sh): bursts of 1024 injected into the device's
/// receive path, without timestamps, to a destination MAC given with -m (the kernel's sample
/// defaults to one that is not the device's, so that the stack drops the frames before IP).
const NETIF_RECEIVE_STYLE: &str = r#"#!/bin/bash
source "$(dirname "$0")/functions.sh"
THREADS=1
COUNT=1000
MAC=90:e2:ba:ff:ff:ff
while getopts "i:t:n:m:d:" o; do
    case $o in
        i) DEV=$OPTARG ;;
        t) THREADS=$OPTARG ;;
        n) COUNT=$OPTARG ;;
        m) MAC=$OPTARG ;;
        d) DEST=$OPTARG ;;
        *) err 2 "usage" ;;
    esac
done
validate_addr ${DEST:=198.18.0.42}
read -r DST_MIN DST_MAX <<< "$(parse_addr "$DEST")"
pg_ctrl "reset"
for ((t = 0; t < THREADS; t++)); do
    dev=${DEV}@${t}
    pg_thread $t "rem_device_all"
    pg_thread $t "add_device" $dev
    pg_set $dev "flag QUEUE_MAP_CPU"
    pg_set $dev "count $COUNT"
    pg_set $dev "pkt_size 60"
    pg_set $dev "delay 0"
    pg_set $dev "flag NO_TIMESTAMP"
    pg_set $dev "dst_mac $MAC"
    pg_set $dev "dst_min $DST_MIN"
    pg_set $dev "dst_max $DST_MAX"
    pg_set $dev "xmit_mode netif_receive"
    pg_set $dev "burst 1024"
done
trap true SIGINT
pg_ctrl "start"
for ((t = 0; t < THREADS; t++)); do
    echo "Device: ${DEV}@${t}"
    cat /proc/net/pktgen/${DEV}@${t} | grep -A2 "Result:"
done
cat /proc/net/pktgen/${DEV}@0 | grep "xmit_mode"
"#;

/// The receive-path benchmark's steps run through functions.sh in the lab: the frames enter
/// veth-rx (the script's eth0 stands for it), the stack takes them when -m gives veth-rx's
/// MAC (none listens: NoPorts), and drops them before IP with the script's default MAC.
/// (Before: `xmit_mode netif_receive` stopped the script.)
fn a_receive_path_benchmark_script_runs_with_functions_sh() {
    if !live_frames_or_skip() {
        return;
    }
    let t = TempDir::new("netif");
    functions_sh(&t.0);
    let script = t.write("netif.sh", NETIF_RECEIVE_STYLE);
    let threads = cpus().min(2).to_string();
    let n: u64 = threads.parse().unwrap();
    let mac = lab::RX_MAC.to_string();
    let ip = lab::RX_IP.to_string();
    let o = bash(
        &t.0,
        &script,
        &[
            "-i", "eth0", "-t", &threads, "-n", "5000", "-m", &mac, "-d", &ip,
        ],
        &[],
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert_device_results(&out, n, ", 5000 (60byte,0frags)\n  ");
    assert!(
        out.contains(&format!(
            "Receive path: {} frames passed into veth-rx's receive path",
            5000 * n
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("NoPorts {}, InErrors 0", 5000 * n)),
        "{out}"
    );
    assert!(
        out.contains("stands for veth-rx, the private lab's receiving interface")
            || out.contains("stand for veth-rx, the private lab's receiving interface"),
        "{out}"
    );
    assert!(out.contains("     xmit_mode: netif_receive\n"), "{out}");

    // The script's own MAC is not veth-rx's: dropped before IP, and said so.
    let o = bash(&t.0, &script, &["-i", "eth0", "-n", "2000"], &[]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains("IP:         InReceives 0,"), "{out}");
    assert!(
        out.contains("is not veth-rx's (02:00:00:99:00:02)"),
        "{out}"
    );
    assert_eq!(std::fs::read_dir(t.0.join("tmp")).unwrap().count(), 0);
}

fn functions_sh_stops_at_an_error_like_a_failed_write() {
    let t = TempDir::new("error");
    functions_sh(&t.0);
    let script = t.write(
        "bad.sh",
        "source \"$(dirname \"$0\")/functions.sh\"\n\
         pg_thread 0 add_device eth0\n\
         pg_set eth0 \"count 10\"\n\
         pg_set eth0 \"bogus 1\"\n\
         echo not reached\n",
    );
    let o = bash(&t.0, &script, &[], &[]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(5), "{out}\n{err}");
    assert!(
        err.contains("Result: ERROR: No such parameter \"bogus\""),
        "{err}"
    );
    assert!(!out.contains("not reached"));
    // A device never added: the kernel's file does not exist.
    let script = t.write(
        "missing.sh",
        "source \"$(dirname \"$0\")/functions.sh\"\npg_set eth7 \"count 10\"\n",
    );
    let o = bash(&t.0, &script, &[], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("/proc/net/pktgen/eth7 does not exist"));
    // Helpers: addresses, ports, the old pgset (an error there does not stop the script).
    let script = t.write(
        "helpers.sh",
        "source \"$(dirname \"$0\")/functions.sh\"\n\
         parse_addr 198.18.0.0/15\n\
         parse_addr6 fd00::1:2/112\n\
         extend_addr6 fe80::42:1\n\
         parse_ports 1000-1010\n\
         parse_ports 53\n\
         pg_thread 0 add_device eth0\n\
         PGDEV=/proc/net/pktgen/eth0\n\
         pgset \"count 12\"\n\
         pgset \"nonsense\"\n\
         cat /proc/net/pktgen/eth0 | grep -E '^Params|^Result'\n\
         cat /proc/net/pktgen/kpktgend_0\n\
         (validate_ports 10 5) || echo bad ports\n\
         (validate_addr 1.2.3.256) || echo bad address\n\
         (validate_addr6 fd00::1::2) || echo bad address6\n",
    );
    let o = bash(&t.0, &script, &[], &[]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    for want in [
        "198.18.0.0 198.19.255.255\n",
        "fd00:0:0:0:0:0:1:0 fd00:0:0:0:0:0:1:ffff\n",
        "fe80:0:0:0:0:0:42:1\n",
        "1000 1010\n",
        "53 53\n",
        "Params: count 12  ",
        "Result: ERROR: No such parameter \"nonsense\"\n",
        "Stopped: eth0 \nResult: OK: add_device=eth0\n",
        "bad ports\n",
        "bad address\n",
        "bad address6\n",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    assert_eq!(std::fs::read_dir(t.0.join("tmp")).unwrap().count(), 0);
}

fn a_kept_session_lets_a_later_script_append_and_start() {
    if !root_or_skip() {
        return;
    }
    let t = TempDir::new("append");
    functions_sh(&t.0);
    let state = t.0.join("state");
    let state_s = state.to_str().unwrap();
    let setup = t.write(
        "setup.sh",
        "source \"$(dirname \"$0\")/functions.sh\"\n\
         pg_ctrl reset\n\
         pg_thread 0 add_device eth0@a\n\
         pg_set eth0@a \"count 250\"\n",
    );
    let o = bash(&t.0, &setup, &[], &[("UPKTGEN_STATE", state_s)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let go = t.write(
        "go.sh",
        "source \"$(dirname \"$0\")/functions.sh\"\n\
         pg_set eth0@a \"pkt_size 100\"\n\
         pg_ctrl start\n\
         cat /proc/net/pktgen/eth0@a\n",
    );
    let o = bash(
        &t.0,
        &go,
        &[],
        &[
            ("UPKTGEN_STATE", state_s),
            ("UPKTGEN_ARGS", "--lab --backend tx_ring"),
        ],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains("Backend:     tx_ring"), "{out}");
    assert!(out.contains("pkts-sofar: 250  errors: 0"), "{out}");
    assert!(out.contains(", 250 (100byte,0frags)"), "{out}");
    // The kept session still holds the device with the run's Current and Result.
    let kept = std::fs::read_to_string(state.join("proc/eth0@a")).unwrap();
    assert!(kept.contains("pkts-sofar: 250"), "{kept}");
    // A later command answers in Result and leaves the run's Current as it was.
    let more = t.write(
        "more.sh",
        "source \"$(dirname \"$0\")/functions.sh\"\n\
         pg_set eth0@a \"count 5\"\n\
         cat /proc/net/pktgen/eth0@a\n",
    );
    let o = bash(&t.0, &more, &[], &[("UPKTGEN_STATE", state_s)]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.starts_with("Params: count 5  "), "{out}");
    assert!(out.contains("pkts-sofar: 250  errors: 0"), "{out}");
    assert!(out.ends_with("Result: OK: count=5\n"), "{out}");
}

fn real_devices_in_the_current_namespace() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Drop).unwrap();
    let t = TempDir::new("real");
    let script = t.write(
        "real.pg",
        &format!(
            "kpktgend_0 add_device {tx}\n\
             {tx} count 400\n\
             {tx} dst {ip}\n\
             pgctrl start\n\
             kpktgend_0 add_device nosuch0\n",
            tx = lab::TX_IF,
            ip = lab::RX_IP
        ),
    );
    // Without dst_mac: refused at start (every receiver would drop the frames).
    let o = in_ns(&lab.tx_ns, &["script", "--real", script.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("dst_mac is 00:00:00:00:00:00"),
        "{}",
        stderr(&o)
    );
    let script = t.write(
        "real2.pg",
        &format!(
            "kpktgend_0 add_device {tx}\n\
             {tx} count 400\n\
             {tx} dst {ip}\n\
             {tx} dst_mac {mac}\n\
             pgctrl start\n\
             kpktgend_0 add_device nosuch0\n",
            tx = lab::TX_IF,
            ip = lab::RX_IP,
            mac = lab::RX_MAC
        ),
    );
    let before = rx_packets_in(&lab.rx_ns, lab::RX_IF).unwrap();
    let o = in_ns(&lab.tx_ns, &["script", "--real", script.to_str().unwrap()]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains("Backend:     af_packet on veth-tx\n")
            || out.contains("Backend:     af_packet on veth-tx "),
        "{out}"
    );
    assert!(err.contains("ERROR: can not add device nosuch0"), "{err}");
    let after = rx_packets_in(&lab.rx_ns, lab::RX_IF).unwrap();
    assert_eq!(after - before, 400);
}

fn ctrl_c_stops_a_start_and_the_script_goes_on_to_read_the_results() {
    if !root_or_skip() {
        return;
    }
    let t = TempDir::new("sigint");
    let script = t.write(
        "forever.pg",
        "kpktgend_0 add_device eth0\neth0 count 0\npgctrl start\nshow eth0\n",
    );
    let out = interrupt_lab_run(&["script", "--lab", "--no-live", script.to_str().unwrap()]);
    let dev = device_text(&out, "veth-tx");
    assert!(!dev.contains("pkts-sofar: 0 "), "{dev}");
    assert!(dev.contains("\nResult: OK: "), "{dev}");
}

/// The ring thresholds, the product's own knob, reach a script's start (before, `script`
/// had no --stop-thresh/--start-thresh and its ring always woke at half).
fn a_script_run_honours_the_ring_thresholds() {
    if !root_or_skip() {
        return;
    }
    let t = TempDir::new("thresh");
    let script = t.write(
        "ring.pg",
        "pgctrl reset\nkpktgend_0 add_device eth0\neth0 count 200\npgctrl start\n",
    );
    let o = upktgen(&[
        "script",
        "--lab",
        "--backend",
        "tx_ring",
        "--ring",
        "64",
        "--stop-thresh",
        "2",
        "--start-thresh",
        "7",
        "--json",
        "--no-live",
        script.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["backend"]["name"], "tx_ring", "{j}");
    let queue = j["backend"]["queue"].as_str().unwrap();
    assert!(
        queue.contains("ring of 64 frames; stop when fewer than 2 free, wake when at least 7 free"),
        "{queue}"
    );
    assert_eq!(j["outcome"]["result"]["sent"], 200);
    // A threshold the backend has no ring for is refused at start, as run refuses it; and
    // --check refuses it too, without privileges or a lab.
    for check in [&[][..], &["--check"]] {
        let mut a = vec!["script", "--lab"];
        a.extend_from_slice(check);
        a.extend(["--start-thresh", "7", script.to_str().unwrap()]);
        let o = upktgen(&a);
        assert!(!o.status.success(), "{check:?}");
        assert!(
            stderr(&o).contains("--ring/--stop-thresh/--start-thresh apply to the ring backends"),
            "{check:?}: {}",
            stderr(&o)
        );
    }
}

/// --check refuses what start would refuse before sending: 10,000 devices are more senders
/// than the lab's veth has queues; a frame above the MTU. Its verbose answer names what only
/// a start checks.
fn check_refuses_what_start_would_refuse() {
    let t = TempDir::new("check-start");
    let mut text = String::from("pgctrl reset\n");
    for i in 0..10_000 {
        text += &format!("kpktgend_0 add_device eth0@{i}\neth0@{i} count 10\n");
    }
    text += "pgctrl start\n";
    let big = t.write("big.pg", &text);
    let o = upktgen(&["script", "--lab", "--check", big.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("big.pg:20002: pgctrl: ERROR: start: 10000 senders")
            && err.contains("at most 4096"),
        "{err}"
    );
    let mtu = t.write(
        "mtu.pg",
        "kpktgend_0 add_device eth0\neth0 pkt_size 9000\npgctrl start\n",
    );
    let o = upktgen(&["script", "--lab", "--check", mtu.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("do not fit veth-tx: 1500 MTU"),
        "{}",
        stderr(&o)
    );
    let ok = t.write("ok.pg", "kpktgend_0 add_device eth0\npgctrl start\n");
    let o = upktgen(&["script", "--lab", "--check", "-v", ok.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .contains("OK: start (checked without sending; only a start checks the privileges"),
        "{}",
        stdout(&o)
    );
}

/// parse_addr, parse_addr6 and in_between validate before any arithmetic: a value such as
/// `a[$(touch FILE)]`, which bash arithmetic would execute, is refused with a message and
/// runs nothing; valid values still give the kernel's answers.
fn functions_sh_does_not_evaluate_values() {
    let t = TempDir::new("fsh-eval");
    functions_sh(&t.0);
    let x = t.0.join("x");
    // Run from the test's directory: the payload's file name has no '/' to split on.
    let xs = "x";
    let hostile = [
        (
            format!("parse_addr \"1.2.3.4/a[\\$(touch {xs})]\""),
            "Invalid prefix",
        ),
        (
            format!("parse_addr \"a[\\$(touch {xs})].2.3.4\""),
            "Invalid IP address",
        ),
        (
            format!("parse_addr6 \"fd00::1/a[\\$(touch {xs})]\""),
            "Invalid prefix",
        ),
        (
            format!("parse_addr6 \"a[\\$(touch {xs})]::1\""),
            "Invalid IP6 address",
        ),
        (
            format!("in_between \"a[\\$(touch {xs})]\" 1 2"),
            "not a whole number",
        ),
        (
            format!("in_between 1 \"a[\\$(touch {xs})]\" 2"),
            "not a whole number",
        ),
        (
            format!("in_between 1 0 \"a[\\$(touch {xs})]\""),
            "not a whole number",
        ),
    ];
    for (call, msg) in &hostile {
        let s = t.write(
            "hostile.sh",
            &format!("cd \"$(dirname \"$0\")\"\nsource ./functions.sh\n{call}\necho reached\n"),
        );
        let o = bash(&t.0, &s, &[], &[]);
        let err = stderr(&o);
        assert!(!x.exists(), "{call}: the payload ran");
        assert_eq!(o.status.code(), Some(5), "{call}: {err}");
        assert!(err.contains(msg), "{call}: {err}");
        assert!(!stdout(&o).contains("reached"), "{call}");
    }
    let s = t.write(
        "valid.sh",
        "source \"$(dirname \"$0\")/functions.sh\"\n\
         parse_addr 198.18.0.1/24\nparse_addr 10.0.0.7\nparse_addr 10.1.2.3/08\n\
         parse_addr6 fd00::1/120\nparse_addr6 fd00::1\n\
         in_between 5 1 10 && echo in\nin_between 11 1 10 || echo out\nin_between 08 1 10 && echo in\n",
    );
    let o = bash(&t.0, &s, &[], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "198.18.0.0 198.18.0.255\n10.0.0.7 10.0.0.7\n10.0.0.0 10.255.255.255\n\
         fd00:0:0:0:0:0:0:0 fd00:0:0:0:0:0:0:ff\nfd00:0:0:0:0:0:0:1 fd00:0:0:0:0:0:0:1\n\
         in\nout\nin\n"
    );
}

// ---- The devices a script names are the interfaces of the current network namespace ----

/// Two network namespaces made by the test, joined by a veth pair: `veth-a` (up) in `a`, its
/// peer `veth-b` (up) in `b`, without addresses or IPv6. Scripts run inside `a`
/// (`ip netns exec`), whose only interfaces are lo and veth-a. Removed when dropped.
struct VethPair {
    a: String,
    b: String,
}

impl VethPair {
    fn new(tag: &str) -> VethPair {
        let id = std::process::id();
        let p = VethPair {
            a: format!("upkt-e2e-dev-{id}-{tag}-a"),
            b: format!("upkt-e2e-dev-{id}-{tag}-b"),
        };
        let ip = |args: &[&str]| {
            let st = Command::new("ip").args(args).status().unwrap();
            assert!(st.success(), "ip {args:?}");
        };
        for ns in [&p.a, &p.b] {
            ip(&["netns", "add", ns]);
            // No IPv6: its neighbour discovery would add frames to veth-b's count.
            ip(&[
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ]);
        }
        ip(&[
            "link", "add", "veth-a", "netns", &p.a, "type", "veth", "peer", "name", "veth-b",
            "netns", &p.b,
        ]);
        // No addresses: nothing of the kernel's own (ARP, IGMP) goes out on veth-a.
        for (ns, dev) in [(&p.a, "veth-a"), (&p.b, "veth-b")] {
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        // Whatever the links sent on coming up has arrived before a test counts.
        let mut last = p.rx_b();
        let t0 = std::time::Instant::now();
        loop {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let now = p.rx_b();
            if now == last || t0.elapsed() > std::time::Duration::from_secs(5) {
                break;
            }
            last = now;
        }
        p
    }

    /// veth-b's MAC address.
    fn mac_b(&self) -> String {
        let o = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.b,
                "cat",
                "/sys/class/net/veth-b/address",
            ])
            .output()
            .unwrap();
        stdout(&o).trim().to_string()
    }

    /// Frames veth-b has received.
    fn rx_b(&self) -> u64 {
        rx_packets_in(&self.b, "veth-b").unwrap()
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// The first JSON document of standard output (a start's report; the files shown follow it).
fn first_json(o: &Output) -> serde_json::Value {
    let text = stdout(o);
    serde_json::Deserializer::from_str(&text)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no JSON in {text}"))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A script for veth-a: 300 frames to veth-b, then its file.
fn veth_a_script(t: &TempDir, mac_b: &str) -> PathBuf {
    t.write(
        "veth.pg",
        &format!(
            "pgctrl reset\n\
             kpktgend_0 add_device veth-a\n\
             veth-a count 300\n\
             veth-a src_min 10.77.0.1\n\
             veth-a dst 10.77.0.2\n\
             veth-a dst_mac {mac_b}\n\
             pgctrl start\n\
             show veth-a\n"
        ),
    )
}

/// A device the script names that exists in the current namespace is the device used: the
/// frames reach its peer, the report and the device's file name it, standard error says so
/// once. (Before: the script ran in a private lab, veth-b counted nothing, and the file still
/// said `ifname: veth-a`.)
fn a_named_device_that_exists_is_the_device_used() {
    if !root_or_skip() {
        return;
    }
    let v = VethPair::new("used");
    let t = TempDir::new("dev-used");
    let script = veth_a_script(&t, &v.mac_b());
    let s = script.to_str().unwrap();
    let before = v.rx_b();
    let o = in_ns(&v.a, &["script", "--no-live", s]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(v.rx_b() - before, 300, "{out}\n{err}");
    let said = "upktgen: sending on veth-a (an existing interface): --lab sends in a private lab instead\n";
    assert_eq!(err.matches(said).count(), 1, "{err}");
    assert!(out.contains(" on veth-a ("), "{out}");
    assert!(
        !out.contains("netns upktgen-") && !out.contains("veth-tx"),
        "{out}"
    );
    assert!(!out.contains("Lab:"), "{out}");
    let d = device_text(&out, "veth-a");
    assert!(d.contains("pkts-sofar: 300  errors: 0"), "{d}");
    assert!(d.contains(", 300 (60byte,0frags)"), "{d}");
    // --check says where a start would send, and sends nothing.
    let before = v.rx_b();
    let o = in_ns(&v.a, &["script", "--check", s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "upktgen: a start would send on veth-a (an existing interface): --lab sends in a private lab instead\n"
        ),
        "{}",
        stderr(&o)
    );
    assert_eq!(v.rx_b(), before);
    // The JSON report names it too; --real, the old spelling of the default, is accepted.
    let before = v.rx_b();
    let o = in_ns(&v.a, &["script", "--real", "--json", "--no-live", s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v.rx_b() - before, 300);
    let j = first_json(&o);
    assert_eq!(j["target"]["device"], "veth-a", "{j}");
    assert!(j["target"]["netns"].is_null(), "{j}");
    assert!(j["target"].get("stands_for").is_none(), "{j}");
}

/// --lab runs the same script in the private lab: nothing reaches veth-b, and the report and
/// the device's file name the lab's interface and say which name stands for it. (Before:
/// the report named veth-a's senders and the file said `ifname: veth-a`.)
fn lab_names_the_labs_interface() {
    if !root_or_skip() {
        return;
    }
    let v = VethPair::new("lab");
    let t = TempDir::new("dev-lab");
    let script = veth_a_script(&t, &v.mac_b());
    let s = script.to_str().unwrap();
    let before = v.rx_b();
    let o = in_ns(&v.a, &["script", "--lab", "--no-live", s]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(v.rx_b(), before, "the lab sent on veth-a");
    assert!(!err.contains("sending on"), "{err}");
    assert!(
        out.contains("Backend:     ") && out.contains(" on veth-tx in netns upktgen-"),
        "{out}"
    );
    assert!(
        out.contains(
            "Lab:         the script's veth-a stands for veth-tx, the private lab's sending interface (--lab)\n"
        ),
        "{out}"
    );
    let d = device_text(&out, "veth-tx");
    assert!(
        d.contains(
            "     lab: veth-a stands for veth-tx, the private lab's sending interface (--lab)\n"
        ),
        "{d}"
    );
    assert!(!d.contains("ifname: veth-a"), "{d}");
    assert!(d.contains(", 300 (60byte,0frags)"), "{d}");
    let o = in_ns(&v.a, &["script", "--lab", "--json", "--no-live", s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = first_json(&o);
    assert_eq!(j["target"]["device"], "veth-tx", "{j}");
    assert_eq!(
        j["target"]["stands_for"],
        serde_json::json!(["veth-a"]),
        "{j}"
    );
}

/// A device that does not exist in the current namespace gets the kernel's answer to
/// `add_device`: `ERROR: can not add device NAME` in the thread's Result, the command fails
/// (the kernel's write fails with ENODEV and logs "no such netdevice") and nothing is sent;
/// with --lab the name may be added. (Before: it was added and sent in a lab.)
fn a_device_that_does_not_exist_gets_the_kernels_error() {
    if !root_or_skip() {
        return;
    }
    let v = VethPair::new("nodev");
    let t = TempDir::new("dev-missing");
    let script = t.write(
        "missing.pg",
        "kpktgend_0 add_device nosuchdev\n\
         nosuchdev count 10\n\
         pgctrl start\n\
         show kpktgend_0\n",
    );
    let s = script.to_str().unwrap();
    let before = v.rx_b();
    let o = in_ns(&v.a, &["script", "--no-live", s]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("missing.pg:1: kpktgend_0: ERROR: can not add device nosuchdev\n"),
        "{err}"
    );
    assert!(
        err.contains("upktgen: no such netdevice: \"nosuchdev\" in this network namespace"),
        "{err}"
    );
    assert!(err.contains("ERROR: start: no device added"), "{err}");
    assert!(
        out.contains("Stopped: \nResult: ERROR: can not add device nosuchdev\n"),
        "{out}"
    );
    assert!(!out.contains("Result: OK:"), "{out}");
    assert_eq!(v.rx_b(), before);
    // --check answers the same without privileges.
    let o = in_ns(&v.a, &["script", "--check", s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("ERROR: can not add device nosuchdev"));
    // In the lab any name stands for the lab's interface.
    let o = in_ns(&v.a, &["script", "--lab", "--no-live", s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(", 10 (60byte,0frags)"),
        "{}",
        stdout(&o)
    );
    assert_eq!(v.rx_b(), before);
    // The kernel's other refusals at add_device: neither an Ethernet nor a loopback device
    // (a tun device), a device down; a loopback device is taken.
    let other = t.write(
        "other.pg",
        "kpktgend_0 add_device tun0\nkpktgend_0 add_device veth-a@1\nkpktgend_0 add_device lo\n",
    );
    for args in [
        &["-n", &v.a, "tuntap", "add", "mode", "tun", "name", "tun0"][..],
        &["-n", &v.a, "link", "set", "tun0", "up"],
        &["-n", &v.a, "link", "set", "veth-a", "down"],
    ] {
        let st = Command::new("ip").args(args).status().unwrap();
        assert!(st.success(), "ip {args:?}");
    }
    let o = in_ns(
        &v.a,
        &["script", "--check", "--verbose", other.to_str().unwrap()],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "ERROR: can not add device tun0\nupktgen: not an ethernet or loopback device: \"tun0\"\n"
        ),
        "{err}"
    );
    assert!(
        stdout(&o).contains("other.pg:3: kpktgend_0: OK: add_device=lo\n"),
        "{}",
        stdout(&o)
    );
    assert!(
        err.contains("ERROR: can not add device veth-a@1\nupktgen: device is down: \"veth-a\""),
        "{err}"
    );
}

/// A sample-style script through functions.sh, `-i veth-a`, run inside the test's namespace.
const SHIM_VETH: &str = r#"source "$(dirname "$0")/functions.sh"
pg_ctrl reset
pg_thread 0 rem_device_all
pg_thread 0 add_device "$1"
pg_set "$1" "count 200"
pg_set "$1" "src_min 10.77.0.1"
pg_set "$1" "dst 10.77.0.2"
pg_set "$1" "dst_mac $2"
pg_ctrl start
cat /proc/net/pktgen/"$1"
"#;

/// `bash SCRIPT ARGS` inside namespace `ns` with UPKTGEN_ARGS set to `args`.
fn bash_in(ns: &str, dir: &Path, script: &Path, args: &[&str], upktgen_args: &str) -> Output {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    Command::new("ip")
        .args(["netns", "exec", ns, "bash"])
        .arg(script)
        .args(args)
        .env("TMPDIR", &tmp)
        .env("UPKTGEN_ARGS", upktgen_args)
        .output()
        .unwrap()
}

/// functions.sh: `-i veth-a` sends on veth-a and `cat /proc/net/pktgen/veth-a@0` names it;
/// UPKTGEN_ARGS=--lab runs in the lab and the file names veth-tx@0; a device that does not
/// exist stops the script with the kernel's Result. (Before: all three ran in a lab, and the
/// file said `ifname: veth-a@0`.)
fn functions_sh_uses_the_named_device_or_the_lab_through_upktgen_args() {
    if !root_or_skip() {
        return;
    }
    let v = VethPair::new("shim");
    let t = TempDir::new("dev-shim");
    functions_sh(&t.0);
    let script = t.write("shim.sh", SHIM_VETH);
    let mac = v.mac_b();
    let before = v.rx_b();
    let o = bash_in(&v.a, &t.0, &script, &["veth-a@0", &mac], "--no-live");
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(v.rx_b() - before, 200, "{out}\n{err}");
    assert_eq!(
        err.matches("upktgen: sending on veth-a (an existing interface)")
            .count(),
        1,
        "{err}"
    );
    assert!(out.contains("ifname: veth-a@0\n"), "{out}");
    assert!(out.contains(", 200 (60byte,0frags)"), "{out}");
    // UPKTGEN_ARGS=--lab: the lab.
    let before = v.rx_b();
    let o = bash_in(&v.a, &t.0, &script, &["veth-a@0", &mac], "--lab --no-live");
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(v.rx_b(), before);
    assert!(
        out.contains("ifname: veth-tx@0\n     lab: veth-a@0 stands for veth-tx@0"),
        "{out}"
    );
    assert!(
        out.contains("Lab:         the script's veth-a@0 stands for veth-tx"),
        "{out}"
    );
    assert!(out.contains(", 200 (60byte,0frags)"), "{out}");
    // A device that does not exist: the kernel's Result, and the script stops (exit 5, as the
    // kernel's functions.sh stops at a failed write).
    let o = bash_in(&v.a, &t.0, &script, &["nosuch0@0", &mac], "");
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(5), "{out}\n{err}");
    assert!(
        err.contains("Result: ERROR: can not add device nosuch0@0\n"),
        "{err}"
    );
    assert!(!out.contains("Result: OK:"), "{out}");
    assert_eq!(v.rx_b(), before);
    assert_eq!(std::fs::read_dir(t.0.join("tmp")).unwrap().count(), 0);
}

// ---- A kpktgend thread's devices on one interface: one sender, one timeline ----

/// Captures what `veth-b` receives (dumpcap, pcap format) while `f` runs; returns `f`'s
/// value and the frames in the order they arrived.
fn captured_at_b<T>(v: &VethPair, t: &TempDir, f: impl FnOnce() -> T) -> (T, Vec<Vec<u8>>) {
    let cap = t.0.join("b.pcap");
    let out = capture_while(&v.b, "veth-b", &cap, &["-P"], f);
    let p = upktgen::pcap::read_file(&cap).unwrap();
    (out, p.records.into_iter().map(|r| r.data).collect())
}

/// Issue 23's two-device script: veth-a@0 (60-byte frames to UDP port 1001 at 2,000 pps)
/// and veth-a@1 (300-byte frames to port 2001 at 6,000 pps) on kpktgend_0 are one sender:
/// the report says one sender thread, each device's file and Result its own frames, the
/// combined Result each frame's real bytes, and the capture at the far end interleaves them
/// as their rates say (never two of veth-a@0's in a row, never more than four of
/// veth-a@1's: three a tick of veth-a@0, one more where its 166,666 ns delay rounds).
fn a_threads_devices_share_one_timeline() {
    use crate::harness::tool_or_skip;
    if !root_or_skip() || !tool_or_skip("dumpcap", "apt-get install tshark") {
        return;
    }
    let v = VethPair::new("tl");
    let t = TempDir::new("timeline");
    let mac = v.mac_b();
    let dev = |d: &str, count: u32, ratep: u32, size: u32, port: u32| {
        format!(
            "kpktgend_0 add_device {d}\n\
             {d} count {count}\n\
             {d} ratep {ratep}\n\
             {d} pkt_size {size}\n\
             {d} src_min 10.77.0.1\n\
             {d} dst 10.77.0.2\n\
             {d} dst_mac {mac}\n\
             {d} udp_dst_min {port}\n\
             {d} udp_dst_max {port}\n"
        )
    };
    let script = t.write(
        "two.pg",
        &format!(
            "pgctrl reset\n{}{}pgctrl start\nshow veth-a@0\nshow veth-a@1\n",
            dev("veth-a@0", 200, 2000, 60, 1001),
            dev("veth-a@1", 600, 6000, 300, 2001)
        ),
    );
    let s = script.to_str().unwrap();
    let before = v.rx_b();
    let (o, frames) = captured_at_b(&v, &t, || in_ns(&v.a, &["script", "--no-live", s]));
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(v.rx_b() - before, 800, "{out}");
    assert!(
        out.contains("Senders:     2 devices on 1 sender thread (a kpktgend thread's devices on one interface: one timeline)"),
        "{out}"
    );
    assert!(
        out.contains("  veth-a@0 on CPU 0 (sender 0's timeline): Result: OK: "),
        "{out}"
    );
    // Each device's file: its own frames and Result.
    let d0 = device_text(&out, "veth-a@0");
    assert!(d0.contains("pkts-sofar: 200  errors: 0"), "{d0}");
    assert!(d0.contains("seq_num: 201  "), "{d0}");
    assert!(d0.contains(", 200 (60byte,0frags)"), "{d0}");
    let d1 = device_text(&out, "veth-a@1");
    assert!(d1.contains("pkts-sofar: 600  errors: 0"), "{d1}");
    assert!(d1.contains(", 600 (300byte,0frags)"), "{d1}");
    // The combined Result: 800 frames of 60..300 bytes, bps from their real bytes
    // (200 x 60 + 600 x 300 = 192,000), not 800 x one size.
    let res = out
        .lines()
        .position(|l| l.starts_with("Result: OK: "))
        .map(|i| out.lines().skip(i).take(2).collect::<Vec<_>>())
        .unwrap();
    assert!(
        res[0].ends_with(" usec, 800 (60..300byte,0frags)"),
        "{res:?}"
    );
    let elapsed_us: f64 = res[0]["Result: OK: ".len()..]
        .split('(')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let bps: f64 = res[1]
        .split('(')
        .nth(1)
        .unwrap()
        .split("bps")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let bytes = bps * elapsed_us / 8e6;
    assert!((bytes - 192_000.0).abs() < 192.0, "{bytes} bytes: {res:?}");
    // The capture: each device's frames, the two interleaved as their rates say.
    let ours: Vec<(usize, u16)> = frames
        .iter()
        .filter(|f| f.len() >= 38 && f[12..14] == [0x08, 0x00] && f[23] == 17)
        .map(|f| (f.len(), u16::from_be_bytes([f[36], f[37]])))
        .collect();
    assert_eq!(ours.iter().filter(|&&f| f == (60, 1001)).count(), 200);
    assert_eq!(ours.iter().filter(|&&f| f == (300, 2001)).count(), 600);
    assert_eq!(ours.len(), 800, "only the two devices' frames");
    let mut longest = [0usize; 2];
    let mut run = (0usize, 0usize);
    for &(len, _) in &ours {
        let d = usize::from(len == 300);
        run = if run.0 == d { (d, run.1 + 1) } else { (d, 1) };
        longest[d] = longest[d].max(run.1);
    }
    assert_eq!(longest[0], 1, "veth-a@0 twice in a row");
    assert!(longest[1] <= 4, "{} of veth-a@1's in a row", longest[1]);
    // The JSON: each device's frames; the combined Result's real bytes.
    let o = in_ns(&v.a, &["script", "--json", "--no-live", s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = first_json(&o);
    let r = &j["outcome"]["result"];
    assert_eq!(
        (r["sent"].as_u64(), r["imix_bytes"].as_u64()),
        (Some(800), Some(192_000)),
        "{r}"
    );
    let th = j["threads"].as_array().unwrap();
    assert_eq!(th.len(), 2, "{j}");
    for (t, (dev, sent, size)) in th
        .iter()
        .zip([("veth-a@0", 200, 60), ("veth-a@1", 600, 300)])
    {
        assert_eq!(t["device"], dev, "{t}");
        assert_eq!(t["outcome"]["result"]["sent"], sent, "{t}");
        assert_eq!(t["outcome"]["result"]["pkt_size"], size, "{t}");
    }
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    a_script_runs_every_device_at_once_and_shows_the_kernels_files,
    strict_stops_at_the_first_failure_and_check_does_not_send,
    a_sample_style_script_runs_with_functions_sh,
    a_receive_path_benchmark_script_runs_with_functions_sh,
    functions_sh_stops_at_an_error_like_a_failed_write,
    a_kept_session_lets_a_later_script_append_and_start,
    real_devices_in_the_current_namespace,
    ctrl_c_stops_a_start_and_the_script_goes_on_to_read_the_results,
    a_script_run_honours_the_ring_thresholds,
    check_refuses_what_start_would_refuse,
    functions_sh_does_not_evaluate_values,
    a_named_device_that_exists_is_the_device_used,
    lab_names_the_labs_interface,
    a_device_that_does_not_exist_gets_the_kernels_error,
    functions_sh_uses_the_named_device_or_the_lab_through_upktgen_args,
    a_threads_devices_share_one_timeline,
];
