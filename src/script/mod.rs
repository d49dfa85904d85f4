//! `upktgen script`: pktgen's control language (what `echo CMD > /proc/net/pktgen/FILE`
//! does) read from a file, and `upktgen functions-sh`: a replacement for the kernel's
//! samples/pktgen/functions.sh that drives it.

pub(crate) mod interp;
pub(crate) mod parse;

#[cfg(test)]
mod tests;

use crate::cli::ScriptArgs;
use crate::lab;
use crate::out::{self, OutputError};
use crate::pg::Flag;
use crate::pg::show::{Current, show};
use crate::run::plan::{RunPlan, SenderSpec};
use crate::text::clip;
use crate::wire::MacAddr;
use anyhow::{Context, Result, anyhow, bail};
use interp::{Effect, IfaceKind, IfaceRefused, Interp};
use parse::{Line, Target};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// The interpreter of a script: as the kernel's, devices are the interfaces of the current
/// network namespace (an interface that does not exist cannot be added); with --lab every
/// name may be added and stands for the private lab's sending interface.
fn interp_for(a: &ScriptArgs) -> Interp {
    if a.lab {
        Interp::new(online_cpus(), Box::new(|_| true), Box::new(|_| lab::TX_MAC)).in_lab()
    } else {
        Interp::checked(online_cpus(), Box::new(check_iface), Box::new(sys_mac))
    }
}

/// What the kernel checks at `add_device`: the interface exists in this network namespace,
/// is an Ethernet or a loopback device, and is up. The interface index answers for the
/// calling process's namespace; sysfs may show another namespace's interfaces, so its type
/// and flags are taken only when it shows the same index (else a start's probe checks them).
fn check_iface(d: &str) -> Result<IfaceKind, IfaceRefused> {
    let index =
        crate::sys::if_nametoindex(d).map_err(|_| IfaceRefused::NoSuchNetdevice(d.to_string()))?;
    let sys = |f: &str| {
        std::fs::read_to_string(format!("/sys/class/net/{d}/{f}"))
            .ok()
            .map(|s| s.trim().to_string())
    };
    if sys("ifindex") != Some(index.to_string()) {
        return Ok(IfaceKind::Ethernet);
    }
    let kind = match sys("type").as_deref() {
        // ARPHRD_ETHER, ARPHRD_LOOPBACK
        None | Some("1") => IfaceKind::Ethernet,
        Some("772") => IfaceKind::Loopback,
        Some(_) => return Err(IfaceRefused::NotEthernet(d.to_string())),
    };
    let flags = sys("flags").and_then(|f| u32::from_str_radix(f.trim_start_matches("0x"), 16).ok());
    if flags.is_some_and(|f| f & libc::IFF_UP as u32 == 0) {
        return Err(IfaceRefused::Down(d.to_string()));
    }
    Ok(kind)
}

/// The senders of a start: every added device, thread by thread, pinned to its thread's
/// CPU; in the lab each stands for the lab's sending interface (its @tag kept) and gets
/// the lab's receiver as destination where it has none. A loopback device's frames come
/// back into this host: it needs no dst_mac (as in the kernel, all zeros is sent).
pub fn start_specs(it: &Interp, lab: bool) -> Result<Vec<(String, SenderSpec)>> {
    let mut out = Vec::new();
    for (name, d) in it.devices() {
        d.cfg
            .check_start()
            .map_err(|e| anyhow!("ERROR: start: {name}: {e}"))?;
        let mut cfg = d.cfg.clone();
        if lab {
            cfg.ifname = interp::lab_ifname(name);
            crate::run::plan::fill_lab_destination(&mut cfg);
        } else if cfg.dst_mac == MacAddr::default() && !cfg.loopback {
            bail!(
                "ERROR: start: {name}: dst_mac is 00:00:00:00:00:00, which every receiver drops: set dst_mac"
            );
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
        bail!("ERROR: {}", interp::Refused::NoDevice);
    }
    Ok(out)
}

/// What a start would refuse before sending, checked from the settings alone for
/// `--check`, beyond each device's own checks ([`start_specs`]): the number of senders the
/// lab can give a queue, the start's plan (the backend's options, as a start refuses
/// them), each frame against the device's MTU, and the walk each
/// configuration describes. [`CHECK_CANNOT`] lists what only a start checks.
fn check_start(a: &ScriptArgs, specs: &[(String, SenderSpec)]) -> Result<()> {
    // The start's plan: the backend's options, and the target's.
    RunPlan::from_script(a, specs.iter().map(|(_, s)| s.clone()).collect())
        .map_err(|e| anyhow!("ERROR: start: {e:#}"))?;
    if a.lab {
        lab::check_queues(specs.len()).map_err(|e| anyhow!("ERROR: start: {e:#}"))?;
    }
    for (i, (name, s)) in specs.iter().enumerate() {
        let fail = |e: &dyn std::fmt::Display| anyhow!("ERROR: start: {name}: {e}");
        let dev = s.cfg.device();
        let (mtu, info) = if !a.lab {
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
            crate::run::device::check_frame_fits(&s.cfg, mtu, dev)
                .map_err(|e| fail(&format!("{e:#}")))?;
        }
        crate::pg::generate::Generator::new(&s.cfg, &info, i as u64).map_err(|e| fail(&e))?;
    }
    Ok(())
}

/// What `--check` cannot check, for its help and its verbose answer.
pub const CHECK_CANNOT: &str = "the privileges (root or CAP_NET_RAW, CAP_NET_ADMIN, CAP_SYS_ADMIN), creating the lab, opening the backend (sockets, rings, XDP programs), and without --lab the device's address";

/// How one start ended.
enum Started {
    Ok(String),
    Failed(String),
    Interrupted(String),
}

/// Runs every added device; records each one's Current and Result.
fn start(a: &ScriptArgs, it: &mut Interp, stop: &Arc<AtomicBool>) -> Started {
    let specs = match start_specs(it, a.lab) {
        Ok(s) => s,
        Err(e) => return Started::Failed(e.to_string()),
    };
    if a.check {
        return match check_start(a, &specs) {
            Ok(()) => {
                if !a.lab {
                    say_where(true, &specs);
                }
                Started::Ok(String::new())
            }
            Err(e) => Started::Failed(e.to_string()),
        };
    }
    if stop.load(Ordering::Relaxed) {
        return Started::Interrupted(String::new());
    }
    let names: Vec<String> = specs.iter().map(|(n, _)| n.clone()).collect();
    if !a.lab {
        say_where(false, &specs);
    }
    let plan = match RunPlan::from_script(a, specs.into_iter().map(|(_, s)| s).collect()) {
        Ok(p) => p,
        Err(e) => return Started::Failed(format!("ERROR: start: {e:#}")),
    };
    let mut r = match crate::run::execute(plan, stop) {
        Ok(Some(r)) => r,
        Ok(None) => return Started::Interrupted(String::new()),
        Err(e) => return Started::Failed(format!("ERROR: start: {e:#}")),
    };
    // The report names each sender as the script does; in the lab it says which names
    // stand for the lab's interface.
    for (t, name) in r.report.threads.iter_mut().zip(&names) {
        t.device.clone_from(name);
    }
    if a.lab {
        r.report.target.stands_for.clone_from(&names);
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
            .or_else(|| fixed_walk(&s.spec.cfg, mac, a.lab, res.sent));
        if let Some(d) = it.device_mut(name) {
            let text = show(&d.cfg, mac, walk.as_ref(), &cur, &result);
            d.current = interp::current_section(&text);
            d.result = result;
        }
    }
    let report = if a.json {
        crate::schema::to_pretty(crate::schema::RUN, &r.report).unwrap_or_default() + "\n"
    } else {
        r.report.text(false)
    };
    if r.interrupted {
        Started::Interrupted(report)
    } else {
        Started::Ok(report)
    }
}

/// Says once, on standard error, which existing interfaces a start sends on (or, with
/// --check, would send on), and how to run in the lab instead.
fn say_where(check: bool, specs: &[(String, SenderSpec)]) {
    let mut ifaces: Vec<&str> = Vec::new();
    for (_, s) in specs {
        let d = s.cfg.device();
        if !ifaces.contains(&d) {
            ifaces.push(d);
        }
    }
    let what = if ifaces.len() == 1 {
        "an existing interface"
    } else {
        "existing interfaces"
    };
    crate::errln!(
        "upktgen: {} on {} ({what}): --lab sends in a private lab instead",
        if check {
            "a start would send"
        } else {
            "sending"
        },
        ifaces.join(", ")
    );
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
        // What a message echoes of the input is kept short (a line may be 64 KiB).
        let label = |target: &str| {
            if session {
                String::new()
            } else {
                format!("{}:{}: {}: ", o.file, o.line, clip(target, 80))
            }
        };
        let parsed = match parse::parse_line(text) {
            Ok(p) => p,
            Err(e) => {
                crate::errln!("{}ERROR: {}", label(text.trim()), clip(&e.to_string(), 160));
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
            Effect::Answer(Err(e)) => {
                let s = clip(&format!("ERROR: {e}"), 160);
                if session {
                    crate::errln!("Result: {s}");
                } else {
                    crate::errln!("{}{s}", label(&target));
                }
                if let Some(n) = it.take_note() {
                    crate::errln!("upktgen: {}", clip(&n, 240));
                }
                false
            }
            Effect::Missing(s) => {
                crate::errln!("{}ERROR: {}", label(&target), clip(&s, 160));
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

/// The script's lines, numbered from 1, read with the caps of [`crate::input`] (a line, the
/// whole script).
fn read_script(path: &Path) -> Result<Vec<(usize, String)>> {
    use crate::input;
    let name = if path == Path::new("-") {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    let mut r = input::open(path, input::MAX_SCRIPT, "a script")
        .map_err(|e| anyhow!("reading {name}: {e}"))?;
    input::read_lines(&mut r, input::MAX_SCRIPT_LINE).map_err(|e| anyhow!("reading {name}: {e}"))
}

/// Replays a session's log (quietly), then restores each file's Result and Current.
fn load_session(it: &mut Interp, dir: &Path) -> Result<()> {
    let text = read_session_file(&dir.join("log"))?.unwrap_or_default();
    for l in text.lines() {
        if let Ok(p) = parse::parse_line(l) {
            let _ = it.apply(&p);
        }
    }
    let proc_dir = session_proc(dir)?;
    let names: Vec<String> = it.devices().iter().map(|(n, _)| n.to_string()).collect();
    for n in names {
        if let Some(t) = read_session_file(&proc_dir.join(&n))?
            && let Some(d) = it.device_mut(&n)
        {
            d.result = interp::result_section(&t).unwrap_or_default();
            if !t.contains("pkts-sofar: 0 ") || !t.contains("started: 0us") {
                d.current = interp::current_section(&t);
            }
        }
    }
    for n in it.cpus.clone() {
        if let Some(t) = read_session_file(&proc_dir.join(format!("kpktgend_{n}")))? {
            it.set_thread_result(n, interp::result_section(&t).unwrap_or_default());
        }
    }
    Ok(())
}

/// The file in a session's directory that lists (one name a line) the files of `proc/` the
/// session wrote: the only ones it ever removes.
const MANIFEST: &str = "manifest";

/// `DIR/proc`, which must be a directory (not a link to one) when it exists.
fn session_proc(dir: &Path) -> Result<PathBuf> {
    let p = dir.join("proc");
    match std::fs::symlink_metadata(&p) {
        Ok(m) if m.file_type().is_symlink() => bail!(
            "--session {}: proc is a symbolic link; a session keeps its files in a directory of its own (remove the link)",
            dir.display()
        ),
        Ok(m) if !m.is_dir() => bail!(
            "--session {}: proc is not a directory (remove it)",
            dir.display()
        ),
        _ => Ok(p),
    }
}

/// A session file's text, read with the session's cap (None when it is not there).
fn read_session_file(p: &Path) -> Result<Option<String>> {
    match crate::input::read_text(p, crate::input::MAX_SESSION_FILE, "a session file") {
        Ok(t) => Ok(Some(t)),
        Err(crate::input::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("{}: {e}", p.display())),
    }
}

/// Writes the session's log and every file's text; removes from `proc/` only the files its
/// manifest says it wrote and that no longer exist.
fn save_session(it: &Interp, dir: &Path, log: &[String]) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    if !log.is_empty() {
        // Appended in place, never through a link.
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(dir.join("log"))
            .with_context(|| format!("writing {}", dir.join("log").display()))?;
        for l in log {
            writeln!(f, "{l}")?;
        }
    }
    let proc_dir = session_proc(dir)?;
    if !proc_dir.exists() {
        std::fs::create_dir(&proc_dir)
            .with_context(|| format!("creating {}", proc_dir.display()))?;
    }
    let files = it.files();
    let manifest = dir.join(MANIFEST);
    let old = read_session_file(&manifest)?.unwrap_or_default();
    for name in old.lines() {
        // Only plain names: a manifest edited to say ../x removes nothing outside proc/.
        let plain = !name.is_empty() && !name.contains('/') && name != "." && name != "..";
        if plain && !files.iter().any(|(n, _)| n == name) {
            let _ = std::fs::remove_file(proc_dir.join(name));
        }
    }
    for (name, text) in &files {
        let p = proc_dir.join(name);
        crate::outfile::write(&p, text.as_bytes())
            .with_context(|| format!("writing {}", p.display()))?;
    }
    let list: String = files.iter().map(|(n, _)| format!("{n}\n")).collect();
    crate::outfile::write(&manifest, list.as_bytes())
        .with_context(|| format!("writing {}", manifest.display()))?;
    Ok(())
}

fn script(a: &ScriptArgs, stop: &Arc<AtomicBool>) -> Result<Tally> {
    let mut it = interp_for(a);
    if let Some(dir) = &a.session {
        if !dir.is_dir() {
            bail!("--session {}: not a directory", dir.display());
        }
        load_session(&mut it, dir)?;
        // The replay is quiet: what it refused was said when the command was first given.
        let _ = it.take_note();
    }
    let (name, lines): (String, Vec<(usize, String)>) = match (&a.write, &a.file) {
        (Some(t), _) => {
            // The target and command given apart: the command is taken as echo writes it.
            let target = parse::parse_target(t).map_err(|e| anyhow!("--write {t}: {e}"))?;
            let cmd = a.line.clone().unwrap_or_default();
            ("-".into(), vec![(1, log_line(&target, &cmd))])
        }
        (None, Some(f)) => (f.display().to_string(), read_script(f)?),
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
    let stop = match crate::exit::stop_flag() {
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
        Err(e) => out::fail(&*e, 2),
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
