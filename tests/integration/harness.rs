//! The harness of the one integration-test binary (libtest-mimic, so `cargo test` prints and
//! filters as usual). Every test is a plain `fn()` listed in its module's `TESTS` (an unlisted
//! one is dead code, which clippy refuses). A test that lacks what it needs — root, a tool, a
//! kernel feature — calls [`skip`] (through the `*_or_skip` helpers) and returns: the harness
//! reports it as *ignored* with the reason, never as passed, and prints every reason again at
//! the end. With `CI=true` a missing need is a failure instead: CI installs everything.

use std::cell::RefCell;
use std::sync::Mutex;

use libtest_mimic::{Arguments, Completion, Trial};

/// One test: its name in the module, its body, and whether it must run alone.
pub struct Test {
    pub name: &'static str,
    pub run: fn(),
    /// Runs with no other test beside it: it measures what the machine can do (a search
    /// for the highest loss-free rate), which tests running beside it would change.
    pub alone: bool,
}

/// `tests![a, b]`: the `TESTS` list of a module, each test named as its function.
#[macro_export]
macro_rules! tests {
    ($($f:ident),* $(,)?) => {
        &[$($crate::harness::Test { name: stringify!($f), run: $f, alone: false }),*]
    };
}

/// `tests_alone![a, b]`: as [`tests!`], for tests that each run with no other beside them.
#[macro_export]
macro_rules! tests_alone {
    ($($f:ident),* $(,)?) => {
        &[$($crate::harness::Test { name: stringify!($f), run: $f, alone: true }),*]
    };
}

/// Held shared by every test, and exclusively by a test that runs alone.
static ALONE: std::sync::RwLock<()> = std::sync::RwLock::new(());

thread_local! {
    /// Why the test running on this thread stopped early; set by [`skip`].
    static SKIPPED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Every skipped test and its reason, for the summary at the end.
static SKIPS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// True in CI (`CI=true`) and under `cargo xtask test` (`UPKTGEN_TESTS_STRICT=1`, after it
/// installed every tool): there nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
        || std::env::var("UPKTGEN_TESTS_STRICT").is_ok_and(|v| v == "1")
}

/// The running test cannot run here because of `reason` (say what is missing and how to get
/// it). Outside CI the test is then reported as ignored when it returns; in CI it fails now.
pub fn skip(reason: impl Into<String>) {
    let reason = reason.into();
    if in_ci() {
        panic!(
            "{reason} — nothing is skipped in CI or under `cargo xtask test`, which install every tool"
        );
    }
    eprintln!("skipping: {reason}");
    SKIPPED.with(|s| {
        s.borrow_mut().get_or_insert(reason);
    });
}

/// Whether `cmd` is an executable file on PATH (or in /usr/sbin, /sbin, where Debian puts
/// sshd and nft for root).
pub fn have_command(cmd: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .any(|d| {
            std::fs::metadata(d.join(cmd))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// True when `cmd` is installed; otherwise skips the test, saying how to get it (`how`, for
/// example "apt-get install nftables").
pub fn tool_or_skip(cmd: &str, how: &str) -> bool {
    if have_command(cmd) {
        return true;
    }
    skip(format!("needs `{cmd}`: {how} (or `cargo xtask test`)"));
    false
}

fn trial(module: &'static str, t: &Test) -> Trial {
    let name = format!("{module}::{}", t.name);
    let (run, alone) = (t.run, t.alone);
    let full = name.clone();
    Trial::ignorable_test(name, move || {
        SKIPPED.with(|s| s.borrow_mut().take());
        // A failed test poisons the lock; the others still run.
        if alone {
            let _g = ALONE.write().unwrap_or_else(|e| e.into_inner());
            run();
        } else {
            let _g = ALONE.read().unwrap_or_else(|e| e.into_inner());
            run();
        }
        match SKIPPED.with(|s| s.borrow_mut().take()) {
            None => Ok(Completion::Completed),
            Some(reason) => {
                SKIPS.lock().unwrap().push((full, reason.clone()));
                Ok(Completion::ignored_with(reason))
            }
        }
    })
}

/// Files under the project that git does not track (ignored ones included), outside
/// target/; None when this is no git checkout (a packaged crate), where the check is off.
fn untracked() -> Option<Vec<String>> {
    let o = std::process::Command::new("git")
        .args([
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--ignored",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("?? ") || l.starts_with("!! "))
        .map(|l| l[3..].to_string())
        .filter(|p| !p.starts_with("target/"))
        // An editor's files, which come and go while someone works beside the run.
        .filter(|p| {
            let name = p.trim_end_matches('/').rsplit('/').next().unwrap_or(p);
            !(name.starts_with('.') || name.ends_with('~'))
        })
        .collect();
    v.sort();
    Some(v)
}

/// Runs the modules' tests as `cargo test` would, then lists what was skipped and why.
///
/// The tests run in an empty directory of their own, so a command that writes into the
/// directory it runs in (`ndr` without `--out`) never writes into the working tree; what is
/// left in it, or appears in the working tree, fails the run.
pub fn main(modules: &[(&'static str, &'static [Test])]) -> ! {
    let args = Arguments::from_args();
    let before = untracked();
    let work = std::env::temp_dir().join(format!("upktgen-tests-cwd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    std::env::set_current_dir(&work).unwrap();
    let trials = modules
        .iter()
        .flat_map(|(m, tests)| tests.iter().map(|t| trial(m, t)))
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    let mut skips = std::mem::take(&mut *SKIPS.lock().unwrap());
    if !skips.is_empty() {
        skips.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
        eprintln!(
            "\n{} test(s) SKIPPED — they did not run and are not counted as passed:",
            skips.len()
        );
        let mut i = 0;
        while i < skips.len() {
            let reason = &skips[i].1;
            let n = skips[i..].iter().take_while(|s| &s.1 == reason).count();
            eprintln!("  {n} × {reason}");
            for (name, _) in &skips[i..i + n] {
                eprintln!("      {name}");
            }
            i += n;
        }
        eprintln!();
    }
    let mut litter: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let _ = std::fs::remove_dir_all(&work);
    if let (Some(before), Some(after)) = (before, untracked()) {
        litter.extend(after.into_iter().filter(|p| !before.contains(p)));
    }
    if !litter.is_empty() {
        eprintln!(
            "FAILED: the tests left files behind (in their working directory or the project): {litter:?}"
        );
        std::process::exit(101);
    }
    conclusion.exit()
}
