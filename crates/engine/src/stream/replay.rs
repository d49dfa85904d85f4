//! `upktgen run --replay FILE`: a pcap file's frames as a frame source ([`ReplayFrames`]).
//! (`--pcap FILE`, the other way, is a sink of the send loop: [`crate::backend::pcap`].)

use super::FrameSource;
use crate::pcap::{self, Record};
use std::path::{Path, PathBuf};

/// pktgen parameters that still mean something when the frames come from a file: how many,
/// how fast, and how they are handed to the kernel.
pub const REPLAY_PARAMS: &[&str] = &[
    "count",
    "delay",
    "ratep",
    "burst",
    "queue_map_min",
    "skb_priority",
    "xmit_mode",
    "clone_skb",
    "node",
];

/// A file's frames, sent in order and looping; each is copied whole into the buffer (a
/// buffer holds whatever an earlier, longer frame left past its end). Nothing is rewritten:
/// not the sequence numbers, not the timestamps.
#[derive(Debug, Clone)]
pub struct ReplayFrames {
    /// The frames back to back.
    data: Vec<u8>,
    /// (offset, length) of each frame in `data`.
    spans: Vec<(usize, usize)>,
    next: usize,
    cur: (usize, usize),
    max_len: usize,
    bytes: u64,
    varying: bool,
    /// Each record's time after the first record's, in ns (never going back).
    times: Vec<u64>,
    /// With `--replay-timing file`: when each frame is due in a pass over the file, and the
    /// length of a pass.
    timing: Option<(Vec<u64>, u64)>,
}

crate::choice! {
    /// How replayed frames are paced.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ReplayTiming {
        /// On the run's rate options (--ratep/--delay/--burst; as fast as possible without).
        Rate = "rate",
        /// The file's own gaps between records, scaled by --replay-speed.
        File = "file",
    }
}

/// VLAN tags (802.1Q or 802.1ad) at the head of a frame, up to two: each lets a frame be 4
/// bytes longer than MTU + 14.
fn vlan_tags(f: &[u8]) -> usize {
    let tpid = |at: usize| {
        f.get(at..at + 2)
            .is_some_and(|t| t == [0x81, 0x00] || t == [0x88, 0xa8])
    };
    match (tpid(12), tpid(16)) {
        (true, true) => 2,
        (true, false) => 1,
        _ => 0,
    }
}

/// Why a pcap file's frames cannot be replayed, or not as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplayError {
    /// Record `n` (1-based) keeps `kept` of the frame's `len` bytes.
    #[error(
        "record {n} holds {kept} of the frame's {len} bytes (captured with a snap length): replaying it would send a different frame"
    )]
    Cut { n: usize, kept: usize, len: u32 },
    #[error("record {n} is {len} bytes, shorter than an Ethernet header (14)")]
    Short { n: usize, len: usize },
    #[error("no frames in the file")]
    Empty,
    #[error("--replay-speed {0}: must be a number above 0")]
    BadSpeed(f64),
    #[error(
        "--replay-timing file: a file of one frame has no gaps to follow; pace it with --ratep or --delay"
    )]
    NoGaps,
    /// Record `n` (1-based) is longer than device `dev` carries (`room` bytes: its MTU, the
    /// Ethernet header and `tags` VLAN tags).
    #[error(
        "--replay: record {n} is a {len}-byte frame; {dev} carries at most {mtu} MTU + 14-byte Ethernet header{} = {room}",
        if *.tags > 0 { " + VLAN tags" } else { "" }
    )]
    TooLong {
        n: usize,
        len: usize,
        dev: String,
        mtu: u32,
        tags: usize,
        room: usize,
    },
}

/// A pcap file that cannot be replayed: its name, then why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    File(#[from] pcap::FileError),
    #[error("{}: {error}", .path.display())]
    Frames { path: PathBuf, error: ReplayError },
}

/// [`ReplayFrames`] built record by record, each checked as it comes.
#[derive(Default)]
struct Builder {
    data: Vec<u8>,
    spans: Vec<(usize, usize)>,
    t0: Option<u64>,
    last: u64,
    times: Vec<u64>,
}

impl Builder {
    /// Takes record `r`, whose last `fcs` bytes are its FCS (which the NIC appends again,
    /// so it is not sent).
    fn push(&mut self, r: &Record, fcs: usize) -> Result<(), ReplayError> {
        let n = self.spans.len() + 1;
        if r.is_cut() {
            return Err(ReplayError::Cut {
                n,
                kept: r.data.len(),
                len: r.orig_len,
            });
        }
        let data = &r.data[..r.data.len().saturating_sub(fcs)];
        if data.len() < crate::wire::ETH_HLEN {
            return Err(ReplayError::Short { n, len: data.len() });
        }
        self.spans.push((self.data.len(), data.len()));
        self.data.extend_from_slice(data);
        let t0 = *self.t0.get_or_insert(r.ts_ns);
        self.last = self.last.max(r.ts_ns.saturating_sub(t0));
        self.times.push(self.last);
        Ok(())
    }

    fn finish(self) -> Result<ReplayFrames, ReplayError> {
        if self.spans.is_empty() {
            return Err(ReplayError::Empty);
        }
        let max_len = self.spans.iter().map(|s| s.1).max().unwrap_or(0);
        let varying = self.spans.iter().any(|s| s.1 != self.spans[0].1);
        Ok(ReplayFrames {
            data: self.data,
            spans: self.spans,
            next: 0,
            cur: (0, 0),
            max_len,
            bytes: 0,
            varying,
            times: self.times,
            timing: None,
        })
    }
}

impl ReplayFrames {
    /// The frames of `records`; refuses an empty file, frames cut by the capture's snap
    /// length and frames shorter than an Ethernet header, naming the record (1-based).
    pub fn new(records: &[Record]) -> Result<Self, ReplayError> {
        let mut b = Builder::default();
        for r in records {
            b.push(r, 0)?;
        }
        b.finish()
    }

    /// Paces the frames by the file's timestamps: record i is due (t_i - t_0) / speed after
    /// the start of its pass, and a pass lasts the file's span plus its mean gap (so the
    /// loop back to the first frame is one ordinary gap). A record stamped earlier than the
    /// one before it is due with it.
    pub fn follow_file_timing(&mut self, speed: f64) -> Result<(), ReplayError> {
        if !(speed.is_finite() && speed > 0.0) {
            return Err(ReplayError::BadSpeed(speed));
        }
        let n = self.times.len();
        if n < 2 {
            return Err(ReplayError::NoGaps);
        }
        let span = self.times[n - 1];
        let scale = |t: u64| (t as f64 / speed).round().min(u64::MAX as f64) as u64;
        let period = scale(span.saturating_add(span / (n as u64 - 1)));
        self.timing = Some((self.times.iter().map(|&t| scale(t)).collect(), period));
        Ok(())
    }

    /// Reads and checks a pcap file; errors start with its name.
    /// The file is read as a stream (at most [`pcap::MAX_REPLAY`] bytes), each record
    /// checked as it comes.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let frames = |error| LoadError::Frames {
            path: path.to_path_buf(),
            error,
        };
        let mut r = pcap::open(path)?;
        let mut b = Builder::default();
        while let Some(rec) = r.next_record().map_err(|error| pcap::FileError {
            path: path.to_path_buf(),
            error,
        })? {
            b.push(&rec, r.fcs_len as usize).map_err(frames)?;
        }
        b.finish().map_err(frames)
    }

    /// Frames in the file.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Refuses frames the device cannot carry: longer than MTU + 14 (+ 4 per VLAN tag).
    pub fn check_fits(&self, mtu: u32, dev: &str) -> Result<(), ReplayError> {
        for (i, &(off, len)) in self.spans.iter().enumerate() {
            let tags = vlan_tags(&self.data[off..off + len]);
            let room = mtu as usize + crate::wire::ETH_HLEN + 4 * tags;
            if len > room {
                return Err(ReplayError::TooLong {
                    n: i + 1,
                    len,
                    dev: dev.to_string(),
                    mtu,
                    tags,
                    room,
                });
            }
        }
        Ok(())
    }

    /// Frames to send: `count` (0 = no limit) capped at `loops` passes over the file
    /// (0 = no limit); 0 = until Ctrl-C or --duration.
    pub fn count(&self, count: u64, loops: u64) -> u64 {
        let passes = loops.saturating_mul(self.spans.len() as u64);
        match (count, passes) {
            (0, p) => p,
            (c, 0) => c,
            (c, p) => c.min(p),
        }
    }
}

impl FrameSource for ReplayFrames {
    fn prefill(&self) -> Vec<u8> {
        let &(off, len) = self.spans.iter().max_by_key(|s| s.1).expect("not empty");
        self.data[off..off + len].to_vec()
    }

    #[inline]
    fn advance(&mut self) -> usize {
        self.cur = self.spans[self.next];
        self.cur.1
    }

    #[inline]
    fn write(&mut self, buf: &mut [u8], _stamp: super::Stamp) {
        let (off, len) = self.cur;
        buf.copy_from_slice(&self.data[off..off + len]);
    }

    #[inline]
    fn sent(&mut self) {
        self.bytes += self.cur.1 as u64;
        self.next += 1;
        if self.next == self.spans.len() {
            self.next = 0;
        }
    }

    fn pkt_size(&self) -> u32 {
        (if self.cur.1 == 0 {
            self.max_len
        } else {
            self.cur.1
        }) as u32
    }

    fn imix_bytes(&self) -> Option<u64> {
        self.varying.then_some(self.bytes)
    }

    #[inline]
    fn due_ns(&mut self, k: u64) -> Option<u64> {
        let (offsets, period) = self.timing.as_ref()?;
        let n = offsets.len() as u64;
        Some(
            (k / n)
                .saturating_mul(*period)
                .saturating_add(offsets[(k % n) as usize]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(data: Vec<u8>) -> Record {
        Record {
            ts_ns: 0,
            orig_len: data.len() as u32,
            data,
        }
    }

    fn sent(src: &mut dyn FrameSource, n: usize) -> Vec<Vec<u8>> {
        let mut buf = src.prefill();
        (0..n)
            .map(|_| {
                let len = src.advance();
                src.write(&mut buf[..len], crate::stream::Stamp::tv(1, 2));
                src.sent();
                buf[..len].to_vec()
            })
            .collect()
    }

    #[test]
    fn a_files_fcs_is_not_sent() {
        let path =
            std::env::temp_dir().join(format!("upktgen-replay-fcs-{}.pcap", std::process::id()));
        let mut w = pcap::PcapWriter::with_fcs(Vec::new(), 4).unwrap();
        let frame = crate::wire::fcs::on_the_wire(&[9u8; 70]);
        w.write(1, &frame).unwrap();
        std::fs::write(&path, w.finish().unwrap()).unwrap();
        let r = ReplayFrames::load(&path);
        let _ = std::fs::remove_file(&path);
        let mut r = r.unwrap();
        assert_eq!(sent(&mut r, 1), [vec![9u8; 70]]);
    }

    #[test]
    fn replays_whole_frames_in_order_looping() {
        let files = [vec![1u8; 100], vec![2u8; 60], vec![3u8; 1514]];
        let mut r = ReplayFrames::new(&files.iter().cloned().map(rec).collect::<Vec<_>>()).unwrap();
        assert_eq!(r.prefill(), files[2], "the largest frame");
        let got = sent(&mut r, 7);
        // The short frame after the long one is exactly its own bytes (a shared buffer
        // holds what the longer frame left past the end).
        let want: Vec<Vec<u8>> = (0..7).map(|i| files[i % 3].clone()).collect();
        assert_eq!(got, want);
        assert_eq!(r.imix_bytes(), Some(2 * 1674 + 100));
        assert_eq!(r.pkt_size(), 100);
    }

    #[test]
    fn bad_files_name_the_record() {
        assert!(
            ReplayFrames::new(&[])
                .unwrap_err()
                .to_string()
                .contains("no frames")
        );
        let cut = Record {
            ts_ns: 0,
            orig_len: 1514,
            data: vec![0; 96],
        };
        let e = ReplayFrames::new(&[rec(vec![0; 60]), cut])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("record 2 holds 96 of the frame's 1514 bytes"),
            "{e}"
        );
        let e = ReplayFrames::new(&[rec(vec![0; 13])])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("record 1 is 13 bytes"), "{e}");
    }

    #[test]
    fn frames_must_fit_the_mtu_vlan_tags_allowed() {
        let mut tagged = vec![0u8; 1518];
        tagged[12..14].copy_from_slice(&[0x81, 0x00]);
        let mut qinq = vec![0u8; 1522];
        qinq[12..14].copy_from_slice(&[0x88, 0xa8]);
        qinq[16..18].copy_from_slice(&[0x81, 0x00]);
        let ok = ReplayFrames::new(&[rec(vec![0; 1514]), rec(tagged), rec(qinq)]).unwrap();
        ok.check_fits(1500, "veth0").unwrap();
        let big = ReplayFrames::new(&[rec(vec![0; 60]), rec(vec![0; 1515])]).unwrap();
        let e = big.check_fits(1500, "veth0").unwrap_err().to_string();
        assert!(e.contains("record 2 is a 1515-byte frame"), "{e}");
        big.check_fits(9000, "veth0").unwrap();
    }

    #[test]
    fn count_and_loops() {
        let r = ReplayFrames::new(&[rec(vec![0; 60]), rec(vec![0; 60]), rec(vec![0; 60])]).unwrap();
        assert_eq!(r.count(0, 0), 0, "forever");
        assert_eq!(r.count(0, 2), 6, "the file twice");
        assert_eq!(r.count(4, 2), 4, "count caps");
        assert_eq!(r.count(10, 2), 6, "loops cap");
        assert_eq!(r.count(10, 0), 10);
        assert_eq!(r.imix_bytes(), None, "one size");
    }

    #[test]
    fn file_timing_follows_the_gaps_scaled_and_loops() {
        let at = |t: u64| Record {
            ts_ns: t,
            orig_len: 60,
            data: vec![0; 60],
        };
        // Gaps of 1 ms and 3 ms; a record stamped before its predecessor goes with it.
        let recs = [at(5_000_000), at(6_000_000), at(9_000_000), at(8_000_000)];
        let mut r = ReplayFrames::new(&recs).unwrap();
        assert_eq!(r.due_ns(0), None, "the rate options pace by default");
        r.follow_file_timing(1.0).unwrap();
        let due: Vec<u64> = (0..6).map(|k| r.due_ns(k).unwrap()).collect();
        // A pass is the span (4 ms) plus the mean gap (4 ms / 3).
        let pass = 4_000_000 + 1_333_333;
        assert_eq!(
            due,
            [0, 1_000_000, 4_000_000, 4_000_000, pass, pass + 1_000_000]
        );
        r.follow_file_timing(2.0).unwrap();
        assert_eq!(r.due_ns(2), Some(2_000_000), "twice as fast");
        r.follow_file_timing(0.5).unwrap();
        assert_eq!(r.due_ns(1), Some(2_000_000), "half speed");
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(r.follow_file_timing(bad).is_err(), "{bad}");
        }
        let mut one = ReplayFrames::new(&[at(1)]).unwrap();
        assert!(
            one.follow_file_timing(1.0)
                .unwrap_err()
                .to_string()
                .contains("one frame")
        );
    }
}
