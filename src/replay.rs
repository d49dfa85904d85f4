//! pcap files in `upktgen run`: `--pcap FILE` writes the frames a run would send instead of
//! sending them; `--replay FILE` sends a file's frames ([`ReplayFrames`]).

use crate::cli::RunArgs;
use crate::frames::FrameSource;
use crate::lab;
use crate::pcap::{self, PcapWriter, Record};
use crate::pg::generate::DeviceInfo;
use crate::pg::{DevConfig, Flag};
use crate::stream::timeval;
use crate::wire::MacAddr;
use anyhow::{Context, Result, anyhow, bail};
use std::io::BufWriter;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// The MTU of the lab's veth pair (the kernel's default).
pub const LAB_MTU: u32 = 1500;

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

/// How replayed frames are paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplayTiming {
    /// On the run's rate options (--ratep/--delay/--burst; as fast as possible without).
    Rate,
    /// The file's own gaps between records, scaled by --replay-speed.
    File,
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

impl ReplayFrames {
    /// The frames of `records`; refuses an empty file, frames cut by the capture's snap
    /// length and frames shorter than an Ethernet header, naming the record (1-based).
    pub fn new(records: &[Record]) -> Result<Self, String> {
        if records.is_empty() {
            return Err("no frames in the file".into());
        }
        let mut data = Vec::with_capacity(records.iter().map(|r| r.data.len()).sum());
        let mut spans = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            let n = i + 1;
            if r.is_cut() {
                return Err(format!(
                    "record {n} holds {} of the frame's {} bytes (captured with a snap length): replaying it would send a different frame",
                    r.data.len(),
                    r.orig_len
                ));
            }
            if r.data.len() < crate::wire::ETH_HLEN {
                return Err(format!(
                    "record {n} is {} bytes, shorter than an Ethernet header (14)",
                    r.data.len()
                ));
            }
            spans.push((data.len(), r.data.len()));
            data.extend_from_slice(&r.data);
        }
        let max_len = spans.iter().map(|s| s.1).max().unwrap_or(0);
        let varying = spans.iter().any(|s| s.1 != spans[0].1);
        let t0 = records[0].ts_ns;
        let mut last = 0;
        let times = records
            .iter()
            .map(|r| {
                last = last.max(r.ts_ns.saturating_sub(t0));
                last
            })
            .collect();
        Ok(ReplayFrames {
            data,
            spans,
            next: 0,
            cur: (0, 0),
            max_len,
            bytes: 0,
            varying,
            times,
            timing: None,
        })
    }

    /// Paces the frames by the file's timestamps: record i is due (t_i - t_0) / speed after
    /// the start of its pass, and a pass lasts the file's span plus its mean gap (so the
    /// loop back to the first frame is one ordinary gap). A record stamped earlier than the
    /// one before it is due with it.
    pub fn follow_file_timing(&mut self, speed: f64) -> Result<(), String> {
        if !(speed.is_finite() && speed > 0.0) {
            return Err(format!("--replay-speed {speed}: must be a number above 0"));
        }
        let n = self.times.len();
        if n < 2 {
            return Err("--replay-timing file: a file of one frame has no gaps to follow; pace it with --ratep or --delay".into());
        }
        let span = self.times[n - 1];
        let scale = |t: u64| (t as f64 / speed).round().min(u64::MAX as f64) as u64;
        let period = scale(span.saturating_add(span / (n as u64 - 1)));
        self.timing = Some((self.times.iter().map(|&t| scale(t)).collect(), period));
        Ok(())
    }

    /// Reads and checks a pcap file; errors start with its name.
    pub fn load(path: &Path) -> Result<Self> {
        let p = pcap::read_file(path).map_err(|e| anyhow!(e))?;
        ReplayFrames::new(&p.records).map_err(|e| anyhow!("{}: {e}", path.display()))
    }

    /// Frames in the file.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Refuses frames the device cannot carry: longer than MTU + 14 (+ 4 per VLAN tag).
    pub fn check_fits(&self, mtu: u32, dev: &str) -> Result<()> {
        for (i, &(off, len)) in self.spans.iter().enumerate() {
            let tags = vlan_tags(&self.data[off..off + len]);
            let room = mtu as usize + crate::wire::ETH_HLEN + 4 * tags;
            if len > room {
                bail!(
                    "--replay: record {} is a {len}-byte frame; {dev} carries at most {mtu} MTU + 14-byte Ethernet header{} = {room}",
                    i + 1,
                    if tags > 0 { " + VLAN tags" } else { "" }
                );
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
    fn write(&mut self, buf: &mut [u8], _tv: (u32, u32)) {
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
    fn due_ns(&self, k: u64) -> Option<u64> {
        let (offsets, period) = self.timing.as_ref()?;
        let n = offsets.len() as u64;
        Some(
            (k / n)
                .saturating_mul(*period)
                .saturating_add(offsets[(k % n) as usize]),
        )
    }
}

/// Option checks for --replay, made before anything needs privileges: pktgen's frame
/// parameters do not apply to recorded frames.
pub fn check_replay_args(a: &RunArgs) -> Result<()> {
    if a.replay.is_none() {
        return Ok(());
    }
    let follow = a.replay_timing == Some(ReplayTiming::File);
    if a.replay_speed.is_some() && !follow {
        bail!("--replay-speed: scales the file's gaps; it goes with --replay-timing file");
    }
    if follow
        && let Some((name, _)) =
            a.pg.items
                .iter()
                .find(|(n, _)| ["delay", "ratep", "burst"].contains(n))
    {
        bail!(
            "--{name}: --replay-timing file paces the frames by the file's timestamps; give one or the other"
        );
    }
    for (name, _) in &a.pg.items {
        if *name == "rate" {
            bail!(
                "--rate: with --replay the frames' sizes are the file's; give the rate in packets per second (--ratep) or as a gap (--delay)"
            );
        }
        if !REPLAY_PARAMS.contains(name) {
            bail!(
                "--{}: --replay sends the file's frames as recorded; frame parameters do not apply (with --replay: {})",
                name.replace('_', "-"),
                REPLAY_PARAMS
                    .iter()
                    .map(|p| format!("--{}", p.replace('_', "-")))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(())
}

/// --replay's frames, read, checked and paced as the options say (None without --replay).
pub fn from_args(a: &RunArgs) -> Result<Option<ReplayFrames>> {
    let Some(path) = &a.replay else {
        return Ok(None);
    };
    let mut r = ReplayFrames::load(path)?;
    if a.replay_timing == Some(ReplayTiming::File) {
        r.follow_file_timing(a.replay_speed.unwrap_or(1.0))
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    }
    Ok(Some(r))
}

/// When the `k`-th frame (from 0) is due, in ns after the start: on the run's schedule
/// (tick `k / burst` at `tick * burst * delay`, frames of one tick 1 ns apart), or 1 ns
/// apart at delay 0.
pub fn schedule_ns(k: u64, delay_ns: u64, burst: u32) -> u64 {
    let burst = u64::from(burst.max(1));
    if delay_ns == 0 {
        return k;
    }
    (k / burst)
        .saturating_mul(burst)
        .saturating_mul(delay_ns)
        .saturating_add(k % burst)
}

/// The device defaults for --pcap, read without privileges: the lab's sending end, or
/// --dev's MAC and MTU from sysfs (and its IPv4 address when a packet socket may be opened).
fn pcap_device(a: &RunArgs, cfg: &DevConfig) -> (DeviceInfo, u32, String) {
    let lab_info = DeviceInfo {
        mac: lab::TX_MAC,
        ipv4: Some(lab::TX_IP),
        tx_queues: 1,
    };
    let Some(name) = a.dev.as_deref() else {
        return (lab_info, LAB_MTU, lab::TX_IF.to_string());
    };
    let sys = |f: &str| std::fs::read_to_string(format!("/sys/class/net/{name}/{f}"));
    let mac = sys("address")
        .ok()
        .and_then(|s| s.trim().parse::<MacAddr>().ok());
    let mtu = sys("mtu").ok().and_then(|s| s.trim().parse::<u32>().ok());
    let (Some(mac), Some(mtu)) = (mac, mtu) else {
        crate::errln!(
            "upktgen: note: --dev {name}: no such interface here; the source MAC and IPv4 address default to the lab's ({}, {}) unless --src-mac/--src give them",
            lab::TX_MAC,
            lab::TX_IP
        );
        return (lab_info, LAB_MTU, name.to_string());
    };
    let ipv4 = crate::sys::if_nametoindex(name)
        .and_then(crate::sys::packet::PacketSocket::open)
        .and_then(|s| s.if_addr4(name))
        .ok()
        .flatten();
    if ipv4.is_none() && cfg.src_min.is_empty() && !cfg.has(Flag::Ipv6) {
        crate::errln!(
            "upktgen: note: --dev {name}: its IPv4 address is unknown (none, or reading it needs CAP_NET_RAW): the source address is 0.0.0.0 unless --src gives one"
        );
    }
    (
        DeviceInfo {
            mac,
            ipv4,
            tx_queues: 1,
        },
        mtu,
        name.to_string(),
    )
}

/// `run --pcap FILE`: writes the frames the run would send, stamped on its schedule from
/// the wall clock at the start, and prints one line on standard error. Needs no privilege.
pub fn write_pcap(
    a: &RunArgs,
    cfg: &DevConfig,
    path: &Path,
    stop: &AtomicBool,
) -> Result<crate::app::Exit> {
    let n = a.pcap_count.unwrap_or(cfg.count);
    if n == 0 {
        bail!(
            "--pcap: count 0 means \"until stopped\"; give --pcap-count N (or --count N) for the number of frames to write"
        );
    }
    if cfg.delay == u64::MAX {
        bail!(
            "--pcap: delay {} never sends: there is nothing to write",
            cfg.delay
        );
    }
    let (info, mtu, dev) = pcap_device(a, cfg);
    crate::app::check_frame_fits(cfg, mtu, &dev)?;
    let seed = a
        .seed
        .unwrap_or_else(|| crate::sys::realtime_ns() ^ u64::from(std::process::id()));
    let mut frames = crate::frames::for_config(cfg, &info, seed, a.cpu.unwrap_or(0) as u16)
        .map_err(|e| anyhow!(e))?;
    for note in &cfg.notes {
        crate::errln!("upktgen: note: {note}");
    }
    let file = std::fs::File::create(path)
        .with_context(|| format!("--pcap {}: cannot create the file", path.display()))?;
    let stamps = !cfg.has(Flag::NoTimestamp);
    let write_all = || -> std::io::Result<(u64, u64, bool)> {
        let mut w = PcapWriter::new(BufWriter::with_capacity(1 << 20, file))?;
        let start = crate::sys::realtime_ns();
        let mut buf = frames.prefill();
        let mut bytes: u64 = 0;
        let mut interrupted = false;
        for k in 0..n {
            if k % 4096 == 0 && stop.load(Ordering::Relaxed) {
                interrupted = true;
                break;
            }
            let t = start.saturating_add(schedule_ns(k, cfg.delay, cfg.burst));
            let len = frames.advance();
            frames.write(&mut buf[..len], if stamps { timeval(t) } else { (0, 0) });
            frames.sent();
            w.write(t, &buf[..len])?;
            bytes += len as u64;
        }
        let written = w.records();
        w.finish()?;
        Ok((written, bytes, interrupted))
    };
    // A regular file cut short by an error is removed (not a device or a pipe given as
    // FILE); one cut short by Ctrl-C is whole up to there and kept.
    let (written, bytes, interrupted) = write_all().map_err(|e| {
        let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
        if regular && std::fs::remove_file(path).is_ok() {
            anyhow!(
                "writing {}: {e} (the partial file is removed)",
                path.display()
            )
        } else {
            anyhow!("writing {}: {e}", path.display())
        }
    })?;
    let spacing = if cfg.delay == 0 {
        "1 ns apart at delay 0".to_string()
    } else {
        format!(
            "on the schedule of delay {} ns, burst {}",
            cfg.delay,
            cfg.burst.max(1)
        )
    };
    crate::errln!(
        "upktgen: wrote {written} frames ({bytes} bytes) to {} (pcap, ns timestamps {spacing}){}",
        path.display(),
        if interrupted { "; interrupted" } else { "" }
    );
    Ok(if interrupted {
        crate::app::Exit::Interrupted
    } else {
        crate::app::Exit::Done
    })
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
                src.write(&mut buf[..len], (1, 2));
                src.sent();
                buf[..len].to_vec()
            })
            .collect()
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
        assert!(ReplayFrames::new(&[]).unwrap_err().contains("no frames"));
        let cut = Record {
            ts_ns: 0,
            orig_len: 1514,
            data: vec![0; 96],
        };
        let e = ReplayFrames::new(&[rec(vec![0; 60]), cut]).err().unwrap();
        assert!(
            e.starts_with("record 2 holds 96 of the frame's 1514 bytes"),
            "{e}"
        );
        let e = ReplayFrames::new(&[rec(vec![0; 13])]).err().unwrap();
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
    fn schedule() {
        assert_eq!(
            (0..4).map(|k| schedule_ns(k, 0, 1)).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        assert_eq!(
            (0..4).map(|k| schedule_ns(k, 1000, 1)).collect::<Vec<_>>(),
            [0, 1000, 2000, 3000]
        );
        // Burst 2 at delay 1000: a tick of two frames every 2000 ns, the rate unchanged.
        assert_eq!(
            (0..5).map(|k| schedule_ns(k, 1000, 2)).collect::<Vec<_>>(),
            [0, 1, 2000, 2001, 4000]
        );
        assert_eq!(schedule_ns(u64::MAX, u64::MAX - 1, 1), u64::MAX);
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
                .contains("one frame")
        );
    }

    #[test]
    fn frame_parameters_are_refused_with_replay() {
        use crate::cli::Cli;
        use clap::Parser;
        let parse = |args: &[&str]| {
            let c = Cli::try_parse_from(args).unwrap();
            check_replay_args(&c.run)
        };
        parse(&["upktgen", "--replay", "f", "--count", "5", "--ratep", "100"]).unwrap();
        let e = parse(&["upktgen", "--replay", "f", "--pkt-size", "100"]).unwrap_err();
        assert!(
            e.to_string().starts_with("--pkt-size: --replay sends"),
            "{e}"
        );
        let e = parse(&["upktgen", "--replay", "f", "--rate", "100"]).unwrap_err();
        assert!(e.to_string().contains("--ratep"), "{e}");
        parse(&["upktgen", "--pkt-size", "100"]).unwrap();
        parse(&[
            "upktgen",
            "--replay",
            "f",
            "--replay-timing",
            "file",
            "--replay-speed",
            "2",
        ])
        .unwrap();
        let e = parse(&[
            "upktgen",
            "--replay",
            "f",
            "--replay-timing",
            "file",
            "--ratep",
            "5",
        ])
        .unwrap_err();
        assert!(
            e.to_string().starts_with("--ratep: --replay-timing file"),
            "{e}"
        );
        let e = parse(&["upktgen", "--replay", "f", "--replay-speed", "2"]).unwrap_err();
        assert!(
            e.to_string().contains("goes with --replay-timing file"),
            "{e}"
        );
    }
}
