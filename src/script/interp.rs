//! The state behind /proc/net/pktgen: threads (one per online CPU), the devices added to
//! them with their configuration and last answer, and pgctrl. Applying a line never
//! sends; `pgctrl start` is handed back to the caller as [`Effect::Start`].

use super::parse::{Line, Target, check_dev_name};
use crate::pg::show::{Current, show};
use crate::pg::{CommandError, DevConfig, result_line};
use crate::wire::MacAddr;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What a line did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Nothing (a blank or comment line).
    Nothing,
    /// The answer the kernel would put in the target's Result line.
    Answer(Result<String, Refused>),
    /// The target's file does not exist (a device not added, a thread on no online CPU):
    /// where the kernel's `echo > FILE` fails to open the file.
    Missing(String),
    /// `pgctrl start`: run every added device now.
    Start,
    /// The target's text, as `cat /proc/net/pktgen/TARGET` prints it.
    Show(String),
}

/// Why a write was refused: the text after `ERROR: ` in the target's Result line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// A device's command.
    #[error(transparent)]
    Device(#[from] CommandError),
    #[error("add_device: give a device name")]
    NoDeviceName,
    /// A name already added, not a device name, or an interface the check refused.
    #[error("can not add device {0}")]
    CannotAdd(String),
    #[error("No such parameter \"{0}\"")]
    NoSuchParameter(String),
    #[error("start: no device added (kpktgend_N add_device DEV first)")]
    NoDevice,
    #[error("pgctrl: unknown command \"{0}\" (start, stop or reset)")]
    UnknownPgctrl(String),
}

/// Why an interface may not be added to a thread: what the kernel logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IfaceRefused {
    /// With the way to the lab.
    #[error(
        "no such netdevice: \"{0}\" in this network namespace (--lab runs the script in a private lab, where every device name stands for the lab's interface)"
    )]
    NoSuchNetdevice(String),
    /// The kernel takes Ethernet and loopback devices only.
    #[error("not an ethernet or loopback device: \"{0}\"")]
    NotEthernet(String),
    #[error("device is down: \"{0}\" (bring it up with `ip link set {0} up`)")]
    Down(String),
}

/// What kind of interface an added device is, of the two the kernel's `add_device` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfaceKind {
    /// ARPHRD_ETHER (or not known here: a start's probe checks it).
    Ethernet,
    /// ARPHRD_LOOPBACK (`lo`): see [`DevConfig::loopback`].
    Loopback,
}

/// A device added to a thread.
#[derive(Debug, Clone)]
pub struct DevState {
    pub cfg: DevConfig,
    pub thread: usize,
    /// The last command's answer or the last run's result (empty: none yet).
    pub result: String,
    /// The `Current:` section of the last run, as text (None: no run yet).
    pub current: Option<String>,
}

/// pktgen's control state.
pub struct Interp {
    /// Online CPUs: one kpktgend_N each.
    pub cpus: Vec<usize>,
    /// Last answer of each thread.
    thread_result: BTreeMap<usize, String>,
    /// Devices in the order they were added.
    devs: Vec<(String, DevState)>,
    /// Whether an interface may be added: Err says why not (what the kernel logs).
    dev_check: DevCheck,
    /// The MAC of an interface, for `src_mac` when unset.
    dev_mac: Box<dyn Fn(&str) -> MacAddr>,
    /// Every device stands for the private lab's sending interface ([`lab_ifname`]).
    lab: bool,
    /// What the kernel would log about the last refusal (its `pr_err` line), taken by
    /// [`Interp::take_note`].
    note: Option<String>,
}

/// The private lab's interface that a device name stands for with `--lab`: the lab's
/// sending interface, the name's `@tag` kept (`eth0@1` -> `veth-tx@1`).
pub fn lab_ifname(name: &str) -> String {
    match name.split_once('@') {
        Some((_, tag)) => format!("{}@{tag}", crate::lab::TX_IF),
        None => crate::lab::TX_IF.to_string(),
    }
}

/// Whether an interface may be added to a thread, and what kind it is: Err with the reason
/// the kernel would log (`no such netdevice: "eth9"`, `device is down: "eth1"`, ...).
pub type DevCheck = Box<dyn Fn(&str) -> Result<IfaceKind, IfaceRefused>>;

impl Interp {
    /// `dev_exists` says whether an interface of that name exists (a name that does not is
    /// refused as the kernel refuses it).
    pub fn new(
        cpus: Vec<usize>,
        dev_exists: Box<dyn Fn(&str) -> bool>,
        dev_mac: Box<dyn Fn(&str) -> MacAddr>,
    ) -> Self {
        Interp::checked(
            cpus,
            Box::new(move |d| {
                if dev_exists(d) {
                    Ok(IfaceKind::Ethernet)
                } else {
                    Err(IfaceRefused::NoSuchNetdevice(d.to_string()))
                }
            }),
            dev_mac,
        )
    }

    /// [`Interp::new`] with a check that may refuse an interface for any reason.
    pub fn checked(
        cpus: Vec<usize>,
        dev_check: DevCheck,
        dev_mac: Box<dyn Fn(&str) -> MacAddr>,
    ) -> Self {
        Interp {
            cpus,
            thread_result: BTreeMap::new(),
            devs: Vec::new(),
            dev_check,
            dev_mac,
            lab: false,
            note: None,
        }
    }

    /// Every device stands for the private lab's sending interface: its file names that
    /// interface (`ifname:`) and says which name it stands for.
    pub fn in_lab(mut self) -> Self {
        self.lab = true;
        self
    }

    /// Whether the devices stand for the private lab's interface.
    pub fn is_lab(&self) -> bool {
        self.lab
    }

    /// What the kernel would have logged about the last refused command, once.
    pub fn take_note(&mut self) -> Option<String> {
        self.note.take()
    }

    /// Every device name may be added; MACs are all zero (for tests and checks).
    pub fn permissive(cpus: Vec<usize>) -> Self {
        Interp::new(cpus, Box::new(|_| true), Box::new(|_| MacAddr::default()))
    }

    /// Added devices in thread order, then the order they were added.
    pub fn devices(&self) -> Vec<(&str, &DevState)> {
        let mut v: Vec<(&str, &DevState)> =
            self.devs.iter().map(|(n, d)| (n.as_str(), d)).collect();
        v.sort_by_key(|(_, d)| d.thread);
        v
    }

    pub fn device(&self, name: &str) -> Option<&DevState> {
        self.devs.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    pub fn device_mut(&mut self, name: &str) -> Option<&mut DevState> {
        self.devs
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d)
    }

    /// The MAC of the interface behind a device name.
    pub fn mac_of(&self, dev: &str) -> MacAddr {
        (self.dev_mac)(dev.split('@').next().unwrap_or(""))
    }

    pub fn thread_result(&self, n: usize) -> &str {
        self.thread_result.get(&n).map_or("", String::as_str)
    }

    pub fn set_thread_result(&mut self, n: usize, r: String) {
        self.thread_result.insert(n, r);
    }

    fn online(&self, n: usize) -> bool {
        self.cpus.contains(&n)
    }

    fn missing_thread(&self, n: usize) -> Effect {
        Effect::Missing(format!(
            "kpktgend_{n}: no such thread (one per online CPU: {})",
            cpu_list(&self.cpus)
        ))
    }

    /// Applies one parsed line.
    pub fn apply(&mut self, line: &Line) -> Effect {
        match line {
            Line::Empty => Effect::Nothing,
            Line::Show(t) => match self.text(t) {
                Some(s) => Effect::Show(s),
                None => match t {
                    Target::Thread(n) => self.missing_thread(*n),
                    _ => Effect::Missing(format!("{t}: no such device (not added to a thread)")),
                },
            },
            Line::Write { target, cmd } => match target {
                Target::Pgctrl => self.pgctrl(cmd),
                Target::Thread(n) => {
                    if !self.online(*n) {
                        return self.missing_thread(*n);
                    }
                    let a = self.thread(*n, cmd);
                    self.thread_result.insert(*n, result_line(&a));
                    Effect::Answer(a)
                }
                Target::Dev(d) => match self.device_mut(d) {
                    None => Effect::Missing(format!(
                        "{d}: no such device: add it first (kpktgend_N add_device {d})"
                    )),
                    Some(dev) => {
                        let a = dev.cfg.command(cmd);
                        dev.result = result_line(&a);
                        Effect::Answer(a.map_err(Refused::from))
                    }
                },
            },
        }
    }

    fn pgctrl(&mut self, cmd: &str) -> Effect {
        match cmd.trim() {
            "start" => {
                if self.devs.is_empty() {
                    Effect::Answer(Err(Refused::NoDevice))
                } else {
                    Effect::Start
                }
            }
            // A script's start returns when the run is over: nothing runs at a stop.
            "stop" => Effect::Answer(Ok("OK: stop".into())),
            "reset" => {
                self.devs.clear();
                Effect::Answer(Ok("OK: reset".into()))
            }
            other => Effect::Answer(Err(Refused::UnknownPgctrl(other.to_string()))),
        }
    }

    fn thread(&mut self, n: usize, cmd: &str) -> Result<String, Refused> {
        // Read as the kernel reads it: `add_device lo@0` and `add_device=lo@0` alike.
        let (name, rest) = crate::pg::split_command(cmd);
        match name {
            "add_device" => {
                let dev = crate::pg::split_command(rest).0;
                if dev.is_empty() {
                    return Err(Refused::NoDeviceName);
                }
                if self.devs.iter().any(|(d, _)| d == dev) || check_dev_name(dev).is_err() {
                    return Err(Refused::CannotAdd(dev.to_string()));
                }
                // As the kernel: the interface (the name up to `@`) must exist in this
                // network namespace (and be an Ethernet or loopback device that is up);
                // the write fails and the kernel logs why.
                let ifname = dev.split('@').next().unwrap_or("");
                let kind = match (self.dev_check)(ifname) {
                    Ok(k) => k,
                    Err(why) => {
                        self.note = Some(why.to_string());
                        return Err(Refused::CannotAdd(dev.to_string()));
                    }
                };
                let mut cfg = DevConfig::new(dev);
                cfg.loopback = kind == IfaceKind::Loopback;
                self.devs.push((
                    dev.to_string(),
                    DevState {
                        cfg,
                        thread: n,
                        result: String::new(),
                        current: None,
                    },
                ));
                Ok(format!("OK: add_device={dev}"))
            }
            "rem_device_all" => {
                self.devs.retain(|(_, d)| d.thread != n);
                Ok("OK: rem_device_all".into())
            }
            "max_before_softirq" => {
                Ok("OK: Note! max_before_softirq is obsolete and does nothing".into())
            }
            _ => Err(Refused::NoSuchParameter(name.to_string())),
        }
    }

    /// The text of a target's file; None when it does not exist.
    pub fn text(&self, t: &Target) -> Option<String> {
        match t {
            Target::Pgctrl => Some(format!(
                "upktgen {}: pktgen's control language in userspace\n",
                env!("CARGO_PKG_VERSION")
            )),
            Target::Thread(n) => {
                if !self.online(*n) {
                    return None;
                }
                // Nothing runs between commands: every device is stopped.
                let mut s = String::from("Running: \nStopped: ");
                for (name, _) in self.devs.iter().filter(|(_, d)| d.thread == *n) {
                    let _ = write!(s, "{name} ");
                }
                let r = self.thread_result(*n);
                let _ = writeln!(s, "\nResult: {}", if r.is_empty() { "NA" } else { r });
                Some(s)
            }
            Target::Dev(d) => {
                let dev = self.device(d)?;
                let mac = (self.dev_mac)(dev.cfg.device());
                let text = if self.lab {
                    // The file names the interface that sends, and what it stands for.
                    let mut cfg = dev.cfg.clone();
                    cfg.ifname = lab_ifname(d);
                    let text = show(&cfg, mac, None, &Current::default(), &dev.result);
                    let key = format!("ifname: {}\n", cfg.ifname);
                    let note = format!(
                        "     lab: {d} stands for {}, the private lab's sending interface (--lab)\n",
                        cfg.ifname
                    );
                    match text.find(&key) {
                        Some(i) => {
                            let at = i + key.len();
                            format!("{}{note}{}", &text[..at], &text[at..])
                        }
                        None => text,
                    }
                } else {
                    show(&dev.cfg, mac, None, &Current::default(), &dev.result)
                };
                Some(match &dev.current {
                    Some(cur) => splice_current(&text, cur),
                    None => text,
                })
            }
        }
    }

    /// Every file that exists now, with its text.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut out = vec![(
            "pgctrl".to_string(),
            self.text(&Target::Pgctrl).unwrap_or_default(),
        )];
        for &n in &self.cpus {
            let t = Target::Thread(n);
            out.push((t.to_string(), self.text(&t).unwrap_or_default()));
        }
        for (name, _) in &self.devs {
            let t = Target::Dev(name.clone());
            out.push((name.clone(), self.text(&t).unwrap_or_default()));
        }
        out
    }
}

/// The `Current:` section of a device's text (from `Current:` up to `Result:`).
pub fn current_section(text: &str) -> Option<String> {
    let start = text
        .find("\nCurrent:")
        .map(|i| i + 1)
        .or_else(|| text.starts_with("Current:").then_some(0))?;
    let end = text[start..]
        .find("\nResult:")
        .map_or(text.len(), |i| start + i + 1);
    Some(text[start..end].to_string())
}

/// The `Result:` text of a device's or thread's file (without the `Result: ` label).
pub fn result_section(text: &str) -> Option<String> {
    let start = if text.starts_with("Result: ") {
        0
    } else {
        text.find("\nResult: ")? + 1
    };
    let r = text[start + "Result: ".len()..].trim_end_matches('\n');
    Some(if r == "Idle" || r == "NA" {
        String::new()
    } else {
        r.to_string()
    })
}

/// Replaces the `Current:` section of `text` with `cur`.
pub fn splice_current(text: &str, cur: &str) -> String {
    let Some(old) = current_section(text) else {
        return text.to_string();
    };
    text.replacen(&old, cur, 1)
}

/// `0-3,6` style list of CPUs.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        if !s.is_empty() {
            s.push(',');
        }
        if i == j {
            let _ = write!(s, "{}", cpus[i]);
        } else {
            let _ = write!(s, "{}-{}", cpus[i], cpus[j]);
        }
        i = j + 1;
    }
    if s.is_empty() { "none".into() } else { s }
}

/// Parses the kernel's CPU list format (`0-3,6`), as in /sys/devices/system/cpu/online.
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if a > b || b - a > 65536 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    out.sort_unstable();
    out.dedup();
    (!out.is_empty()).then_some(out)
}
