//! `run --config` planned without root: where the ports send and receive, how the run ends,
//! and what is refused before anything is sent.

use super::super::RunPlan;
use crate::cli::{Cli, Cmd, RunArgs};
use clap::Parser;

fn args(extra: &[&str]) -> RunArgs {
    let mut v = vec!["upktgen", "run"];
    v.extend_from_slice(extra);
    match Cli::try_parse_from(v).unwrap().cmd {
        Some(Cmd::Run(a)) => *a,
        _ => unreachable!(),
    }
}

/// A config file of `flows` (YAML list items) between ports at `tx` and `rx`.
fn config(tx: &str, rx: &str, flows: &str) -> tempfile_like::File {
    tempfile_like::File::new(&format!(
        "ports:\n  - {{name: p1, location: \"{tx}\"}}\n  - {{name: p2, location: \"{rx}\"}}\nflows:\n{flows}"
    ))
}

fn flow(name: &str, duration: &str) -> String {
    format!(
        "  - name: {name}\n    tx_rx: {{port: {{tx_name: p1, rx_names: [p2]}}}}\n    packet: [{{ethernet: {{}}}}, {{ipv4: {{}}}}, {{udp: {{}}}}]\n    size: {{fixed: 64}}\n    rate: {{pps: 1000}}\n    duration: {duration}\n"
    )
}

/// A file removed when dropped (the tests run in parallel: one name each).
mod tempfile_like {
    pub struct File(pub std::path::PathBuf);
    impl File {
        pub fn new(text: &str) -> File {
            use std::sync::atomic::{AtomicU32, Ordering};
            static N: AtomicU32 = AtomicU32::new(0);
            let p = std::env::temp_dir().join(format!(
                "upktgen-plan-config-{}-{}.yaml",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::write(&p, text).unwrap();
            File(p)
        }
        pub fn arg(&self) -> &str {
            self.0.to_str().unwrap()
        }
    }
    impl Drop for File {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

fn plan(extra: &[&str]) -> anyhow::Result<RunPlan> {
    RunPlan::from_args_on(&args(extra), &[0, 1])
}

#[test]
fn lab_ports_plan_a_lab_whose_receiver_counts_each_flow() {
    let f = config(
        "lab:tx",
        "lab:rx",
        &(flow("a", "{fixed_packets: {packets: 300}}")
            + &flow("b", "{fixed_packets: {packets: 200}}")),
    );
    let p = plan(&["--config", f.arg()]).unwrap();
    assert!(p.in_lab().is_some());
    let s = p.streams.as_ref().unwrap();
    assert_eq!(s.names, ["a", "b"]);
    let rx = p.rx.as_ref().unwrap();
    assert_eq!(
        rx.streams.as_deref(),
        Some(&["a".to_string(), "b".to_string()][..])
    );
    // Both end by a count: the run sends their sum.
    assert_eq!(p.senders[0].spec.cfg.count, 500);
    assert_eq!(p.duration, None);
    assert!(p.far.is_none());
}

#[test]
fn flows_that_end_by_time_end_the_run_when_the_last_has_ended() {
    let f = config(
        "lab:tx",
        "lab:rx",
        &(flow("a", "{fixed_seconds: {seconds: 2}}")
            + &flow("b", "{fixed_packets: {packets: 10}}")),
    );
    // No count and no duration: the send ends with the timeline.
    let p = plan(&["--config", f.arg()]).unwrap();
    assert_eq!(p.senders[0].spec.cfg.count, 0);
    assert_eq!(p.duration, None);
    let p = plan(&["--config", f.arg(), "--duration", "1s"]).unwrap();
    assert_eq!(p.duration, Some(std::time::Duration::from_secs(1)));
}

#[test]
fn a_receiving_namespace_is_the_far_end_counting_each_stream() {
    let f = config(
        "veth-a",
        "netns:upk-b/veth-b",
        &flow("a", "{fixed_packets: {packets: 10}}"),
    );
    // On a named device, an Ethernet destination `auto` has no value: the config gives one.
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(e.ends_with("flows[0].packet[0].ethernet.dst.auto: not supported (upktgen knows no value for it here: give one)"), "{e}");
    let f = config(
        "veth-a",
        "netns:upk-b/veth-b",
        &flow("a", "{fixed_packets: {packets: 10}}").replace(
            "{ethernet: {}}",
            "{ethernet: {dst: {value: \"02:00:00:00:00:02\"}}}",
        ),
    );
    let p = plan(&["--config", f.arg()]).unwrap();
    assert!(p.in_lab().is_none());
    let far = p.far.as_ref().unwrap();
    assert_eq!(far.dev, "veth-b");
    let tail: Vec<&str> = far
        .rx_args
        .iter()
        .rev()
        .take(3)
        .map(String::as_str)
        .collect();
    assert_eq!(tail, ["a", "--stream", "--all-frames"]);
}

#[test]
fn options_that_would_say_it_again_are_refused() {
    let f = config(
        "lab:tx",
        "lab:rx",
        &flow("a", "{fixed_packets: {packets: 10}}"),
    );
    for (extra, want) in [
        (
            &["--dev", "eth0"][..],
            "--dev: the config's ports say where to send and receive (their `location`)",
        ),
        (
            &["--rx-analyze"][..],
            "--rx-analyze: the config's ports say where to send and receive (their `location`)",
        ),
        (
            &["--pkt-size", "100"][..],
            "--pkt-size: pktgen's frame options do not apply with --config, whose flows describe the frames",
        ),
    ] {
        let mut v = vec!["--config", f.arg()];
        v.extend_from_slice(extra);
        assert_eq!(plan(&v).unwrap_err().to_string(), want);
    }
    let f = config(
        "ssh://h.example/veth0",
        "netns:x/veth1",
        &flow("a", "{fixed_packets: {packets: 10}}"),
    );
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.starts_with("--config: port \"p1\" sends from ssh://h.example/veth0:"),
        "{e}"
    );
}

#[test]
fn a_refused_document_names_its_file_once() {
    let f = tempfile_like::File::new("ports: [\n");
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert_eq!(e.matches(f.arg()).count(), 1, "{e}");
    assert!(e.starts_with(&format!("{}: not YAML", f.arg())), "{e}");
    // A refusal at a path names the file too, once.
    let f = config(
        "lab:tx",
        "lab:rx",
        &flow("a", "{fixed_packets: {packets: 0}}"),
    );
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert_eq!(e.matches(f.arg()).count(), 1, "{e}");
}

#[test]
fn from_lab_tx_only_lab_rx_receives_in_the_configs_words() {
    for rx in ["netns:x/veth0", "ssh://h.example/eth1", "veth9"] {
        let f = config("lab:tx", rx, &flow("a", "{fixed_packets: {packets: 10}}"));
        let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "--config: port \"p2\" receives at {rx}: with a lab:tx sender, the receiving port is lab:rx"
            )),
            "{rx}: {e}"
        );
    }
}

#[test]
fn a_flow_without_a_receiving_port_is_refused_at_its_path() {
    let f = config(
        "lab:tx",
        "lab:rx",
        &flow("a", "{fixed_packets: {packets: 10}}").replace("rx_names: [p2]", "rx_names: []"),
    );
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.ends_with("flows[0].tx_rx.port.rx_names: no receiving port (upktgen counts every flow at the port that receives it: name one)"),
        "{e}"
    );
}

#[test]
fn the_sending_and_the_receiving_port_are_two() {
    let f = config(
        "veth-a",
        "veth-a",
        &flow("a", "{fixed_packets: {packets: 10}}"),
    );
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    // The config's reader refuses it first: one interface is one port.
    assert_eq!(
        e,
        format!(
            "{}: ports[1].location: veth-a is already the location of ports[0] (\"p1\"): one interface is one port",
            f.arg()
        )
    );
}

/// Flows between ports p1 and p2 (and p3 when `p3` is given), each `(name, tx, rx)`.
fn ports_config(
    p1: &str,
    p2: &str,
    p3: Option<&str>,
    flows: &[(&str, &str, &str)],
) -> tempfile_like::File {
    let mut text = format!(
        "ports:\n  - {{name: p1, location: \"{p1}\"}}\n  - {{name: p2, location: \"{p2}\"}}\n"
    );
    if let Some(p3) = p3 {
        text += &format!("  - {{name: p3, location: \"{p3}\"}}\n");
    }
    text += "flows:\n";
    for (name, tx, rx) in flows {
        text += &flow(name, "{fixed_packets: {packets: 10}}")
            .replace(
                "tx_name: p1, rx_names: [p2]",
                &format!("tx_name: {tx}, rx_names: [{rx}]"),
            )
            .replace(
                "{ethernet: {}}",
                "{ethernet: {dst: {value: \"02:00:00:00:00:02\"}}}",
            );
    }
    tempfile_like::File::new(&text)
}

fn plans(extra: &[&str]) -> anyhow::Result<Vec<RunPlan>> {
    RunPlan::each_from_args_on(&args(extra), &[0, 1])
}

#[test]
fn flows_both_ways_are_a_run_per_sending_port_each_signing_the_configs_ids() {
    let f = ports_config(
        "netns:upk-ab/va",
        "netns:upk-ab/vb",
        None,
        &[("ab1", "p1", "p2"), ("ba", "p2", "p1"), ("ab2", "p1", "p2")],
    );
    let ps = plans(&["--config", f.arg()]).unwrap();
    assert_eq!(ps.len(), 2);
    let (a, b) = (
        ps[0].streams.as_ref().unwrap(),
        ps[1].streams.as_ref().unwrap(),
    );
    // Each sends its own flows, signed with their index in the config.
    assert_eq!(
        (a.ids.as_slice(), b.ids.as_slice()),
        (&[0, 2][..], &[1][..])
    );
    assert_eq!(
        a.specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["ab1", "ab2"]
    );
    // Each receiver's table holds every flow, by id.
    assert_eq!(a.names, ["ab1", "ba", "ab2"]);
    assert_eq!(b.names, a.names);
    // Sent from inside the namespace; received by a far end in it at the other port.
    assert_eq!(ps[0].senders[0].spec.cfg.device(), "va");
    assert_eq!(
        a.tx_netns(),
        Some(std::path::PathBuf::from("/run/netns/upk-ab"))
    );
    assert_eq!(ps[0].far.as_ref().unwrap().dev, "vb");
    assert_eq!(ps[1].senders[0].spec.cfg.device(), "vb");
    assert_eq!(ps[1].far.as_ref().unwrap().dev, "va");
    assert_eq!(ps[0].senders[0].spec.cfg.count, 20);
    assert_eq!(ps[1].senders[0].spec.cfg.count, 10);
    // Where one plan is all a command takes, several are refused.
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.starts_with("--config: the flows leave from several ports"),
        "{e}"
    );
    // One document and one endpoint for the whole run: planned, one plan a port.
    for option in ["--json", "--metrics-listen"] {
        let mut v = vec!["--config", f.arg(), option];
        if option == "--metrics-listen" {
            v.push("127.0.0.1:9");
        }
        let ps = plans(&v).unwrap();
        assert_eq!(ps.len(), 2, "{option}");
        assert_eq!(ps[1].output.json, option == "--json");
    }
}

#[test]
fn two_ports_into_one_each_expect_every_flow_sent_there() {
    let f = ports_config(
        "netns:upk-x/va",
        "netns:upk-x/vb",
        Some("netns:upk-x/vc"),
        &[("f0", "p1", "p3"), ("f1", "p2", "p3"), ("f2", "p3", "p1")],
    );
    let ps = plans(&["--config", f.arg()]).unwrap();
    let s: Vec<_> = ps.iter().map(|p| p.streams.as_ref().unwrap()).collect();
    assert_eq!(s.len(), 3);
    // p3 hears f0 and f1: neither is unexpected there, whichever port sent it.
    assert_eq!(
        (s[0].expected.as_slice(), s[1].expected.as_slice()),
        (&[0, 1][..], &[0, 1][..])
    );
    assert_eq!(s[2].expected, [2]);
    assert_eq!(ps[0].far.as_ref().unwrap().dev, "vc");
    assert_eq!(ps[1].far.as_ref().unwrap().dev, "vc");
}

#[test]
fn one_port_sending_to_two_is_a_leg_for_each_on_its_interface() {
    let f = ports_config(
        "netns:upk-x/va",
        "netns:upk-x/vb",
        Some("netns:upk-x/vc"),
        &[("f0", "p1", "p2"), ("f1", "p1", "p3"), ("f2", "p1", "p2")],
    );
    let ps = plans(&["--config", f.arg()]).unwrap();
    let s: Vec<_> = ps.iter().map(|p| p.streams.as_ref().unwrap()).collect();
    // A leg for each port p1 sends to, in the order the flows first name them.
    assert_eq!(s.len(), 2);
    assert_eq!(
        (s[0].ids.as_slice(), s[1].ids.as_slice()),
        (&[0, 2][..], &[1][..])
    );
    assert_eq!(
        (s[0].rx_port.0.as_str(), s[1].rx_port.0.as_str()),
        ("p2", "p3")
    );
    assert_eq!(
        (s[0].tx_port.0.as_str(), s[1].tx_port.0.as_str()),
        ("p1", "p1")
    );
    // Each its own sender on p1's interface and its own receiver at its port.
    assert_eq!(ps[0].senders[0].spec.cfg.device(), "va");
    assert_eq!(ps[1].senders[0].spec.cfg.device(), "va");
    assert_eq!(ps[0].far.as_ref().unwrap().dev, "vb");
    assert_eq!(ps[1].far.as_ref().unwrap().dev, "vc");
    assert_eq!(
        (
            ps[0].senders[0].spec.cfg.count,
            ps[1].senders[0].spec.cfg.count
        ),
        (20, 10)
    );
    // Each receiving port expects the flows sent to it: the other leg's are unexpected.
    assert_eq!(
        (s[0].expected.as_slice(), s[1].expected.as_slice()),
        (&[0, 2][..], &[1][..])
    );
    // The interface's senders one after the other (its namespace is not there: its queues
    // are not known, and not asked again).
    assert_eq!(
        (s[0].iface, s[1].iface),
        (
            super::IfaceQueues {
                legs: 2,
                first: 0,
                senders: 2,
                queues: None
            },
            super::IfaceQueues {
                legs: 2,
                first: 1,
                senders: 2,
                queues: None
            }
        )
    );
    // Where one plan is all a command takes, the two legs are refused.
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.starts_with("--config: the flows leave from several ports, or from one port to several"),
        "{e}"
    );
    // A flow counted at two ports is still refused.
    let text = std::fs::read_to_string(&f.0)
        .unwrap()
        .replace("rx_names: [p3]", "rx_names: [p2, p3]");
    let f = tempfile_like::File::new(&text);
    let e = plans(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.ends_with("flows[1].tx_rx.port.rx_names: not supported (a flow is received at one port (several are not yet))"),
        "{e}"
    );
}

#[test]
fn ports_alone_on_their_interfaces_are_legs_alone() {
    let f = ports_config(
        "netns:upk-x/va",
        "netns:upk-x/vb",
        Some("netns:upk-x/vc"),
        &[("f0", "p1", "p3"), ("f1", "p2", "p3")],
    );
    let ps = plans(&["--config", f.arg(), "-t", "2", "--allow-oversubscribe"]).unwrap();
    for p in &ps {
        // One flow a leg: one queue, alone on its interface.
        let s = p.streams.as_ref().unwrap();
        assert_eq!(s.iface, super::IfaceQueues::alone(1));
        assert_eq!(
            s.notes,
            [format!(
                "-t 2: port {:?} sends 1 flow, so 1 queue (a flow stays on one queue, its frames in order)",
                s.tx_port.0
            )]
        );
    }
    // A leg of a port that sends to several: the note names its receiving port.
    let f = ports_config(
        "netns:upk-x/va",
        "netns:upk-x/vb",
        Some("netns:upk-x/vc"),
        &[("f0", "p1", "p2"), ("f1", "p1", "p3")],
    );
    let ps = plans(&["--config", f.arg(), "-t", "2", "--allow-oversubscribe"]).unwrap();
    assert_eq!(
        ps[1].streams.as_ref().unwrap().notes,
        [
            "-t 2: port \"p1\" sends 1 flow to port \"p3\", so 1 queue (a flow stays on one queue, its frames in order)"
        ]
    );
}

#[test]
fn legs_of_one_port_with_threads_take_queues_and_cpus_one_after_the_other() {
    let f = ports_config(
        "netns:upk-x/va",
        "netns:upk-x/vb",
        Some("netns:upk-x/vc"),
        &[
            ("f0", "p1", "p2"),
            ("f1", "p1", "p3"),
            ("f2", "p1", "p2"),
            ("f3", "p1", "p3"),
        ],
    );
    let a = args(&["--config", f.arg(), "-t", "2"]);
    let ps = RunPlan::each_from_args_on(&a, &[0, 1, 2, 3]).unwrap();
    let cpus: Vec<Vec<Option<usize>>> = ps
        .iter()
        .map(|p| p.senders.iter().map(|s| s.spec.cpu).collect())
        .collect();
    // -t 2 is two senders for each leg: p1's four threads on four CPUs.
    assert_eq!(cpus, [[Some(0), Some(1)], [Some(2), Some(3)]]);
    let firsts: Vec<(u16, u16)> = ps
        .iter()
        .map(|p| {
            let q = p.streams.as_ref().unwrap().iface;
            (q.first, q.senders)
        })
        .collect();
    assert_eq!(firsts, [(0, 4), (2, 4)]);
    // Two CPUs: four threads need --allow-oversubscribe, in the legs' words.
    assert_eq!(
        plans(&["--config", f.arg(), "-t", "2"])
            .unwrap_err()
            .to_string(),
        "-t/--threads 2 on 2 legs of 1 sending port (a leg for each port a port sends to, N threads each): 4 sender threads, and this process may run on 2 CPUs ([0, 1]): give at most -t 1, or add --allow-oversubscribe to share CPUs between threads"
    );
}

/// The legs of `f`'s config planned with `extra` options, their interface said to have
/// `queues` queues.
fn legs_on_queues(
    f: &tempfile_like::File,
    extra: &[&str],
    queues: u16,
) -> anyhow::Result<Vec<RunPlan>> {
    let mut v = vec!["--config", f.arg()];
    v.extend_from_slice(extra);
    let a = args(&v);
    let cfg = crate::otg::read_file(&f.0).unwrap();
    let mut legs = super::apply_config(&a, &cfg, &f.0, 7)?;
    super::share_interfaces(&mut legs, |_| Some(queues));
    RunPlan::legs(&a, legs, &[0, 1, 2, 3], 7)
}

#[test]
fn af_xdp_legs_of_one_port_bind_queues_of_their_own_or_are_refused() {
    use crate::backend::{BackendKind, BackendPlan};
    let f = ports_config(
        "netns:upk-x/va",
        "netns:upk-x/vb",
        Some("netns:upk-x/vc"),
        &[("f0", "p1", "p2"), ("f1", "p1", "p3")],
    );
    let queue = |b: &BackendPlan| match b {
        BackendPlan::AfXdp(c) => Some(c.queue),
        _ => None,
    };
    // Two queues: leg 0's socket on queue 0, leg 1's on queue 1.
    let ps = legs_on_queues(&f, &["--backend", "af_xdp"], 2).unwrap();
    let qs: Vec<Option<u32>> = ps
        .iter()
        .map(|p| queue(&p.senders[0].backends[0]))
        .collect();
    assert_eq!(qs, [Some(0), Some(1)]);
    // One: refused, in one line that says what to do.
    let e = legs_on_queues(&f, &["--backend", "af_xdp"], 1)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "--backend af_xdp: port \"p1\" sends to 2 ports from netns:upk-x/va, each leg's senders on transmit queues of their own (2 in all: an AF_XDP socket binds a queue no other may), and the interface has 1: give it more queues (a veth: `ip link add ... numtxqueues N numrxqueues N`; a NIC: `ethtool -L`), fewer senders (-t), or --backend af_packet or tx_ring"
    );
    // auto: the leg beyond the queues sends from the next candidate, said so.
    let ps = legs_on_queues(&f, &["--backend", "auto"], 1).unwrap();
    assert_eq!(queue(&ps[0].senders[0].backends[0]), Some(0));
    let second = &ps[1].senders[0];
    assert!(second.backends.iter().all(|b| !b.binds_a_queue()));
    assert_eq!(second.backends[0].kind(), BackendKind::TxRing);
    assert!(
        second.ruled_out[0]
            .starts_with("af_xdp ruled out: --backend af_xdp: port \"p1\" sends to 2 ports"),
        "{:?}",
        second.ruled_out
    );
    // Backends that bind no queue need nothing.
    for b in ["af_packet", "tx_ring"] {
        let ps = legs_on_queues(&f, &["--backend", b], 1).unwrap();
        assert_eq!(ps.len(), 2, "{b}");
    }
    // -t 2 on two legs of two flows each: queues 0 and 1, then 2 and 3.
    let f = ports_config(
        "netns:upk-x/va",
        "netns:upk-x/vb",
        Some("netns:upk-x/vc"),
        &[
            ("f0", "p1", "p2"),
            ("f1", "p1", "p3"),
            ("f2", "p1", "p2"),
            ("f3", "p1", "p3"),
        ],
    );
    let ps = legs_on_queues(&f, &["--backend", "af_xdp", "-t", "2"], 4).unwrap();
    let qs: Vec<Vec<Option<u32>>> = ps
        .iter()
        .map(|p| p.senders.iter().map(|s| queue(&s.backends[0])).collect())
        .collect();
    assert_eq!(qs, [[Some(0), Some(1)], [Some(2), Some(3)]]);
    let e = legs_on_queues(&f, &["--backend", "af_xdp", "-t", "2"], 3)
        .unwrap_err()
        .to_string();
    assert!(e.contains("(4 in all: "), "{e}");
}

#[test]
fn the_private_lab_has_one_receiving_end() {
    let f = ports_config(
        "lab:tx",
        "lab:rx",
        Some("netns:upk-x/vc"),
        &[("f0", "p1", "p2"), ("f1", "p1", "p3")],
    );
    let e = plans(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.ends_with("flows[1].tx_rx.port.rx_names: not supported (the private lab's ends send to each other only (lab:tx to lab:rx and back): flows from several ports beside them need ports at interfaces or netns:NAME/IFACE)"),
        "{e}"
    );
}

#[test]
fn flows_both_ways_in_the_lab_are_planned_at_its_ends_each_sending_to_the_other() {
    use super::{LabEnds, both_ways_in_lab};
    let f = ports_config(
        "lab:tx",
        "lab:rx",
        None,
        &[("ab", "p1", "p2"), ("ba", "p2", "p1")],
    );
    // The destinations left to `auto`.
    let text = std::fs::read_to_string(&f.0).unwrap().replace(
        "{ethernet: {dst: {value: \"02:00:00:00:00:02\"}}}",
        "{ethernet: {}}",
    );
    let f = tempfile_like::File::new(&text);
    let cfg = crate::otg::read_file(&f.0).unwrap();
    assert!(both_ways_in_lab(&cfg));
    // Without the lab's ends (a command of one transmitting port), refused at the path.
    let e = plans(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.ends_with("flows[1].tx_rx.port.tx_name: not supported (flows both ways in the private lab are sent by `upktgen run` and `upktgen otg`, which make the lab for them; this command takes one transmitting port)"),
        "{e}"
    );
    let ends = LabEnds {
        tx_ns: "upktgen-t-tx",
        rx_ns: "upktgen-t-rx",
    };
    let ps = RunPlan::from_config(&args(&[]), &cfg, &f.0, Some(ends)).unwrap();
    assert_eq!(ps.len(), 2);
    for (p, (tx_ns, dev, rx_dev, dst)) in ps.iter().zip([
        ("upktgen-t-tx", "veth-tx", "veth-rx", crate::lab::RX_MAC),
        ("upktgen-t-rx", "veth-rx", "veth-tx", crate::lab::TX_MAC),
    ]) {
        let s = p.streams.as_ref().unwrap();
        assert_eq!(
            s.tx_netns(),
            Some(std::path::Path::new("/run/netns").join(tx_ns))
        );
        assert_eq!(p.senders[0].spec.cfg.device(), dev);
        assert_eq!(p.far.as_ref().unwrap().dev, rx_dev);
        assert!(p.in_lab().is_none(), "the lab is made once, for both");
        // `auto` is the other end.
        let frames = crate::stream::build::StreamFrames::new(s.ids[0], &s.specs[0]).unwrap();
        assert_eq!(frames.template()[..6], dst.0);
    }
    // A device under test routes one way; a port beside the lab's ends is refused.
    let mut dut = args(&["--lab", "dut"]);
    dut.config = None;
    let e = RunPlan::from_config(&dut, &cfg, &f.0, Some(ends)).unwrap_err();
    assert!(
        e.to_string().starts_with("--lab dut: flows both ways"),
        "{e}"
    );
    let f = ports_config(
        "lab:tx",
        "lab:rx",
        Some("veth9"),
        &[("ab", "p1", "p2"), ("ba", "p2", "p1"), ("c", "p3", "p1")],
    );
    let cfg = crate::otg::read_file(&f.0).unwrap();
    let e = RunPlan::from_config(&args(&[]), &cfg, &f.0, Some(ends)).unwrap_err();
    assert!(
        e.to_string().ends_with("flows[2].tx_rx.port.tx_name: not supported (the private lab's ends send to each other only (lab:tx to lab:rx and back): flows from several ports beside them need ports at interfaces or netns:NAME/IFACE)"),
        "{e}"
    );
}

#[test]
fn a_layer1_speed_is_the_line_a_percentage_is_of() {
    let percent = "  - name: a\n    tx_rx: {port: {tx_name: p1, rx_names: [p2]}}\n    packet: [{ethernet: {}}, {ipv4: {}}, {udp: {}}]\n    size: {fixed: 64}\n    rate: {percentage: 1}\n    duration: {fixed_packets: {packets: 100}}\n";
    let f = config("lab:tx", "lab:rx", percent);
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.contains(
            "flows[0].rate.percentage: not supported (a rate in percent needs the port's line rate"
        ),
        "{e}"
    );
    let f = tempfile_like::File::new(&format!(
        "ports:\n  - {{name: p1, location: lab:tx}}\n  - {{name: p2, location: lab:rx}}\nlayer1:\n  - {{name: ly, port_names: [p1, p2], speed: speed_1_gbps}}\nflows:\n{percent}"
    ));
    let p = plan(&["--config", f.arg()]).unwrap();
    let s = p.streams.as_ref().unwrap();
    assert_eq!(s.line_bps, Some(1_000_000_000));
    // 1 % of 1 Gbit/s in 64-byte frames (84 bytes on the wire with the FCS, preamble and
    // gap): 14,880.95 pps.
    let want = 1e7 / (84.0 * 8.0);
    let got = match s.specs[0].rate {
        crate::stream::spec::Rate::Pps(p) => p,
        crate::stream::spec::Rate::Bps(b) => b / ((60.0 + 24.0) * 8.0),
        crate::stream::spec::Rate::Percent(p) => 1e9 * p / 100.0 / (84.0 * 8.0),
    };
    assert!((got - want).abs() / want < 1e-6, "{got} pps");
}

#[test]
fn xdp_live_plans_a_configs_streams_and_refuses_what_it_cannot_send() {
    use crate::backend::{BackendKind, BackendPlan};
    let f = config(
        "lab:tx",
        "lab:rx",
        &flow("a", "{fixed_packets: {packets: 10}}"),
    );
    let p = plan(&["--config", f.arg(), "--backend", "xdp_live"]).unwrap();
    assert!(matches!(
        p.senders[0].backends[..],
        [BackendPlan::XdpLive(_)]
    ));
    // auto tries it first in the lab, as for one stream.
    let p = plan(&["--config", f.arg(), "--backend", "auto"]).unwrap();
    assert_eq!(p.senders[0].backends[0].kind(), BackendKind::XdpLive);
    let e = plan(&[
        "--config",
        f.arg(),
        "--backend",
        "xdp_live",
        "--xdp-live-plain",
    ])
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--xdp-live-plain") && e.contains("not a config's streams"),
        "{e}"
    );
    // A frame beyond one page: refused in the config's words; auto rules xdp_live out.
    let jumbo = flow("j", "{fixed_packets: {packets: 10}}").replace("{fixed: 64}", "{fixed: 9000}");
    let f = config("lab:tx", "lab:rx", &jumbo);
    let e = plan(&["--config", f.arg(), "--backend", "xdp_live"])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a config's largest frame is 8996 bytes") && e.contains("at most 3000"),
        "{e}"
    );
    let p = plan(&["--config", f.arg(), "--backend", "auto"]).unwrap();
    assert_ne!(p.senders[0].backends[0].kind(), BackendKind::XdpLive);
    assert!(
        p.senders[0].ruled_out[0].starts_with("xdp_live ruled out: a config's largest frame"),
        "{:?}",
        p.senders[0].ruled_out
    );
}

/// Three flows on a 1 Gbit/s port: 1,000 pps of 64 bytes, 2,048,000 bit/s of 128 bytes
/// (2,000 pps: 128 × 8 bits a frame) and 3 % of the line in 1,230-byte frames (1,250 bytes a
/// frame on the wire with preamble and gap: 3e7 / 10,000 bits = 3,000 pps); 6,000 pps in all.
fn three_rates() -> tempfile_like::File {
    let flow = |name: &str, size: u32, rate: &str, duration: &str| {
        format!(
            "  - name: {name}\n    tx_rx: {{port: {{tx_name: p1, rx_names: [p2]}}}}\n    packet: [{{ethernet: {{}}}}, {{ipv4: {{}}}}, {{udp: {{}}}}]\n    size: {{fixed: {size}}}\n    rate: {rate}\n    duration: {duration}\n"
        )
    };
    tempfile_like::File::new(&format!(
        "ports:\n  - {{name: p1, location: lab:tx}}\n  - {{name: p2, location: lab:rx}}\nlayer1:\n  - {{name: ly, port_names: [p1, p2], speed: speed_1_gbps}}\nflows:\n{}{}{}",
        flow("a", 64, "{pps: 1000}", "{fixed_packets: {packets: 10}}"),
        flow(
            "b",
            128,
            "{bps: 2048000}",
            "{fixed_seconds: {seconds: 1, delay: {nanoseconds: 5000}}}"
        ),
        flow("c", 1230, "{percentage: 3}", "{continuous: {}}"),
    ))
}

#[test]
fn config_rate_scales_every_flow_to_its_share_of_the_total_and_makes_it_continuous() {
    use crate::stream::spec::{Length, Rate};
    let f = three_rates();
    let p = plan(&[
        "--config",
        f.arg(),
        "--config-rate",
        "12000",
        "--duration",
        "2s",
    ])
    .unwrap();
    let s = p.streams.as_ref().unwrap();
    for (spec, want) in s.specs.iter().zip([2000.0, 4000.0, 6000.0]) {
        let Rate::Pps(got) = spec.rate else {
            panic!("{:?}", spec.rate)
        };
        assert!((got - want).abs() < 1e-6, "{}: {got}", spec.name);
        assert_eq!(spec.length, Length::Continuous, "{}", spec.name);
        assert_eq!(spec.start_delay_ns, 0, "{}", spec.name);
    }
    // Nothing ends by a count: --duration ends the run.
    assert_eq!(p.senders[0].spec.cfg.count, 0);
    assert_eq!(p.duration, Some(std::time::Duration::from_secs(2)));
    // Without it, the flows keep their own rates and lengths.
    let p = plan(&["--config", f.arg()]).unwrap();
    let s = p.streams.as_ref().unwrap();
    assert_eq!(s.specs[0].length, Length::Packets(10));
    assert!(matches!(s.specs[2].rate, Rate::Percent(x) if x == 3.0));
}

#[test]
fn config_rate_is_refused_out_of_range_without_a_config_and_across_ports() {
    let f = three_rates();
    for bad in ["0", "-5", "inf", "2e9"] {
        let e = plan(&["--config", f.arg(), &format!("--config-rate={bad}")])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--config-rate "), "{bad}: {e}");
    }
    let e = Cli::try_parse_from(["upktgen", "run", "--config-rate", "1000"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--config"), "{e}");
    let f = ports_config(
        "netns:a/e1",
        "netns:b/e2",
        Some("netns:c/e3"),
        &[("x", "p1", "p2"), ("y", "p3", "p2")],
    );
    let e = plans(&["--config", f.arg(), "--config-rate", "1000"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("several ports"), "{e}");
}

#[test]
fn flows_that_end_by_time_end_the_run_at_that_time() {
    let timed = config(
        "lab:tx",
        "lab:rx",
        &(flow("a", "{fixed_seconds: {seconds: 2}}")
            + &flow("b", "{fixed_seconds: {seconds: 3.5}}")),
    );
    let p = plan(&["--config", timed.arg()]).unwrap();
    // The latest end, and 50 ms for a sender late with its last frames.
    assert_eq!(p.duration, Some(std::time::Duration::from_millis(3550)));
    // A flow that ends by a count may take as long as it takes: no wall-clock end.
    let mixed = config(
        "lab:tx",
        "lab:rx",
        &(flow("a", "{fixed_seconds: {seconds: 2}}")
            + &flow("b", "{fixed_packets: {packets: 10}}")),
    );
    assert_eq!(plan(&["--config", mixed.arg()]).unwrap().duration, None);
    // --duration says it first.
    let p = plan(&["--config", timed.arg(), "--duration", "1s"]).unwrap();
    assert_eq!(p.duration, Some(std::time::Duration::from_secs(1)));
}

#[test]
fn the_split_puts_the_largest_rate_first_onto_the_least_loaded_queue() {
    use super::split;
    let ids = |q: &super::Queue| q.streams.clone();
    // 8 unlike rates on 2 queues: 8000 → q0, 7000 → q1, 6000 → q1 (7000 < 8000), 5000 → q0
    // (8000 < 13000), 4000 → q0 (13000 each: the lowest), 3000 → q1, 2000 → q1 (16000 <
    // 17000), 1000 → q0: 18000 each.
    let r = [
        1000.0, 2000.0, 3000.0, 4000.0, 5000.0, 6000.0, 7000.0, 8000.0,
    ];
    let q = split(&r, 2);
    assert_eq!(q.len(), 2);
    assert_eq!(ids(&q[0]), [0, 3, 4, 7]);
    assert_eq!(ids(&q[1]), [1, 2, 5, 6]);
    assert_eq!((q[0].pps, q[1].pps), (18000.0, 18000.0));
    // Equal rates go in stream order onto the lowest equally loaded queue.
    let q = split(&[5.0, 5.0, 5.0, 5.0, 5.0], 3);
    assert_eq!(
        q.iter().map(ids).collect::<Vec<_>>(),
        [vec![0, 3], vec![1, 4], vec![2]]
    );
    // One big stream and many small: the big one alone, the rest beside it.
    let q = split(&[1.0, 100.0, 1.0, 1.0], 2);
    assert_eq!(
        q.iter().map(ids).collect::<Vec<_>>(),
        [vec![1], vec![0, 2, 3]]
    );
    // More queues than streams: one each; none asked (or no stream): one queue.
    assert_eq!(split(&[1.0, 2.0], 5).len(), 2);
    assert_eq!(split(&[1.0, 2.0], 0).len(), 1);
    let q = split(&[], 4);
    assert_eq!((q.len(), q[0].streams.len()), (1, 0));
    // Every stream on exactly one queue.
    let r: Vec<f64> = (0..100).map(|i| f64::from(i % 7 + 1)).collect();
    let q = split(&r, 3);
    let mut all: Vec<usize> = q.iter().flat_map(|q| q.streams.clone()).collect();
    all.sort_unstable();
    assert_eq!(all, (0..100).collect::<Vec<_>>());
    let (lo, hi) = q
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), q| (l.min(q.pps), h.max(q.pps)));
    assert!(hi - lo <= 7.0, "within the largest rate: {lo}..{hi}");
}

#[test]
fn threads_send_a_configs_streams_on_as_many_queues() {
    let flows: String = [("a", 100), ("b", 300), ("c", 200), ("d", 50)]
        .iter()
        .map(|(n, pps)| {
            format!(
                "  - name: {n}\n    tx_rx: {{port: {{tx_name: p1, rx_names: [p2]}}}}\n    packet: [{{ethernet: {{}}}}, {{ipv4: {{}}}}, {{udp: {{}}}}]\n    size: {{fixed: 64}}\n    rate: {{pps: {pps}}}\n    duration: {{fixed_packets: {{packets: {pps}}}}}\n"
            )
        })
        .collect();
    let f = config("lab:tx", "lab:rx", &flows);
    let p = plan(&["--config", f.arg(), "-t", "2"]).unwrap();
    // The lab's receiver counts every stream by its signature, from both threads.
    assert!(p.rx.as_ref().unwrap().streams.is_some());
    assert_eq!(p.senders.len(), 2);
    let s = p.streams.as_ref().unwrap();
    let q: Vec<Vec<usize>> = s.queues.iter().map(|q| q.streams.clone()).collect();
    // 300 → q0, 200 → q1, 100 → q1, 50 → q0.
    assert_eq!(q, [vec![1, 3], vec![0, 2]]);
    assert_eq!((s.queues[0].pps, s.queues[1].pps), (350.0, 300.0));
    // Each sender sends its queue's frames: its own count.
    let counts: Vec<u64> = p.senders.iter().map(|x| x.spec.cfg.count).collect();
    assert_eq!(counts, [350, 300]);
    assert_eq!(p.senders[1].spec.cfg.ifname, "veth-tx@1");
    assert_eq!(p.in_lab().unwrap().queues, 2);
    assert!(s.notes.is_empty());
    // More threads than flows: one queue per flow, said so.
    let p = RunPlan::from_args_on(
        &args(&["--config", f.arg(), "-t", "6", "--allow-oversubscribe"]),
        &[0, 1],
    )
    .unwrap();
    assert_eq!(p.senders.len(), 4);
    let s = p.streams.as_ref().unwrap();
    assert_eq!(
        s.notes,
        [
            "-t 6: port \"p1\" sends 4 flows, so 4 queues (a flow stays on one queue, its frames in order)"
        ]
    );
    // The checks of -t still apply.
    let e = plan(&["--config", f.arg(), "-t", "3"])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("-t/--threads 3: this process may run on 2 CPUs"),
        "{e}"
    );
    let e = plan(&["--config", f.arg(), "-t", "0"])
        .unwrap_err()
        .to_string();
    assert_eq!(e, "-t/--threads 0: give at least one sender thread");
    // A flow that ends by a time beside one that ends by a count: its queue has no count.
    let f = config(
        "lab:tx",
        "lab:rx",
        &(flow("a", "{fixed_seconds: {seconds: 2}}")
            + &flow("b", "{fixed_packets: {packets: 10}}")),
    );
    let p = plan(&["--config", f.arg(), "-t", "2"]).unwrap();
    let counts: Vec<u64> = p.senders.iter().map(|x| x.spec.cfg.count).collect();
    assert_eq!(counts, [0, 10]);
}

#[test]
fn several_ports_of_several_threads_each_take_cpus_of_their_own() {
    let f = ports_config(
        "netns:upk-ab/va",
        "netns:upk-ab/vb",
        None,
        &[
            ("ab1", "p1", "p2"),
            ("ba1", "p2", "p1"),
            ("ab2", "p1", "p2"),
            ("ba2", "p2", "p1"),
        ],
    );
    let cpus_of = |ps: &[RunPlan]| -> Vec<Vec<Option<usize>>> {
        ps.iter()
            .map(|p| p.senders.iter().map(|s| s.spec.cpu).collect())
            .collect()
    };
    // Four CPUs: p1's threads on 0 and 1, p2's on 2 and 3.
    let ps = RunPlan::each_from_args_on(&args(&["--config", f.arg(), "-t", "2"]), &[0, 1, 2, 3])
        .unwrap();
    assert_eq!(cpus_of(&ps), [[Some(0), Some(1)], [Some(2), Some(3)]]);
    // From --cpu's, round the CPUs.
    let ps = RunPlan::each_from_args_on(
        &args(&["--config", f.arg(), "-t", "2", "--cpu", "3"]),
        &[0, 1, 2, 3],
    )
    .unwrap();
    assert_eq!(cpus_of(&ps), [[Some(3), Some(0)], [Some(1), Some(2)]]);
    // Two CPUs: four threads need --allow-oversubscribe, which shares them.
    assert_eq!(
        plans(&["--config", f.arg(), "-t", "2"])
            .unwrap_err()
            .to_string(),
        "-t/--threads 2 on 2 sending ports: 4 sender threads, and this process may run on 2 CPUs ([0, 1]): give at most -t 1, or add --allow-oversubscribe to share CPUs between threads"
    );
    let ps = plans(&["--config", f.arg(), "-t", "2", "--allow-oversubscribe"]).unwrap();
    assert_eq!(cpus_of(&ps), [[Some(0), Some(1)], [Some(0), Some(1)]]);
    // One thread a port: as before, unpinned.
    let ps = plans(&["--config", f.arg()]).unwrap();
    assert_eq!(cpus_of(&ps), [[None], [None]]);
}

#[test]
fn a_rate_in_bits_or_percent_is_split_as_its_frames_per_second() {
    // 1,000 pps, 2,048,000 bit/s = 2,000 pps and 3 % of 1 Gbit/s = 3,000 pps.
    let f = three_rates();
    let p = plan(&["--config", f.arg(), "-t", "2"]).unwrap();
    let s = p.streams.as_ref().unwrap();
    let q: Vec<(Vec<usize>, f64)> = s
        .queues
        .iter()
        .map(|q| (q.streams.clone(), q.pps.round()))
        .collect();
    assert_eq!(q, [(vec![2], 3000.0), (vec![0, 1], 3000.0)]);
}

#[test]
fn a_ports_flows_are_built_with_its_own_line_rate_only() {
    // p2 has a layer1 speed and sends a percentage; p1 has none (its namespace is not
    // there, so no interface speed either) and sends pps: p1's run does not build p2's flow
    // (which it could not, without a line rate), and p2's is of p2's speed.
    let f = ports_config(
        "netns:upk-nope/va",
        "netns:upk-nope/vb",
        None,
        &[("ab", "p1", "p2"), ("ba", "p2", "p1")],
    );
    let text = std::fs::read_to_string(f.arg()).unwrap();
    let text = text.replacen(
        "flows:\n",
        "layer1:\n  - {name: ly, port_names: [p2], speed: speed_1_gbps}\nflows:\n",
        1,
    );
    let i = text.rfind("rate:").unwrap();
    let end = i + text[i..].find('\n').unwrap();
    let text = format!("{}rate: {{percentage: 1}}{}", &text[..i], &text[end..]);
    let f = tempfile_like::File::new(&text);
    let ps = plans(&["--config", f.arg()]).unwrap();
    let (a, b) = (
        ps[0].streams.as_ref().unwrap(),
        ps[1].streams.as_ref().unwrap(),
    );
    assert_eq!((a.line_bps, a.line_from), (None, None));
    assert_eq!(
        (b.line_bps, b.line_from),
        (Some(1_000_000_000), Some(super::LineFrom::Layer1))
    );
    assert_eq!(b.specs[0].rate, crate::stream::spec::Rate::Percent(1.0));
}

#[test]
fn a_port_sending_to_two_is_checked_against_its_line_rate_as_a_whole() {
    // 60 % of p1's 1 Gb/s to p2 and 60 % to p3: each leg fits, the port does not.
    let f = ports_config(
        "netns:upk-x/va",
        "netns:upk-x/vb",
        Some("netns:upk-x/vc"),
        &[("f0", "p1", "p2"), ("f1", "p1", "p3")],
    );
    let text = std::fs::read_to_string(f.arg())
        .unwrap()
        .replacen(
            "flows:\n",
            "layer1:\n  - {name: ly, port_names: [p1], speed: speed_1_gbps}\nflows:\n",
            1,
        )
        .replace("rate: {pps: 1000}", "rate: {percentage: 60}");
    let f = tempfile_like::File::new(&text);
    let e = plans(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.contains("ports[0]: the flows of port \"p1\" need")
            && e.contains("together, above its line rate of"),
        "{e}"
    );
    // 40 % each fits.
    let f = tempfile_like::File::new(&text.replace("percentage: 60", "percentage: 40"));
    assert_eq!(plans(&["--config", f.arg()]).unwrap().len(), 2);
}

#[test]
fn config_rate_above_the_line_is_refused() {
    let percent = "  - name: a\n    tx_rx: {port: {tx_name: p1, rx_names: [p2]}}\n    packet: [{ethernet: {}}, {ipv4: {}}, {udp: {}}]\n    size: {fixed: 64}\n    rate: {pps: 1000}\n";
    let f = tempfile_like::File::new(&format!(
        "ports:\n  - {{name: p1, location: lab:tx}}\n  - {{name: p2, location: lab:rx}}\nlayer1:\n  - {{name: ly, port_names: [p1, p2], speed: speed_10_fd_mbps}}\nflows:\n{percent}"
    ));
    // 10 Mb/s carries 14,880.95 frames of 64 bytes (84 on the wire) a second.
    plan(&["--config", f.arg(), "--config-rate", "14880"]).unwrap();
    let e = plan(&["--config", f.arg(), "--config-rate", "15000"])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "--config-rate 15000: the flows at 15000 frames per second need 10.080 Mbit/s on the wire, above port \"p1\"'s line rate of 10 Mbit/s"
    );
}
