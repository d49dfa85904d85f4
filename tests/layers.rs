//! The layer order of DESIGN.md §4, checked over the source: nothing below the run layer
//! imports the command line, and only `backend/` names the backends one by one.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (path under src/, line number, line) of every non-comment line containing `needle`.
fn uses(needle: &str) -> Vec<(String, usize, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        for (i, l) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let t = l.trim_start();
            if !t.starts_with("//") && t.contains(needle) {
                out.push((rel.clone(), i + 1, l.to_string()));
            }
        }
    }
    out
}

#[test]
fn nothing_below_the_run_layer_imports_the_command_line() {
    // The command line's readers: the binary, the plan, the commands' entry points
    // (run/mod.rs, run/rx.rs, the agent's requests), and the other configuration sources:
    // scripts, sweep files and the ndr search (DESIGN.md §4), which checks its trials' run
    // options as `run` parses them.
    let allowed = [
        "main.rs",
        "ndr/",
        "cli/",
        "run/plan",
        "run/mod.rs",
        "run/rx.rs",
        // The far end reads `upktgen rx`'s own options from its requests.
        "agent/server.rs",
        "script/mod.rs",
        "sweep/",
    ];
    let bad: Vec<_> = uses("crate::cli")
        .into_iter()
        .chain(uses("upktgen::cli"))
        .filter(|(f, _, _)| !allowed.iter().any(|a| f.starts_with(a)))
        .collect();
    assert!(
        bad.is_empty(),
        "imports of cli below the run layer: {bad:#?}"
    );
}

#[test]
fn only_the_backend_folder_names_each_backend() {
    let mut bad = Vec::new();
    for kind in ["AfPacket", "TxRing", "AfXdp", "XdpLive"] {
        bad.extend(
            uses(&format!("BackendKind::{kind}"))
                .into_iter()
                // Tests may name them; so does the one default of --backend.
                .filter(|(f, _, l)| {
                    let exempt = f.starts_with("backend/")
                        || f.ends_with("tests.rs")
                        || (f == "cli/run.rs" && l.contains("default_value_t"));
                    !exempt
                }),
        );
    }
    assert!(bad.is_empty(), "backends named outside backend/: {bad:#?}");
}
