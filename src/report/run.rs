//! The report of one run: the seed's four lines, then what the seed lacked.

use crate::backend::BackendInfo;
use crate::lab::RxMode;
use crate::sample::{IfaceCounters, SystemDelta, top_label};
use crate::sender::SendOutcome;
use crate::wire::MacAddr;
use serde::Serialize;
use std::fmt::Write;

/// The two flags the report shows on their own (the device configuration has all of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Flags {
    /// UDPCSUM: compute the UDP checksum (otherwise 0).
    pub udp_csum: bool,
    /// NO_TIMESTAMP: leave tv_sec/tv_usec zero.
    pub no_timestamp: bool,
}

/// The frame's addresses once defaults are resolved (IP addresses as text: one address, a
/// `min-max` range, or IPv6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Addressing {
    pub src_mac: MacAddr,
    pub dst_mac: MacAddr,
    pub src_ip: String,
    pub dst_ip: String,
}

/// Where the frames went.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub device: String,
    /// The lab's sending namespace (None on a user-named device).
    pub netns: Option<String>,
    pub lab_rx: Option<RxMode>,
    pub rx_netns: Option<String>,
    /// A script's device names that stand for `device`, the lab's interface (`script
    /// --lab`); empty when the devices named are the ones that sent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stands_for: Vec<String>,
}

/// Sent by upktgen vs counted by the interfaces, with the differences named.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Reconciliation {
    pub sent: u64,
    /// tx_packets of the sending interface.
    pub tx_packets: u64,
    /// tx_dropped of the sending interface (on veth: frames the peer could not take).
    pub tx_dropped: u64,
    /// rx_packets of the receiving interface (lab only).
    pub rx_packets: Option<u64>,
    /// rx_dropped of the receiving interface (lab only).
    pub rx_dropped: Option<u64>,
    /// sent - rx_packets (lab only; negative never: stray frames would make it look better,
    /// which is why the lab keeps the pair silent).
    pub lost: Option<u64>,
    /// On a user-named device (no receiver of ours): sent - tx_packets, frames counted as
    /// sent that the interface never counted (a lower bound: other traffic on the
    /// interface hides some). None in the lab, where `lost` says it exactly.
    pub vanished: Option<u64>,
}

impl Reconciliation {
    pub fn new(sent: u64, tx: &IfaceCounters, rx: Option<&IfaceCounters>) -> Self {
        Reconciliation {
            sent,
            tx_packets: tx.tx_packets,
            tx_dropped: tx.tx_drop,
            rx_packets: rx.map(|r| r.rx_packets),
            rx_dropped: rx.map(|r| r.rx_drop),
            lost: rx.map(|r| sent.saturating_sub(r.rx_packets)),
            vanished: match rx {
                Some(_) => None,
                None => Some(sent.saturating_sub(tx.tx_packets)),
            },
        }
    }

    /// Delivered share in percent (lab only).
    pub fn delivered_pct(&self) -> Option<f64> {
        let rx = self.rx_packets?;
        Some(if self.sent == 0 {
            100.0
        } else {
            rx as f64 * 100.0 / self.sent as f64
        })
    }
}

/// Everything about one run; `--json` prints it whole.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The sending host's name, and upktgen's version (for `upktgen merge`).
    pub host: String,
    pub version: String,
    pub target: Target,
    pub backend: BackendInfo,
    pub addressing: Addressing,
    pub flags: Flags,
    /// The seed of the random draws, when the run drew any (replay it with --seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub count: u64,
    pub delay_ns: u64,
    /// All senders together (with one sender: that sender).
    pub outcome: SendOutcome,
    /// With several senders (-t N, scripts): each device, with its own Result (a kpktgend
    /// thread's devices on one interface share one sender and its timeline).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadReport>,
    pub system: SystemDelta,
    pub tx_iface: IfaceCounters,
    pub rx_iface: Option<IfaceCounters>,
    pub reconciliation: Reconciliation,
    /// `--rx-analyze`: upktgen's own receiver on veth-rx and the path to it.
    pub rx_analysis: Option<crate::rx::report::RxAnalysis>,
    /// The drop receiver's XDP counter on veth-rx (per-CPU map, summed): frames that
    /// reached the sink.
    pub xdp_sink_packets: Option<u64>,
    /// --peer / --rx-dev: the far end (its receiver's report is `rx_analysis.receiver`).
    pub peer: Option<crate::agent::far::PeerSummary>,
    /// --lab dut: the device under test's path, each loss named.
    pub dut: Option<crate::report::dut::DutPath>,
    /// --start-at: the instant, each sender's start and the clock's synchronisation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<StartReport>,
    /// xmit_mode netif_receive: what the device's receive path did with the frames (the
    /// reconciliation's interface counts do not apply then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive_path: Option<crate::report::receive::ReceivePath>,
    /// `--config`: each stream sent, and received at its port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams: Option<crate::report::streams::StreamsRun>,
    /// Parts of the report an observer could not give (its name, why): a far end that failed
    /// after the send. Text only for now: in the JSON document the part is null.
    #[serde(skip)]
    pub missing: Vec<(&'static str, String)>,
    /// Lines from observers without a field of their own (label, text). Text only.
    #[serde(skip)]
    pub extra: Vec<(&'static str, String)>,
}

/// `--start-at`: the instant asked for, when each sender began, and the clock's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StartReport {
    /// The instant asked for: CLOCK_REALTIME, ns since the epoch, and as RFC 3339 (UTC).
    pub requested_ns: u64,
    pub requested: String,
    /// How long after the instant the set-up ended (0: on time). The senders then started
    /// at once, late by at least this much.
    pub setup_late_ns: u64,
    pub threads: Vec<ThreadStart>,
    /// adjtimex's view of CLOCK_REALTIME (None: adjtimex failed): the start error above is
    /// against this host's clock, which is only as close to the others' as it is synchronised.
    pub clock: Option<crate::sys::clock::ClockSync>,
}

/// One sender's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ThreadStart {
    /// pktgen's device name (`dev@tag`).
    pub device: String,
    /// CLOCK_REALTIME when its send loop began (its first send follows at once), ns.
    pub first_send_ns: u64,
    /// first_send_ns - requested_ns: negative = started early. None: stopped (Ctrl-C)
    /// before the instant, nothing sent.
    pub error_ns: Option<i64>,
}

impl StartReport {
    /// The report's `Start:` and `Clock:` lines.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let errs: Vec<i64> = self.threads.iter().filter_map(|t| t.error_ns).collect();
        let spread = match (errs.iter().min(), errs.iter().max()) {
            (Some(lo), Some(hi)) if errs.len() > 1 => format!(
                " ({} threads: {} to {})",
                errs.len(),
                signed_time(*lo),
                signed_time(*hi)
            ),
            _ => String::new(),
        };
        let first = match errs.iter().max() {
            Some(e) => format!("start error {}{spread}", signed_time(*e)),
            None => "not started (stopped before the instant)".into(),
        };
        let late = if self.setup_late_ns > 0 {
            format!(
                "; the set-up ended {:.3} ms after it, so the senders started late",
                self.setup_late_ns as f64 / 1e6
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "Start at:    {} ({}); {first}{late}",
            self.requested, self.requested_ns
        );
        let _ = writeln!(s, "Clock sync:  {}", clock_text(self.clock.as_ref()));
        s
    }
}

/// A signed time: microseconds below a millisecond, milliseconds above.
pub fn signed_time(ns: i64) -> String {
    let sign = if ns < 0 { '-' } else { '+' };
    format!("{sign}{}", time_text(ns.unsigned_abs()))
}

/// A time: microseconds below a millisecond, milliseconds above.
pub fn time_text(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{:.1} us", ns as f64 / 1e3)
    } else {
        format!("{:.3} ms", ns as f64 / 1e6)
    }
}

/// adjtimex's verdict on the clock, in two words (and the estimated error).
pub fn clock_short(c: Option<&crate::sys::clock::ClockSync>) -> String {
    match c {
        Some(c) if c.synchronised => format!("synchronised (est. error {} us)", c.esterror_us),
        Some(_) => "NOT synchronised".into(),
        None => "unknown".into(),
    }
}

/// adjtimex's verdict on the clock, in words.
pub fn clock_text(c: Option<&crate::sys::clock::ClockSync>) -> String {
    match c {
        Some(c) if c.synchronised => format!(
            "synchronised (est. error {} us, max error {} us)",
            c.esterror_us, c.maxerror_us
        ),
        Some(c) => format!(
            "NOT synchronised (adjtimex: no time daemon disciplines the clock; max error {} us): hosts may disagree on the instant",
            c.maxerror_us
        ),
        None => "unknown (adjtimex failed)".into(),
    }
}

/// One sender of a run with several.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadReport {
    /// pktgen's device name (`dev@tag`).
    pub device: String,
    /// The sender thread it ran on (a kpktgend thread's devices on one interface share
    /// one, on one timeline); the text says it, the JSON's shape stays.
    #[serde(skip)]
    pub sender: usize,
    pub cpu: Option<usize>,
    pub backend: &'static str,
    /// The backend's own description (its queue, mode, ...).
    pub detail: String,
    pub outcome: SendOutcome,
}

fn per_1000(n: u64, packets: u64) -> f64 {
    if packets == 0 {
        0.0
    } else {
        n as f64 * 1000.0 / packets as f64
    }
}

impl RunReport {
    /// The text report: the seed's lines first, byte-compatible, then the extras.
    pub fn text(&self, per_cpu: bool) -> String {
        let mut s = String::new();
        let r = &self.outcome.result;
        let sys = &self.system;
        let _ = writeln!(s, "{}", sys.cpu_all.top_line("Cpu(s)"));
        if per_cpu {
            for (name, shares) in &sys.cpu_per_cpu {
                let _ = writeln!(s, "{}", shares.top_line(&top_label(name)));
            }
        }
        let _ = writeln!(s, "Result: {}", r.lines());
        let _ = writeln!(s, "Interrupts: {}", sys.interrupts);
        s.push_str(&senders_text(&self.threads));

        let _ = writeln!(s);
        let where_ = match &self.target.netns {
            Some(ns) => format!("{} in netns {}", self.target.device, ns),
            None => self.target.device.clone(),
        };
        let _ = writeln!(
            s,
            "Backend:     {} on {} ({})",
            self.backend.name, where_, self.backend.detail
        );
        if !self.target.stands_for.is_empty() {
            let n = self.target.stands_for.len();
            let _ = writeln!(
                s,
                "Lab:         the script's {} {} for {}, the private lab's {} interface (--lab)",
                self.target.stands_for.join(", "),
                if n == 1 { "stands" } else { "stand" },
                self.target.device,
                if self.receive_path.is_some() {
                    "receiving"
                } else {
                    "sending"
                },
            );
        }
        let stopped = match self.outcome.stop_reason {
            crate::sender::StopReason::Count => "count reached",
            crate::sender::StopReason::Duration => "duration reached",
            crate::sender::StopReason::Interrupted => "interrupted (partial run)",
        };
        let _ = writeln!(s, "Stopped by:  {stopped}");
        let rc = &self.reconciliation;
        if let Some(p) = &self.receive_path {
            s.push_str(&p.text());
        }
        match (rc.rx_packets, rc.delivered_pct()) {
            _ if self.receive_path.is_some() => {}
            (Some(rx), Some(pct)) => {
                let (at, mode) = match (&self.peer, self.target.lab_rx) {
                    (Some(p), _) => (p.dev.clone(), format!("peer {}", p.peer)),
                    (None, Some(RxMode::Drop)) => ("veth-rx".into(), "XDP drop receiver".into()),
                    (None, Some(RxMode::Stack)) => ("veth-rx".into(), "stack receiver".into()),
                    (None, None) => ("veth-rx".into(), "receiver".into()),
                };
                let _ = writeln!(
                    s,
                    "Delivered:   {rx} of {} sent ({pct:.2} %) at {at} ({mode}); rx_dropped {}, lost {}",
                    rc.sent,
                    rc.rx_dropped.unwrap_or(0),
                    rc.lost.unwrap_or(0)
                );
            }
            _ if self.peer.is_none() && self.missing.iter().any(|(w, _)| *w == "far end") => {
                let _ = writeln!(
                    s,
                    "Delivered:   unknown (the far end's report is missing: see Missing below)"
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "Delivered:   unknown (the receiving end is not upktgen's: see its counters)"
                );
            }
        }
        if let (Some(n), Some(rx)) = (self.xdp_sink_packets, rc.rx_packets) {
            let _ = writeln!(
                s,
                "Sink:        {n} counted by the XDP drop program on veth-rx (rx_packets - counted = {})",
                rx as i64 - n as i64
            );
        }
        if self.receive_path.is_none() {
            let _ = writeln!(
                s,
                "Transmitted: {} tx_packets {}, tx_dropped {}",
                self.target.device, rc.tx_packets, rc.tx_dropped
            );
        }
        if let Some(v) = rc.vanished.filter(|&v| v > 0) {
            let _ = writeln!(
                s,
                "Vanished:    at least {v} of {} frames counted as sent are not in {}'s tx_packets: the device dropped them \
                 without counting, or counts them elsewhere (see `ethtool -S {}`)",
                rc.sent, self.target.device, self.target.device
            );
        }
        let b = &self.outcome.backend;
        let _ = writeln!(s, "TX queue:    {}", self.backend.queue);
        let _ = writeln!(
            s,
            "             stops {}, wakes {} ({:.2} per 1000 packets), stopped {} us; kicks {} ({:.2} per 1000 packets)",
            b.queue.stops,
            b.queue.wakes,
            per_1000(b.queue.wakes, r.sent),
            b.stopped_ns / 1000,
            b.kicks,
            per_1000(b.kicks, r.sent)
        );
        let _ = writeln!(
            s,
            "Idle:        {} us = rate limiter {} us + queue stopped {} us + final drain {} us",
            r.idle_ns / 1000,
            self.outcome.pacing_idle_ns / 1000,
            b.stopped_ns / 1000,
            (b.idle_ns - b.stopped_ns) / 1000
        );
        if let Some(p) = &self.outcome.pacing {
            let _ = writeln!(
                s,
                "Pacing:      requested {:.0} pps, achieved {:.0} pps ({:+.3} %); {} handovers late by p50 {:.1} us, p99 {:.1} us, max {:.1} us",
                p.requested_pps,
                p.achieved_pps,
                p.error_pct,
                p.departures,
                p.late_p50_ns as f64 / 1e3,
                p.late_p99_ns as f64 / 1e3,
                p.late_max_ns as f64 / 1e3
            );
        }
        let _ = writeln!(
            s,
            "Softirqs:    NET_TX {}, NET_RX {}",
            sys.softirq_net_tx, sys.softirq_net_rx
        );
        if let Some(f) = &sys.irq_filter {
            let _ = writeln!(
                s,
                "Interrupts:  {} matching '{}' ({}), {} in all",
                sys.interrupts,
                f,
                sys.irq_filter_rows.join(", "),
                sys.interrupts_all
            );
        }
        if let Some(st) = &self.start {
            s.push_str(&st.text());
        }
        if let Some(d) = &self.dut {
            s.push_str(&d.text());
        }
        if let Some(p) = &self.peer {
            s.push_str(&p.text());
        }
        for (what, why) in &self.missing {
            let _ = writeln!(s, "Missing:     the {what}'s part: {why}");
        }
        for (label, text) in &self.extra {
            let _ = writeln!(s, "{:<13}{text}", format!("{label}:"));
        }
        if let Some(rx) = &self.rx_analysis {
            let shared = self
                .streams
                .as_ref()
                .is_some_and(|st| st.legs_on_iface.is_some());
            s.push_str(&rx.text_with(shared));
        }
        if let Some(st) = &self.streams {
            s.push_str(&st.text());
        }
        s
    }
}

/// The report's lines of several senders (nothing for one): each device's Result, which
/// sender it ran on when a kpktgend thread's devices shared one timeline, and which of a
/// CPU's devices ran apart (another interface, another socket's settings, paced beside
/// unpaced).
fn senders_text(threads: &[ThreadReport]) -> String {
    let mut s = String::new();
    if threads.is_empty() {
        return s;
    }
    let sharing = |t: &ThreadReport| threads.iter().filter(|u| u.sender == t.sender).count() > 1;
    let mut senders: Vec<usize> = threads.iter().map(|t| t.sender).collect();
    senders.sort_unstable();
    senders.dedup();
    let timelines = senders.len() < threads.len();
    if timelines {
        let _ = writeln!(
            s,
            "\nSenders:     {} devices on {} (a kpktgend thread's devices on one interface: one timeline); the Result above adds them up, each frame at its real length",
            threads.len(),
            match senders.len() {
                1 => "1 sender thread".to_string(),
                n => format!("{n} sender threads"),
            }
        );
    } else {
        let _ = writeln!(
            s,
            "\nSenders:     {} threads; the Result above adds them up (elapsed: the longest; idle: the mean)",
            threads.len()
        );
    }
    let iface = |t: &ThreadReport| t.device.split('@').next().unwrap_or_default().to_string();
    for t in threads {
        let cpu = t.cpu.map_or(String::new(), |c| format!(" on CPU {c}"));
        let apart = t.cpu.is_some()
            && threads.iter().any(|u| {
                u.cpu == t.cpu && u.sender != t.sender && (timelines || iface(u) != iface(t))
            });
        let shared = match (sharing(t), apart) {
            (true, _) => format!(" (sender {}'s timeline)", t.sender),
            (false, true) => " (a sender of its own)".to_string(),
            (false, false) => String::new(),
        };
        let _ = writeln!(
            s,
            "  {}{cpu}{shared}: Result: {}",
            t.device,
            t.outcome.result.lines().replace('\n', "\n    ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(device: &str, cpu: usize, sender: usize, sent: u64, pkt_size: u32) -> ThreadReport {
        ThreadReport {
            device: device.into(),
            sender,
            cpu: Some(cpu),
            backend: "af_packet",
            detail: String::new(),
            outcome: SendOutcome {
                result: crate::sender::PktgenResult {
                    elapsed_ns: 1_000_000,
                    sent,
                    pkt_size,
                    ..Default::default()
                },
                pacing_idle_ns: 0,
                backend: Default::default(),
                stop_reason: crate::sender::StopReason::Count,
                start_realtime_ns: 0,
                pacing: None,
            },
        }
    }

    #[test]
    fn devices_that_shared_a_timeline_are_named_with_their_sender() {
        let t = senders_text(&[
            thread("eth0@0", 0, 0, 10, 60),
            thread("eth1@0", 0, 1, 5, 60),
            thread("eth0@1", 0, 0, 30, 500),
        ]);
        assert!(
            t.starts_with("\nSenders:     3 devices on 2 sender threads (a kpktgend thread's devices on one interface: one timeline)"),
            "{t}"
        );
        assert!(t.contains("  eth0@0 on CPU 0 (sender 0's timeline): Result: OK: 1000(c1000+d0) usec, 10 (60byte,0frags)"), "{t}");
        assert!(
            t.contains("  eth1@0 on CPU 0 (a sender of its own): Result: "),
            "{t}"
        );
        assert!(t.contains("  eth0@1 on CPU 0 (sender 0's timeline): Result: OK: 1000(c1000+d0) usec, 30 (500byte,0frags)"), "{t}");
        // run -t N's threads, and a script's thread per device: as before.
        let t = senders_text(&[thread("eth0@0", 0, 0, 1, 60), thread("eth0@1", 1, 1, 1, 60)]);
        assert!(t.starts_with("\nSenders:     2 threads; "), "{t}");
        assert!(t.contains("  eth0@1 on CPU 1: Result: "), "{t}");
        // Two interfaces on one thread, each its own sender: said.
        let t = senders_text(&[thread("eth0@0", 0, 0, 1, 60), thread("eth1@0", 0, 1, 1, 60)]);
        assert!(
            t.contains("  eth1@0 on CPU 0 (a sender of its own): "),
            "{t}"
        );
        assert_eq!(senders_text(&[]), "");
    }

    #[test]
    fn frames_missing_from_a_user_named_device_are_named() {
        let tx = IfaceCounters {
            tx_packets: 90,
            ..IfaceCounters::default()
        };
        let r = Reconciliation::new(100, &tx, None);
        assert_eq!((r.vanished, r.lost), (Some(10), None));
        let rx = IfaceCounters {
            rx_packets: 100,
            ..IfaceCounters::default()
        };
        let r = Reconciliation::new(100, &tx, Some(&rx));
        assert_eq!((r.vanished, r.lost), (None, Some(0)));
    }
}
