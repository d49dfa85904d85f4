//! What comes from a file or a local command is not trusted, and nothing outlives the run:
//! `ndr --resume` of a hostile results file, `ndr --out` through a link, FIFOs as inputs,
//! a `--dut-setup` that never ends (or leaves processes behind), `kill -9` of `ndr`, and
//! an `ndr` whose every trial fails.

use crate::common::{Tmp, namespaces_with_prefix, root_or_skip, stderr, tmp_dir, upktgen};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn tmp(tag: &str) -> Tmp {
    tmp_dir("resume", tag)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The child's output if it ends within `limit`; else it is killed and the test fails.
fn within(mut c: Child, limit: Duration, what: &str) -> Output {
    let t0 = Instant::now();
    while c.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = c.kill();
            let o = c.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?} (killed): {}",
                stderr(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    c.wait_with_output().unwrap()
}

fn alive(pid: u32) -> bool {
    // A zombie is no longer running.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
        st.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

/// A results file whose header asks for a search of 64-byte frames with the given run
/// options (short trials, NDR only, no latency).
fn results_file(p: &Path, run_args: &[&str]) {
    let h = serde_json::json!({"schema": "upktgen.ndr-results/1", "upktgen_ndr": 1,
        "sizes": [64], "repeat": 1, "latency": false, "line_rate_mbps": null,
        "config": {"loss": 0.0, "pdr": null, "precision": {"relative": 0.02},
                   "max_rate": 1000.0, "min_rate": 0.0, "search_s": 0.25, "final_s": 0.5,
                   "tolerance": 0.02},
        "run_args": run_args});
    std::fs::write(p, h.to_string() + "\n").unwrap();
}

fn a_hostile_results_file_runs_no_command() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("hostile");
    let pwned = d.join("PWNED.txt");
    let setup = format!("id > {}", pwned.display());
    let f = d.join("r.jsonl");
    results_file(&f, &["--lab", "dut", "--dut-setup", &setup]);
    let o = upktgen(&["ndr", "--resume", s(&f)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!pwned.exists(), "the file's --dut-setup ran");
    let e = stderr(&o);
    assert!(
        e.contains(&format!("--dut-setup {setup:?} (runs a command)")),
        "{e}"
    );
    // The file's --dut-setup-file, --peer-agent and --ssh-config: the same.
    let script = d.join("x.sh");
    std::fs::write(&script, format!("#!/bin/sh\nid > {}\n", pwned.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ssh_config = d.join("ssh_config");
    std::fs::write(
        &ssh_config,
        format!("Host *\n  ProxyCommand id > {}\n", pwned.display()),
    )
    .unwrap();
    for run_args in [
        vec!["--lab", "dut", "--dut-setup-file", s(&script)],
        vec![
            "--peer",
            "local",
            "--peer-dev",
            "veth-rx",
            "--peer-agent",
            s(&script),
        ],
        vec![
            "--peer",
            "ssh://upktgen-e2e.invalid",
            "--peer-dev",
            "eth0",
            "--ssh-config",
            s(&ssh_config),
        ],
    ] {
        results_file(&f, &run_args);
        let o = upktgen(&["ndr", "--resume", s(&f)]);
        assert_eq!(o.status.code(), Some(1), "{run_args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("A results file is data"),
            "{run_args:?}: {}",
            stderr(&o)
        );
        assert!(!pwned.exists(), "{run_args:?} ran");
    }
    // Given again, exactly as recorded, on the command line: the user's own choice, run.
    results_file(&f, &["--lab", "dut", "--dut-setup", &setup]);
    let o = upktgen(&["ndr", "--resume", s(&f), "--", "--dut-setup", &setup]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(pwned.exists());
}

fn options_beside_resume_are_refused_unless_they_are_the_files() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("beside");
    let f = d.join("r.jsonl");
    results_file(&f, &["--backend", "af_packet"]);
    for (args, want) in [
        (
            vec!["--sizes", "128"],
            "--sizes 128 (the file's: 64) differ from the file's settings",
        ),
        (
            vec!["--", "--backend", "tx_ring"],
            "--backend \"tx_ring\" (the file's: --backend \"af_packet\")",
        ),
    ] {
        let mut a = vec!["ndr", "--resume", s(&f)];
        a.extend_from_slice(&args);
        let o = upktgen(&a);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(&f).unwrap().lines().count(),
            1,
            "no trial ran"
        );
    }
}

fn ndr_out_refuses_a_link_and_says_what_is_wrong() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("out");
    let real = d.join("real");
    std::fs::create_dir(&real).unwrap();
    let link = d.join("o");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let search = |out: &str| {
        upktgen(&[
            "ndr",
            "--sizes",
            "64",
            "--trial",
            "500ms",
            "--search-trial",
            "250ms",
            "--max-rate",
            "1000",
            "--pdr",
            "none",
            "--no-latency",
            "--out",
            out,
        ])
    };
    let o = search(s(&link));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--out ") && stderr(&o).contains("a symbolic link (to "),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_dir(&real).unwrap().count(),
        0,
        "wrote through the link"
    );
    let o = search("/dev/null");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--out /dev/null: not a directory"),
        "{}",
        stderr(&o)
    );
    // A directory holding what upktgen did not write (no manifest) is refused before any
    // trial, and what is there is left alone.
    let theirs = d.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("index.html"), "mine").unwrap();
    let o = search(s(&theirs));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("index.html") && !stderr(&o).contains("[ndr] size"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(theirs.join("index.html")).unwrap(),
        "mine"
    );
}

fn a_fifo_as_input_is_refused_at_once() {
    let d = tmp("fifo");
    let fifo = d.join("p");
    mkfifo(&fifo);
    let p = s(&fifo);
    for args in [
        vec!["ndr", "--resume", p],
        vec!["run", "--replay", p, "--count", "1"],
        vec!["merge", p],
        vec!["compare", p, p],
    ] {
        let o = within(spawn(&args), Duration::from_secs(10), &format!("{args:?}"));
        assert!(!o.status.success(), "{args:?}");
        assert!(
            stderr(&o).contains("a FIFO (named pipe), not a regular file"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

fn dut_setup_file_says_what_the_name_is() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("setup-file");
    let fifo = d.join("p");
    mkfifo(&fifo);
    for (f, want) in [
        (s(&d).to_string(), "a directory, not a regular file"),
        (
            s(&fifo).to_string(),
            "a FIFO (named pipe), not a regular file",
        ),
        (format!("{}/none", s(&d)), "no such file"),
    ] {
        let o = upktgen(&[
            "run",
            "--lab",
            "dut",
            "--dut-setup-file",
            &f,
            "--count",
            "1",
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("--dut-setup-file {f}: {want}")),
            "{}",
            stderr(&o)
        );
    }
}

fn a_dut_setup_that_never_ends_is_timed_out_or_interrupted_with_its_processes() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("setup-hang");
    // Timed out: killed, the run fails and says why.
    let o = within(
        spawn(&[
            "run",
            "--lab",
            "dut",
            "--dut-setup",
            "sleep 1000",
            "--dut-setup-timeout",
            "1s",
            "--count",
            "1",
        ]),
        Duration::from_secs(20),
        "a set-up past its timeout",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("did not end within 1 s (--dut-setup-timeout)"),
        "{}",
        stderr(&o)
    );
    // SIGTERM (as a supervisor sends it) while it runs: interrupted, not failed, and what it
    // started in the background is gone too.
    let bg = d.join("bg.pid");
    let setup = format!("sleep 1000 & echo $! > {}; sleep 1000", bg.display());
    let c = spawn(&["run", "--lab", "dut", "--dut-setup", &setup, "--count", "1"]);
    let pid = c.id();
    let t0 = Instant::now();
    while std::fs::read_to_string(&bg).map_or(true, |t| t.trim().is_empty()) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the set-up did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let bg_pid: u32 = std::fs::read_to_string(&bg)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let o = within(c, Duration::from_secs(20), "a set-up after SIGTERM");
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("failed"), "{}", stderr(&o));
    assert!(
        !alive(bg_pid),
        "the set-up's background process outlived it"
    );
    assert!(namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty());
}

fn what_a_dut_setup_leaves_running_goes_with_the_lab() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("setup-bg");
    let bg = d.join("bg.pid");
    // A background process that keeps the set-up's output open: the run goes on without it
    // and kills it when the lab goes.
    let setup = format!("sleep 1000 & echo $! > {}", bg.display());
    let o = within(
        spawn(&[
            "run",
            "--lab",
            "dut",
            "--dut-setup",
            &setup,
            "--count",
            "1000",
        ]),
        Duration::from_secs(30),
        "a run whose set-up left a process behind",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bg_pid: u32 = std::fs::read_to_string(&bg)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !alive(bg_pid),
        "the set-up's background process outlived the lab"
    );
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    let mut v = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let c = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        v.extend(c.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
    }
    v
}

fn kill_9_of_ndr_stops_its_trial() {
    if !root_or_skip() {
        return;
    }
    let mut c = spawn(&[
        "ndr",
        "--sizes",
        "64",
        "--trial",
        "60s",
        "--search-trial",
        "60s",
        "--max-rate",
        "1000",
        "--pdr",
        "none",
        "--no-latency",
        "--results",
        "/dev/null",
    ]);
    let t0 = Instant::now();
    let trial = loop {
        if let Some(&k) = children(c.id()).first() {
            break k;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "no trial started");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Sending: let its lab come up.
    std::thread::sleep(Duration::from_secs(2));
    c.kill().unwrap();
    let _ = c.wait();
    let t0 = Instant::now();
    while alive(trial) {
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "the trial (pid {trial}) goes on after its ndr was killed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // It stopped as on Ctrl-C: its lab is removed.
    assert!(namespaces_with_prefix(&format!("upktgen-{trial}-")).is_empty());
}

fn ndr_whose_every_trial_fails_exits_non_zero() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("fail");
    let r = d.join("r.jsonl");
    for run in [
        vec![
            "--dev",
            "nosuchdev0",
            "--rx-dev",
            "nosuchdev1",
            "--dst",
            "10.0.0.1",
            "--dst-mac",
            "02:00:00:00:00:01",
        ],
        vec!["--lab", "dut", "--dut-setup", "false"],
    ] {
        let mut a = vec![
            "ndr",
            "--sizes",
            "64",
            "--trial",
            "500ms",
            "--search-trial",
            "250ms",
            "--pdr",
            "none",
            "--no-latency",
            "--results",
            s(&r),
            "--",
        ];
        a.extend_from_slice(&run);
        let o = upktgen(&a);
        assert_eq!(o.status.code(), Some(1), "{run:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("1 of 1 frame-size searches failed (64)"),
            "{run:?}: {}",
            stderr(&o)
        );
        // The table is still printed.
        assert!(String::from_utf8_lossy(&o.stdout).contains("NDR pps"));
    }
    // Run options no trial could run are refused once, before any trial (as `run` plans
    // them).
    let o = upktgen(&["ndr", "--results", s(&r), "--", "--dev", "nosuchdev0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("run options --dev nosuchdev0: --dst: required with --dev"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("[ndr] size"), "{}", stderr(&o));
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    a_hostile_results_file_runs_no_command,
    options_beside_resume_are_refused_unless_they_are_the_files,
    ndr_out_refuses_a_link_and_says_what_is_wrong,
    a_fifo_as_input_is_refused_at_once,
    dut_setup_file_says_what_the_name_is,
    a_dut_setup_that_never_ends_is_timed_out_or_interrupted_with_its_processes,
    what_a_dut_setup_leaves_running_goes_with_the_lab,
    kill_9_of_ndr_stops_its_trial,
    ndr_whose_every_trial_fails_exits_non_zero,
];
