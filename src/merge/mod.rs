//! `upktgen merge FILE...`: the JSON documents of several hosts' runs (`run --json`) and
//! receivers (`rx --json`) as one report: each sender host's `Result:` and the total's, in
//! pktgen's integer arithmetic, the start skew between the hosts, each host's
//! reconciliation, and what the receivers counted.
//!
//! The total adds the hosts up as a multi-thread run adds up its threads
//! ([`PktgenResult::add_up`]: packets and errors summed, idle the mean) with the elapsed
//! time from the earliest start to the latest end (wall clock, each host's own).
//!
//! Refused, naming the file: a file that is not JSON (truncated, malformed) or not a run
//! or rx document; a document of another schema version (docs/schema; one without `schema`
//! is version 0, read by its fields); documents of different upktgen versions (or without
//! one); the same document twice, or the same sender (host, device, namespace) starting at
//! the same instant twice; runs that did not share one `--start-at` (some with one, others with
//! another or none); no run document at all; an ndr document (a search per host is not
//! added up). Merged but flagged (a `Flagged:` line naming
//! the file, and `flags` in JSON): runs none of which used `--start-at` (not started
//! together), a host whose clock is not synchronised, an interrupted run, different frame
//! sizes.

use crate::report::run::{Reconciliation, StartReport, clock_short, signed_time, time_text};
use crate::rx::report::{RxAnalysis, RxReport};
use crate::sender::PktgenResult;
use crate::sys::clock::ClockSync;
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// `upktgen merge`'s options.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// JSON documents of `upktgen run --json` (senders) and `upktgen rx --json`
    /// (receivers), one per file, from every host of the run.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Print one JSON document instead of the text report.
    #[arg(long)]
    pub json: bool,
}

/// The parts of a run document that merge reads.
#[derive(Debug, Clone, Deserialize)]
struct RunDoc {
    host: String,
    version: String,
    target: TargetDoc,
    outcome: OutcomeDoc,
    #[serde(default)]
    threads: Vec<ThreadDoc>,
    reconciliation: Reconciliation,
    #[serde(default)]
    start: Option<StartReport>,
    #[serde(default)]
    rx_analysis: Option<RxAnalysis>,
}

#[derive(Debug, Clone, Deserialize)]
struct TargetDoc {
    device: String,
    netns: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct OutcomeDoc {
    result: PktgenResult,
    start_realtime_ns: u64,
    stop_reason: String,
}

#[derive(Debug, Clone, Deserialize)]
struct ThreadDoc {
    outcome: OutcomeDoc,
}

/// One sending host's run.
#[derive(Debug, Clone, Serialize)]
pub struct SenderHost {
    pub file: PathBuf,
    pub host: String,
    pub device: String,
    pub netns: Option<String>,
    /// Its own Result (all its threads).
    pub result: PktgenResult,
    /// CLOCK_REALTIME of its first thread's start and its last thread's end, ns.
    pub start_ns: u64,
    pub end_ns: u64,
    /// --start-at: its latest thread's start error (None: stopped before the instant).
    pub start_error_ns: Option<i64>,
    pub clock: Option<ClockSync>,
    pub reconciliation: Reconciliation,
}

/// One receiver: an rx document, or the receiver of a run's --rx-analyze/--peer.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiverHost {
    pub file: PathBuf,
    pub host: String,
    pub device: String,
    /// Frames with pktgen's header.
    pub pktgen_frames: u64,
    /// Distinct sequence numbers, and the gaps, duplicates and reorderings among them.
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
}

/// What the receivers counted, together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Received {
    pub receivers: usize,
    pub pktgen_frames: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
    /// The senders' total sent minus the distinct sequence numbers received.
    pub missing: i64,
}

/// The merged report; `--json` prints it whole.
#[derive(Debug, Clone, Serialize)]
pub struct Merged {
    pub version: String,
    /// The shared --start-at instant, ns since the epoch (None: none of the runs had one).
    pub start_at_ns: Option<u64>,
    pub start_at: Option<String>,
    pub senders: Vec<SenderHost>,
    /// All hosts: elapsed from the earliest start to the latest end.
    pub total: PktgenResult,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Latest host start - earliest host start.
    pub start_skew_ns: u64,
    /// The hosts' reconciliations summed (rx_packets/lost only when every host has them).
    pub reconciliation: Reconciliation,
    pub receivers: Vec<ReceiverHost>,
    pub received: Option<Received>,
    /// What was merged but deserves a look, each naming its file.
    pub flags: Vec<String>,
}

/// A document read: a run's or a receiver's.
enum Doc {
    Run(Box<RunDoc>),
    Rx(Box<RxReport>),
}

/// Runs `upktgen merge`.
pub fn run_cli(a: &MergeArgs) -> Result<()> {
    let m = merge(&read_docs(&a.files)?)?;
    if a.json {
        crate::out::println(crate::schema::to_pretty(crate::schema::MERGE, &m)?)?;
    } else {
        crate::out::print(m.text())?;
    }
    Ok(())
}

/// The files' JSON, each read with the bounded reader (a truncated or malformed file is
/// refused, naming it and the problem).
pub fn read_docs(files: &[PathBuf]) -> Result<Vec<(PathBuf, Value)>> {
    files
        .iter()
        .map(|p| {
            let v: Value =
                crate::input::read_json(p, crate::input::MAX_JSON, "a JSON document of upktgen")?;
            Ok((p.clone(), v))
        })
        .collect()
}

/// Which document `v` is, read into its shape.
fn classify(path: &Path, v: &Value) -> Result<Doc> {
    let name = path.display();
    let has = |k: &str| v.get(k).is_some();
    // Since schema version 1 a document names its kind; before (version 0), its fields tell.
    let tagged = crate::schema::kind_of(&name.to_string(), v)?;
    let (run, rx) = (
        crate::schema::kind(crate::schema::RUN),
        crate::schema::kind(crate::schema::RX),
    );
    if tagged.is_some_and(|k| k.starts_with("ndr")) || v.pointer("/header/upktgen_ndr").is_some() {
        bail!(
            "{name}: an ndr document: merge adds up runs (`run --json`) and receivers (`rx --json`); each host's NDR search stands on its own (compare searches with `upktgen compare`)"
        );
    }
    if tagged == Some(crate::schema::kind(crate::schema::RUN_PORTS)) {
        bail!(
            "{name}: a run-ports document (\"{}\"): merge takes `upktgen run --json` and `upktgen rx --json` output; a run of several ports adds up its ports itself (its `flows`, `ports` and `totals`), and each of its `runs[].report` is a run document merge takes",
            crate::schema::tag_of(v)
        );
    }
    let kind = if let Some(k) = tagged {
        if k != run && k != rx {
            bail!(
                "{name}: {} document (\"{}\"): merge takes `upktgen run --json` and `upktgen rx --json` output",
                crate::schema::a_kind(k),
                crate::schema::tag_of(v)
            );
        }
        k
    } else if has("outcome") && has("reconciliation") {
        "run"
    } else if has("sink") && has("frames") && has("stopped_by") {
        "rx"
    } else {
        bail!(
            "{name}: not a run or rx document of upktgen (merge takes `upktgen run --json` and `upktgen rx --json` output)"
        );
    };
    if v.get("version")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        bail!(
            "{name}: a {kind} document without `version` (and `host`): written by an older upktgen; run it again with upktgen {}",
            crate::report::VERSION
        );
    }
    let doc = if kind == "run" {
        Doc::Run(Box::new(
            RunDoc::deserialize(v).map_err(|e| anyhow!("{name}: not a run document: {e}"))?,
        ))
    } else {
        Doc::Rx(Box::new(
            RxReport::deserialize(v).map_err(|e| anyhow!("{name}: not an rx document: {e}"))?,
        ))
    };
    Ok(doc)
}

impl RunDoc {
    fn outcomes(&self) -> Vec<&OutcomeDoc> {
        if self.threads.is_empty() {
            vec![&self.outcome]
        } else {
            self.threads.iter().map(|t| &t.outcome).collect()
        }
    }

    fn start_ns(&self) -> u64 {
        self.outcomes()
            .iter()
            .map(|o| o.start_realtime_ns)
            .min()
            .unwrap_or(0)
    }

    fn end_ns(&self) -> u64 {
        self.outcomes()
            .iter()
            .map(|o| o.start_realtime_ns.saturating_add(o.result.elapsed_ns))
            .max()
            .unwrap_or(0)
    }

    fn label(&self) -> String {
        sender_label(&self.host, &self.device(), self.target.netns.as_deref())
    }

    fn device(&self) -> String {
        self.target.device.clone()
    }
}

/// `host device [in netns NS]`, as the documents say, with control characters escaped (a
/// document's words may hold anything).
fn sender_label(host: &str, device: &str, netns: Option<&str>) -> String {
    let p = crate::text::printable;
    match netns {
        Some(ns) => format!("{} {} in netns {}", p(host), p(device), p(ns)),
        None => format!("{} {}", p(host), p(device)),
    }
}

fn receiver_of(file: &Path, r: &RxReport) -> ReceiverHost {
    let t = &r.sink.totals;
    ReceiverHost {
        file: file.to_path_buf(),
        host: r.host.clone(),
        device: r.device.clone(),
        pktgen_frames: r.frames.pktgen,
        received: t.received,
        lost: t.lost,
        duplicates: t.duplicates,
        reordered: t.reordered,
    }
}

/// Merges the documents read from their files; refuses what must not be added up.
pub fn merge(docs: &[(PathBuf, Value)]) -> Result<Merged> {
    if docs.is_empty() {
        bail!("merge: no document given");
    }
    let mut runs: Vec<(PathBuf, RunDoc)> = Vec::new();
    let mut receivers: Vec<ReceiverHost> = Vec::new();
    // What was seen, by key, so that each check is a look-up (merge is linear in its
    // documents, not quadratic).
    let mut paths: HashSet<&Path> = HashSet::new();
    let mut by_hash: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut run_keys: HashMap<(String, String, Option<String>, u64), PathBuf> = HashMap::new();
    let mut rx_keys: HashMap<(String, String), PathBuf> = HashMap::new();
    let mut version: Option<(String, PathBuf)> = None;
    let mut flags = Vec::new();
    for (i, (path, v)) in docs.iter().enumerate() {
        let name = path.display();
        if !paths.insert(path.as_path()) {
            bail!("{name}: given twice");
        }
        let same = by_hash.entry(value_hash(v)).or_default();
        if let Some(&j) = same.iter().find(|&&j| docs[j].1 == *v) {
            bail!(
                "{name}: the same document as {}: each run may be merged once",
                docs[j].0.display()
            );
        }
        same.push(i);
        let doc = classify(path, v)?;
        let ver = match &doc {
            Doc::Run(r) => r.version.clone(),
            Doc::Rx(r) => r.version.clone(),
        };
        match &version {
            None => version = Some((ver, path.clone())),
            Some((v0, p0)) if *v0 != ver => bail!(
                "{name}: written by upktgen {ver}, but {} by upktgen {v0}: merge documents of one version",
                p0.display()
            ),
            Some(_) => {}
        }
        match doc {
            Doc::Run(r) => {
                let key = (
                    r.host.clone(),
                    r.target.device.clone(),
                    r.target.netns.clone(),
                    r.start_ns(),
                );
                if let Some(p0) = run_keys.get(&key) {
                    bail!(
                        "{name}: the same run as {} ({}, started at {}): each run may be merged once",
                        p0.display(),
                        r.label(),
                        crate::start_at::format_rfc3339(r.start_ns())
                    );
                }
                run_keys.insert(key, path.clone());
                if let Some(a) = &r.rx_analysis {
                    receivers.push(receiver_of(path, &a.receiver));
                }
                runs.push((path.clone(), *r));
            }
            Doc::Rx(r) => {
                let key = (r.host.clone(), r.device.clone());
                if let Some(p0) = rx_keys.get(&key) {
                    bail!(
                        "{name}: the same receiver as {} ({} {}): each receiver may be merged once",
                        p0.display(),
                        crate::text::printable(&r.host),
                        crate::text::printable(&r.device)
                    );
                }
                rx_keys.insert(key, path.clone());
                receivers.push(receiver_of(path, &r));
            }
        }
    }
    let Some((p0, first)) = runs.first() else {
        bail!(
            "merge: no run document among the files (only receivers'): give the senders' `upktgen run --json` documents too"
        );
    };
    // One shared --start-at, or none at all.
    let at = first.start.as_ref().map(|s| s.requested_ns);
    for (p, r) in &runs[1..] {
        let this = r.start.as_ref().map(|s| s.requested_ns);
        if this != at {
            let say = |a: Option<u64>| match a {
                Some(ns) => format!("--start-at {}", crate::start_at::format_rfc3339(ns)),
                None => "no --start-at".to_string(),
            };
            bail!(
                "{}: {}, but {} has {}: runs of one synchronised start share one --start-at; these are unrelated",
                p.display(),
                say(this),
                p0.display(),
                say(at)
            );
        }
    }
    if at.is_none() && runs.len() > 1 {
        flags.push(format!(
            "{}: no --start-at in any run: the hosts were not started together, and the total's elapsed spans from the first start to the last end",
            runs.iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let size0 = first.outcome.result.pkt_size;
    let mut senders = Vec::with_capacity(runs.len());
    for (p, r) in &runs {
        let name = p.display();
        let clock = r.start.as_ref().and_then(|s| s.clock);
        if let Some(s) = &r.start {
            match &s.clock {
                Some(c) if !c.synchronised => flags.push(format!(
                    "{name}: {}'s clock is not synchronised (adjtimex): its start at the instant is by its own clock only",
                    crate::text::printable(&r.host)
                )),
                None => flags.push(format!(
                    "{name}: {}'s clock synchronisation is unknown",
                    crate::text::printable(&r.host)
                )),
                Some(_) => {}
            }
        }
        if r.outcome.stop_reason == "interrupted" {
            flags.push(format!("{name}: interrupted (a partial run)"));
        }
        if r.outcome.result.pkt_size != size0 {
            flags.push(format!(
                "{name}: {}-byte frames, {} {size0}-byte: the total's bps counts each host's bytes",
                r.outcome.result.pkt_size,
                p0.display()
            ));
        }
        senders.push(SenderHost {
            file: p.clone(),
            host: r.host.clone(),
            device: r.device(),
            netns: r.target.netns.clone(),
            result: r.outcome.result,
            start_ns: r.start_ns(),
            end_ns: r.end_ns(),
            start_error_ns: r
                .start
                .as_ref()
                .and_then(|s| s.threads.iter().filter_map(|t| t.error_ns).max()),
            clock,
            reconciliation: r.reconciliation.clone(),
        });
    }
    check_sums(&senders, &receivers)?;
    let start_ns = senders.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let end_ns = senders.iter().map(|s| s.end_ns).max().unwrap_or(0);
    let last_start = senders.iter().map(|s| s.start_ns).max().unwrap_or(0);
    let results: Vec<PktgenResult> = senders.iter().map(|s| s.result).collect();
    let mut total = PktgenResult::add_up(&results, end_ns.saturating_sub(start_ns));
    if results.iter().any(|r| r.pkt_size != size0) && total.imix_bytes.is_none() {
        total.imix_bytes = Some(
            results
                .iter()
                .map(|r| {
                    r.imix_bytes
                        .unwrap_or(r.sent.saturating_mul(u64::from(r.pkt_size)))
                })
                .fold(0u64, u64::saturating_add),
        );
    }
    let reconciliation = sum_reconciliations(senders.iter().map(|s| &s.reconciliation));
    let received = (!receivers.is_empty()).then(|| {
        let sum = |f: &dyn Fn(&ReceiverHost) -> u64| receivers.iter().map(f).sum::<u64>();
        let received = sum(&|r| r.received);
        Received {
            receivers: receivers.len(),
            pktgen_frames: sum(&|r| r.pktgen_frames),
            received,
            lost: sum(&|r| r.lost),
            duplicates: sum(&|r| r.duplicates),
            reordered: sum(&|r| r.reordered),
            missing: i64::try_from(i128::from(total.sent) - i128::from(received))
                .unwrap_or(i64::MIN),
        }
    });
    Ok(Merged {
        version: version.map(|(v, _)| v).unwrap_or_default(),
        start_at_ns: at,
        start_at: at.map(crate::start_at::format_rfc3339),
        senders,
        total,
        start_ns,
        end_ns,
        start_skew_ns: last_start - start_ns,
        reconciliation,
        receivers,
        received,
        flags,
    })
}

/// Every sum merge makes, checked before it is made: counts that add up past 2^64 - 1
/// cannot be one run's (a document that lies, or is corrupt); refused, naming the file at
/// which the sum overflows, never wrapped.
fn check_sums(senders: &[SenderHost], receivers: &[ReceiverHost]) -> Result<()> {
    fn total<'a, T: 'a>(
        what: &str,
        all: impl Iterator<Item = &'a T>,
        file: fn(&T) -> &Path,
        value: impl Fn(&T) -> Option<u64>,
    ) -> Result<()> {
        let mut sum = 0u64;
        for x in all {
            let Some(v) = value(x) else { continue };
            sum = sum.checked_add(v).ok_or_else(|| {
                anyhow!(
                    "{}: its {what} ({v}) takes the hosts' sum past {} (2^64 - 1): not the counts of one run",
                    file(x).display(),
                    u64::MAX
                )
            })?;
        }
        Ok(())
    }
    fn f(s: &SenderHost) -> &Path {
        &s.file
    }
    total("sent", senders.iter(), f, |s| Some(s.result.sent))?;
    total("errors", senders.iter(), f, |s| Some(s.result.errors))?;
    total("idle_ns", senders.iter(), f, |s| Some(s.result.idle_ns))?;
    total("imix_bytes", senders.iter(), f, |s| s.result.imix_bytes)?;
    total("bytes (sent x pkt_size)", senders.iter(), f, |s| {
        Some(
            s.result
                .imix_bytes
                .unwrap_or(s.result.sent.saturating_mul(u64::from(s.result.pkt_size))),
        )
    })?;
    total("reconciliation sent", senders.iter(), f, |s| {
        Some(s.reconciliation.sent)
    })?;
    total("tx_packets", senders.iter(), f, |s| {
        Some(s.reconciliation.tx_packets)
    })?;
    total("tx_dropped", senders.iter(), f, |s| {
        Some(s.reconciliation.tx_dropped)
    })?;
    total("rx_packets", senders.iter(), f, |s| {
        s.reconciliation.rx_packets
    })?;
    total("rx_dropped", senders.iter(), f, |s| {
        s.reconciliation.rx_dropped
    })?;
    total("lost", senders.iter(), f, |s| s.reconciliation.lost)?;
    total("vanished", senders.iter(), f, |s| s.reconciliation.vanished)?;
    for s in senders {
        if s.end_ns == u64::MAX {
            bail!(
                "{}: its start plus its elapsed time is past 2^64 - 1 ns: not a run's times",
                s.file.display()
            );
        }
    }
    fn g(r: &ReceiverHost) -> &Path {
        &r.file
    }
    total("pktgen frames", receivers.iter(), g, |r| {
        Some(r.pktgen_frames)
    })?;
    total("received", receivers.iter(), g, |r| Some(r.received))?;
    total("lost", receivers.iter(), g, |r| Some(r.lost))?;
    total("duplicates", receivers.iter(), g, |r| Some(r.duplicates))?;
    total("reordered", receivers.iter(), g, |r| Some(r.reordered))?;
    Ok(())
}

/// A hash of a JSON value, the same for equal values (object keys taken in sorted order).
fn value_hash(v: &Value) -> u64 {
    fn feed(v: &Value, h: &mut impl Hasher) {
        match v {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => (1u8, b).hash(h),
            Value::Number(n) => (2u8, n.to_string()).hash(h),
            Value::String(s) => (3u8, s).hash(h),
            Value::Array(a) => {
                (4u8, a.len()).hash(h);
                for x in a {
                    feed(x, h);
                }
            }
            Value::Object(o) => {
                (5u8, o.len()).hash(h);
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                for k in keys {
                    k.hash(h);
                    feed(&o[k], h);
                }
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    feed(v, &mut h);
    h.finish()
}

/// The hosts' reconciliations as one: rx_packets, rx_dropped and lost only when every host
/// has them.
fn sum_reconciliations<'a>(
    all: impl Iterator<Item = &'a Reconciliation> + Clone,
) -> Reconciliation {
    Reconciliation {
        sent: all.clone().map(|r| r.sent).sum(),
        tx_packets: all.clone().map(|r| r.tx_packets).sum(),
        tx_dropped: all.clone().map(|r| r.tx_dropped).sum(),
        rx_packets: all.clone().map(|r| r.rx_packets).sum(),
        rx_dropped: all.clone().map(|r| r.rx_dropped).sum(),
        lost: all.clone().map(|r| r.lost).sum(),
        vanished: all.map(|r| r.vanished).sum(),
    }
}

fn reconciliation_text(r: &Reconciliation) -> String {
    let mut s = format!(
        "sent {}, tx_packets {}, tx_dropped {}",
        r.sent, r.tx_packets, r.tx_dropped
    );
    if let (Some(rx), Some(lost)) = (r.rx_packets, r.lost) {
        let _ = write!(
            s,
            ", rx_packets {rx}, rx_dropped {}, lost {lost}",
            r.rx_dropped.unwrap_or(0)
        );
    }
    s
}

impl Merged {
    /// The text report: the total's Result first, then each host, the start, the
    /// receivers and the flags.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Result: {}", self.total.lines());
        let _ = writeln!(
            s,
            "\nMerged:      {} sender host{} (upktgen {}); the Result above adds them up (elapsed: from the first start to the last end; idle: the mean)",
            self.senders.len(),
            if self.senders.len() == 1 { "" } else { "s" },
            self.version
        );
        for h in &self.senders {
            let _ = writeln!(
                s,
                "  {} [{}]: Result: {}",
                sender_label(&h.host, &h.device, h.netns.as_deref()),
                h.file.display(),
                h.result.lines().replace('\n', "\n    ")
            );
            let start = match (self.start_at_ns, h.start_error_ns) {
                (Some(_), Some(e)) => format!("start error {}; ", signed_time(e)),
                (Some(_), None) => "not started; ".into(),
                (None, _) => format!(
                    "started {}; ",
                    signed_time((h.start_ns - self.start_ns) as i64)
                ),
            };
            let clock = match (self.start_at_ns, &h.clock) {
                (Some(_), c) => format!("clock {}; ", clock_short(c.as_ref())),
                (None, _) => String::new(),
            };
            let _ = writeln!(
                s,
                "    {start}{clock}{}",
                reconciliation_text(&h.reconciliation)
            );
        }
        match &self.start_at {
            Some(at) => {
                let _ = writeln!(
                    s,
                    "Start at:    {at}; start skew between hosts {}",
                    time_text(self.start_skew_ns)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "Start:       no --start-at; start skew between hosts {}",
                    time_text(self.start_skew_ns)
                );
            }
        }
        let _ = writeln!(
            s,
            "Reconciled:  {}",
            reconciliation_text(&self.reconciliation)
        );
        if let Some(r) = &self.received {
            let pct = if self.total.sent == 0 {
                100.0
            } else {
                r.received as f64 * 100.0 / self.total.sent as f64
            };
            let _ = writeln!(
                s,
                "Received:    {} of {} sent ({pct:.2} %) by {} receiver{}; lost {}, duplicates {}, reordered {}; {} frames with pktgen's header",
                r.received,
                self.total.sent,
                r.receivers,
                if r.receivers == 1 { "" } else { "s" },
                r.lost,
                r.duplicates,
                r.reordered,
                r.pktgen_frames
            );
            for h in &self.receivers {
                let _ = writeln!(
                    s,
                    "  {} {} [{}]: received {}, lost {}, duplicates {}, reordered {}",
                    crate::text::printable(&h.host),
                    crate::text::printable(&h.device),
                    h.file.display(),
                    h.received,
                    h.lost,
                    h.duplicates,
                    h.reordered
                );
            }
        }
        for f in &self.flags {
            let _ = writeln!(s, "Flagged:     {f}");
        }
        s
    }
}

#[cfg(test)]
mod tests;
