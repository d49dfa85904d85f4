//! A hostile or broken far end against the controller: `upktgen agent --fake MODE` (the
//! real agent but for the one thing each mode does wrong) reached through `netns:`, and the
//! real agent left without its controller. What comes from the far end is printed escaped;
//! the controller's memory stays bounded whatever the far end writes; a far end that fails
//! after the send costs its part of the report only; lies are refused; nothing of the far
//! end outlives the session.
//!
//! `UPKTGEN_E2E_BIN=PATH` runs another build as the controller and the real agent (the fake
//! far end is always this build's), to measure a build from before a change.

use crate::common::hosts::{self, TwoHosts};
use crate::common::{self as common, root_or_skip, ssh_or_skip};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_upktgen");

fn controller() -> String {
    std::env::var("UPKTGEN_E2E_BIN").unwrap_or_else(|_| BIN.to_string())
}

/// What a controller run did: its status, its output, the peak of its resident memory
/// (VmHWM, read from /proc until it exited) and how long it took.
struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    hwm_kib: u64,
    secs: f64,
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .ok()
}

/// Reads `r` to the end on a thread of its own.
fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = r.read_to_end(&mut b);
        String::from_utf8_lossy(&b).into_owned()
    })
}

/// A script that runs this build's `upktgen agent --fake MODE` (what --peer-agent names).
fn fake(h: &TwoHosts, mode: &str) -> String {
    let p = h.file(&format!("fake-{mode}"));
    std::fs::write(&p, format!("#!/bin/sh\nexec {BIN} agent --fake {mode}\n")).unwrap();
    hosts::run(&["chmod", "755", p.to_str().unwrap()]);
    p.to_str().unwrap().to_string()
}

/// `upktgen run` in a, `count` frames at `pps` to b, its far end the `agent` program in b.
fn run_against(h: &TwoHosts, agent: &str, count: u64, pps: u64, extra: &[&str]) -> Ran {
    let peer = format!("netns:{}", h.b);
    let (c, r) = (count.to_string(), pps.to_string());
    let mut child = Command::new("ip")
        .args(["netns", "exec", &h.a, &controller(), "run"])
        .args(["--dev", hosts::A_DATA, "--dst", &h.b_ip, "--src", &h.a_ip])
        .args(["--dst-mac", hosts::B_MAC, "--count", &c, "--ratep", &r])
        .args(["--peer", &peer, "--peer-dev", hosts::B_DATA])
        .args(["--rx-backend", "af_packet", "--peer-agent", agent])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    // ip netns exec execs the controller: this pid is the controller's.
    let pid = child.id();
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let mut hwm = 0;
    let status = loop {
        if let Some(k) = vm_hwm_kib(pid) {
            hwm = hwm.max(k);
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let ran = Ran {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        hwm_kib: hwm,
        secs: t0.elapsed().as_secs_f64(),
    };
    eprintln!(
        "controller against {agent}: status {:?}, VmHWM {} kB, {:.1} s",
        ran.status.code(),
        ran.hwm_kib,
        ran.secs
    );
    ran
}

/// The controller's own resident memory with a well-behaved far end, for comparison.
const BOUND_KIB: u64 = 150 * 1024;

/// The local report, whole, in the text form.
fn assert_local_report(r: &Ran, count: u64) {
    assert!(
        r.stdout.contains("Result: OK: ")
            && r.stdout.contains(&format!("usec, {count} ("))
            && r.stdout.contains("Transmitted: "),
        "no local report:\n{}\n{}",
        r.stdout,
        r.stderr
    );
}

fn last_error(r: &Ran) -> &str {
    r.stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("upktgen: "))
        .unwrap_or("")
}

fn what_the_far_end_says_of_itself_is_printed_escaped_and_marked() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let r = run_against(&h, &fake(&h, "escapes"), 1000, 50_000, &[]);
    assert!(r.status.success(), "{}", r.stderr);
    for (what, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        assert!(
            !text.contains('\x1b') && !text.contains('\x07'),
            "an escape sequence reached the {what}:\n{text:?}"
        );
    }
    let peer = r.stdout.lines().find(|l| l.starts_with("Peer:")).unwrap();
    assert!(
        peer.contains(r"far\x1b]0;pwned\x07\x1b[2J\rResult: OK"),
        "{peer}"
    );
    // The far end's standard error: marked, and no line of it looks like ours.
    let far = format!("peer netns:{} (far end's stderr): ", h.b);
    let forged = r.stderr.lines().find(|l| l.contains("forged")).unwrap();
    assert!(forged.starts_with(&far), "{forged}");
    assert!(!r.stderr.lines().any(|l| l.starts_with("Result:")));
    assert_eq!(
        r.stdout
            .lines()
            .filter(|l| l.starts_with("Result:"))
            .count(),
        1
    );
}

fn merge_prints_a_documents_host_escaped() {
    let d = common::tmp_dir("far-hostile", "merge");
    let mut doc: Value =
        serde_json::from_str(include_str!("../data/run.json")).expect("tests/data/run.json");
    doc["host"] = json!("vm\x1b[2J\rResult: OK: forged");
    let f = d.join("hostile.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    let o = Command::new(controller())
        .args(["merge", f.to_str().unwrap()])
        .output()
        .unwrap();
    let (out, err) = (common::stdout(&o), common::stderr(&o));
    assert!(o.status.success(), "{err}");
    assert!(!out.contains('\x1b') && !err.contains('\x1b'), "{out:?}");
    assert!(out.contains(r"vm\x1b[2J\rResult: OK: forged"), "{out}");
}

fn an_endless_stderr_line_is_cut_and_costs_no_memory() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let r = run_against(&h, &fake(&h, "stderr-line"), 1000, 50_000, &[]);
    assert!(r.status.success(), "{}", last_error(&r));
    assert!(
        r.stderr.contains("[line cut at 4096 bytes]"),
        "{}",
        last_error(&r)
    );
    assert!(
        r.stderr.len() < 64 * 1024,
        "{} bytes of stderr",
        r.stderr.len()
    );
    assert!(r.hwm_kib < BOUND_KIB, "controller VmHWM {} kB", r.hwm_kib);
    assert_local_report(&r, 1000);
    assert!(r.stdout.contains("Peer:        netns:"), "{}", r.stdout);
}

fn a_stdout_flood_ends_the_session_and_costs_no_memory() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    // Three seconds of sending while the far end floods.
    let r = run_against(&h, &fake(&h, "stdout-flood"), 150_000, 50_000, &[]);
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(r.hwm_kib < BOUND_KIB, "controller VmHWM {} kB", r.hwm_kib);
    assert!(
        r.stderr
            .contains("the far end answered request 0, but the request under way is"),
        "{}",
        r.stderr
    );
    assert_local_report(&r, 150_000);
    assert!(
        last_error(&r).contains("the report above lacks its part"),
        "{}",
        r.stderr
    );
}

fn wrong_ids_are_refused_at_once_and_named() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let r = run_against(&h, &fake(&h, "wrong-ids"), 1000, 50_000, &[]);
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    let e = last_error(&r);
    assert!(
        e.contains("hello: the far end answered request 1001, but the request under way is 1"),
        "{e}"
    );
    assert!(!e.contains("no answer"), "{e}");
    // At once, not after hello's 20 s.
    assert!(r.secs < 15.0, "{} s", r.secs);
}

fn lies_are_refused_not_printed_as_results() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let r = run_against(&h, &fake(&h, "lie-version"), 1000, 50_000, &["--json"]);
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(
        last_error(&r).contains("does not speak JSON-RPC 2.0 (its answer says \"1.0\")"),
        "{}",
        r.stderr
    );
    for (mode, want) in [
        (
            "lie-counters",
            "counters: the far end's answer is impossible (dat-b: rx_packets is 2^64-1)",
        ),
        ("lie-report", "frames received of 1000 sent"),
    ] {
        let r = run_against(&h, &fake(&h, mode), 1000, 50_000, &[]);
        assert_eq!(r.status.code(), Some(1), "{mode}: {}", r.stderr);
        assert!(last_error(&r).contains(want), "{mode}: {}", r.stderr);
        assert!(!r.stdout.contains("18446744073709551615"), "{}", r.stdout);
        assert!(
            !r.stdout.contains("Delivered:   1000000000"),
            "{}",
            r.stdout
        );
        assert_local_report(&r, 1000);
        assert!(
            r.stdout.contains("Missing:     the far end's part: "),
            "{}",
            r.stdout
        );
    }
}

fn a_far_end_that_fails_after_the_send_keeps_the_local_report() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    // Gone in the middle of the run: the local report, text and JSON, then the error.
    let agent = fake(&h, "exit-mid-run");
    let r = run_against(&h, &agent, 50_000, 50_000, &[]);
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert_local_report(&r, 50_000);
    assert!(
        r.stdout.contains("Missing:     the far end's part: "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("Delivered:   unknown (the far end's report is missing"),
        "{}",
        r.stdout
    );
    assert!(
        last_error(&r).contains("the report above lacks its part"),
        "{}",
        r.stderr
    );
    let r = run_against(&h, &agent, 50_000, 50_000, &["--json"]);
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).expect("a JSON document");
    assert_eq!(j["outcome"]["result"]["sent"], 50_000);
    assert_eq!(
        j["tx_iface"]["tx_packets"].as_u64().map(|n| n >= 50_000),
        Some(true)
    );
    assert!(j["peer"].is_null() && j["rx_analysis"].is_null(), "{j}");
    // Slow to exit after its report: its report came whole, and is kept (the far end's
    // part with it); the trouble is said beside it.
    let agent = fake(&h, "slow-exit");
    let r = run_against(&h, &agent, 1000, 50_000, &["--json"]);
    assert!(r.status.success(), "{}", r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).expect("a JSON document");
    assert_eq!(
        j["rx_analysis"]["receiver"]["sink"]["totals"]["received"],
        1000
    );
    let e = last_error(&r);
    assert!(
        e.contains("warning: ")
            && e.contains("did not exit within 3 s")
            && e.contains("after its report, which is kept"),
        "{e}"
    );
    let r = run_against(&h, &agent, 1000, 50_000, &[]);
    assert!(r.status.success(), "{}", r.stderr);
    assert!(
        r.stdout.contains("Peer exit:   peer netns:"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Peer:        netns:"), "{}", r.stdout);
}

fn alive(pid: u32) -> bool {
    // A zombie is gone for this purpose.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

fn the_far_end_s_children_do_not_outlive_the_session() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let r = run_against(&h, &fake(&h, "fork-hang"), 1000, 50_000, &[]);
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert!(
        last_error(&r).contains("no answer to hello"),
        "{}",
        r.stderr
    );
    let pid: u32 = r
        .stderr
        .lines()
        .find_map(|l| l.split("fake far end: child ").nth(1))
        .and_then(|p| p.trim().parse().ok())
        .expect("the child's pid");
    let t0 = Instant::now();
    while alive(pid) && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = alive(pid);
    if left {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(!left, "the far end's child {pid} outlived the session");
}

/// The real agent in b, its input a pipe this test holds.
struct Agent {
    child: Child,
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Agent {
    fn start(h: &TwoHosts, args: &[&str]) -> Agent {
        let mut child = Command::new("ip")
            .args(["netns", "exec", &h.b, &controller(), "agent"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut a = Agent {
            child,
            stdin,
            out,
            next: 0,
        };
        let v = env!("CARGO_PKG_VERSION");
        let r = a.call(
            "hello",
            json!({"version": v, "protocol": upktgen::agent::proto::PROTOCOL}),
        );
        assert_eq!(r["result"]["version"], v, "{r}");
        a
    }

    fn send(&mut self, method: &str, params: Value) {
        self.next += 1;
        let req = json!({"jsonrpc":"2.0","id":self.next,"method":method,"params":params});
        writeln!(self.stdin, "{req}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&mut self) -> Value {
        let mut l = String::new();
        self.out.read_line(&mut l).unwrap();
        serde_json::from_str(&l).unwrap_or(Value::Null)
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params);
        self.answer()
    }

    /// Waits at most `within` for the agent to exit by itself.
    fn exited_within(&mut self, within: Duration) -> Option<ExitStatus> {
        let t0 = Instant::now();
        while t0.elapsed() < within {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }

    fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

fn xdp_on(h: &TwoHosts, dev: &str) -> bool {
    String::from_utf8_lossy(&h.in_b(&["ip", "link", "show", dev]).stdout).contains("xdp")
}

fn the_agent_s_watchdog_ends_a_session_nobody_calls() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    // The controller is "gone" without closing the channel: this test holds the pipe and
    // says nothing more after rx.start.
    let mut a = Agent::start(&h, &["--watchdog", "1s"]);
    let r = a.call(
        "rx.start",
        json!({"args": ["--dev", hosts::B_DATA, "--rx-backend", "af_xdp"]}),
    );
    assert_eq!(r["result"]["backend"], "af_xdp", "{r}");
    assert!(xdp_on(&h, hosts::B_DATA));
    let status = a.exited_within(Duration::from_secs(15));
    let err = a.stderr();
    assert!(
        status.is_some_and(|s| s.code() == Some(1)),
        "the agent outlived its silent controller: {status:?} {err}"
    );
    assert!(
        err.contains("no request for 1 s while a receiver ran"),
        "{err}"
    );
    assert!(!xdp_on(&h, hosts::B_DATA), "its XDP program was left");
}

fn sigterm_ends_the_agent_inside_rx_stop_s_wait() {
    if !root_or_skip() {
        return;
    }
    let h = TwoHosts::new();
    let mut a = Agent::start(&h, &[]);
    let r = a.call(
        "rx.start",
        json!({"args": ["--dev", hosts::B_DATA, "--rx-backend", "af_packet"]}),
    );
    let id = r["result"]["id"].clone();
    // Nothing comes: this waits for a minute of silence (ten at most) before it answers.
    a.send(
        "rx.stop",
        json!({"id": id, "settle_ms": 60_000, "max_wait_ms": 600_000}),
    );
    std::thread::sleep(Duration::from_millis(300));
    let pid = a.child.id().to_string();
    let t0 = Instant::now();
    hosts::run(&["kill", "-TERM", &pid]);
    // Its answer fits in the pipe: it can exit before this reads it.
    let status = a.exited_within(Duration::from_secs(10));
    eprintln!(
        "agent: exited {:.1} s after SIGTERM ({status:?})",
        t0.elapsed().as_secs_f64()
    );
    let answer = a.answer();
    assert!(status.is_some(), "the agent ignored SIGTERM inside rx.stop");
    // It answered with what it had, then ended.
    assert_eq!(answer["result"]["stopped_by"], "sender_done", "{answer}");
}

fn an_ssh_config_that_is_not_a_small_regular_file_is_refused_before_ssh() {
    if !root_or_skip() {
        return;
    }
    let d = common::tmp_dir("far-hostile", "sshcfg");
    let fifo = d.join("fifo");
    hosts::run(&["mkfifo", fifo.to_str().unwrap()]);
    let big = d.join("big");
    std::fs::write(&big, vec![b'#'; 2 << 20]).unwrap();
    for (f, want) in [
        (
            "/dev/zero",
            "--ssh-config /dev/zero: not a regular file (a character device)",
        ),
        (
            fifo.to_str().unwrap(),
            "not a regular file (a FIFO (named pipe))",
        ),
        ("/", "not a regular file (a directory)"),
        (
            big.to_str().unwrap(),
            "2097152 bytes: larger than 1048576 bytes",
        ),
    ] {
        let mut c = Command::new(controller());
        c.args(["run", "--dev", "lo", "--dst", "127.0.0.1"])
            .args(["--dst-mac", "02:00:00:00:00:01", "--count", "1"])
            .args(["--peer", "ssh://far", "--peer-dev", "x", "--ssh-config", f]);
        let o = c.output().unwrap();
        let e = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{f}: {e}");
        assert!(e.contains(want), "{f}: {e}");
    }
}

fn ssh_names_that_are_not_names_are_refused_before_ssh() {
    for (uri, want) in [
        ("ssh://far;id", "not a host name"),
        ("ssh://$(id)", "not a host name"),
        ("ssh://fa'r", "not a host name"),
        ("ssh://[::1;id]", "not an IPv6 address"),
        ("ssh://ro$(id)ot@far", "not a user name"),
        ("ssh://a;b@far", "not a user name"),
        ("ssh://'x'@far", "not a user name"),
    ] {
        let o = Command::new(controller())
            .args(["run", "--dev", "lo", "--dst", "127.0.0.1"])
            .args(["--dst-mac", "02:00:00:00:00:01", "--count", "1"])
            .args(["--peer", uri, "--peer-dev", "x"])
            .output()
            .unwrap();
        let e = common::stderr(&o);
        assert!(matches!(o.status.code(), Some(1 | 2)), "{uri}: {e}");
        assert!(e.contains(want), "{uri}: {e}");
    }
}

/// The pids in namespace `ns` whose command line (its words joined by blanks) holds `word`.
fn pids_in(ns: &str, word: &str) -> Vec<u32> {
    let o = Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(word)
            })
        })
        .collect()
}

/// `upktgen run` in a to b over ssh, with `cut` done to the far end after a second of
/// sending.
fn ssh_run_cut(h: &mut TwoHosts, cut: impl FnOnce(&TwoHosts)) -> Ran {
    let cfg = h.start_sshd();
    let h = &*h;
    let cfg = cfg.to_str().unwrap().to_string();
    std::thread::scope(|s| {
        let run = s.spawn(|| {
            let o = Command::new("ip")
                .args(["netns", "exec", &h.a, &controller(), "run"])
                .args(["--dev", hosts::A_DATA, "--dst", &h.b_ip, "--src", &h.a_ip])
                .args([
                    "--dst-mac",
                    hosts::B_MAC,
                    "--count",
                    "150000",
                    "--ratep",
                    "50000",
                ])
                .args([
                    "--peer",
                    "ssh://far",
                    "--ssh-config",
                    &cfg,
                    "--peer-agent",
                    &controller(),
                ])
                .args(["--peer-dev", hosts::B_DATA, "--rx-backend", "af_packet"])
                .output()
                .unwrap();
            (o, Instant::now())
        });
        let t0 = Instant::now();
        while common::rx_packets_in(&h.b, hosts::B_DATA).unwrap_or(0) < 10_000 {
            assert!(t0.elapsed().as_secs() < 30, "no traffic");
            std::thread::sleep(Duration::from_millis(20));
        }
        cut(h);
        let (o, _) = run.join().unwrap();
        Ran {
            status: o.status,
            stdout: common::stdout(&o),
            stderr: common::stderr(&o),
            hwm_kib: 0,
            secs: t0.elapsed().as_secs_f64(),
        }
    })
}

fn a_lost_management_link_keeps_the_local_report_and_the_far_agent_goes() {
    if !root_or_skip() || !ssh_or_skip() {
        return;
    }
    let mut h = TwoHosts::new();
    let r = ssh_run_cut(&mut h, |h| {
        hosts::run(&["ip", "-n", &h.b, "link", "set", "mgt-b", "down"]);
    });
    eprintln!(
        "management link down: status {:?}, {:.1} s",
        r.status.code(),
        r.secs
    );
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert_local_report(&r, 150_000);
    assert!(
        r.stdout.contains("Missing:     the far end's part: "),
        "{}",
        r.stdout
    );
    // The agent hears nothing more: its watchdog ends it (30 s after the last request),
    // not TCP's timeout hours later.
    let t0 = Instant::now();
    while !pids_in(&h.b, " agent").is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(45),
            "the far agent outlived the lost link: {:?}",
            pids_in(&h.b, " agent")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "far agent gone {:.1} s after the controller",
        t0.elapsed().as_secs_f64()
    );
}

fn a_killed_sshd_keeps_the_local_report() {
    if !root_or_skip() || !ssh_or_skip() {
        return;
    }
    let mut h = TwoHosts::new();
    let r = ssh_run_cut(&mut h, |h| {
        // The session's own sshd (not the listener, which the test's TwoHosts owns).
        for p in pids_in(&h.b, "sshd: root") {
            hosts::run(&["kill", "-9", &p.to_string()]);
        }
    });
    assert_eq!(r.status.code(), Some(1), "{}", r.stderr);
    assert_local_report(&r, 150_000);
    assert!(
        r.stdout.contains("Missing:     the far end's part: "),
        "{}",
        r.stdout
    );
    assert!(
        last_error(&r).contains("the report above lacks its part"),
        "{}",
        r.stderr
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    what_the_far_end_says_of_itself_is_printed_escaped_and_marked,
    merge_prints_a_documents_host_escaped,
    an_endless_stderr_line_is_cut_and_costs_no_memory,
    a_stdout_flood_ends_the_session_and_costs_no_memory,
    wrong_ids_are_refused_at_once_and_named,
    lies_are_refused_not_printed_as_results,
    a_far_end_that_fails_after_the_send_keeps_the_local_report,
    the_far_end_s_children_do_not_outlive_the_session,
    the_agent_s_watchdog_ends_a_session_nobody_calls,
    sigterm_ends_the_agent_inside_rx_stop_s_wait,
    an_ssh_config_that_is_not_a_small_regular_file_is_refused_before_ssh,
    ssh_names_that_are_not_names_are_refused_before_ssh,
    a_lost_management_link_keeps_the_local_report_and_the_far_agent_goes,
    a_killed_sshd_keeps_the_local_report,
];
