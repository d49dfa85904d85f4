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

/// The streams of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamsRun {
    /// The config file.
    pub config: String,
    /// The transmitting and the receiving port, as `name (location)`.
    pub tx_port: String,
    pub rx_port: String,
    pub streams: Vec<StreamRun>,
}

impl StreamsRun {
    /// Stream `i` of `names` as `tally` counted it sent and `rx` (the receiving port's
    /// report, when there is one) received it.
    pub fn new(
        config: String,
        ports: (String, String),
        names: &[String],
        tally: &Tally,
        rx: Option<&StreamsReport>,
    ) -> StreamsRun {
        let streams = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let (tx_frames, tx_bytes) = tally.get(i);
                let rx_frames = rx.map(|r| {
                    r.streams
                        .iter()
                        .find(|s| usize::from(s.id) == i)
                        .map_or(0, |s| s.seq.received)
                });
                let lost = rx_frames.map(|r| tx_frames.saturating_sub(r));
                StreamRun {
                    id: i as u16,
                    name: name.clone(),
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
        }
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
        s
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
            &names,
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
        let none = StreamsRun::new("f".into(), ("a".into(), "b".into()), &names[..1], &t, None);
        assert_eq!(
            (none.streams[0].rx_frames, none.streams[0].lost),
            (None, None)
        );
    }
}
