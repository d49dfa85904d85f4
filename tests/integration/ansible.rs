//! End-to-end: the fleet playbook of examples/ansible, run for real by ansible-playbook in a
//! controller namespace against "hosts" that are namespaces with their own sshd on a
//! management bridge, the measured traffic on separate veth pairs.

use crate::common::fleet::{End, Fleet};
use crate::common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_upktgen");
const PLAYBOOK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/ansible/fleet.yml");
const CFG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/ansible/ansible.cfg");

/// ansible-playbook's path, or None (the test is skipped) when it or root is missing.
fn ansible_or_skip() -> Option<String> {
    if !root_or_skip()
        || !crate::common::ssh_or_skip()
        || !crate::harness::tool_or_skip("ansible-playbook", "pip install ansible-core")
    {
        return None;
    }
    let o = Command::new("sh")
        .args(["-c", "command -v ansible-playbook"])
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Two senders, each on its own data link to the one receiver host.
struct Lab {
    f: Fleet,
    /// (sender end, receiver end) of each sender's link.
    links: Vec<(End, End)>,
}

fn lab() -> Lab {
    let mut f = Fleet::new(&["s1", "s2", "r1"]);
    let links = vec![
        f.link("s1", "dat0", "r1", "from-s1"),
        f.link("s2", "dat0", "r1", "from-s2"),
    ];
    f.start_sshd();
    Lab { f, links }
}

impl Lab {
    fn host_dir(&self, host: &str) -> PathBuf {
        self.f.file(&format!("hosts/{host}"))
    }

    fn results(&self) -> PathBuf {
        self.f.file("results")
    }

    /// The sender's run over link `i`.
    fn run_args(&self, i: usize, count: u64) -> Value {
        let (s, r) = &self.links[i];
        json!([
            "--dev",
            s.dev,
            "--src",
            s.ip,
            "--dst",
            r.ip,
            "--dst-mac",
            r.mac,
            "--count",
            count.to_string(),
            "--ratep",
            "20000"
        ])
    }

    fn rx_args(&self, i: usize) -> Value {
        json!(["--dev", self.links[i].1.dev, "--expect-first", "1"])
    }

    fn host_vars(&self, host: &str) -> Value {
        let d = self.host_dir(host);
        json!({
            "ansible_host": self.f.host(host).mgmt_ip,
            "upktgen_bin": d.join("bin/upktgen"),
            "upktgen_workdir": d.join("work"),
            "ansible_remote_tmp": d.join("tmp"),
        })
    }

    /// An inventory: senders s1 and s2 (`runs[i]` for each: its upktgen_runs), receiver r1
    /// (`receivers`), every host's own paths under the fleet's directory; `patch` is merged
    /// into the hosts' vars last.
    fn inventory(&self, runs: [Value; 2], receivers: Value, patch: &[(&str, Value)]) -> PathBuf {
        let hv = |h: &str, k: &str, v: Value| {
            let mut m = self.host_vars(h);
            m[k] = v;
            for (ph, p) in patch {
                if *ph == h {
                    for (pk, pv) in p.as_object().unwrap() {
                        m[pk] = pv.clone();
                    }
                }
            }
            m
        };
        let [r1, r2] = runs;
        let inv = json!({
            "all": {
                "vars": {
                    "ansible_user": "root",
                    "ansible_ssh_common_args": format!("-F {}", self.f.file("ssh_config").display()),
                    "ansible_python_interpreter": "/usr/bin/python3",
                    "upktgen_local": BIN,
                    "upktgen_fleet_dir": self.results(),
                    "upktgen_start_lead": 8,
                    "upktgen_run_timeout": 120,
                },
                "children": {
                    "senders": {"hosts": {
                        "s1": hv("s1", "upktgen_runs", r1),
                        "s2": hv("s2", "upktgen_runs", r2),
                    }},
                    "receivers": {"hosts": {
                        "r1": hv("r1", "upktgen_receivers", receivers),
                    }},
                },
            }
        });
        let p = self.f.file("inventory.json");
        std::fs::write(&p, serde_json::to_string_pretty(&inv).unwrap()).unwrap();
        p
    }

    /// ansible-playbook inside the controller's namespace: its status and its output
    /// (standard output and error together).
    fn play(&self, ansible: &str, inv: &Path, extra: &[&str]) -> (Option<i32>, String) {
        let _ = std::fs::remove_dir_all(self.results());
        let t = |s: &str| self.f.file(s);
        let t0 = std::time::Instant::now();
        let o = Command::new("ip")
            .args(["netns", "exec", &self.f.ctl, ansible, "-i"])
            .arg(inv)
            .arg(PLAYBOOK)
            .args(extra)
            .env("ANSIBLE_CONFIG", CFG)
            .env("ANSIBLE_HOME", t("ansible-home"))
            .env("ANSIBLE_LOCAL_TEMP", t("ansible-local"))
            // One connection per host for the whole play, closed 2 s after it (the check
            // for leftovers waits for that).
            .env(
                "ANSIBLE_SSH_ARGS",
                "-o ControlMaster=auto -o ControlPersist=2s",
            )
            .env("ANSIBLE_SSH_CONTROL_PATH_DIR", t("cp"))
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "false")
            .env("ANSIBLE_DEPRECATION_WARNINGS", "false")
            .output()
            .unwrap();
        eprintln!("ansible-playbook {extra:?}: {:.1?}", t0.elapsed());
        let out = format!("{}{}", stdout(&o), stderr(&o));
        (o.status.code(), out)
    }

    /// Nothing of the run is left in any namespace, and no upktgen anywhere runs from the
    /// hosts' copies.
    fn assert_nothing_left(&self, out: &str) {
        let left = self.f.leftovers();
        assert!(left.is_empty(), "left running: {left:?}\n{out}");
    }

    fn read(&self, p: &Path) -> Value {
        let s = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_slice(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }
}

/// rx_packets of each of r1's data devices.
fn rx_counters(l: &Lab) -> Vec<u64> {
    let ns = &l.f.host("r1").ns;
    l.links
        .iter()
        .map(|(_, r)| rx_packets_in(ns, &r.dev).unwrap())
        .collect()
}

fn the_playbook_starts_every_sender_at_one_instant_and_merges_what_the_receivers_counted() {
    let Some(ansible) = ansible_or_skip() else {
        return;
    };
    let l = lab();
    let receivers = json!([
        {"name": "from-s1", "args": l.rx_args(0)},
        {"name": "from-s2", "args": l.rx_args(1)},
    ]);
    let runs = [
        json!([{"name": "run", "args": l.run_args(0, 3000)}]),
        json!([{"name": "run", "args": l.run_args(1, 5000)}]),
    ];
    let inv = l.inventory(runs, receivers, &[]);
    let before = rx_counters(&l);
    let (code, out) = l.play(&ansible, &inv, &[]);
    assert_eq!(code, Some(0), "{out}");
    // The play as a user sees it (cargo test -- --nocapture).
    eprintln!("{out}");
    let after = rx_counters(&l);
    l.assert_nothing_left(&out);
    // The binary was copied to every host (none had it).
    for h in ["s1", "s2", "r1"] {
        let p = l.host_dir(h).join("bin/upktgen");
        assert_eq!(
            std::fs::read(&p).unwrap().len(),
            std::fs::metadata(BIN).unwrap().len() as usize,
            "{}",
            p.display()
        );
    }
    // Every document came back to the controller.
    let r = l.results();
    let runs: Vec<Value> = ["s1", "s2"]
        .iter()
        .map(|h| l.read(&r.join(format!("{h}-run.json"))))
        .collect();
    let rxs: Vec<Value> = ["from-s1", "from-s2"]
        .iter()
        .map(|n| l.read(&r.join(format!("r1-{n}.json"))))
        .collect();
    // One instant, computed once, for both senders; each on its own host.
    let at = runs[0]["start"]["requested_ns"].as_u64().unwrap();
    assert_eq!(runs[1]["start"]["requested_ns"].as_u64(), Some(at));
    assert_eq!(runs[0]["host"], "s1");
    assert_eq!(runs[1]["host"], "s2");
    for j in &runs {
        for t in j["start"]["threads"].as_array().unwrap() {
            assert!(t["error_ns"].as_i64().unwrap() >= 0, "{j:#}");
        }
    }
    for j in &rxs {
        assert_eq!(j["host"], "r1");
        assert_eq!(j["stopped_by"], "interrupted", "{j:#}");
    }
    let m = l.read(&r.join("merged.json"));
    let sent: u64 = runs
        .iter()
        .map(|j| j["outcome"]["result"]["sent"].as_u64().unwrap())
        .sum();
    assert_eq!(sent, 8000);
    assert_eq!(m["total"]["sent"].as_u64(), Some(sent), "{m:#}");
    assert_eq!(m["start_at_ns"].as_u64(), Some(at));
    assert_eq!(m["senders"].as_array().unwrap().len(), 2);
    // The merged totals are the receivers' counters: their reports' and the interfaces'.
    let rec = &m["received"];
    assert_eq!(rec["receivers"], 2, "{m:#}");
    let sum = |k: &str| -> u64 {
        rxs.iter()
            .map(|j| j["sink"]["totals"][k].as_u64().unwrap())
            .sum()
    };
    assert_eq!(rec["received"].as_u64(), Some(sum("received")));
    assert_eq!(rec["received"].as_u64(), Some(sent), "{m:#}");
    assert_eq!(rec["lost"], 0);
    assert_eq!(rec["missing"], 0);
    let pktgen: u64 = rxs
        .iter()
        .map(|j| j["frames"]["pktgen"].as_u64().unwrap())
        .sum();
    assert_eq!(rec["pktgen_frames"].as_u64(), Some(pktgen));
    let counted: u64 = after.iter().zip(&before).map(|(a, b)| a - b).sum();
    assert_eq!(counted, sent, "rx_packets of r1's data devices");
    assert_eq!(rec["pktgen_frames"].as_u64(), Some(counted));
    // The text report is kept and shown in the play's output.
    let t = std::fs::read_to_string(r.join("merged.txt")).unwrap();
    assert!(t.starts_with("Result: OK: "), "{t}");
    assert!(t.contains(", 8000 (60byte,0frags)"), "{t}");
    assert!(t.contains("Merged:      2 sender hosts"), "{t}");
    assert!(t.contains("Received:    8000 of 8000 sent"), "{t}");
    assert!(out.contains("Received:    8000 of 8000 sent"), "{out}");
    // A second run finds the binary in place (the same version): nothing is copied again.
    let mtime = |h: &str| {
        std::fs::metadata(l.host_dir(h).join("bin/upktgen"))
            .unwrap()
            .modified()
            .unwrap()
    };
    let was: Vec<_> = ["s1", "s2", "r1"].map(mtime).to_vec();
    let (code, out) = l.play(&ansible, &inv, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(["s1", "s2", "r1"].map(mtime).to_vec(), was, "copied again");
    l.assert_nothing_left(&out);
}

/// libfaketime's path, if installed.
fn faketime_lib() -> Option<String> {
    let o = Command::new("sh")
        .args([
            "-c",
            "ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1",
        ])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (!p.is_empty()).then_some(p)
}

/// Whether `h`'s work directory has NAME.EXT (pid: started; rc: ended).
fn in_work(l: &Lab, ext: &str, h: &str, name: &str) -> bool {
    l.host_dir(h)
        .join("work")
        .join(format!("{name}.{ext}"))
        .exists()
}

/// One failing play: a non-zero status, the lines `want` in its output, no merged report,
/// nothing left running; returns the output.
fn failed_play(l: &Lab, ansible: &str, inv: &Path, extra: &[&str], want: &[&str]) -> String {
    for h in ["s1", "s2", "r1"] {
        let _ = std::fs::remove_dir_all(l.host_dir(h).join("work"));
    }
    let (code, out) = l.play(ansible, inv, extra);
    eprintln!("{out}");
    assert_ne!(code, Some(0), "{out}");
    for w in want {
        assert!(out.contains(w), "no {w:?} in:\n{out}");
    }
    assert!(!l.results().join("merged.txt").exists(), "merged: {out}");
    assert!(!out.contains("panicked"), "{out}");
    l.assert_nothing_left(&out);
    out
}

fn a_failed_host_fails_the_play_names_it_and_leaves_nothing_running() {
    let Some(ansible) = ansible_or_skip() else {
        return;
    };
    // The clock case below needs libfaketime; without it the whole test is skipped, not
    // passed with a case left out.
    let Some(faketime) = faketime_lib() else {
        crate::harness::skip("needs libfaketime (apt-get install faketime)");
        return;
    };
    let mut l = lab();
    let rx = json!([
        {"name": "from-s1", "args": l.rx_args(0)},
        {"name": "from-s2", "args": l.rx_args(1)},
    ]);
    let both = [
        json!([{"name": "run", "args": l.run_args(0, 2000)}]),
        json!([{"name": "run", "args": l.run_args(1, 2000)}]),
    ];
    let runs = || both.clone();

    // A port in use on a receiver host (its second receiver's metrics port is the first's):
    // the senders never start and the first receiver is stopped.
    let mut busy = rx.clone();
    for r in busy.as_array_mut().unwrap() {
        let a = r["args"].as_array_mut().unwrap();
        a.extend(["--metrics-listen", "127.0.0.1:19101"].map(Value::from));
    }
    let inv = l.inventory(runs(), busy, &[]);
    failed_play(
        &l,
        &ansible,
        &inv,
        &[],
        &[
            "r1: Wait until every receiver receives: from-s2: upktgen rx exited with status 1: \
             upktgen: --metrics-listen 127.0.0.1:19101: cannot listen: Address already in use",
            "not starting the senders: r1 failed",
        ],
    );
    assert!(in_work(&l, "pid", "r1", "from-s1") && in_work(&l, "rc", "r1", "from-s1"));
    assert!(!in_work(&l, "pid", "s1", "run") && !in_work(&l, "pid", "s2", "run"));

    // A sender refused (no such device): the other sender runs, the receivers are stopped
    // after it, nothing is merged.
    let [r1, mut r2] = runs();
    r2[0]["args"][1] = json!("nosuch0");
    let inv = l.inventory([r1, r2], rx.clone(), &[]);
    failed_play(
        &l,
        &ansible,
        &inv,
        &[],
        &[
            "s2: Every sender succeeded",
            "s2: Every sender succeeded: run: upktgen run exited with status 1: upktgen: --dev nosuch0: no such interface",
            "not merging: s2 did not finish the run",
        ],
    );
    assert!(
        in_work(&l, "rc", "s1", "run")
            && in_work(&l, "rc", "r1", "from-s1")
            && in_work(&l, "rc", "r1", "from-s2")
    );
    let s1: Value =
        serde_json::from_slice(&std::fs::read(l.host_dir("s1").join("work/run.json")).unwrap())
            .unwrap();
    assert_eq!(s1["outcome"]["result"]["sent"], 2000);

    // A sender that does not end in time (it would send forever): the play stops it.
    let [r1, mut r2] = runs();
    r2[0]["args"][9] = json!("0");
    let inv = l.inventory([r1, r2], rx.clone(), &[]);
    failed_play(
        &l,
        &ansible,
        &inv,
        &["-e", "upktgen_run_timeout=5"],
        &[
            "s2: Wait for the senders to end",
            "run: stopped (SIGINT to pid",
        ],
    );
    let rc = std::fs::read_to_string(l.host_dir("s2").join("work/run.rc")).unwrap();
    assert_eq!(rc.trim(), "130", "interrupted");

    // A start the hosts see in the past (as when a sender's clock is ahead of the
    // controller's by more than the lead): refused by upktgen on each sender.
    let inv = l.inventory(runs(), rx.clone(), &[]);
    failed_play(
        &l,
        &ansible,
        &inv,
        &["-e", "upktgen_start_lead=0"],
        &[
            "s1: Every sender succeeded",
            "s2: Every sender succeeded",
            "s in the past",
        ],
    );
    assert!(in_work(&l, "rc", "r1", "from-s1") && in_work(&l, "rc", "r1", "from-s2"));

    // A host without upktgen, when the play only checks: the preflight fails, nothing starts.
    let missing = l.host_dir("s2").join("nowhere/upktgen");
    let inv = l.inventory(
        runs(),
        rx.clone(),
        &[("s2", json!({"upktgen_bin": missing}))],
    );
    failed_play(
        &l,
        &ansible,
        &inv,
        &["-e", "upktgen_install=check"],
        &[
            &format!(
                "s2: {}: no upktgen there, or it does not run",
                missing.display()
            ),
            "install that there, or set upktgen_install=copy",
        ],
    );
    assert!(!in_work(&l, "pid", "r1", "from-s1"));
    // ... or another release there.
    let old = l.host_dir("s2").join("old/upktgen");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::write(&old, "#!/bin/sh\necho 'upktgen 0.0.1'\n").unwrap();
    std::fs::set_permissions(&old, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let inv = l.inventory(runs(), rx.clone(), &[("s2", json!({"upktgen_bin": old}))]);
    failed_play(
        &l,
        &ansible,
        &inv,
        &["-e", "upktgen_install=check"],
        &[&format!(
            "s2: {}: runs upktgen 0.0.1, the controller runs upktgen {}",
            old.display(),
            env!("CARGO_PKG_VERSION")
        )],
    );

    // A host whose clock is 30 s ahead (libfaketime in every session its sshd starts): the
    // preflight measures it against the controller's and fails it, nothing starts.
    l.f.restart_sshd(
        "s2",
        &format!("SetEnv LD_PRELOAD={faketime} FAKETIME=+30s FAKETIME_DONT_FAKE_MONOTONIC=1\n"),
    );
    let inv = l.inventory(runs(), rx.clone(), &[]);
    let out = failed_play(
        &l,
        &ansible,
        &inv,
        &[],
        &[
            "s2: its clock is ",
            " ms off the controller's (measured to within ",
            "synchronise its clock",
        ],
    );
    assert!(!out.contains("s1: its clock"), "{out}");
    assert!(!in_work(&l, "pid", "r1", "from-s1"));

    // An unreachable host: the preflight fails naming it, nothing starts anywhere.
    l.f.stop_sshd("s2");
    let inv = l.inventory(runs(), rx, &[]);
    failed_play(
        &l,
        &ansible,
        &inv,
        &[],
        &["fatal: [s2]: UNREACHABLE!", "Connection refused"],
    );
    assert!(!in_work(&l, "pid", "r1", "from-s1") && !in_work(&l, "pid", "s1", "run"));
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    the_playbook_starts_every_sender_at_one_instant_and_merges_what_the_receivers_counted,
    a_failed_host_fails_the_play_names_it_and_leaves_nothing_running,
];
