//! End-to-end: standard output that cannot take the report. A closed pipe ends the command
//! quietly (exit 141, nothing on stderr); a full disk or a closed descriptor is one line on
//! stderr and a non-zero exit; the lab is removed on every path.

use crate::common::*;
use std::process::{Child, Command, Output, Stdio};

/// Where the command's standard output goes.
#[derive(Clone, Copy, Debug)]
enum Sink {
    /// A pipe whose reading end is closed before anything is written (EPIPE).
    ClosedPipe,
    /// /dev/full (ENOSPC on every write).
    Full,
    /// Descriptor 1 closed (`>&-`).
    Closed,
}

const ALL: [Sink; 3] = [Sink::ClosedPipe, Sink::Full, Sink::Closed];

/// Runs `upktgen ARGS` with standard output going to `sink`; returns its pid and output
/// (stdout of the ClosedPipe case is empty).
fn run_into(sink: Sink, args: &[&str]) -> (u32, Output) {
    let exe = env!("CARGO_BIN_EXE_upktgen");
    let child: Child = match sink {
        Sink::ClosedPipe => {
            // The reading end is closed before the child starts, so every write is EPIPE
            // (closing it after the spawn raced with a short --help written before).
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            Command::new(exe)
                .args(args)
                .stdout(writer)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        }
        Sink::Full => Command::new(exe)
            .args(args)
            .stdout(
                std::fs::File::options()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        // `exec` keeps the pid: the namespaces are named after it.
        Sink::Closed => Command::new("bash")
            .arg("-c")
            .arg(r#"exec "$0" "$@" >&-"#)
            .arg(exe)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    };
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

/// The behaviour every command must have for `sink`; `failure` is the exit status of a
/// write error that is not a broken pipe.
fn assert_ends_well(sink: Sink, o: &Output, failure: i32) {
    let e = stderr(o);
    assert!(!e.contains("panicked"), "{sink:?}: {e}");
    assert_ne!(o.status.code(), Some(101), "{sink:?}: {e}");
    match sink {
        Sink::ClosedPipe => {
            assert_eq!(o.status.code(), Some(141), "{sink:?}: {e}");
            assert!(
                !e.contains("upktgen:"),
                "a broken pipe ends quietly, but: {e}"
            );
        }
        Sink::Full | Sink::Closed => {
            assert_eq!(o.status.code(), Some(failure), "{sink:?}: {e}");
            let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("upktgen: ")).collect();
            assert_eq!(errors.len(), 1, "{sink:?}: one line expected: {e}");
            let needle = match sink {
                Sink::Full => "writing to standard output: No space left on device",
                _ => "standard output is closed",
            };
            assert!(errors[0].contains(needle), "{sink:?}: {e}");
        }
    }
}

fn assert_no_lab(pid: u32) {
    let left = namespaces_with_prefix(&format!("upktgen-{pid}-"));
    assert!(left.is_empty(), "lab left behind: {left:?}");
}

fn sim_output_that_cannot_be_written() {
    for sink in ALL {
        let (_, o) = run_into(sink, &["sim", "--count", "1000"]);
        assert_ends_well(sink, &o, 1);
    }
}

fn functions_sh_output_that_cannot_be_written() {
    for sink in ALL {
        let (_, o) = run_into(sink, &["functions-sh"]);
        assert_ends_well(sink, &o, 1);
    }
}

fn help_and_version_that_cannot_be_written() {
    for sink in ALL {
        for args in [&["run", "--help"][..], &["--version"][..]] {
            let (_, o) = run_into(sink, args);
            assert_ends_well(sink, &o, 1);
        }
    }
}

fn nothing_to_print_needs_no_stdout() {
    // A script that prints nothing may run with standard output closed.
    let dir = std::env::temp_dir().join(format!("upktgen-e2e-output-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("quiet.pg");
    std::fs::write(&f, "pgctrl reset\n").unwrap();
    let (_, o) = run_into(Sink::Closed, &["script", "--check", f.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

fn run_in_the_lab_with_output_that_cannot_be_written() {
    if !root_or_skip() {
        return;
    }
    for sink in ALL {
        for json in [false, true] {
            let mut args = vec!["run", "--count", "2000"];
            if json {
                args.push("--json");
            }
            let (pid, o) = run_into(sink, &args);
            assert_ends_well(sink, &o, 1);
            assert_no_lab(pid);
        }
    }
}

fn script_in_the_lab_with_output_that_cannot_be_written() {
    if !root_or_skip() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("upktgen-e2e-output-s-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("one.pg");
    std::fs::write(
        &f,
        "pgctrl reset\nkpktgend_0 add_device eth0\neth0 count 2000\npgctrl start\nshow eth0\n",
    )
    .unwrap();
    let path = f.to_str().unwrap().to_string();
    for sink in ALL {
        let (pid, o) = run_into(sink, &["script", "--lab", &path]);
        assert_ends_well(sink, &o, 2);
        assert_no_lab(pid);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn sweep_output_that_cannot_be_written() {
    let dir = std::env::temp_dir().join(format!("upktgen-e2e-output-w-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.toml");
    std::fs::write(
        &f,
        "[sweep]\ncommand = \"sim\"\nrepetitions = 1\n[base]\ncount = 1000\n\
         [[dimension]]\nname = \"ring\"\nvalues = [16, 64, 256]\n",
    )
    .unwrap();
    let path = f.to_str().unwrap().to_string();
    for sink in ALL {
        // The listing, then a sweep whose first iteration line cannot be printed: it stops
        // there as Ctrl-C would stop it, and says why once.
        let (_, o) = run_into(sink, &["sweep", &path, "--dry-run"]);
        assert_ends_well(sink, &o, 1);
        let (_, o) = run_into(sink, &["sweep", &path]);
        assert_ends_well(sink, &o, 1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

pub(crate) const TESTS: &[crate::harness::Test] = crate::tests![
    sim_output_that_cannot_be_written,
    functions_sh_output_that_cannot_be_written,
    help_and_version_that_cannot_be_written,
    nothing_to_print_needs_no_stdout,
    run_in_the_lab_with_output_that_cannot_be_written,
    script_in_the_lab_with_output_that_cannot_be_written,
    sweep_output_that_cannot_be_written,
];
