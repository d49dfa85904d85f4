//! End-to-end: `--dev` on an interface of a lab the test made, and bad input.

use crate::common::*;
use std::process::Command;
use upktgen::lab::{self, Lab, RxMode};

fn dev_mode_sends_on_a_named_interface() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Drop).unwrap();
    let o = dev_run(&lab, &["--count", "3000", "--flag", "UDPCSUM", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["outcome"]["result"]["sent"], 3000);
    assert_eq!(j["reconciliation"]["tx_packets"], 3000);
    assert!(
        j["reconciliation"]["rx_packets"].is_null(),
        "the far end is not upktgen's in --dev mode"
    );
    assert_eq!(
        j["addressing"]["src_ip"], "10.99.0.1",
        "source defaults to the interface's address"
    );
    assert_eq!(j["addressing"]["src_mac"], lab::TX_MAC.to_string());
    assert_eq!(j["flags"]["udp_csum"], true);
}

fn fails_with(o: &std::process::Output, needle: &str) {
    assert!(!o.status.success(), "should fail ({needle}): {}", stdout(o));
    let e = stderr(o);
    let first = e.lines().next().unwrap_or("");
    // One line says it all: the option, the value and what is accepted.
    assert!(
        first.contains(needle),
        "expected '{needle}' in the first line of: {e}"
    );
    assert!(!e.contains("panicked"), "{e}");
}

fn bad_input_gets_one_clear_line() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Drop).unwrap();
    let m = lab::RX_MAC.to_string();
    let dev = |extra: &[&str]| {
        let mut a = vec!["--count", "10"];
        a.extend_from_slice(extra);
        dev_run(&lab, &a)
    };
    fails_with(
        &in_ns(
            &lab.tx_ns,
            &[
                "run",
                "--dev",
                "nosuch0",
                "--dst",
                "10.0.0.1",
                "--dst-mac",
                &m,
            ],
        ),
        "--dev nosuch0: no such interface",
    );
    fails_with(
        &dev(&["--pkt-size", "1515"]),
        "frames of up to 1515 bytes (pkt_size/max_pkt_size/imix_weights, with headers) do not fit veth-tx: 1500 MTU",
    );
    fails_with(
        &dev(&["--min-pkt-size", "60", "--max-pkt-size", "1600"]),
        "do not fit veth-tx",
    );
    fails_with(
        &dev(&["--vlan-id", "5", "--vlan-p", "9"]),
        "--vlan-p 9: vlan_p must be 0-7",
    );
    fails_with(&dev(&["--ratep", "0"]), "--ratep 0");
    fails_with(
        &dev(&["--flag", "IPV6"]),
        "IPV6 is set but no IPv6 destination",
    );
    fails_with(
        &dev(&["--dst6", "fd00::2", "--flag", "!IPV6"]),
        "IPv6 addresses are set but the IPV6 flag was cleared",
    );
    fails_with(
        &dev(&["--flag", "NOPE"]),
        "--flag NOPE: Flag -:NOPE:- unknown",
    );
    fails_with(
        &dev(&["--imix-weights", "64,7 1500,0"]),
        "a weight must be at least 1",
    );
    fails_with(&dev(&["--flows", "8"]), "flowlen");
    fails_with(
        &dev(&[
            "--dst-min",
            "127.0.0.1",
            "--dst-max",
            "127.0.0.9",
            "--flag",
            "IPDST_RND",
        ]),
        "every address in it is one random destinations skip",
    );
    fails_with(
        &dev(&["--backend", "af_packet", "--xmit-mode", "netif_receive"]),
        "netif_receive",
    );
    fails_with(
        &dev(&["--xmit-mode", "queue_xmit", "--qdisc-bypass"]),
        "give one",
    );
    fails_with(
        &dev(&["--irq", "no-such-irq-line"]),
        "--irq no-such-irq-line: no line of /proc/interrupts matches",
    );
    fails_with(&dev(&["--dst-mac", "zz:00"]), "is not a MAC address");
    fails_with(&dev(&["--dst", "10.0.0.300"]), "--dst");
    fails_with(
        &dev(&["--delay", "5", "--ratep", "5"]),
        "--delay and --ratep both set the packet rate: give one of them",
    );
    fails_with(
        &in_ns(&lab.tx_ns, &["run", "--dev", lab::TX_IF, "--dst-mac", &m]),
        "--dst: required with --dev",
    );
    fails_with(
        &in_ns(
            &lab.tx_ns,
            &["run", "--dev", lab::TX_IF, "--dst", "10.99.0.2"],
        ),
        "--dst-mac: required with --dev",
    );
    // Interface down.
    let st = Command::new("ip")
        .args(["-n", &lab.tx_ns, "link", "set", lab::TX_IF, "down"])
        .status()
        .unwrap();
    assert!(st.success());
    fails_with(&dev(&[]), "--dev veth-tx: the interface is down");
}

fn without_privilege_the_message_says_what_is_missing() {
    if !root_or_skip() {
        return;
    }
    let Some(o) = crate::common::upktgen_as_nobody(&["--count", "1"]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("needs CAP_SYS_ADMIN") && e.contains("run as root"),
        "{e}"
    );
}

/// The af_packet queue is the socket send buffer. Behind a slow qdisc (tbf at 20 Mbit/s on
/// veth-tx) frames wait holding their skbs, the buffer fills, and the kernel's own rule shows:
/// a send fails with EAGAIN (a stop) and poll reports room again only once half the buffer
/// is free (a wake), so every stop is followed by one wake and each wake lets about half a
/// buffer of frames through. Counted, not timed.
fn af_packet_stops_and_wakes_on_a_full_send_buffer() {
    if !root_or_skip() {
        return;
    }
    let lab = Lab::create(RxMode::Drop).unwrap();
    slow_tx_link(&lab, "20mbit");
    let o = dev_run(&lab, &["--count", "6000", "--sndbuf", "65536", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    let q = &j["outcome"]["backend"]["queue"];
    let stops = q["stops"].as_u64().unwrap();
    let wakes = q["wakes"].as_u64().unwrap();
    assert_eq!(j["outcome"]["result"]["sent"], 6000);
    assert_eq!(
        j["outcome"]["result"]["errors"], 0,
        "the qdisc is long enough never to drop"
    );
    // At least once (usually 20-40 times; under heavy parallel load the count varies, the
    // mechanism does not): without the slow qdisc, stops stay at 0 on veth.
    assert!(stops >= 1, "the buffer must fill: {q}");
    assert_eq!(stops, wakes, "every stop ends in a wake: {q}");
    // Wake at half free: each wake admits many frames, never just one.
    assert!(6000 / wakes >= 8, "{q}");
    let b = &j["outcome"]["backend"];
    assert!(b["stopped_ns"].as_u64().unwrap() > 0);
    assert!(
        j["outcome"]["result"]["idle_ns"].as_u64().unwrap() >= b["stopped_ns"].as_u64().unwrap()
    );
    // Everything queued was eventually delivered: the final drain waited for the qdisc.
    assert_eq!(b["undrained"], 0);
    assert_eq!(j["reconciliation"]["tx_packets"], 6000);
}

fn auto_picks_the_fastest_backend_that_fits_and_says_why() {
    if !root_or_skip() {
        return;
    }
    // In the lab (whose receiver has NAPI): live frames.
    let o = upktgen(&["--backend", "auto", "--count", "50000", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["backend"]["name"], "xdp_live");
    assert_eq!(j["reconciliation"]["rx_packets"], 50000);
    assert!(
        stderr(&o).contains("--backend auto chose xdp_live (the fastest candidate)"),
        "{}",
        stderr(&o)
    );
    // On a named device live frames are not a candidate; a ring option rules out af_packet.
    let lab = Lab::create(RxMode::Drop).unwrap();
    let o = dev_run(
        &lab,
        &[
            "--backend",
            "auto",
            "--count",
            "5000",
            "--ring",
            "256",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["backend"]["name"], "af_xdp");
    assert!(
        stderr(&o).contains("--backend auto chose af_xdp"),
        "{}",
        stderr(&o)
    );
    // An option only af_packet has rules out the rest, and the message says so.
    let o = dev_run(
        &lab,
        &[
            "--backend",
            "auto",
            "--count",
            "5000",
            "--sndbuf",
            "100000",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["backend"]["name"], "af_packet");
    let e = stderr(&o);
    assert!(
        e.contains("af_xdp ruled out: --sndbuf applies to af_packet"),
        "{e}"
    );
    assert!(e.contains("tx_ring ruled out"), "{e}");
}

/// A value is one word of the type asked for (`--count "10 --dev x"` is not 10, on the
/// command line as in a sweep file), and `--flows` stops at the 65536 its help promises.
/// Refused before any lab is made: no root needed.
fn a_value_is_one_word_and_flows_stop_at_65536() {
    fails_with(
        &upktgen(&["run", "--count", "10 --dev nosuchdev0"]),
        "count: '10 --dev nosuchdev0' is more than one value; count takes one",
    );
    fails_with(
        &upktgen(&["run", "--count", "10abc"]),
        "'10abc' is not a non-negative whole number",
    );
    fails_with(
        &upktgen(&["run", "--flows", "65537", "--flowlen", "10"]),
        "--flows 65537: flows: 65537 is above the largest value, 65536",
    );
    let dir = std::env::temp_dir().join(format!("upktgen-e2e-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("v.toml");
    std::fs::write(
        &f,
        "[sweep]\ncommand = \"run\"\nrepetitions = 1\n[base]\ncount = \"10 --dev eth0 --real\"\n\
         [[dimension]]\nname = \"pkt_size\"\nvalues = [60]\n",
    )
    .unwrap();
    let o = upktgen(&["sweep", f.to_str().unwrap(), "--dry-run"]);
    let _ = std::fs::remove_dir_all(&dir);
    fails_with(&o, "is more than one value; count takes one");
}

/// Issue 11: `-t 1000` on a machine of a few CPUs started 1000 threads. More threads than
/// the affinity mask's CPUs are refused, before any lab is made, with the number allowed;
/// --allow-oversubscribe asks for them explicitly.
fn more_threads_than_cpus_are_refused_with_the_number_allowed() {
    let cpus = upktgen::sys::allowed_cpus().len();
    let n = (cpus + 1).to_string();
    let o = upktgen(&["run", "-t", &n, "--count", "10"]);
    fails_with(
        &o,
        &format!("-t/--threads {n}: this process may run on {cpus} CPU"),
    );
    assert!(
        stderr(&o).contains(&format!(
            "give at most -t {cpus}, or add --allow-oversubscribe"
        )),
        "{}",
        stderr(&o)
    );
    if !root_or_skip() {
        return;
    }
    // Asked for, it runs: every thread sends its count.
    let o = upktgen(&[
        "run",
        "-t",
        &n,
        "--allow-oversubscribe",
        "--count",
        "100",
        "--json",
        "--no-live",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["threads"].as_array().map(Vec::len), Some(cpus + 1));
    assert_eq!(j["outcome"]["result"]["sent"], 100 * (cpus as u64 + 1));
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    dev_mode_sends_on_a_named_interface,
    bad_input_gets_one_clear_line,
    without_privilege_the_message_says_what_is_missing,
    af_packet_stops_and_wakes_on_a_full_send_buffer,
    auto_picks_the_fastest_backend_that_fits_and_says_why,
    a_value_is_one_word_and_flows_stop_at_65536,
    more_threads_than_cpus_are_refused_with_the_number_allowed,
];
