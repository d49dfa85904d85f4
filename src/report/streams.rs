//! `run --config`: each stream's frames sent beside what its receiving port counted, so
//! loss per stream includes the frames lost after its last arrival (which no receiver can
//! see). The receiver's own table (latency, jitter, duplicates, reordering) is its report's.

use crate::rx::streams::StreamsReport;
use crate::stream::multi::Tally;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One stream: sent, and received at its port when a receiver counted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamRun {
    pub id: u16,
    pub name: String,
    pub tx_frames: u64,
    /// Bytes of the frames sent, without FCS.
    pub tx_bytes: u64,
    /// Distinct frames received (duplicates not counted again); None: no receiver counted.
    pub rx_frames: Option<u64>,
    /// Sent and not received: `tx_frames − rx_frames`.
    pub lost: Option<u64>,
    pub loss_pct: Option<f64>,
}

/// The streams of a run (one transmitting port's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamsRun {
    /// The config file.
    pub config: String,
    /// The transmitting and the receiving port, as `name (location)`.
    pub tx_port: String,
    pub rx_port: String,
    pub streams: Vec<StreamRun>,
    /// Frames the receiving port counted that none of these streams sent (another flow's
    /// signature, or an id beyond the config's); None: no receiver counted. In the text,
    /// and beside the run in a run of several ports' document ([`PortRunDoc`]); not in the
    /// run document itself (its shape stays `upktgen.run/3`'s).
    #[serde(skip)]
    pub unexpected: Option<u64>,
    /// With several transmit queues (`-t N`): which streams each queue's sender sent, and
    /// the rate it was given; empty with one. In the text only, as `unexpected`.
    #[serde(skip)]
    pub queues: Vec<QueueRun>,
    /// When the sending port sends to several ports (a leg for each, this run one of them),
    /// how many legs its interface carries: the interface's counters in the report count
    /// them all. In the text only, as `unexpected`.
    #[serde(skip)]
    pub legs_on_iface: Option<u16>,
}

/// One transmit queue of a port (one sender thread, its socket and its timeline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueRun {
    /// The sender's device, `dev@i`.
    pub sender: String,
    /// The stream ids it sent, ascending.
    pub ids: Vec<u16>,
    /// The sum of their rates, frames per second.
    pub pps: f64,
    /// Frames it sent (its streams' sum).
    pub tx_frames: u64,
}

/// How many of a queue's stream ids its row lists (the others are counted).
const QUEUE_IDS_SHOWN: usize = 16;

impl StreamsRun {
    /// The streams signed `ids` (of the config's flows `names`, by id), stream `i` as
    /// `tally` counted it sent (index `i`) and `rx` (the receiving port's report, when
    /// there is one) received it.
    pub fn new(
        config: String,
        ports: (String, String),
        (ids, names): (&[u16], &[String]),
        tally: &Tally,
        rx: Option<&StreamsReport>,
    ) -> StreamsRun {
        let streams = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| {
                let (tx_frames, tx_bytes) = tally.get(i);
                let rx_frames = rx.map(|r| {
                    r.streams
                        .iter()
                        .find(|s| s.id == id)
                        .map_or(0, |s| s.seq.received)
                });
                let lost = rx_frames.map(|r| tx_frames.saturating_sub(r));
                StreamRun {
                    id,
                    name: names
                        .get(usize::from(id))
                        .cloned()
                        .unwrap_or_else(|| id.to_string()),
                    tx_frames,
                    tx_bytes,
                    rx_frames,
                    lost,
                    loss_pct: lost
                        .filter(|_| tx_frames > 0)
                        .map(|l| l as f64 * 100.0 / tx_frames as f64),
                }
            })
            .collect();
        StreamsRun {
            config,
            tx_port: ports.0,
            rx_port: ports.1,
            streams,
            unexpected: None,
            queues: Vec::new(),
            legs_on_iface: None,
        }
        .expecting(rx, ids)
    }

    /// The frames `rx` (the receiving port's report) counted of no stream in `expected`
    /// (ascending: every flow sent to that port, from any port) as unexpected.
    pub fn expecting(mut self, rx: Option<&StreamsReport>, expected: &[u16]) -> StreamsRun {
        self.unexpected = rx.map(|r| {
            r.foreign
                + r.streams
                    .iter()
                    .filter(|s| expected.binary_search(&s.id).is_err())
                    .map(|s| s.frames)
                    .sum::<u64>()
        });
        self
    }

    /// The run is one of `legs` legs on its sending interface (its port sends to several
    /// ports); one: alone, nothing said.
    pub fn sharing(mut self, legs: u16) -> StreamsRun {
        self.legs_on_iface = Some(legs).filter(|&n| n > 1);
        self
    }

    /// The queues that sent the streams (`-t N`; none or one: not shown).
    pub fn on_queues(mut self, queues: Vec<QueueRun>) -> StreamsRun {
        self.queues = queues;
        self
    }

    /// A line, then one row per stream: sent, received, lost.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Streams:     {} from {} to {} ({})",
            self.streams.len(),
            crate::text::printable(&self.tx_port),
            crate::text::printable(&self.rx_port),
            crate::text::printable(&self.config)
        );
        let _ = writeln!(
            s,
            "     id stream                       sent       received         lost   loss %"
        );
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        for r in &self.streams {
            let name: String = crate::text::printable(&r.name).chars().take(24).collect();
            let _ = writeln!(
                s,
                "  {:>5} {:<24} {:>10} {:>14} {:>12} {:>8}",
                r.id,
                name,
                r.tx_frames,
                opt(r.rx_frames),
                opt(r.lost),
                r.loss_pct.map_or("-".to_string(), |p| format!("{p:.3}"))
            );
        }
        if let Some(n) = self.unexpected.filter(|&n| n > 0) {
            let _ = writeln!(
                s,
                "  unexpected at {}: {n} frames of no stream sent to it",
                crate::text::printable(&self.rx_port)
            );
        }
        if let Some(n) = self.legs_on_iface {
            let _ = writeln!(
                s,
                "  shared: {} sends to {n} ports, a leg each (this run one of them): its interface's counters above (Transmitted, Path, Differences) count every leg's frames; this table counts this leg's",
                crate::text::printable(&self.tx_port)
            );
        }
        s.push_str(&self.queues_text());
        s
    }

    /// With several queues: a line, then one row per queue (its sender, how many streams,
    /// the rate it was given, the frames it sent, the first ids).
    fn queues_text(&self) -> String {
        let mut s = String::new();
        if self.queues.len() < 2 {
            return s;
        }
        let _ = writeln!(
            s,
            "Queues:      {} (a sender thread, a socket and a timeline each; a stream stays on one; largest rate first onto the least-loaded queue)",
            self.queues.len()
        );
        let _ = writeln!(
            s,
            "     sender        streams          pps         sent  ids"
        );
        for q in &self.queues {
            let mut ids: Vec<String> = q
                .ids
                .iter()
                .take(QUEUE_IDS_SHOWN)
                .map(u16::to_string)
                .collect();
            if q.ids.len() > QUEUE_IDS_SHOWN {
                ids.push(format!("(+{})", q.ids.len() - QUEUE_IDS_SHOWN));
            }
            let _ = writeln!(
                s,
                "  {:<16} {:>7} {:>12.1} {:>12}  {}",
                crate::text::printable(&q.sender),
                q.ids.len(),
                q.pps,
                q.tx_frames,
                ids.join(" ")
            );
        }
        s
    }
}

/// A run of several transmitting ports: each flow between its ports, and each port's
/// frames sent and received (frames of its flows; those it received of no flow sent to
/// it counted apart).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortsRun {
    pub flows: Vec<FlowRun>,
    pub ports: Vec<PortRun>,
}

/// One flow of a [`PortsRun`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowRun {
    pub id: u16,
    pub name: String,
    /// The sending and the receiving port, as `name (location)`.
    pub tx_port: String,
    pub rx_port: String,
    pub tx_frames: u64,
    /// Bytes of the frames sent, without FCS.
    pub tx_bytes: u64,
    /// Distinct frames its receiving port counted; None: no receiver counted there.
    pub rx_frames: Option<u64>,
    pub lost: Option<u64>,
    pub loss_pct: Option<f64>,
}

/// One port of a [`PortsRun`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortRun {
    /// `name (location)`.
    pub port: String,
    pub tx_frames: u64,
    /// Frames of the flows it receives; None: no receiver counted there.
    pub rx_frames: Option<u64>,
    /// Frames it received of no flow sent to it.
    pub unexpected: Option<u64>,
}

impl PortsRun {
    /// The flows of every transmitting port's run (`runs`), in id order, and the ports in
    /// the order they first appear.
    pub fn new(runs: &[&StreamsRun]) -> PortsRun {
        let mut flows: Vec<FlowRun> = runs
            .iter()
            .flat_map(|r| {
                r.streams.iter().map(|s| FlowRun {
                    id: s.id,
                    name: s.name.clone(),
                    tx_port: r.tx_port.clone(),
                    rx_port: r.rx_port.clone(),
                    tx_frames: s.tx_frames,
                    tx_bytes: s.tx_bytes,
                    rx_frames: s.rx_frames,
                    lost: s.lost,
                    loss_pct: s.loss_pct,
                })
            })
            .collect();
        flows.sort_by_key(|f| f.id);
        let mut ports: Vec<PortRun> = Vec::new();
        fn port(ports: &mut Vec<PortRun>, name: &str) -> usize {
            ports
                .iter()
                .position(|p| p.port == name)
                .unwrap_or_else(|| {
                    ports.push(PortRun {
                        port: name.to_string(),
                        tx_frames: 0,
                        rx_frames: None,
                        unexpected: None,
                    });
                    ports.len() - 1
                })
        }
        let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        for r in runs {
            let t = port(&mut ports, &r.tx_port);
            let x = port(&mut ports, &r.rx_port);
            let (sent, got) = r.streams.iter().fold((0, None), |(t, g), s| {
                (u64::saturating_add(t, s.tx_frames), add(g, s.rx_frames))
            });
            ports[t].tx_frames = ports[t].tx_frames.saturating_add(sent);
            ports[x].rx_frames = add(ports[x].rx_frames, got);
            // Each run sending to this port has its own receiver there, and every one of
            // them sees the same stray frames: the most any saw, not their sum.
            ports[x].unexpected = match (ports[x].unexpected, r.unexpected) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).max(b.unwrap_or(0))),
            };
        }
        PortsRun { flows, ports }
    }

    /// Every flow (id, ports, sent, received, lost), then every port.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        let cut =
            |t: &str, n: usize| -> String { crate::text::printable(t).chars().take(n).collect() };
        // Each distinct sending and receiving port (a port may be both).
        let count = |of: fn(&FlowRun) -> &str| {
            let mut v: Vec<&str> = self.flows.iter().map(of).collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        let ports = |n: usize| format!("{n} port{}", if n == 1 { "" } else { "s" });
        let _ = writeln!(
            s,
            "Flows:       {} from {} to {}",
            self.flows.len(),
            ports(count(|f| f.tx_port.as_str())),
            ports(count(|f| f.rx_port.as_str()))
        );
        let _ = writeln!(
            s,
            "     id flow                           sent     received         lost  ports"
        );
        for f in &self.flows {
            let _ = writeln!(
                s,
                "  {:>5} {:<24} {:>10} {:>12} {:>12}  {} -> {}",
                f.id,
                cut(&f.name, 24),
                f.tx_frames,
                opt(f.rx_frames),
                opt(f.lost),
                crate::text::printable(&f.tx_port),
                crate::text::printable(&f.rx_port)
            );
        }
        let w = self
            .ports
            .iter()
            .map(|p| crate::text::printable(&p.port).chars().count().min(96))
            .max()
            .unwrap_or(0)
            .max(4);
        let _ = writeln!(
            s,
            "Ports:       {:<w$} {:>12} {:>12} {:>12}",
            "port", "sent", "received", "unexpected"
        );
        for p in &self.ports {
            let _ = writeln!(
                s,
                "             {:<w$} {:>12} {:>12} {:>12}",
                cut(&p.port, w),
                p.tx_frames,
                opt(p.rx_frames),
                opt(p.unexpected)
            );
        }
        s
    }
}

/// `run --config FILE --json` when the flows leave from several ports (or one to several)
/// ([`crate::schema::RUN_PORTS`]): one document for the whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortsDoc {
    pub host: String,
    pub version: String,
    /// The config file.
    pub config: String,
    /// Each leg's run (a sending port to one receiving port), in the order the flows first
    /// name the pairs.
    pub runs: Vec<PortRunDoc>,
    /// Every flow, by id: its ports, sent, received at its port, lost.
    pub flows: Vec<FlowRun>,
    /// Every port that sends or receives, in the order it first appears.
    pub ports: Vec<PortRun>,
    pub totals: PortsTotals,
}

/// One leg's run in a [`PortsDoc`]: a sending port to one receiving port.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortRunDoc {
    /// Its port and its receiving port, as `name (location)`.
    pub tx_port: String,
    pub rx_port: String,
    /// Frames its receiving port counted of no flow sent there (from any port); None: no
    /// receiver counted.
    pub unexpected: Option<u64>,
    /// Its report: the document `run --json` writes for a run of one sending port (an
    /// `upktgen.run/3` document, its `schema` first), so `merge` and `compare` read it.
    pub report: serde_json::Value,
}

/// The sums of a [`PortsDoc`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PortsTotals {
    pub flows: usize,
    pub ports: usize,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    /// None when no port counted (a flow's receiving port had no receiver).
    pub rx_frames: Option<u64>,
    pub lost: Option<u64>,
    /// Frames some port counted of no flow sent to it, summed over the ports.
    pub unexpected: Option<u64>,
}

impl PortsDoc {
    /// The document of the runs `reports` (one per sending port, each with its streams).
    pub fn new(reports: &[&crate::report::run::RunReport]) -> serde_json::Result<PortsDoc> {
        let streams: Vec<&StreamsRun> = reports.iter().filter_map(|r| r.streams.as_ref()).collect();
        let table = PortsRun::new(&streams);
        let runs = reports
            .iter()
            .filter_map(|r| r.streams.as_ref().map(|s| (r, s)))
            .map(|(r, s)| {
                Ok(PortRunDoc {
                    tx_port: s.tx_port.clone(),
                    rx_port: s.rx_port.clone(),
                    unexpected: s.unexpected,
                    report: serde_json::to_value(crate::schema::tagged(crate::schema::RUN, r))?,
                })
            })
            .collect::<serde_json::Result<Vec<_>>>()?;
        let all = |v: Vec<Option<u64>>| -> Option<u64> {
            v.into_iter()
                .try_fold(0u64, |a, x| x.map(|x| a.saturating_add(x)))
        };
        let totals = PortsTotals {
            flows: table.flows.len(),
            ports: table.ports.len(),
            tx_frames: table.flows.iter().map(|f| f.tx_frames).sum(),
            tx_bytes: table.flows.iter().map(|f| f.tx_bytes).sum(),
            rx_frames: all(table.flows.iter().map(|f| f.rx_frames).collect()),
            lost: all(table.flows.iter().map(|f| f.lost).collect()),
            unexpected: table
                .ports
                .iter()
                .filter_map(|p| p.unexpected)
                .reduce(u64::saturating_add),
        };
        Ok(PortsDoc {
            host: crate::report::hostname(),
            version: crate::report::VERSION.into(),
            config: streams
                .first()
                .map(|s| s.config.clone())
                .unwrap_or_default(),
            runs,
            flows: table.flows,
            ports: table.ports,
            totals,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_what_was_sent_and_not_received() {
        use crate::rx::streams::StreamTable;
        use crate::wire::signature::Signature;
        let t = Tally::of(&[(100, 6000), (50, 5000)]);
        // The receiver saw all of stream 0 and the first 40 of stream 1.
        let mut table = StreamTable::new(2, true).unwrap();
        for (stream, n) in [(0u16, 100u32), (1, 40)] {
            for seq in 0..n {
                let sig = Signature {
                    stream,
                    seq,
                    tx_ns: 1,
                };
                table.record(&sig, 60, 2, 0);
            }
        }
        let names = ["a".to_string(), "b".to_string()];
        let rx = table.report(&names, 2);
        let r = StreamsRun::new(
            "f.yaml".into(),
            ("p1 (lab:tx)".into(), "p2 (lab:rx)".into()),
            (&[0, 1], &names),
            &t,
            Some(&rx),
        );
        assert_eq!(r.streams[0].lost, Some(0));
        // The ten after its last arrival count too: no receiver saw them as holes.
        assert_eq!(
            (r.streams[1].rx_frames, r.streams[1].lost),
            (Some(40), Some(10))
        );
        assert_eq!(r.streams[1].loss_pct, Some(20.0));
        let text = r.text();
        assert!(
            text.contains("Streams:     2 from p1 (lab:tx) to p2 (lab:rx) (f.yaml)"),
            "{text}"
        );
        assert_eq!(r.unexpected, Some(0));
        // Stream 1 was sent to this port by another: with only stream 0 expected, its 40
        // frames are unexpected here.
        let r0 = r.clone().expecting(Some(&rx), &[0]);
        assert_eq!(r0.unexpected, Some(40));
        assert!(
            r0.text().contains("unexpected at p2 (lab:rx): 40 frames"),
            "{}",
            r0.text()
        );
        let none = StreamsRun::new(
            "f".into(),
            ("a".into(), "b".into()),
            (&[0], &names),
            &t,
            None,
        );
        assert_eq!(
            (none.streams[0].rx_frames, none.streams[0].lost),
            (None, None)
        );
    }

    #[test]
    fn several_queues_are_listed_with_their_streams_and_rate() {
        let names: Vec<String> = (0..3).map(|i| format!("f{i}")).collect();
        let t = Tally::of(&[(10, 600), (20, 1200), (30, 1800)]);
        let one = StreamsRun::new(
            "c".into(),
            ("a".into(), "b".into()),
            (&[0, 1, 2], &names),
            &t,
            None,
        );
        assert!(!one.text().contains("Queues:"), "one queue: no table");
        let q = |sender: &str, ids: &[u16], pps, tx_frames| QueueRun {
            sender: sender.into(),
            ids: ids.to_vec(),
            pps,
            tx_frames,
        };
        let two = one.on_queues(vec![
            q("veth-tx@0", &[2], 3000.0, 30),
            q("veth-tx@1", &[0, 1], 3000.0, 30),
        ]);
        let text = two.text();
        assert!(text.contains("\nQueues:      2 ("), "{text}");
        assert!(
            text.contains("  veth-tx@0              1       3000.0           30  2\n"),
            "{text}"
        );
        assert!(
            text.contains("  veth-tx@1              2       3000.0           30  0 1\n"),
            "{text}"
        );
        // Many ids: the first few, then how many more.
        let many = StreamsRun::new(
            "c".into(),
            ("a".into(), "b".into()),
            (&[0], &names),
            &t,
            None,
        )
        .on_queues(vec![
            q("d@0", &(0..20).collect::<Vec<_>>(), 1.0, 0),
            q("d@1", &[20], 1.0, 0),
        ]);
        assert!(many.text().contains(" 15 (+4)\n"), "{}", many.text());
    }

    #[test]
    fn ports_add_up_their_flows_and_what_no_flow_sent_them() {
        let run = |tx: &str, rx: &str, rows: &[(u16, u64, Option<u64>)], unexpected| StreamsRun {
            config: "c".into(),
            tx_port: tx.into(),
            rx_port: rx.into(),
            streams: rows
                .iter()
                .map(|&(id, sent, got)| StreamRun {
                    id,
                    name: format!("f{id}"),
                    tx_frames: sent,
                    tx_bytes: sent * 60,
                    rx_frames: got,
                    lost: got.map(|g| sent - g),
                    loss_pct: None,
                })
                .collect(),
            unexpected,
            queues: Vec::new(),
            legs_on_iface: None,
        };
        let a = run(
            "p1",
            "p2",
            &[(0, 100, Some(100)), (2, 50, Some(40))],
            Some(3),
        );
        let b = run("p2", "p1", &[(1, 70, Some(70))], Some(0));
        let p = PortsRun::new(&[&a, &b]);
        assert_eq!(p.flows.iter().map(|f| f.id).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(
            (p.flows[1].tx_port.as_str(), p.flows[1].rx_port.as_str()),
            ("p2", "p1")
        );
        assert_eq!(p.flows[2].lost, Some(10));
        let row = |name: &str| p.ports.iter().find(|r| r.port == name).unwrap().clone();
        assert_eq!(
            (
                row("p1").tx_frames,
                row("p1").rx_frames,
                row("p1").unexpected
            ),
            (150, Some(70), Some(0))
        );
        assert_eq!(
            (
                row("p2").tx_frames,
                row("p2").rx_frames,
                row("p2").unexpected
            ),
            (70, Some(140), Some(3))
        );
        // Two runs into one port: each run's receiver there saw the same 4 stray frames.
        let d = run("p5", "p7", &[(0, 10, Some(10))], Some(4));
        let e = run("p6", "p7", &[(1, 20, Some(20))], Some(4));
        let two = PortsRun::new(&[&d, &e]);
        let p7 = two.ports.iter().find(|r| r.port == "p7").unwrap();
        assert_eq!((p7.rx_frames, p7.unexpected), (Some(30), Some(4)));
        // A port no receiver counted at says so.
        let c = run("p3", "p4", &[(0, 5, None)], None);
        let q = PortsRun::new(&[&c]);
        assert_eq!((q.ports[1].rx_frames, q.ports[1].unexpected), (None, None));
        assert!(
            p.text()
                .contains("Flows:       3 from 2 ports to 2 ports\n"),
            "{}",
            p.text()
        );
    }

    #[test]
    fn a_port_sending_to_two_sends_the_sum_of_its_legs() {
        let run = |rx: &str, id: u16, sent: u64, got: u64, unexpected| StreamsRun {
            config: "c".into(),
            tx_port: "p1 (netns:n/a1)".into(),
            rx_port: rx.into(),
            streams: vec![StreamRun {
                id,
                name: format!("f{id}"),
                tx_frames: sent,
                tx_bytes: sent * 60,
                rx_frames: Some(got),
                lost: Some(sent - got),
                loss_pct: None,
            }],
            unexpected: Some(unexpected),
            queues: Vec::new(),
            legs_on_iface: None,
        };
        // Two legs of p1: flow 0 to p2, flow 1 to p3 (the bridge flooded 7 of flow 0 there).
        let a = run("p2 (netns:n/b1)", 0, 1000, 1000, 0);
        let b = run("p3 (netns:n/c1)", 1, 500, 499, 7);
        let p = PortsRun::new(&[&a, &b]);
        let rows: Vec<(&str, u64, Option<u64>, Option<u64>)> = p
            .ports
            .iter()
            .map(|r| (r.port.as_str(), r.tx_frames, r.rx_frames, r.unexpected))
            .collect();
        assert_eq!(
            rows,
            [
                ("p1 (netns:n/a1)", 1500, None, None),
                ("p2 (netns:n/b1)", 0, Some(1000), Some(0)),
                ("p3 (netns:n/c1)", 0, Some(499), Some(7)),
            ]
        );
        let ends: Vec<(&str, &str)> = p
            .flows
            .iter()
            .map(|f| (f.tx_port.as_str(), f.rx_port.as_str()))
            .collect();
        assert_eq!(
            ends,
            [
                ("p1 (netns:n/a1)", "p2 (netns:n/b1)"),
                ("p1 (netns:n/a1)", "p3 (netns:n/c1)")
            ]
        );
        let text = p.text();
        assert!(
            text.contains("Flows:       2 from 1 port to 2 ports\n"),
            "{text}"
        );
        assert!(
            text.contains("p1 (netns:n/a1) -> p3 (netns:n/c1)\n"),
            "{text}"
        );
    }
}
