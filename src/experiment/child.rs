//! A trial's child process: `upktgen run|sim ...` with its output read, a stop request
//! forwarded as SIGTERM (SIGKILL after a grace, or at a second request), killed with this
//! process, and its error message read from its standard error.

use super::trial::Trial;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a child printed and how it ended.
pub struct ChildEnd {
    pub pid: u32,
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub seconds: f64,
    /// Killed with SIGKILL after it did not stop on SIGTERM.
    pub killed: bool,
}

/// How long a child may take to stop after SIGTERM before it gets SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// Runs `exe args`, forwarding a stop request as SIGTERM (the child stops cleanly and prints
/// its partial report; on a terminal it got the SIGINT too). A child still running
/// `grace` after that, or when a second stop request comes (a second Ctrl-C), gets SIGKILL,
/// so a child stuck in its cleanup cannot hang the sweep. `stop` is true again on return
/// when it was set during the run. (Also `upktgen ndr`'s trials.)
pub fn run_child(
    exe: &Path,
    args: &[String],
    stop: &AtomicBool,
    grace: Duration,
) -> std::io::Result<ChildEnd> {
    let t0 = Instant::now();
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Killed with this process, even by SIGKILL: a run never goes on sending without the
    // sweep or ndr that started it (SIGTERM: it stops as on Ctrl-C and removes its lab).
    crate::sys::proc::die_with_parent(&mut cmd, libc::SIGTERM);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    // When SIGTERM went to the child.
    let mut signalled: Option<Instant> = None;
    let mut killed = false;
    let waited = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        // The request is taken (set back to false) so that a second one can be told apart;
        // it is put back below.
        let asked = stop.swap(false, Ordering::Relaxed);
        match signalled {
            None if asked => {
                // The child is ours and not yet reaped, so its pid is still its own.
                let _ = crate::sys::proc::send_signal(pid, libc::SIGTERM);
                signalled = Some(Instant::now());
            }
            Some(t) if !killed && (asked || t.elapsed() >= grace) => {
                crate::errln!(
                    "upktgen sweep: the run (pid {pid}) did not stop {}; killing it",
                    if asked {
                        "before a second stop request".to_string()
                    } else {
                        format!("within {} s of SIGTERM", grace.as_secs_f64())
                    }
                );
                let _ = child.kill();
                killed = true;
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if signalled.is_some() {
        stop.store(true, Ordering::Relaxed);
    }
    let status = match waited {
        Ok(s) => s,
        Err(e) => {
            // Not left running behind the sweep: killed and reaped.
            let _ = child.kill();
            let _ = child.wait();
            let _ = t_out.join();
            let _ = t_err.join();
            return Err(e);
        }
    };
    let stdout = t_out.join().unwrap_or_default();
    let stderr = t_err.join().unwrap_or_default();
    if killed {
        // Its lab (namespaces named after its pid) was not removed by the child itself.
        for (ns, _) in crate::lab::sweep_stale() {
            crate::errln!("upktgen sweep: removed the killed run's namespace {ns}");
        }
    }
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().or_else(|| status.signal().map(|s| 128 + s));
    Ok(ChildEnd {
        pid,
        code,
        stdout,
        stderr,
        seconds: t0.elapsed().as_secs_f64(),
        killed,
    })
}

/// The child's message: its last lines on standard error, without the program's prefix.
pub fn message_of(stderr: &[u8], code: Option<i32>) -> String {
    let text = String::from_utf8_lossy(stderr);
    // A command line the child refused: clap's own line, not its "For more information".
    if let Some(l) = text.lines().find(|l| l.starts_with("error: ")) {
        return l.trim_start_matches("error: ").trim().to_string();
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.last() {
        Some(l) => l.trim_start_matches("upktgen: ").to_string(),
        None => match code {
            Some(c) => format!("exited with status {c} and no message"),
            None => "ended without a status".to_string(),
        },
    }
}

/// Runs `trial` as a child of `exe` (its arguments from [`Trial::argv`], the one place they
/// are made), with the stop handling of [`run_child`] and [`STOP_GRACE`].
pub fn run_trial(exe: &Path, trial: &Trial, stop: &AtomicBool) -> std::io::Result<ChildEnd> {
    run_child(exe, &trial.argv(), stop, STOP_GRACE)
}
/// What a trial's child left: its JSON report and the seconds it ran, or why there is none
/// (a message for the trial's record, and the seconds); None when it was stopped (Ctrl-C, or
/// killed after SIGTERM), which ends the experiment rather than failing the trial.
pub fn report_of(
    end: std::io::Result<ChildEnd>,
) -> Option<Result<(serde_json::Value, f64), (String, f64)>> {
    let end = match end {
        Ok(e) => e,
        Err(e) => return Some(Err((format!("could not start upktgen: {e}"), 0.0))),
    };
    if end.killed || matches!(end.code, Some(130) | Some(143)) {
        return None;
    }
    if end.code != Some(0) {
        return Some(Err((message_of(&end.stderr, end.code), end.seconds)));
    }
    Some(match serde_json::from_slice(&end.stdout) {
        Ok(v) => Ok((v, end.seconds)),
        Err(e) => Err((format!("the run's output is not JSON: {e}"), end.seconds)),
    })
}
