//! `upktgen sweep` and `upktgen compare` end to end: simulated sweeps (no root), a tiny lab
//! sweep (root), failures recorded, bad files refused with line numbers, Ctrl-C.

use crate::common::{Tmp, namespaces_with_prefix, root_or_skip, stderr, stdout, tmp_dir, upktgen};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

fn tmp(tag: &str) -> Tmp {
    tmp_dir("sweep", tag)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn runs_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("runs.json")).unwrap()).unwrap()
}

/// Every `<text>` of an SVG file, after checking it parses as SVG.
fn svg_texts(path: &Path) -> Vec<String> {
    let s = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::to_string))
        .collect()
}

const SIM: &str = r#"
[sweep]
name = "sim e2e"
command = "sim"
repetitions = 4

[base]
count = 20000

[[dimension]]
name = "start_thresh"
values = [1, 16]
labels = ["wake at 1", "wake at 16"]

[[dimension]]
name = "clock_mhz"
values = [1052.476, 1397.657]

[compare]
dimension = "start_thresh"
baseline = 1
"#;

fn a_simulated_sweep_end_to_end() {
    let d = tmp("sim");
    let f = write(&d, "s.toml", SIM);
    let out = d.join("out");
    let o = upktgen(&["sweep", &f, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    // The seed's layout per run, 4 points x 4 repetitions, interleaved.
    assert_eq!(t.matches("Iteration ").count(), 16, "{t}");
    assert!(
        t.starts_with("Iteration 0 (wake at 1, clock_mhz=1052.476):\nCpu(s): "),
        "{t}"
    );
    assert!(
        t.contains("Iteration 4 (wake at 1, clock_mhz=1052.476):\nCpu(s): "),
        "{t}"
    );
    assert!(
        t.contains("\nResult: OK: ") && t.contains("\nInterrupts: "),
        "{t}"
    );
    assert!(t.contains("Summary of sweep \"sim e2e\""), "{t}");
    assert!(t.contains("All points complete."), "{t}");
    // [compare]: wake at 16 against wake at 1, at each clock.
    assert_eq!(t.matches("A: wake at 1, clock_mhz=").count(), 2, "{t}");
    assert!(
        t.contains("faster than wake at 1, clock_mhz=1052.476")
            || t.contains("no significant difference in pps"),
        "{t}"
    );
    // Progress with an ETA on standard error.
    let e = stderr(&o);
    assert!(
        e.contains(
            "[sweep] run 16/16: point 4/4 (wake at 16, clock_mhz=1397.657), repetition 4/4, ETA "
        ),
        "{e}"
    );

    let j = runs_json(&out);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 16);
    assert!(
        runs.iter()
            .all(|r| r["status"] == "ok" && r["json"]["outcome"]["result"]["sent"] == 20000)
    );
    assert_eq!(runs[1]["point"], 1);
    assert_eq!(runs[4]["rep"], 2);
    for name in ["runs.csv", "summary.csv", "index.html"] {
        assert!(out.join(name).is_file(), "{name}");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("runs.csv"))
            .unwrap()
            .lines()
            .count(),
        17
    );
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 5);
    assert!(
        summary.starts_with("point,label,start_thresh,clock_mhz,runs_ok,"),
        "{summary}"
    );

    let pps = svg_texts(&out.join("pps.svg"));
    assert!(pps.iter().any(|x| x == "packets per second"), "{pps:?}");
    assert!(
        pps.iter().any(|x| x == "wake at 16, clock_mhz=1397.657"),
        "{pps:?}"
    );
    let cpu = svg_texts(&out.join("cpu.svg"));
    assert!(
        cpu.iter().any(|x| x == "% of CPU time") && cpu.iter().any(|x| x == "hi"),
        "{cpu:?}"
    );
    let pp = svg_texts(&out.join("per_packet.svg"));
    assert!(
        pp.iter().any(|x| x == "interrupts per packet")
            && pp.iter().any(|x| x == "wakes per packet"),
        "{pp:?}"
    );
    let vs = svg_texts(&out.join("pps_vs_clock_mhz.svg"));
    assert!(
        vs.iter().any(|x| x == "clock_mhz (MHz)") && vs.iter().any(|x| x == "wake at 1"),
        "{vs:?}"
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for want in [
        "<table>",
        "pps.svg",
        "cpu.svg",
        "per_packet.svg",
        "pps_vs_clock_mhz.svg",
        "wake at 16, clock_mhz=1397.657",
    ] {
        assert!(html.contains(want), "index.html lacks {want}");
    }
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "external resource in index.html"
    );

    // Redraw from runs.json alone.
    std::fs::remove_file(out.join("pps.svg")).unwrap();
    std::fs::remove_file(out.join("index.html")).unwrap();
    let o = upktgen(&["sweep", "--redraw", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Summary of sweep \"sim e2e\""));
    assert!(out.join("pps.svg").is_file() && out.join("index.html").is_file());

    // compare: the sweep's own [compare], and two points picked by selectors.
    let rj = out.join("runs.json");
    let o = upktgen(&["compare", rj.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).matches("packets per second").count(),
        2,
        "{}",
        stdout(&o)
    );
    let o = upktgen(&[
        "compare",
        rj.to_str().unwrap(),
        "--a",
        "start_thresh=1,clock_mhz=1052.476",
        "--b",
        "wake at 1, clock_mhz=1397.657",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    // The faster clock is faster in the model.
    assert!(
        t.contains("% faster than wake at 1, clock_mhz=1052.476"),
        "{t}"
    );
    let o = upktgen(&["compare", rj.to_str().unwrap(), "--a", "start_thresh=1"]);
    assert!(!o.status.success());
}

fn compare_two_files_of_runs() {
    let d = tmp("cmp");
    let mut a = Vec::new();
    let mut b = Vec::new();
    for seed in 1..=4 {
        let s = seed.to_string();
        let one = |clock: &str| {
            let o = upktgen(&[
                "sim",
                "--json",
                "--count",
                "20000",
                "--seed",
                &s,
                "--clock-mhz",
                clock,
            ]);
            assert!(o.status.success());
            serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
        };
        a.push(one("1052.476"));
        b.push(one("1397.657"));
    }
    let fa = write(&d, "a.json", &serde_json::to_string(&a).unwrap());
    let fb = write(&d, "b.json", &serde_json::to_string(&b).unwrap());
    let o = upktgen(&["compare", &fa, &fb]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(
        t.contains(&format!("{fb} is ")) && t.contains(&format!("% faster than {fa} (95 % CI ")),
        "{t}"
    );
    let o = upktgen(&["compare", &fa, &fa]);
    assert!(
        stdout(&o).starts_with("no significant difference in pps"),
        "{}",
        stdout(&o)
    );
    // One run each: too few, said plainly.
    let fc = write(&d, "c.json", &serde_json::to_string(&a[0]).unwrap());
    let o = upktgen(&["compare", &fc, &fb]);
    // Too few runs is an error: exit 1 (it was 0), the reason on standard error.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("too few runs to compare (A: 1, B: 4; at least 3 each)"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let fx = write(&d, "x.json", "{\"hello\": 1}");
    let o = upktgen(&["compare", &fx, &fb]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("neither a sweep's runs.json"),
        "{}",
        stderr(&o)
    );
}

fn a_failing_point_is_recorded_and_the_sweep_goes_on() {
    // A start threshold above the ring passes the option parser but not the model: only the
    // run finds out.
    let d = tmp("fail");
    let f = write(
        &d,
        "s.toml",
        "[sweep]\ncommand = \"sim\"\nrepetitions = 2\n[base]\ncount = 5000\nring = 16\n\
         [[dimension]]\nname = \"start_thresh\"\nvalues = [1, 32, 16]\n",
    );
    let out = d.join("out");
    let o = upktgen(&["sweep", &f, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(
        t.contains("Iteration 1 (start_thresh=32):\nFAILED: "),
        "{t}"
    );
    assert!(
        t.contains("Incomplete points:\n  point 2 (start_thresh=32): 0 of 2 runs ok, 2 failed"),
        "{t}"
    );
    let j = runs_json(&out);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    for r in runs {
        let failed = r["point"] == 1;
        assert_eq!(r["status"], if failed { "failed" } else { "ok" }, "{r}");
        if failed {
            assert!(r["error"].as_str().unwrap().contains("start"), "{r}");
        }
    }
}

fn bad_sweep_files_are_refused_with_their_line() {
    let d = tmp("bad");
    let cases = [
        (
            "[sweep]\ncommand = \"run\"\n[base]\ncount = 100\nfoo = 3\n",
            "s.toml:5: unknown parameter \"foo\"",
        ),
        (
            "[sweep]\ncommand = \"sim\"\n[[dimension]]\nname = \"ring\"\nvalues = []\n",
            "s.toml:5: dimension \"ring\" has no values",
        ),
        (
            "[sweep]\nrepetitions = 0\n",
            "s.toml:2: repetitions = 0: at least 1",
        ),
        (
            "[sweep]\ncommand = \"sim\"\n[base]\nring = \"big\"\n",
            "s.toml:4: ring = big: ",
        ),
        ("[sweep]\nname = \"x\n", "s.toml:2: "),
        (
            "[sweep]\ncommand = \"sim\"\n[[dimension]]\nname = \"seed\"\nvalues = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67]\n",
            "201 runs (67 points x 3 repetitions): more than 200; add --yes",
        ),
    ];
    for (src, want) in cases {
        let f = write(&d, "s.toml", src);
        let o = Command::new(env!("CARGO_BIN_EXE_upktgen"))
            .current_dir(&*d)
            .args(["sweep", "s.toml"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{f}: {e}");
        assert!(
            e.starts_with(&format!("upktgen: {want}")),
            "want {want:?}, got {e}"
        );
        assert!(stdout(&o).is_empty(), "nothing may run: {}", stdout(&o));
    }
}

fn cpu_clock_without_cpufreq_or_out_of_range() {
    let d = tmp("mhz");
    write(
        &d,
        "s.toml",
        "[sweep]\n[base]\ncount = 100\n[[dimension]]\nname = \"cpu_mhz\"\nvalues = [1000, 3000]\n",
    );
    let run = |root: &Path| {
        Command::new(env!("CARGO_BIN_EXE_upktgen"))
            .current_dir(&*d)
            .args(["sweep", "s.toml", "--cpufreq-root", root.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let o = run(&d.join("empty"));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "upktgen: s.toml:6: cpu_mhz: not available on this machine (no cpufreq)\n"
    );
    let c = d.join("sys/cpu0/cpufreq");
    std::fs::create_dir_all(&c).unwrap();
    for (f, v) in [
        ("cpuinfo_min_freq", "800000"),
        ("cpuinfo_max_freq", "2000000"),
        ("scaling_min_freq", "800000"),
        ("scaling_max_freq", "2000000"),
    ] {
        std::fs::write(c.join(f), v).unwrap();
    }
    let o = run(&d.join("sys"));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "upktgen: s.toml:6: cpu_mhz = 3000: outside this CPU's range 800 to 2000 MHz\n"
    );
}

/// A sim sweep of 60 points written to its own temporary directory, started with
/// `--out DIR/out`; returns the directory (removed when dropped), the out directory and the
/// running sweep (stdout piped).
fn long_sim_sweep(tag: &str) -> (Tmp, std::path::PathBuf, std::process::Child) {
    let d = tmp(tag);
    let values: Vec<String> = (1..=60).map(|s| s.to_string()).collect();
    let f = write(
        &d,
        "s.toml",
        &format!(
            "[sweep]\ncommand = \"sim\"\nrepetitions = 1\n[base]\ncount = 200000\n[[dimension]]\nname = \"seed\"\nvalues = [{}]\n",
            values.join(", ")
        ),
    );
    let out = d.join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(["sweep", &f, "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (d, out, child)
}

/// Reads the sweep's standard output until its first run's report is complete; returns the
/// stream and what was read so far.
fn wait_for_first_run(child: &mut std::process::Child) -> (std::process::ChildStdout, Vec<u8>) {
    let mut so = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("Interrupts: ") {
        let n = so.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "sweep ended before its first run: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    (so, seen)
}

fn ctrl_c_stops_after_the_current_run_and_writes_what_was_done() {
    let (_d, out, mut child) = long_sim_sweep("int");
    // Wait for the first finished run, then interrupt.
    let (mut so, mut seen) = wait_for_first_run(&mut child);
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    so.read_to_end(&mut seen).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let t = String::from_utf8_lossy(&seen);
    assert!(t.contains("Interrupted after "), "{t}");
    assert!(t.contains("Incomplete points:"), "{t}");
    let j = runs_json(&out);
    assert_eq!(j["interrupted"], true);
    let n = j["runs"].as_array().unwrap().len();
    assert!((1..60).contains(&n), "{n} runs recorded");
}

fn a_tiny_lab_sweep_leaves_nothing_behind() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("lab");
    let f = write(
        &d,
        "s.toml",
        "[sweep]\nname = \"lab\"\ncommand = \"run\"\nrepetitions = 2\n[base]\nbackend = \"tx_ring\"\nring = 64\ncount = 2000\n\
         [[dimension]]\nname = \"start_thresh\"\nvalues = [1, 16]\n[[dimension]]\nname = \"load\"\nvalues = [0, 1]\n",
    );
    let out = d.join("out");
    let o = upktgen(&["sweep", &f, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert_eq!(t.matches("\nResult: OK: ").count(), 8, "{t}");
    let j = runs_json(&out);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    for r in runs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["json"]["outcome"]["result"]["sent"], 2000, "{r}");
        assert_eq!(r["json"]["backend"]["name"], "tx_ring", "{r}");
        let pid = r["pid"].as_u64().unwrap();
        assert!(
            namespaces_with_prefix(&format!("upktgen-{pid}-")).is_empty(),
            "lab of run {pid} left behind"
        );
    }
    // The thresholds reached the runs (points 0, 1: wake at 1; points 2, 3: wake at 16).
    for r in runs {
        let q = r["json"]["backend"]["queue"].as_str().unwrap();
        let w = if r["point"].as_u64().unwrap() < 2 {
            1
        } else {
            16
        };
        assert!(q.contains(&format!("wake when at least {w} free")), "{q}");
    }
}

fn a_lab_point_on_a_missing_device_fails_alone() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("labfail");
    let f = write(
        &d,
        "s.toml",
        // The destination --dev needs is given: the plan accepts the point, and only its run
        // finds the device missing.
        "[sweep]\ncommand = \"run\"\nrepetitions = 1\n[base]\ncount = 1000\n\
         dst = \"10.99.0.2\"\ndst_mac = \"02:00:00:99:00:02\"\n\
         [[dimension]]\nname = \"dev\"\nvalues = [\"upktgen-nosuch0\"]\n",
    );
    let o = upktgen(&["sweep", &f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(
        t.contains("Iteration 0 (dev=upktgen-nosuch0):\nFAILED: "),
        "{t}"
    );
    assert!(t.contains("upktgen-nosuch0"), "{t}");
    assert!(t.contains("0 of 1 runs ok, 1 failed"), "{t}");
}

/// Child processes of `pid` (from /proc/PID/task/PID/children).
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect()
}

fn ctrl_c_in_a_lab_sweep_stops_the_run_and_removes_its_lab() {
    if !root_or_skip() {
        return;
    }
    let d = tmp("labint");
    let f = write(
        &d,
        "s.toml",
        "[sweep]\ncommand = \"run\"\nrepetitions = 3\n[base]\ncount = 0\nduration = \"60s\"\nratep = 20000\n",
    );
    let out = d.join("out");
    let mut sweep = Command::new(env!("CARGO_BIN_EXE_upktgen"))
        .args(["sweep", &f, "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let run_pid = loop {
        if let Some(&c) = children_of(sweep.id()).first() {
            break c;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(20),
            "no child run"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    crate::common::wait_for_traffic(run_pid);
    let st = Command::new("kill")
        .args(["-INT", &sweep.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let mut text = String::new();
    sweep
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(sweep.wait().unwrap().code(), Some(130), "{text}");
    assert!(text.contains("Iteration 0 (all):\ninterrupted"), "{text}");
    assert!(text.contains("Interrupted after 1 of 3 runs."), "{text}");
    assert!(
        namespaces_with_prefix(&format!("upktgen-{run_pid}-")).is_empty(),
        "lab of run {run_pid} left behind"
    );
    let j = runs_json(&out);
    assert_eq!(j["runs"][0]["status"], "interrupted");
    assert_eq!(j["runs"][0]["pid"], run_pid);
}

fn a_sweep_killed_outright_leaves_the_runs_done_so_far() {
    let (_d, out, mut child) = long_sim_sweep("kill");
    // The first run's report is printed after runs.json holds it.
    wait_for_first_run(&mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    let j = runs_json(&out);
    assert_eq!(j["interrupted"], true);
    let runs = j["runs"].as_array().unwrap();
    assert!(!runs.is_empty() && runs.len() < 60, "{} runs", runs.len());
    assert_eq!(runs[0]["status"], "ok");
    assert_eq!(j["points"].as_array().unwrap().len(), 60);
    // What was saved redraws.
    let o = upktgen(&["sweep", "--redraw", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Incomplete points:"), "{}", stdout(&o));
}

fn a_malformed_runs_json_is_an_error_not_a_panic() {
    let d = tmp("malformed");
    let f = write(
        &d,
        "s.toml",
        "[sweep]\ncommand = \"sim\"\nrepetitions = 1\n[base]\ncount = 2000\n\
         [[dimension]]\nname = \"ring\"\nvalues = [64, 256]\n\
         [[dimension]]\nname = \"start_thresh\"\nvalues = [1, 16]\n\
         [compare]\ndimension = \"start_thresh\"\nbaseline = 1\n",
    );
    let out = d.join("out");
    let o = upktgen(&["sweep", &f, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut j = runs_json(&out);
    j["points"][1]["values"].as_array_mut().unwrap().pop();
    let rj = out.join("runs.json");
    std::fs::write(&rj, j.to_string()).unwrap();
    let want = "inconsistent runs.json: point 2 (ring=64, start_thresh=16) has values for [ring], \
                the dimensions are [ring, start_thresh]\n";
    for args in [
        vec!["sweep", "--redraw", out.to_str().unwrap()],
        vec!["compare", rj.to_str().unwrap()],
    ] {
        let o = upktgen(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("upktgen: ") && stderr(&o).ends_with(want),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

fn a_sweep_too_big_to_run_is_refused_with_its_file() {
    let d = tmp("huge");
    let mut src = "[sweep]\ncommand = \"sim\"\n".to_string();
    for k in 0..23 {
        src +=
            &format!("[[dimension]]\nname = \"d{k}\"\nvalues = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n");
    }
    write(&d, "s.toml", &src);
    for extra in [&[][..], &["--yes"][..], &["--dry-run"][..]] {
        let o = Command::new(env!("CARGO_BIN_EXE_upktgen"))
            .current_dir(&*d)
            .args(["sweep", "s.toml"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("upktgen: s.toml: the dimensions' values (10 x 10 x "),
            "{}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty());
    }
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    a_simulated_sweep_end_to_end,
    compare_two_files_of_runs,
    a_failing_point_is_recorded_and_the_sweep_goes_on,
    bad_sweep_files_are_refused_with_their_line,
    cpu_clock_without_cpufreq_or_out_of_range,
    ctrl_c_stops_after_the_current_run_and_writes_what_was_done,
    a_tiny_lab_sweep_leaves_nothing_behind,
    a_lab_point_on_a_missing_device_fails_alone,
    ctrl_c_in_a_lab_sweep_stops_the_run_and_removes_its_lab,
    a_sweep_killed_outright_leaves_the_runs_done_so_far,
    a_malformed_runs_json_is_an_error_not_a_panic,
    a_sweep_too_big_to_run_is_refused_with_its_file,
];
