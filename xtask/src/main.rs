//! `cargo xtask test [-- ARGS]`: installs every tool the tests need that is missing (Debian
//! packages with apt-get, ansible-core with pip; needs root), then runs `cargo test ARGS` in
//! strict mode, where a test that still lacks a tool fails instead of being skipped.
//! `cargo xtask deps` only installs; `cargo xtask deps --check` only lists what is missing.
//!
//! The list below is the one place that says what the tests need: `.ci/run` calls this task.

use std::path::Path;
use std::process::{Command, ExitCode};

/// How a missing tool is installed.
enum Source {
    /// A Debian package.
    Apt(&'static str),
    /// A PyPI requirement, pinned to a release checked with this machine's Python.
    Pip(&'static str),
}

/// (the command the tests run, where it comes from, what for).
const TOOLS: &[(&str, Source, &str)] = &[
    (
        "ip",
        Source::Apt("iproute2"),
        "the lab: namespaces and veth pairs",
    ),
    (
        "setpriv",
        Source::Apt("util-linux"),
        "the unprivileged-user tests",
    ),
    (
        "nft",
        Source::Apt("nftables"),
        "real drops for the loss tests",
    ),
    ("curl", Source::Apt("curl"), "scraping the metrics endpoint"),
    (
        "tshark",
        Source::Apt("tshark"),
        "decoding a capture of the streams' frames (dumpcap captures)",
    ),
    (
        "promtool",
        Source::Apt("prometheus"),
        "promtool check metrics",
    ),
    (
        "sshd",
        Source::Apt("openssh-server"),
        "a real sshd per ssh:// test host",
    ),
    ("ssh", Source::Apt("openssh-client"), "the ssh:// far ends"),
    (
        "faketime",
        Source::Apt("faketime"),
        "a fleet host whose clock is off",
    ),
    (
        "ansible-playbook",
        Source::Pip("ansible-core==2.19.14"),
        "the fleet playbook's test",
    ),
    (
        "python3:snappi",
        Source::Pip("snappi==1.61.1"),
        "the OTG server's tests: the model's own Python client",
    ),
    (
        "st",
        Source::Pip("schemathesis==4.32.5"),
        "the OTG server's tests: fuzzing its /openapi.json",
    ),
];

/// Whether `cmd` is on the PATH; `python3:MODULE`: whether python3 imports MODULE.
fn have(cmd: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    if let Some(module) = cmd.strip_prefix("python3:") {
        return Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .any(|d| {
            std::fs::metadata(d.join(cmd))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    eprintln!("xtask: {shown}");
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{shown} failed ({s})")),
        Err(e) => Err(format!("{shown}: {e}")),
    }
}

/// Installs what is missing; with `check_only`, only says what is.
fn deps(check_only: bool) -> Result<(), String> {
    let missing: Vec<_> = TOOLS.iter().filter(|(c, ..)| !have(c)).collect();
    if missing.is_empty() {
        eprintln!("xtask: every tool the tests need is installed");
        return Ok(());
    }
    for (cmd, src, why) in &missing {
        let from = match src {
            Source::Apt(p) => format!("Debian package {p}"),
            Source::Pip(p) => format!("PyPI {p}"),
        };
        eprintln!("xtask: missing `{cmd}` ({why}): {from}");
    }
    if check_only {
        return Err(format!("{} tool(s) missing", missing.len()));
    }
    if !is_root() {
        return Err(
            "installing them needs root (apt-get and pip as root); run `sudo cargo xtask test`, \
             or plain `cargo test`, which skips the tests that need them and says so"
                .into(),
        );
    }
    let apt: Vec<&str> = missing
        .iter()
        .filter_map(|(_, s, _)| match s {
            Source::Apt(p) => Some(*p),
            Source::Pip(_) => None,
        })
        .collect();
    if !apt.is_empty() {
        run(Command::new("apt-get").args(["update", "-qq"]))?;
        // No service may start from the packages (prometheus and sshd would listen on the
        // host's addresses): the tests start their own, inside their namespaces.
        let policy = Path::new("/usr/sbin/policy-rc.d");
        let made = !policy.exists();
        if made {
            std::fs::write(policy, "#!/bin/sh\nexit 101\n")
                .map_err(|e| format!("{}: {e}", policy.display()))?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(policy, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("{}: {e}", policy.display()))?;
        }
        let installed = run(Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            // Wait for another apt (an unattended upgrade) rather than fail at once.
            .args(["-o", "DPkg::Lock::Timeout=300"])
            .args(&apt)
            .env("DEBIAN_FRONTEND", "noninteractive"));
        if made {
            let _ = std::fs::remove_file(policy);
        }
        installed?;
    }
    for (_, s, _) in &missing {
        if let Source::Pip(req) = s {
            run(Command::new("python3").args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--root-user-action=ignore",
                req,
            ]))?;
        }
    }
    // pyenv's shims (this machine's Python) learn of new scripts only on a rehash.
    if have("pyenv") {
        let _ = Command::new("pyenv").arg("rehash").status();
    }
    let still: Vec<_> = TOOLS
        .iter()
        .filter(|(c, ..)| !have(c))
        .map(|(c, ..)| *c)
        .collect();
    if !still.is_empty() {
        return Err(format!(
            "still missing after the install: {}",
            still.join(", ")
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => deps(false).and_then(|()| {
            let rest = args[1..].iter().skip_while(|a| *a == "--");
            // Strict: a test that still lacks what it needs fails, as in CI. Every crate of
            // the workspace: the layer crates' unit tests are theirs, not the top package's.
            run(Command::new(env!("CARGO"))
                .args(["test", "--workspace"])
                .args(rest)
                .env("UPKTGEN_TESTS_STRICT", "1"))
        }),
        Some("deps") => deps(args.get(1).is_some_and(|a| a == "--check")),
        _ => {
            Err("usage: cargo xtask test [-- CARGO_TEST_ARGS] | cargo xtask deps [--check]".into())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
