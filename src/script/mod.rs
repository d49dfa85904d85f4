//! `upktgen script`: pktgen's control language (what `echo CMD > /proc/net/pktgen/FILE`
//! does) read from a file, and `upktgen functions-sh`: a replacement for the kernel's
//! samples/pktgen/functions.sh that drives it.

pub mod interp;
pub mod parse;

#[cfg(test)]
mod tests;

use crate::app::{self, SenderSpec};
use crate::backend::BackendKind;
use crate::cli::RunArgs;
use crate::lab::{self, RxMode};
use crate::out::{self, OutputError};
use crate::params;
use crate::pg::Flag;
use crate::pg::show::{Current, show};
use crate::wire::MacAddr;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use interp::{Effect, Interp};
use parse::{Line, Target};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub const SCRIPT_ABOUT: &str =
    "Run a file of pktgen control commands, one per line, as the kernel's \
/proc/net/pktgen takes them.

A line is `TARGET COMMAND...` (what `echo \"COMMAND\" > /proc/net/pktgen/TARGET` does; that \
spelling is accepted too, and TARGET may be written /proc/net/pktgen/TARGET), `show TARGET` or \
`cat /proc/net/pktgen/TARGET` (prints the file), or a `#` comment. Targets:
  pgctrl       start (run every added device at once and wait for the end; Ctrl-C stops it),
               stop, reset (remove every device)
  kpktgend_N   the thread on CPU N: add_device DEV[@TAG], rem_device_all, max_before_softirq
  DEV[@TAG]    a device as added: count 1000, pkt_size 60, dst 10.0.0.2, flag UDPCSUM, ...
               (every pktgen parameter; see `upktgen run --help`)

Every command answers as pktgen does (`OK: ...` or `ERROR: ...`). ERROR answers go to standard \
error with the line number; OK answers to standard output with --verbose. A failed command does \
not stop the script (as a failed echo does not), unless --strict; the exit status is 1 when any \
command failed, 130 after Ctrl-C.

Where it runs: by default in a private lab (two network namespaces joined by a veth pair, \
created for each start and removed after it) where every device name of the script stands for \
the lab's sending interface, so a script written for eth0 runs unchanged. --real sends on the \
interfaces the script names, in the current network namespace.";

pub const SCRIPT_HELP: &str = "Example:
  # two threads, one flow each
  pgctrl reset
  kpktgend_0 add_device eth0@0
  kpktgend_1 add_device eth0@1
  eth0@0 count 100000
  eth0@0 src_min 198.18.1.1
  eth0@1 count 100000
  echo \"src_min 198.18.2.1\" > /proc/net/pktgen/eth0@1
  pgctrl start
  cat /proc/net/pktgen/eth0@0
  show eth0@1

To run the kernel's samples/pktgen scripts: `upktgen functions-sh > functions.sh` beside them.";

/// `upktgen script`.
#[derive(Args, Debug, Clone)]
pub struct ScriptArgs {
    /// The script (`-` for standard input).
    #[arg(value_name = "FILE", required_unless_present = "write")]
    pub file: Option<PathBuf>,

    /// Run in a private lab: every device name stands for the lab's sending interface
    /// (the default).
    #[arg(long, conflicts_with = "real")]
    pub lab: bool,

    /// Send on the interfaces the script names, in the current network namespace.
    #[arg(long)]
    pub real: bool,

    /// Also print OK answers.
    #[arg(short, long)]
    pub verbose: bool,

    /// Stop at the first command that fails.
    #[arg(long)]
    pub strict: bool,

    /// Apply every command but do not send: `pgctrl start` only checks that the devices
    /// could start: each device's settings, the number of senders (a lab gives each a veth
    /// queue, at most 4096), each frame against the MTU, the walk. Only a start
    /// checks the privileges, creating the lab, the backend's options and opening it
    /// (sockets, rings, XDP programs), and with --real the device's address.
    #[arg(long)]
    pub check: bool,

    /// Keep the state between invocations in DIR (used by functions-sh): replay DIR/log,
    /// run the commands, append them to the log, and write each file's text to DIR/proc/.
    #[arg(long, value_name = "DIR", hide = true)]
    pub session: Option<PathBuf>,

    /// With --session: one command for TARGET (the text after --write TARGET --line).
    #[arg(long, value_name = "TARGET", requires_all = ["session", "line"], hide = true)]
    pub write: Option<String>,

    /// With --write: the command, as echo would write it.
    #[arg(
        long,
        value_name = "COMMAND",
        requires = "write",
        allow_hyphen_values = true,
        hide = true
    )]
    pub line: Option<String>,

    /// Transmit path of every device.
    #[arg(long, value_enum, default_value_t = BackendKind::AfPacket, value_name = "NAME")]
    pub backend: BackendKind,

    /// Ring backends: descriptors in the TX ring.
    #[arg(long, value_name = "N")]
    pub ring: Option<u32>,

    /// Frames handed to the kernel per syscall at most.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024), value_name = "N")]
    pub batch: Option<u16>,

    /// SO_SNDBUF of the sending sockets in bytes.
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<u32>,

    /// PACKET_QDISC_BYPASS (a device's xmit_mode also chooses it).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub qdisc_bypass: Option<bool>,

    /// The lab's receiver: drop (XDP drops every frame) or stack [drop].
    #[arg(long, value_enum, value_name = "MODE", conflicts_with = "real")]
    pub lab_rx: Option<RxMode>,

    /// Stop every start after this long (count 0 runs until then), e.g. 2s, 500ms.
    #[arg(long, value_parser = params::parse_duration, value_name = "TIME")]
    pub duration: Option<Duration>,

    /// Seed of the random draws, for a reproducible walk.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Print each start's report as JSON.
    #[arg(long)]
    pub json: bool,

    /// No live statistics during a start, even on a terminal.
    #[arg(long)]
    pub no_live: bool,
}

/// The options `upktgen run` would take for one start.
fn run_args(a: &ScriptArgs, specs: &[(String, SenderSpec)]) -> Result<RunArgs> {
    use clap::Parser as _;
    let mut r = crate::cli::Cli::try_parse_from(["upktgen"])?.run;
    r.dev = if a.real {
        specs.first().map(|(_, s)| s.cfg.device().to_string())
    } else {
        None
    };
    r.backend = a.backend;
    r.ring = a.ring;
    r.batch = a.batch;
    r.sndbuf = a.sndbuf;
    r.qdisc_bypass = a.qdisc_bypass;
    r.lab_rx = a.lab_rx;
    r.duration = a.duration;
    r.seed = a.seed;
    r.json = a.json;
    r.no_live = a.no_live;
    // The lab's veth gets a queue per sender.
    r.threads = u16::try_from(specs.len()).unwrap_or(u16::MAX);
    Ok(r)
}

/// Online CPUs (kpktgend_N exists for each).
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| interp::parse_cpu_list(&s))
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            (0..n).collect()
        })
}

fn sys_mac(dev: &str) -> MacAddr {
    std::fs::read_to_string(format!("/sys/class/net/{dev}/address"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_default()
}

fn interp_for(a: &ScriptArgs) -> Interp {
    if a.real {
        Interp::new(
            online_cpus(),
            Box::new(|d| Path::new(&format!("/sys/class/net/{d}")).exists()),
            Box::new(sys_mac),
        )
    } else {
        Interp::new(online_cpus(), Box::new(|_| true), Box::new(|_| lab::TX_MAC))
    }
}

/// The senders of a start: every added device, thread by thread, pinned to its thread's
/// CPU; in the lab each stands for the lab's sending interface (its @tag kept) and gets
/// the lab's receiver as destination where it has none.
pub fn start_specs(it: &Interp, real: bool) -> Result<Vec<(String, SenderSpec)>, String> {
    let mut out = Vec::new();
    for (name, d) in it.devices() {
        d.cfg
            .check_start()
            .map_err(|e| format!("ERROR: start: {name}: {e}"))?;
        let mut cfg = d.cfg.clone();
        if !real {
            cfg.ifname = match name.split_once('@') {
                Some((_, tag)) => format!("{}@{tag}", lab::TX_IF),
                None => lab::TX_IF.to_string(),
            };
            if cfg.dst_min.is_empty() && !cfg.has(Flag::Ipv6) {
                cfg.dst_min = lab::RX_IP.to_string();
            }
            if cfg.dst_mac == MacAddr::default() {
                cfg.dst_mac = lab::RX_MAC;
            }
        } else if cfg.dst_mac == MacAddr::default() {
            return Err(format!(
                "ERROR: start: {name}: dst_mac is 00:00:00:00:00:00, which every receiver drops: set dst_mac"
            ));
        }
        out.push((
            name.to_string(),
            SenderSpec {
                cfg,
                cpu: Some(d.thread),
            },
        ));
    }
    if out.is_empty() {
        return Err("ERROR: start: no device added (kpktgend_N add_device DEV first)".into());
    }
    Ok(out)
}

/// What a start would refuse before sending, checked from the settings alone for
/// `--check`, beyond each device's own checks ([`start_specs`]): the number of senders the
/// lab can give a queue, each frame against the device's MTU, and the walk each
/// configuration describes. [`CHECK_CANNOT`] lists what only a start checks.
fn check_start(a: &ScriptArgs, specs: &[(String, SenderSpec)]) -> Result<(), String> {
    if !a.real {
        lab::check_queues(specs.len()).map_err(|e| format!("ERROR: start: {e:#}"))?;
    }
    for (i, (name, s)) in specs.iter().enumerate() {
        let fail = |e: &dyn std::fmt::Display| format!("ERROR: start: {name}: {e}");
        let dev = s.cfg.device();
        let (mtu, info) = if a.real {
            let mtu = std::fs::read_to_string(format!("/sys/class/net/{dev}/mtu"))
                .ok()
                .and_then(|m| m.trim().parse().ok());
            let info = crate::pg::generate::DeviceInfo {
                mac: sys_mac(dev),
                // The address is probed at start; a placeholder stands for it here.
                ipv4: Some(std::net::Ipv4Addr::UNSPECIFIED),
                tx_queues: 1,
            };
            (mtu, info)
        } else {
            let info = crate::pg::generate::DeviceInfo {
                mac: lab::TX_MAC,
                ipv4: Some(lab::TX_IP),
                tx_queues: specs.len().max(1) as u16,
            };
            (Some(lab::MTU), info)
        };
        if let Some(mtu) = mtu {
            app::check_frame_fits(&s.cfg, mtu, dev).map_err(|e| fail(&format!("{e:#}")))?;
        }
        crate::pg::generate::Generator::new(&s.cfg, &info, i as u64).map_err(|e| fail(&e))?;
    }
    Ok(())
}

/// What `--check` cannot check, for its help and its verbose answer.
pub const CHECK_CANNOT: &str = "the privileges (root or CAP_NET_RAW, CAP_NET_ADMIN, CAP_SYS_ADMIN), creating the lab, the backend's options against the chosen backend and opening it (sockets, rings, XDP programs), and with --real the device's address";

/// How one start ended.
enum Started {
    Ok(String),
    Failed(String),
    Interrupted(String),
}

/// Runs every added device; records each one's Current and Result.
fn start(a: &ScriptArgs, it: &mut Interp, stop: &Arc<AtomicBool>) -> Started {
    let specs = match start_specs(it, a.real) {
        Ok(s) => s,
        Err(e) => return Started::Failed(e),
    };
    if a.check {
        return match check_start(a, &specs) {
            Ok(()) => Started::Ok(String::new()),
            Err(e) => Started::Failed(e),
        };
    }
    if stop.load(Ordering::Relaxed) {
        return Started::Interrupted(String::new());
    }
    let ra = match run_args(a, &specs) {
        Ok(r) => r,
        Err(e) => return Started::Failed(format!("ERROR: start: {e:#}")),
    };
    let names: Vec<String> = specs.iter().map(|(n, _)| n.clone()).collect();
    let mut r = match app::run_senders(&ra, specs.into_iter().map(|(_, s)| s).collect(), stop) {
        Ok(Some(r)) => r,
        Ok(None) => return Started::Interrupted(String::new()),
        Err(e) => return Started::Failed(format!("ERROR: start: {e:#}")),
    };
    // The report names each sender as the script does.
    for (t, name) in r.report.threads.iter_mut().zip(&names) {
        t.device.clone_from(name);
    }
    for (name, s) in names.iter().zip(&r.senders) {
        let res = &s.outcome.result;
        let cur = Current {
            sofar: res.sent,
            errors: res.errors,
            started_us: s.started_ns / 1000,
            stopped_us: s.stopped_ns / 1000,
            idle_us: res.idle_ns / 1000,
        };
        let result = res.lines();
        let mac = it.mac_of(name);
        let walk = s
            .walk
            .clone()
            .or_else(|| fixed_walk(&s.spec.cfg, mac, !a.real, res.sent));
        if let Some(d) = it.device_mut(name) {
            let text = show(&d.cfg, mac, walk.as_ref(), &cur, &result);
            d.current = interp::current_section(&text);
            d.result = result;
        }
    }
    let report = if a.json {
        serde_json::to_string_pretty(&r.report).unwrap_or_default() + "\n"
    } else {
        r.report.text(false)
    };
    if r.interrupted {
        Started::Interrupted(report)
    } else {
        Started::Ok(report)
    }
}

/// The walk's state after `sent` frames of a device whose fields never change (sent from
/// one prebuilt frame, so no walk was kept): every current value is its minimum and only
/// the sequence number moved. None when ports vary or the source address is unknown.
fn fixed_walk(
    c: &crate::pg::DevConfig,
    mac: MacAddr,
    lab: bool,
    sent: u64,
) -> Option<crate::pg::generate::Generator> {
    if c.udp_src_min < c.udp_src_max || c.udp_dst_min < c.udp_dst_max {
        return None;
    }
    if !lab && c.src_min.is_empty() && !c.has(Flag::Ipv6) {
        return None;
    }
    let dev = crate::pg::generate::DeviceInfo {
        mac,
        ipv4: lab.then_some(lab::TX_IP),
        tx_queues: 1,
    };
    let mut g = crate::pg::generate::Generator::new(c, &dev, 0).ok()?;
    g.seq = g.seq.wrapping_add(sent as u32);
    Some(g)
}

/// Where a line came from, for messages.
struct Origin<'a> {
    file: &'a str,
    line: usize,
}

/// Tallies of a run of lines.
#[derive(Default)]
struct Tally {
    failed: Vec<usize>,
    missing: bool,
    interrupted: bool,
}

/// Runs lines; prints answers, shows and reports (stopping at the first that cannot be
/// printed, or where --strict stops it).
fn run_lines(
    a: &ScriptArgs,
    it: &mut Interp,
    lines: &[(usize, String)],
    file: &str,
    stop: &Arc<AtomicBool>,
    log: &mut Vec<String>,
    t: &mut Tally,
) -> Result<(), OutputError> {
    let session = a.session.is_some();
    for (no, text) in lines {
        let o = Origin { file, line: *no };
        let label = |target: &str| {
            if session {
                String::new()
            } else {
                format!("{}:{}: {target}: ", o.file, o.line)
            }
        };
        let parsed = match parse::parse_line(text) {
            Ok(p) => p,
            Err(e) => {
                crate::errln!("{}ERROR: {e}", label(text.trim()));
                t.failed.push(*no);
                if a.strict {
                    return Ok(());
                }
                continue;
            }
        };
        let target = match &parsed {
            Line::Write { target, .. } | Line::Show(target) => target.to_string(),
            Line::Empty => String::new(),
        };
        if let Line::Write { target, cmd } = &parsed
            && !(matches!(target, Target::Pgctrl) && matches!(cmd.trim(), "start" | "stop"))
        {
            log.push(log_line(target, cmd));
        }
        let ok = match it.apply(&parsed) {
            Effect::Nothing => true,
            Effect::Answer(Ok(s)) => {
                if a.verbose {
                    out::println(format_args!("{}{s}", label(&target)))?;
                }
                true
            }
            Effect::Answer(Err(s)) => {
                if session {
                    crate::errln!("Result: {s}");
                } else {
                    crate::errln!("{}{s}", label(&target));
                }
                false
            }
            Effect::Missing(s) => {
                crate::errln!("{}ERROR: {s}", label(&target));
                t.missing = true;
                false
            }
            Effect::Show(s) => {
                out::print(s)?;
                true
            }
            Effect::Start => {
                if t.interrupted {
                    crate::errln!("{}ERROR: start: interrupted earlier", label(&target));
                    false
                } else {
                    match start(a, it, stop) {
                        Started::Ok(report) => {
                            out::print(report)?;
                            if a.verbose {
                                out::println(format_args!(
                                    "{}OK: start{}",
                                    label(&target),
                                    if a.check {
                                        format!(
                                            " (checked without sending; only a start checks {CHECK_CANNOT})"
                                        )
                                    } else {
                                        String::new()
                                    }
                                ))?;
                            }
                            true
                        }
                        Started::Failed(e) => {
                            if session {
                                crate::errln!("Result: {e}");
                            } else {
                                crate::errln!("{}{e}", label(&target));
                            }
                            false
                        }
                        Started::Interrupted(report) => {
                            out::print(report)?;
                            t.interrupted = true;
                            true
                        }
                    }
                }
            }
        };
        if !ok {
            t.failed.push(*no);
            if a.strict {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A write as one line that parses back to it: the target spelled with /proc/net/pktgen/
/// (so that a device called `echo` or `show` stays a device), the command quoted.
fn log_line(target: &Target, cmd: &str) -> String {
    format!("{}{target} {}", parse::PROC_DIR, quote(cmd))
}

/// Quotes a command for the session log and for --write, so that the line parser gives it
/// back unchanged (blanks and `#` included). A `"` inside a command that also holds a `'` becomes a blank: pktgen's
/// parser takes `"` as a separator anyway.
fn quote(cmd: &str) -> String {
    if cmd.contains('\'') {
        format!("\"{}\"", cmd.replace('"', " "))
    } else {
        format!("'{cmd}'")
    }
}

fn read_script(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading the script from standard input")?;
        Ok(s)
    } else {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        String::from_utf8(bytes).map_err(|_| anyhow!("{}: not UTF-8 text", path.display()))
    }
}

/// Replays a session's log (quietly), then restores each file's Result and Current.
fn load_session(it: &mut Interp, dir: &Path) -> Result<()> {
    let log = dir.join("log");
    let text = match std::fs::read_to_string(&log) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", log.display())),
    };
    for l in text.lines() {
        if let Ok(p) = parse::parse_line(l) {
            let _ = it.apply(&p);
        }
    }
    let proc_dir = dir.join("proc");
    let names: Vec<String> = it.devices().iter().map(|(n, _)| n.to_string()).collect();
    for n in names {
        if let Ok(t) = std::fs::read_to_string(proc_dir.join(&n))
            && let Some(d) = it.device_mut(&n)
        {
            d.result = interp::result_section(&t).unwrap_or_default();
            if !t.contains("pkts-sofar: 0 ") || !t.contains("started: 0us") {
                d.current = interp::current_section(&t);
            }
        }
    }
    for n in it.cpus.clone() {
        if let Ok(t) = std::fs::read_to_string(proc_dir.join(format!("kpktgend_{n}"))) {
            it.set_thread_result(n, interp::result_section(&t).unwrap_or_default());
        }
    }
    Ok(())
}

/// Writes the session's log and every file's text.
fn save_session(it: &Interp, dir: &Path, log: &[String]) -> Result<()> {
    use std::io::Write as _;
    if !log.is_empty() {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("log"))
            .with_context(|| format!("writing {}", dir.join("log").display()))?;
        for l in log {
            writeln!(f, "{l}")?;
        }
    }
    let proc_dir = dir.join("proc");
    std::fs::create_dir_all(&proc_dir)
        .with_context(|| format!("creating {}", proc_dir.display()))?;
    let files = it.files();
    for e in std::fs::read_dir(&proc_dir)?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !files.iter().any(|(n, _)| *n == name) {
            let _ = std::fs::remove_file(e.path());
        }
    }
    for (name, text) in files {
        std::fs::write(proc_dir.join(&name), text)
            .with_context(|| format!("writing {}", proc_dir.join(&name).display()))?;
    }
    Ok(())
}

fn script(a: &ScriptArgs, stop: &Arc<AtomicBool>) -> Result<Tally> {
    let mut it = interp_for(a);
    if let Some(dir) = &a.session {
        if !dir.is_dir() {
            bail!("--session {}: not a directory", dir.display());
        }
        load_session(&mut it, dir)?;
    }
    let (name, lines): (String, Vec<(usize, String)>) = match (&a.write, &a.file) {
        (Some(t), _) => {
            // The target and command given apart: the command is taken as echo writes it.
            let target = parse::parse_target(t).map_err(|e| anyhow!("--write {t}: {e}"))?;
            let cmd = a.line.clone().unwrap_or_default();
            ("-".into(), vec![(1, log_line(&target, &cmd))])
        }
        (None, Some(f)) => {
            let text = read_script(f)?;
            (
                f.display().to_string(),
                text.lines()
                    .enumerate()
                    .map(|(i, l)| (i + 1, l.to_string()))
                    .collect(),
            )
        }
        (None, None) => bail!("give a script FILE"),
    };
    let mut log = Vec::new();
    let mut t = Tally::default();
    let printed = run_lines(a, &mut it, &lines, &name, stop, &mut log, &mut t);
    // The commands were applied even when their output could not be printed.
    if let Some(dir) = &a.session {
        save_session(&it, dir, &log)?;
    }
    printed?;
    Ok(t)
}

/// `upktgen script`: exit 0 when every command answered OK, 1 when any failed (3 with
/// --session when the target does not exist, as the kernel's missing file), 130 after
/// Ctrl-C, 2 when the script could not be read or its output could not be written (141,
/// quietly, when standard output's reader went away).
pub fn main(a: &ScriptArgs) -> ExitCode {
    let stop = match app::stop_flag() {
        Ok(s) => s,
        Err(e) => return out::fail(&e, 2),
    };
    match script(a, &stop) {
        Ok(t) if t.interrupted => ExitCode::from(130),
        Ok(t) if t.failed.is_empty() => ExitCode::SUCCESS,
        Ok(t) => {
            if a.session.is_some() {
                return ExitCode::from(if t.missing { 3 } else { 1 });
            }
            let lines: Vec<String> = t.failed.iter().map(ToString::to_string).collect();
            crate::errln!(
                "upktgen: {} command{} failed (line{} {})",
                t.failed.len(),
                if t.failed.len() == 1 { "" } else { "s" },
                if t.failed.len() == 1 { "" } else { "s" },
                lines.join(", ")
            );
            ExitCode::FAILURE
        }
        Err(e) => out::fail(&e, 2),
    }
}

/// `upktgen functions-sh`: the bash library, with this binary as the default $UPKTGEN.
pub fn functions_sh() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
        .unwrap_or_else(|| "upktgen".into());
    include_str!("functions.sh").replace("@UPKTGEN_EXE@", &sh_single_quote(&exe))
}

fn sh_single_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

pub const FUNCTIONS_SH_ABOUT: &str =
    "Print a bash replacement for the kernel's samples/pktgen/functions.sh.

Save it as functions.sh beside the kernel's sample scripts (pktgen_sample01_simple.sh ...) and \
they run unchanged, driving upktgen: pg_ctrl, pg_thread, pg_set, proc_cmd and pgset record the \
commands in a session kept by `upktgen script --session` (each answers at once, as the kernel \
would), `pg_ctrl start` sends and prints upktgen's report, and `cat /proc/net/pktgen/DEV` prints \
the device in the kernel's layout. Environment: UPKTGEN (the binary; default: this one), \
UPKTGEN_ARGS (options for `upktgen script`, e.g. `--backend tx_ring` or `--real`), UPKTGEN_STATE \
(a directory that keeps the session, for -a append runs). By default the scripts run in a \
private lab, every device name standing for the lab's sending interface.

Example: upktgen functions-sh > samples/pktgen/functions.sh && \
samples/pktgen/pktgen_sample01_simple.sh -i eth0 -m 02:00:00:00:00:02 -n 1000";
