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
            &["-t", "2"][..],
            "--threads: a config's flows are sent by one thread on one timeline (several queues, each with its own timeline, are not yet)",
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
        "netns:x/veth0",
        "lab:rx",
        &flow("a", "{fixed_packets: {packets: 10}}"),
    );
    let e = plan(&["--config", f.arg()]).unwrap_err().to_string();
    assert!(
        e.starts_with("--config: port \"p1\" sends from netns:x/veth0:"),
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
    assert_eq!(
        e,
        "--config: the flows are sent from port \"p1\" and received at port \"p2\", both at veth-a: the receiving port must be another one"
    );
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
