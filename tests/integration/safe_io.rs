//! Safe on any input and any file system (issue 11): output files never written through a
//! link, a session removes only what it wrote, every input bounded, huge sweeps refused at
//! once, Ctrl-C ends a sweep's checking, sweep values are one word, compare fails plainly.
//! None of these need root.

use crate::common::{Tmp, stderr, stdout, tmp_dir, upktgen};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn tmp(tag: &str) -> Tmp {
    tmp_dir("safe", tag)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// Waits for `child`; kills it (SIGKILL: upktgen takes SIGTERM as a request to stop) and
/// fails the test when it has not ended within `limit`, which is generous: this checks that
/// it ends, not how fast.
fn wait_at_most(mut child: std::process::Child, limit: Duration, what: &str) -> Output {
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}; stderr: {}",
                stderr(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `upktgen ARGS` with its address space capped at 4 GiB (an unbounded read fails there
/// instead of taking the machine's memory), waited for at most 20 s.
fn bounded(args: &[&str]) -> Output {
    let child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_upktgen"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_at_most(child, Duration::from_secs(20), &args.join(" "))
}

fn a_link_planted_at_the_pcap_path_is_replaced_not_followed() {
    let d = tmp("pcap");
    let target = d.join("precious");
    std::fs::write(&target, "root's file").unwrap();
    let name = d.join("out.pcap");
    symlink(&target, &name).unwrap();
    let o = upktgen(&["run", "--pcap", s(&name), "--count", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "root's file");
    assert!(!is_link(&name), "the link is replaced by the file");
    let p = upktgen::pcap::read_file(&name).unwrap();
    assert_eq!(p.records.len(), 3);
    // An existing file is replaced whole; no temporary file is left beside it.
    let o = upktgen(&["run", "--pcap", s(&name), "--count", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(upktgen::pcap::read_file(&name).unwrap().records.len(), 1);
    let mut names: Vec<String> = std::fs::read_dir(&*d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["out.pcap", "precious"]);
    // A device is written in place.
    let o = upktgen(&["run", "--pcap", "/dev/null", "--count", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Path::new("/dev/null").exists());
}

const TINY_SIM: &str = "[sweep]\ncommand = \"sim\"\nrepetitions = 1\n[base]\ncount = 2000\n\
                        [[dimension]]\nname = \"ring\"\nvalues = [64, 256]\n";

fn links_planted_at_sweep_outputs_are_refused_or_replaced_never_followed() {
    let d = tmp("sweep");
    let f = d.join("s.toml");
    std::fs::write(&f, TINY_SIM).unwrap();
    let out = d.join("out");
    std::fs::create_dir(&out).unwrap();
    let victims = d.join("victims");
    std::fs::create_dir(&victims).unwrap();
    let planted = [
        "index.html",
        "pps.svg",
        "runs.csv",
        "summary.csv",
        "runs.json",
    ];
    for n in planted {
        std::fs::write(victims.join(n), "untouched").unwrap();
        symlink(victims.join(n), out.join(n)).unwrap();
    }
    // A directory of entries upktgen cannot prove it wrote (no manifest) is refused before
    // anything runs, and left as it was.
    let o = upktgen(&["sweep", s(&f), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "--out {}: not empty (index.html, pps.svg, runs.csv and 2 more) and without upktgen's manifest",
            s(&out)
        )),
        "{}",
        stderr(&o)
    );
    assert!(planted.iter().all(|n| is_link(&out.join(n))));
    // Names an earlier session wrote (its manifest lists them) and someone replaced with
    // links: the links are replaced, what they point to is untouched.
    let manifest: String = planted.iter().map(|n| format!("{n}\n")).collect();
    std::fs::write(out.join(".upktgen-manifest"), manifest).unwrap();
    let o = upktgen(&["sweep", s(&f), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    for n in planted {
        assert_eq!(
            std::fs::read_to_string(victims.join(n)).unwrap(),
            "untouched",
            "{n}"
        );
        assert!(!is_link(&out.join(n)), "{n} is still a link");
    }
    assert!(
        std::fs::read_to_string(out.join("index.html"))
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    // --out that is itself a link is refused, and nothing is written through it.
    let linked = d.join("linked");
    symlink(&victims, &linked).unwrap();
    let o = upktgen(&["sweep", s(&f), "--out", s(&linked)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("--out {}: a symbolic link (to ", s(&linked))),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(&victims).unwrap().count(), planted.len());
}

fn session(dir: &Path, target: &str, line: &str) -> Output {
    upktgen(&[
        "script",
        "--lab",
        "--session",
        s(dir),
        "--write",
        target,
        "--line",
        line,
    ])
}

fn a_session_with_a_linked_proc_is_refused_and_its_target_untouched() {
    let d = tmp("session-link");
    let state = d.join("state");
    let victim = d.join("victim");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "mine").unwrap();
    symlink(&victim, state.join("proc")).unwrap();
    let o = session(&state, "kpktgend_0", "add_device eth0");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("proc is a symbolic link"),
        "{}",
        stderr(&o)
    );
    let names: Vec<String> = std::fs::read_dir(&victim)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["keep.txt"]);
    assert_eq!(
        std::fs::read_to_string(victim.join("keep.txt")).unwrap(),
        "mine"
    );
    // A proc that is a file is refused too.
    let state2 = d.join("state2");
    std::fs::create_dir_all(&state2).unwrap();
    std::fs::write(state2.join("proc"), "x").unwrap();
    let o = session(&state2, "pgctrl", "reset");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("proc is not a directory"),
        "{}",
        stderr(&o)
    );
}

fn a_session_removes_only_what_it_wrote() {
    let d = tmp("session-foreign");
    let proc_dir = d.join("proc");
    std::fs::create_dir_all(&proc_dir).unwrap();
    std::fs::write(proc_dir.join("notes.txt"), "someone else's").unwrap();
    let o = session(&d, "kpktgend_0", "add_device eth0");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(proc_dir.join("eth0").is_file());
    assert!(proc_dir.join("pgctrl").is_file());
    // A link planted at one of its own files is replaced, not followed.
    let victim = d.join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    std::fs::remove_file(proc_dir.join("pgctrl")).unwrap();
    symlink(&victim, proc_dir.join("pgctrl")).unwrap();
    let o = session(&d, "pgctrl", "reset");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !proc_dir.join("eth0").exists(),
        "its own file of a removed device goes"
    );
    assert_eq!(
        std::fs::read_to_string(proc_dir.join("notes.txt")).unwrap(),
        "someone else's"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    assert!(!is_link(&proc_dir.join("pgctrl")));
}

fn endless_inputs_fail_at_once_with_flat_memory() {
    let d = tmp("zero");
    for (args, want) in [
        (
            vec!["script", "/dev/zero"],
            "upktgen: reading /dev/zero: line 1: longer than 64 KiB, the most a line may hold\n",
        ),
        (
            vec!["run", "--replay", "/dev/zero", "--count", "1"],
            "upktgen: /dev/zero: not a pcap file (magic 0x00000000)\n",
        ),
        (
            vec!["compare", "/dev/zero", "/dev/zero"],
            "upktgen: /dev/zero: not JSON: expected value at line 1 column 1\n",
        ),
    ] {
        let o = bounded(&args);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(stderr(&o), want, "{args:?}");
    }
    // Files larger than the caps: refused from their size, the limit named. (Sparse: they
    // take no room.)
    let sparse = |name: &str, len: u64| {
        let p = d.join(name);
        std::fs::File::create(&p).unwrap().set_len(len).unwrap();
        p.to_string_lossy().into_owned()
    };
    let script = sparse("big.script", (16 << 20) + 1);
    let pcap = sparse("big.pcap", (256 << 20) + 1);
    let json = sparse("big.json", (256 << 20) + 1);
    for (args, want) in [
        (
            vec!["script", script.as_str()],
            format!("upktgen: reading {script}: more than 16 MiB, the most a script may hold\n"),
        ),
        (
            vec!["run", "--replay", pcap.as_str(), "--count", "1"],
            format!(
                "upktgen: {pcap}: more than 256 MiB, the most a pcap file to replay may hold\n"
            ),
        ),
        (
            vec!["compare", json.as_str(), json.as_str()],
            format!(
                "upktgen: reading {json}: more than 256 MiB, the most a JSON document may hold\n"
            ),
        ),
    ] {
        let o = bounded(&args);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(stderr(&o), want, "{args:?}");
    }
}

fn a_long_line_that_is_no_command_echoes_a_short_prefix() {
    let d = tmp("longline");
    let p = d.join("s.txt");
    std::fs::write(&p, format!("{} y\n", "x".repeat(60_000))).unwrap();
    let o = upktgen(&["script", s(&p)]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    let first = e.lines().next().unwrap();
    assert!(first.len() < 400, "{} characters", first.len());
    assert!(first.contains("... (60002 bytes)"), "{first}");
    // 1 MiB on one line: refused by the line cap, named.
    std::fs::write(&p, "x".repeat(1 << 20)).unwrap();
    let o = upktgen(&["script", s(&p)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).ends_with("line 1: longer than 64 KiB, the most a line may hold\n"),
        "{}",
        stderr(&o)
    );
}

/// A sweep file of one dimension `name` with `n` values (`value(i)`), one per line.
fn one_dimension(name: &str, n: usize, value: impl Fn(usize) -> String) -> String {
    let mut src = format!(
        "[sweep]\ncommand = \"sim\"\nrepetitions = 1\n[[dimension]]\nname = \"{name}\"\nvalues = [\n"
    );
    for i in 0..n {
        src += &value(i);
        src += ",\n";
    }
    src + "]\n"
}

fn a_dimension_of_a_million_values_is_refused_at_once() {
    let d = tmp("million");
    let f = d.join("s.toml");
    // A million values: more than a sweep file may hold, refused from the file's size.
    std::fs::write(&f, one_dimension("count", 1_000_000, |_| "1".into())).unwrap();
    for extra in [&[][..], &["--dry-run"][..]] {
        let mut args = vec!["sweep", s(&f)];
        args.extend_from_slice(extra);
        let o = bounded(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "upktgen: reading {}: more than 1 MiB, the most a sweep file may hold\n",
                s(&f)
            )
        );
        assert!(stdout(&o).is_empty());
    }
    // 200,000 values in a file under the cap, and a million points from two dimensions of
    // 1000: refused from the dimensions' sizes, before any value is checked.
    std::fs::write(&f, one_dimension("count", 200_000, |_| "1".into())).unwrap();
    let o = bounded(&["sweep", s(&f), "--dry-run"]);
    assert_eq!(
        stderr(&o),
        format!(
            "upktgen: {}: 200000 runs (200000 points x 1 repetitions): more than 100000, \
             the most one sweep may run; use fewer values or dimensions\n",
            s(&f)
        )
    );
    let vals: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
    let src = format!(
        "[sweep]\ncommand = \"sim\"\nrepetitions = 1\n[[dimension]]\nname = \"count\"\nvalues = [{v}]\n\
         [[dimension]]\nname = \"ring\"\nvalues = [{v}]\n",
        v = vals.join(", ")
    );
    std::fs::write(&f, src).unwrap();
    let o = bounded(&["sweep", s(&f)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(": 1000000 runs (1000000 points x 1 repetitions): more than 100000"),
        "{}",
        stderr(&o)
    );
}

fn ctrl_c_ends_a_sweep_while_its_values_are_checked() {
    let d = tmp("sigint");
    let f = d.join("s.toml");
    // 100,000 values, each checked by the option parser: far longer than the wait below.
    std::fs::write(&f, one_dimension("count", 100_000, |i| (i + 1).to_string())).unwrap();
    for sig in ["-INT", "-TERM"] {
        let child = Command::new(env!("CARGO_BIN_EXE_upktgen"))
            .args(["sweep", s(&f), "--dry-run"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let st = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let o = wait_at_most(child, Duration::from_secs(20), "sweep after a signal");
        assert_eq!(o.status.code(), Some(130), "{sig}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("interrupted before running anything"),
            "{}",
            stderr(&o)
        );
        assert!(!stdout(&o).contains("upktgen sim --count=100000"));
    }
}

fn a_sweep_value_is_one_word_and_dry_run_quotes_what_it_prints() {
    let d = tmp("token");
    let f = d.join("s.toml");
    std::fs::write(
        &f,
        "[sweep]\ncommand = \"run\"\nrepetitions = 1\n[[dimension]]\nname = \"count\"\n\
         values = [10,\n  \"10 --dev eth0 --real\"]\n",
    )
    .unwrap();
    for extra in [&[][..], &["--dry-run"][..]] {
        let mut args = vec!["sweep", s(&f)];
        args.extend_from_slice(extra);
        let o = upktgen(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
        assert!(
            stderr(&o).starts_with(&format!(
                "upktgen: {}:7: count: '10 --dev eth0 --real' is more than one value; count takes one",
                s(&f)
            )),
            "{}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    }
    // In [base] too.
    std::fs::write(
        &f,
        "[sweep]\ncommand = \"run\"\n[base]\ncount = \"10 --real\"\n",
    )
    .unwrap();
    let o = upktgen(&["sweep", s(&f), "--dry-run"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(":4: count: '10 --real' is more than one value; count takes one"),
        "{}",
        stderr(&o)
    );
    // What --dry-run prints is words a shell reads back.
    std::fs::write(
        &f,
        // With the destination --dev needs, so that the plan accepts the point.
        "[sweep]\ncommand = \"run\"\nrepetitions = 1\n[base]\ndst = \"10.99.0.2\"\n\
         dst_mac = \"02:00:00:99:00:02\"\n[[dimension]]\nname = \"dev\"\nvalues = [\"x;y\"]\n",
    )
    .unwrap();
    let o = upktgen(&["sweep", s(&f), "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "upktgen run --dst=10.99.0.2 --dst-mac=02:00:00:99:00:02 '--dev=x;y' --json --no-live"
        ),
        "{}",
        stdout(&o)
    );
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    a_link_planted_at_the_pcap_path_is_replaced_not_followed,
    links_planted_at_sweep_outputs_are_refused_or_replaced_never_followed,
    a_session_with_a_linked_proc_is_refused_and_its_target_untouched,
    a_session_removes_only_what_it_wrote,
    endless_inputs_fail_at_once_with_flat_memory,
    a_long_line_that_is_no_command_echoes_a_short_prefix,
    a_dimension_of_a_million_values_is_refused_at_once,
    ctrl_c_ends_a_sweep_while_its_values_are_checked,
    a_sweep_value_is_one_word_and_dry_run_quotes_what_it_prints,
];
