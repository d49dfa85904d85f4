//! `upktgen ndr` end to end, against real trials. Ground truth: the DUT lab (`run --lab dut`,
//! a fresh one per trial) with an nftables rule on the DUT's ingress (`--dut-setup`) that
//! drops what exceeds a packet rate, or a share of every frame: the receiver sees its drops
//! as sequence holes. Trials are short (0.25-0.5 s).

use crate::common::hosts::{self, TwoHosts};
use crate::common::nft::{self, nft_or_skip};
use crate::common::{Tmp, namespaces_with_prefix, root_or_skip, stderr, stdout, tmp_dir, upktgen};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tmp(tag: &str) -> Tmp {
    tmp_dir("ndr", tag)
}

/// An nftables rule on the DUT's ingress (dut-in), for `--dut-setup`.
fn rule(expr: &str) -> String {
    format!(
        "nft add table netdev ndr_test && nft add chain netdev ndr_test in '{{ type filter hook ingress device dut-in priority 0; policy accept; }}' && nft add rule netdev ndr_test in '{expr} counter drop'"
    )
}

/// The capacity of the limiter tests: packets per second and burst.
const R: f64 = 20_000.0;
const BURST: f64 = 1500.0;
const TRIAL_S: f64 = 0.5;

/// `ndr` with the tests' short trials (0.5 s final, 0.25 s searching, 2 %, NDR only), then
/// `extra`; the run options follow.
fn short_search<'a>(sizes: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "ndr",
        "--sizes",
        sizes,
        "--trial",
        "500ms",
        "--search-trial",
        "250ms",
        "--precision",
        "2%",
        "--pdr",
        "none",
        "--no-latency",
    ];
    v.extend_from_slice(extra);
    v
}

fn limiter_args<'a>(setup: &'a str, sizes: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = short_search(sizes, extra);
    v.extend_from_slice(&["--", "--lab", "dut", "--dut-setup", setup]);
    v
}

fn json_of(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

fn target<'a>(size: &'a Value, name: &str) -> &'a Value {
    size["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {size}"))
}

/// A size's NDR from `v` (ndr --json): between `lo` and `hi`, bound by the DUT, within the 2 %
/// precision of its lowest failure, and confirmed by a loss-free full-length trial. Returns
/// (rate, upper). `why` is shown with a failure (the search's trials).
fn dut_ndr_within(v: &Value, s: &Value, lo: f64, hi: f64, why: &str) -> (f64, f64) {
    let ndr = target(s, "NDR");
    let rate = ndr["rate"]
        .as_f64()
        .unwrap_or_else(|| panic!("no NDR: {s}\n{why}"));
    assert!(
        rate >= lo && rate <= hi,
        "size {}: NDR {rate} outside {lo}..{hi}: {s}\n{why}",
        s["size"]
    );
    assert_eq!(ndr["bound"], "dut", "{s}\n{why}");
    let upper = ndr["upper"].as_f64().unwrap();
    assert!(upper - rate <= 0.02 * upper + 1.0, "{s}");
    // Its confirmation: a full-length trial passed at the NDR.
    let trials = v["trials"].as_array().unwrap();
    assert!(
        ndr["trials_at_rate"].as_array().unwrap().iter().any(|i| {
            let t = &trials[i.as_u64().unwrap() as usize];
            t["request"]["duration_s"] == TRIAL_S && t["obs"]["dut_lost"] == 0
        }),
        "{s}"
    );
    assert!(s["trials"].as_array().unwrap().len() <= 16, "{s}\n{why}");
    (rate, upper)
}

fn no_lab_left(pid: u32) {
    assert!(
        namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty(),
        "lab left behind"
    );
}

fn a_known_capacity_is_found_at_three_frame_sizes() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let d = tmp("limit");
    let out = d.join("out");
    let setup = rule(&format!("limit rate over {R}/second burst {BURST} packets"));
    let out_s = out.to_string_lossy().into_owned();
    let o = upktgen(&limiter_args(
        &setup,
        "64,512,1518",
        &["--json", "--out", &out_s],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    // A token bucket passes R/s plus its burst: for T-second trials the true NDR lies between
    // R and R + B/T (22,000 pps here); the search must land there, within its 2 %.
    let hi = (R + BURST / TRIAL_S) * 1.02;
    let lo = R * 0.9;
    let sizes = v["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 3);
    for s in sizes {
        dut_ndr_within(&v, s, lo, hi, "");
    }
    // Every trial is in the results file, and the output directory has its files.
    let lines = std::fs::read_to_string(out.join("trials.jsonl")).unwrap();
    assert_eq!(
        lines.lines().count(),
        1 + v["trials"].as_array().unwrap().len()
    );
    for f in [
        "ndr.json",
        "ndr.csv",
        "trials.csv",
        "ndr_vs_size.svg",
        "loss_vs_rate.svg",
        "latency_vs_rate.svg",
        "index.html",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let csv = std::fs::read_to_string(out.join("ndr.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    // compare: a result against itself changes by nothing.
    let f = out.join("trials.jsonl").to_string_lossy().into_owned();
    let c = upktgen(&["compare", &f, &f]);
    assert!(c.status.success(), "{}", stderr(&c));
    let t = stdout(&c);
    assert!(t.contains("+0.00 %"), "{t}");
    assert_eq!(t.matches("bracket of the searches").count(), 3, "{t}");
}

fn a_share_lost_at_every_rate_has_no_ndr_but_a_pdr() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    // 0.2 % of the frames, at random: no rate is loss-free; 0.5 % is never reached.
    let setup = rule("numgen random mod 1000 < 2");
    let d = tmp("share");
    let res = d.join("r.jsonl");
    let o = upktgen(&[
        "ndr",
        "--results",
        res.to_str().unwrap(),
        "--sizes",
        "64",
        "--trial",
        "400ms",
        "--search-trial",
        "400ms",
        "--precision",
        "5%",
        "--min-rate",
        "15000",
        "--pdr",
        "0.5%",
        "--json",
        "--no-latency",
        "--lab",
        "dut",
        "--dut-setup",
        &setup,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    let s = &v["sizes"][0];
    let ndr = target(s, "NDR");
    assert!(ndr["rate"].is_null(), "{s}");
    assert!(ndr["note"].as_str().unwrap().contains("every rate"), "{s}");
    let pdr = target(s, "PDR");
    assert!(pdr["rate"].as_f64().is_some(), "{s}");
    assert_ne!(pdr["bound"], "dut", "{s}");
}

fn a_dut_faster_than_the_sender_is_sender_bound() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("fast");
    let res = d.join("r.jsonl");
    let o = upktgen(&[
        "ndr",
        "--sizes",
        "512",
        "--trial",
        "300ms",
        "--pdr",
        "none",
        "--results",
        res.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    let row = t
        .lines()
        .find(|l| l.trim_start().starts_with("512 "))
        .unwrap_or_else(|| panic!("{t}"));
    // No DUT in the lab: the bound is whichever end was slower. On a loaded machine the
    // lab's receiver can be the slower one (seen in CI: 15 % socket drops at 438 kpps); it is
    // then named, never the DUT.
    if row.trim_end().ends_with("receiver") {
        assert!(t.contains("bounded by the receiver: it kept up at"), "{t}");
        return;
    }
    assert!(row.trim_end().ends_with("sender"), "{t}");
    assert!(t.contains("bounded by the sender at"), "{t}");
    // The sender's ceiling was measured first (an unpaced trial), and the sender-bound
    // result is a rate the sender reached: above zero, and not above the fastest trial
    // (how fast that is swings with the machine's load, so no more is asserted).
    let trials: Vec<Value> = std::fs::read_to_string(&res)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(trials[0]["request"]["rate"].is_null());
    let fastest = trials
        .iter()
        .filter_map(|t| t["obs"]["achieved"].as_f64())
        .fold(0.0, f64::max);
    let ndr: f64 = row.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(
        ndr > 0.0 && ndr <= fastest * 1.001,
        "{ndr} vs the fastest trial {fastest}"
    );
}

fn ctrl_c_prints_the_partial_table_and_resume_finishes_the_search() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let d = tmp("stop");
    let res = d.join("r.jsonl");
    let res_s = res.to_string_lossy().into_owned();
    let setup = rule(&format!("limit rate over {R}/second burst {BURST} packets"));
    let args = limiter_args(&setup, "64,512", &["--results", &res_s]);
    let child = Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Two trials recorded: stop it during the third.
    let t0 = Instant::now();
    while std::fs::read_to_string(&res).map_or(0, |t| t.lines().count()) < 3 {
        assert!(t0.elapsed() < Duration::from_secs(60), "no trials recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("INTERRUPTED: partial results"), "{t}");
    assert!(t.contains("NDR pps"), "{t}");
    no_lab_left(pid);
    let recorded = std::fs::read_to_string(&res).unwrap().lines().count() - 1;
    assert!(recorded >= 2);
    // Resumed: the recorded trials are not run again and the search ends; its --dut-setup
    // is given again (a results file runs no command of its own).
    let o = upktgen(&[
        "ndr",
        "--resume",
        &res_s,
        "--json",
        "--",
        "--dut-setup",
        &setup,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("{recorded} trials recorded")), "{e}");
    let v = json_of(&o);
    let all = v["trials"].as_array().unwrap().len();
    let ran = e.matches("[ndr] size ").count();
    assert_eq!(ran + recorded, all, "{e}");
    for s in v["sizes"].as_array().unwrap() {
        assert!(target(s, "NDR")["rate"].as_f64().is_some(), "{s}");
    }
}

fn bad_input_is_a_clear_error() {
    for (args, want) in [
        (
            vec!["ndr", "--sizes", "32,64"],
            "--sizes 32,64: 32 is outside 64 to 9018",
        ),
        (
            vec!["ndr", "--precision", "0"],
            "--precision 0: must be at least 1 pps",
        ),
        (vec!["ndr", "--precision", "0%"], "must be above 0 %"),
        (
            vec!["ndr", "--loss", "1%", "--pdr", "0.5%"],
            "--pdr 0.5% is below --loss 1%",
        ),
        (vec!["ndr", "--", "--ratep", "100"], "--ratep: ndr sets it"),
        (
            vec!["ndr", "--backend", "nonsense"],
            "run options --backend nonsense",
        ),
        (
            vec!["ndr", "--resume", "/nonexistent/r.jsonl"],
            "/nonexistent/r.jsonl",
        ),
    ] {
        let o = upktgen(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

/// The far-end tests' token bucket: well below what the far receiver takes on a loaded
/// 2-CPU machine, with a burst that covers 100 ms of a sender's stall at that rate.
const FAR_R: f64 = 3000.0;
const FAR_BURST: f64 = 300.0;

/// `upktgen ndr` run inside host a against a far end (`far`: --peer ... or --rx-dev ...),
/// with an nftables limiter on dat-b's ingress in `limiter_ns` (af_packet's ETH_P_IP
/// receiver sits after netdev ingress, so the receiver sees the limiter's drops as holes;
/// af_xdp would take the frames before it). Checks the result is the limiter's and returns
/// the JSON.
fn far_end_finds_the_limiter(h: &TwoHosts, limiter_ns: &str, far: &[&str]) -> Value {
    nft::limit_ingress(limiter_ns, hosts::B_DATA, FAR_R as u32, FAR_BURST as u32);
    let res = h.file("r.jsonl");
    let res_s = res.to_string_lossy().into_owned();
    let mut a = vec![env!("CARGO_BIN_EXE_upktgen")];
    a.extend(short_search(
        "64",
        // veth says 10000 Mb/s: without --max-rate the ceiling trial would ask 14.9 Mpps and
        // the lowest rate be 1 % of it, far above the limiter.
        &["--max-rate", "20000", "--json", "--results", &res_s],
    ));
    a.extend_from_slice(&[
        "--",
        "--dev",
        hosts::A_DATA,
        "--dst",
        &h.b_ip,
        "--src",
        &h.a_ip,
        "--dst-mac",
        hosts::B_MAC,
        "--rx-backend",
        "af_packet",
    ]);
    a.extend_from_slice(far);
    let o = h.in_a(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    // The search's trials, shown with --nocapture.
    eprintln!("{}", stderr(&o));
    let v = json_of(&o);
    let s = &v["sizes"][0];
    let trials = v["trials"].as_array().unwrap();
    // A token bucket passes R/s plus its burst: for T-second trials the true NDR lies between
    // R and R + B/T (3,600 pps for 0.5 s trials). Above it nothing can pass (the bucket holds
    // no more); the search's result is within its 2 % of it, or lower only where a stall of
    // the sender burst through the bucket: R - 2 % is the floor (a failure at R or above, the
    // burst covering 100 ms of stall at R).
    let hi = (FAR_R + FAR_BURST / TRIAL_S) * 1.02;
    let lo = FAR_R * 0.98;
    let ndr = target(s, "NDR");
    if ndr["bound"] == "receiver" {
        // The far receiver's ring holds 64 ms of traffic at these rates (16 blocks retired
        // every 4 ms): starved longer than that by the machine's load, its socket drops. Then
        // the result must say so, with its evidence: two receiver-bound trials at the cap
        // (the receiver's drops, no DUT loss) or six in all, and no result at or above it.
        let cap = ndr["upper"].as_f64().unwrap();
        let rb = trials
            .iter()
            .filter(|t| {
                t["request"]["rate"].as_f64() == Some(cap)
                    && t["obs"]["receiver_lost"].as_u64().unwrap() > 0
                    && t["obs"]["dut_lost"] == 0
            })
            .count();
        let note = ndr["note"].as_str().unwrap_or("");
        assert!(
            rb >= 2 || note.starts_with("stopped after 6 receiver-bound trials"),
            "{s}"
        );
        assert!(
            note.contains("the receiver's own socket dropped frames"),
            "{s}"
        );
        if let Some(rate) = ndr["rate"].as_f64() {
            assert!(rate < cap && rate <= hi, "{s}");
        }
        eprintln!("{far:?}: receiver-bound at {cap} pps: {note}");
    } else {
        // Otherwise the DUT bounds it (the far receiver kept up).
        let (rate, upper) = dut_ndr_within(&v, s, lo, hi, &stderr(&o));
        eprintln!(
            "{far:?}: NDR {rate} pps, upper {upper}, {} trials",
            trials.len()
        );
    }
    // What the far end counted as the DUT's over every trial is exactly what the limiter
    // dropped: the far receiver's accounting, trial by trial, is the kernel's.
    let dut_lost: u64 = trials
        .iter()
        .map(|t| t["obs"]["dut_lost"].as_u64().unwrap())
        .sum();
    assert_eq!(dut_lost, nft::dropped(limiter_ns), "{}", stderr(&o));
    assert!(dut_lost > 0);
    // Every trial went to the results file.
    let lines = std::fs::read_to_string(&res).unwrap();
    assert_eq!(lines.lines().count(), 1 + trials.len());
    v
}

fn a_limiter_at_a_netns_far_end_is_found() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let peer = format!("netns:{}", h.b);
    let v = far_end_finds_the_limiter(&h, &h.b, &["--peer", &peer, "--peer-dev", hosts::B_DATA]);
    // Every trial's receiver was the far end (no lab receiver beside it).
    assert!(
        !v["header"]["run_args"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "--rx-analyze")
    );
}

fn a_limiter_at_an_ssh_far_end_is_found() {
    if !root_or_skip() || !crate::common::ssh_or_skip() || !nft_or_skip() {
        return;
    }
    // A real sshd in b: every trial logs in and runs the far agent there.
    let mut h = TwoHosts::new();
    let cfg = h.start_sshd();
    let cfg = cfg.to_string_lossy().into_owned();
    far_end_finds_the_limiter(
        &h,
        &h.b,
        &[
            "--peer",
            "ssh://far",
            "--ssh-config",
            &cfg,
            "--peer-agent",
            env!("CARGO_BIN_EXE_upktgen"),
            "--peer-dev",
            hosts::B_DATA,
        ],
    );
}

fn a_limiter_before_a_second_local_interface_is_found() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    // dat-a and dat-b in one namespace: two ports of one host joined by a cable.
    let h = TwoHosts::new();
    h.b_data_into_a();
    far_end_finds_the_limiter(&h, &h.a, &["--rx-dev", hosts::B_DATA]);
}

/// Three flows of different sizes and rates (1:2:3) through the DUT lab, to its receiver.
fn three_flows_config(path: &std::path::Path) {
    three_flows_config_with(path, "", 1000);
}

/// The three flows (64, 512 and 1,400 bytes at rates 1:2:3, `unit` pps the first), after
/// `layer1` (the config's `layer1:` section, or nothing).
fn three_flows_config_with(path: &std::path::Path, layer1: &str, unit: u32) {
    let mut s = format!(
        "ports:\n  - {{name: p1, location: lab:tx}}\n  - {{name: p2, location: lab:rx}}\n{layer1}flows:\n"
    );
    for (name, size, pps, port) in [
        ("small", 64, unit, 20000),
        ("mid", 512, 2 * unit, 20001),
        ("big", 1400, 3 * unit, 20002),
    ] {
        s += &format!(
            "  - name: {name}\n    tx_rx: {{port: {{tx_name: p1, rx_names: [p2]}}}}\n    packet: [{{ethernet: {{}}}}, {{ipv4: {{src: {{value: 10.99.0.1}}, dst: {{value: 10.99.1.2}}}}}}, {{udp: {{src_port: {{value: 7}}, dst_port: {{value: {port}}}}}}}]\n    size: {{fixed: {size}}}\n    rate: {{pps: {pps}}}\n    duration: {{fixed_packets: {{packets: 100}}}}\n"
        );
    }
    std::fs::write(path, s).unwrap();
}

/// `ndr --config`: the aggregate of a config's three flows through a DUT whose forward chain
/// passes R packets per second in all (a token bucket of B): found as the one-size search
/// finds it, each trial's flows sent in their rates' proportions and its loss their sum.
fn a_configs_aggregate_is_found_through_a_limiter() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let d = tmp("config");
    let cfg = d.join("three.yaml");
    three_flows_config(&cfg);
    let cfg_s = cfg.to_string_lossy().into_owned();
    let setup = format!(
        "nft add table inet ndr_test && nft add chain inet ndr_test f '{{ type filter hook forward priority 0; }}' && nft add rule inet ndr_test f limit rate over {R}/second burst {BURST} packets counter drop"
    );
    // --sizes is refused beside it, and so is a search without a ceiling: nothing runs.
    for (extra, want) in [
        (
            &["--sizes", "64", "--max-rate", "40000"][..],
            "--sizes 64: not with --config",
        ),
        (&[][..], "--config: give --max-rate"),
    ] {
        let mut a = vec!["ndr", "--config", &cfg_s];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--", "--lab", "dut"]);
        let o = upktgen(&a);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains(want), "{e}");
    }
    let results = d.join("r.jsonl");
    let results_s = results.to_string_lossy().into_owned();
    let mut a = vec!["ndr", "--config", &cfg_s, "--max-rate", "40000"];
    a.extend_from_slice(&["--results", &results_s]);
    a.extend_from_slice(&short_search("", &[])[3..]);
    a.extend_from_slice(&["--json", "--", "--lab", "dut", "--dut-setup", &setup]);
    let o = upktgen(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["header"]["run_args"][0], "--config", "{}", v["header"]);
    let sizes = v["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 1);
    // The flows' mean frame, weighted by their rates: 5,288,000 / 6,000 = 881.3 bytes,
    // rounded up (so a ceiling at the line rate stays within it).
    assert_eq!(sizes[0]["size"], 882, "{}", sizes[0]);
    let why = stderr(&o);
    dut_ndr_within(&v, &sizes[0], R * 0.9, (R + BURST / TRIAL_S) * 1.02, &why);
    for t in v["trials"].as_array().unwrap() {
        let flows = t["figures"]["flows"].as_array().unwrap();
        let names: Vec<&str> = flows.iter().map(|f| f["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["small", "mid", "big"], "{t}");
        let n = |f: &Value, k: &str| f[k].as_u64().unwrap();
        let sent: u64 = flows.iter().map(|f| n(f, "sent")).sum();
        let lost: u64 = flows.iter().map(|f| n(f, "sent") - n(f, "received")).sum();
        let o = &t["obs"];
        assert_eq!(sent, n(o, "sent"), "{t}");
        assert_eq!(
            lost,
            n(o, "dut_lost") + n(o, "receiver_lost") + n(o, "sender_lost"),
            "{t}"
        );
        // Each flow at its share (1:2:3) of the trial's rate.
        for (f, share) in flows.iter().zip([1.0, 2.0, 3.0]) {
            let want = sent as f64 * share / 6.0;
            assert!(
                (n(f, "sent") as f64 - want).abs() <= want * 0.01 + 2.0,
                "{t}"
            );
        }
        latency_of_a_configs_trial(t);
    }
}

/// min <= p50 <= p99 <= max, all above 0 (µs).
fn plausible_latency(l: &Value, what: &str) -> [f64; 4] {
    let k = |n: &str| {
        l[n].as_f64()
            .unwrap_or_else(|| panic!("{what}: no {n}: {l}"))
    };
    let v = [k("min_us"), k("p50_us"), k("p99_us"), k("max_us")];
    assert!(
        v[0] > 0.0 && v[0] <= v[1] && v[1] <= v[2] && v[2] <= v[3],
        "{what}: {l}"
    );
    v
}

/// A config's trial that received frames has a latency over all of them, and each flow
/// its own; the trial's is the union's: its min and max the flows' extremes (both exact),
/// its median between the flows' medians (a percentile of frames pooled lies between the
/// pools' own, here within the histograms' 1 %).
fn latency_of_a_configs_trial(t: &Value) {
    let flows = t["figures"]["flows"].as_array().unwrap();
    if flows.iter().all(|f| f["received"] == 0) {
        return;
    }
    let all = plausible_latency(&t["figures"]["latency"], &format!("trial {t}"));
    let per: Vec<[f64; 4]> = flows
        .iter()
        .filter(|f| f["received"].as_u64().unwrap() > 0)
        .map(|f| plausible_latency(&f["latency"], &format!("flow {f} of {t}")))
        .collect();
    let lo = |i: usize| per.iter().map(|l| l[i]).fold(f64::INFINITY, f64::min);
    let hi = |i: usize| per.iter().map(|l| l[i]).fold(0.0, f64::max);
    assert_eq!((all[0], all[3]), (lo(0), hi(3)), "{t}");
    assert!(
        all[1] >= lo(1) * 0.99 - 0.01 && all[1] <= hi(1) * 1.01 + 0.01,
        "{t}"
    );
}

/// `ndr --config` without `--max-rate`: the sending port's `layer1` speed is the ceiling,
/// its line rate at the flows' mean frame on the wire (882 + 20 bytes at 10 Mb/s: 1,385
/// frames a second), well below what the DUT's limiter passes (R): the search's result is
/// that ceiling, nothing lost on the way, and the latency trials below it have latency.
fn a_layer1_speed_is_a_configs_ceiling() {
    if !root_or_skip() || !nft_or_skip() {
        return;
    }
    let d = tmp("layer1");
    let cfg = d.join("slow.yaml");
    three_flows_config_with(
        &cfg,
        "layer1:\n  - {name: l1, port_names: [p1], speed: speed_10_fd_mbps}\n",
        10,
    );
    let cfg_s = cfg.to_string_lossy().into_owned();
    let setup = format!(
        "nft add table inet ndr_test && nft add chain inet ndr_test f '{{ type filter hook forward priority 0; }}' && nft add rule inet ndr_test f limit rate over {R}/second burst {BURST} packets counter drop"
    );
    let results = d.join("r.jsonl");
    let results_s = results.to_string_lossy().into_owned();
    let o = upktgen(&[
        "ndr",
        "--config",
        &cfg_s,
        "--trial",
        "500ms",
        "--search-trial",
        "250ms",
        "--precision",
        "2%",
        "--pdr",
        "none",
        "--results",
        &results_s,
        "--json",
        "--",
        "--lab",
        "dut",
        "--dut-setup",
        &setup,
    ]);
    let why = stderr(&o);
    assert!(o.status.success(), "{why}");
    let v = json_of(&o);
    // The document and the results file's trials (each flow's latency in them) are the
    // schema's.
    crate::common::schema::check(upktgen::schema::NDR, &v, "ndr --json");
    let text = std::fs::read_to_string(&results).unwrap();
    let trial_lines: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    crate::common::schema::check_lines(upktgen::schema::NDR_TRIAL, &trial_lines, "r.jsonl");
    let h = &v["header"];
    assert_eq!(h["line_rate_mbps"], 10.0, "{h}");
    assert_eq!(h["config"]["max_rate"], Value::Null, "{h}");
    let s = &v["sizes"][0];
    assert_eq!(s["size"], 882, "{s}");
    // 10^7 / (902 x 8) = 1,385.8 (the true mean, 881.3 bytes, would give 1,386.8: rounding
    // the mean up keeps the ceiling within the line).
    let ceiling = 1385.0;
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials[0]["request"]["rate"], ceiling, "{why}");
    assert_eq!(trials[0]["request"]["purpose"], "ceiling", "{why}");
    let ndr = target(s, "NDR");
    let rate = ndr["rate"]
        .as_f64()
        .unwrap_or_else(|| panic!("no NDR: {s}\n{why}"));
    assert!(
        rate <= ceiling && rate >= ceiling * 0.98,
        "NDR {rate}, the ceiling {ceiling}: {s}\n{why}"
    );
    assert!(
        ndr["note"].as_str().unwrap_or("").contains("line rate"),
        "{s}"
    );
    // The ceiling's short pass was confirmed by a full-length trial.
    assert!(
        trials.iter().any(|t| t["request"]["rate"] == rate
            && t["request"]["duration_s"] == TRIAL_S
            && t["request"]["purpose"] == "confirm"
            && t["obs"]["dut_lost"] == 0),
        "{why}"
    );
    for t in trials {
        let r = t["request"]["rate"].as_f64().unwrap();
        assert!(r <= ceiling, "no trial above the ceiling: {t}");
        assert_eq!(
            t["obs"]["dut_lost"], 0,
            "nothing lost below the limiter: {t}"
        );
        latency_of_a_configs_trial(t);
    }
    // The three latency trials below the NDR, each with the union's figures.
    let lat = s["latency_trials"].as_array().unwrap();
    assert_eq!(lat.len(), 3, "{s}");
    for l in lat {
        let t = &trials[l[1].as_u64().unwrap() as usize];
        plausible_latency(&t["figures"]["latency"], &format!("latency trial {t}"));
    }
    // Resumed from its file with no option: the same header (the ceiling from the config).
    let o = upktgen(&[
        "ndr",
        "--resume",
        &results_s,
        "--config",
        &cfg_s,
        "--",
        "--lab",
        "dut",
        "--dut-setup",
        &setup,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("line rate 10 Mb/s"), "{out}");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("882 "))
        .unwrap_or_else(|| panic!("no row for 882: {out}"));
    // size, round, NDR, Mb/s, line %, PDR, latency at the NDR, p50 at 10/50/90 %, ...
    let cells: Vec<&str> = row.split_whitespace().collect();
    // 1,385 of the line's 1,385.8 (the ceiling is rounded down to a whole rate).
    assert_eq!((cells[2], cells[4]), ("1385", "99.9"), "{out}");
    // The result is the line's (the ceiling asked, reached), not called the sender's.
    assert!(
        out.contains(
            "NDR: bounded by the line rate at 1385 pps (the ceiling asked, 10 Mb/s at 882 bytes)"
        ),
        "{out}"
    );
    let us: Vec<f64> = cells[6].split('/').map(|x| x.parse().unwrap()).collect();
    assert!(us.len() == 4 && us[0] > 0.0 && us.is_sorted(), "{out}");
    assert_eq!(cells[7].split('/').count(), 3, "{out}");
}

// The searches run alone (harness.rs): each measures rates, and eight of them at once on a
// 2-CPU machine starved their senders below the limiter's rate (a search then ends
// sender-bound, or finds a rate the sender, not the DUT, could not hold).
pub(crate) const TESTS: &[crate::harness::Test] = crate::tests_alone![
    a_known_capacity_is_found_at_three_frame_sizes,
    a_share_lost_at_every_rate_has_no_ndr_but_a_pdr,
    a_dut_faster_than_the_sender_is_sender_bound,
    ctrl_c_prints_the_partial_table_and_resume_finishes_the_search,
    bad_input_is_a_clear_error,
    a_limiter_at_a_netns_far_end_is_found,
    a_limiter_at_an_ssh_far_end_is_found,
    a_limiter_before_a_second_local_interface_is_found,
    a_configs_aggregate_is_found_through_a_limiter,
    a_layer1_speed_is_a_configs_ceiling,
];
