//! The frame stage: where the sender's frames come from.
//!
//! Three sources: [`FastFrames`] ([`fast`]) patches only the bytes that change in the
//! commonest stream (IPv4, fixed size and addresses, sequential ports) into buffers
//! prefilled once; [`PgFrames`] ([`walk`]) runs the full pktgen walk
//! ([`crate::pg::generate`]) and writes every header per packet (VLAN, MPLS, IPv6, ranges,
//! random fields, flows, IMIX, sizes that vary); [`ReplayFrames`] ([`replay`]) sends a pcap
//! file's frames. [`for_config`] picks the fast one whenever it produces the same frames as
//! the walk. Every source is a [`FrameSource`]; [`Frames`] is the one chosen for a run.
//!
//! The stream engine (issue 23) is built beside them: [`spec`] holds the model of a stream
//! (headers whose fields are patterns, sizes, rate, length, start delay), [`build`] a
//! stream's frames (a template, then per packet the varying bytes, the signature and the
//! checksums), and [`timeline`] the schedule of one transmit queue's streams by deadline.

pub mod ahead;
pub mod build;
pub mod devices;
pub mod fast;
pub mod multi;
pub mod replay;
pub mod spec;
pub mod timeline;
pub mod walk;

pub use fast::{FastFrames, PortRange, Stream, fast_path_fits, timeval};
pub use replay::{ReplayError, ReplayFrames};
pub use walk::PgFrames;

use crate::pg::generate::{DeviceInfo, Generator, Layout};
use crate::pg::{DevConfig, Flag, StartError};
use crate::wire::{FrameSizeError, FrameSpec, MacAddr, Udp4Template};

/// A stream of frames for the sender.
pub trait FrameSource: Send {
    /// What every buffer is filled with once: the largest frame, headers and zero padding.
    fn prefill(&self) -> Vec<u8>;
    /// Moves to the next packet and returns its length (at most the prefill's).
    fn advance(&mut self) -> usize;
    /// Writes the current packet into `buf` (exactly the length `advance` returned, holding
    /// the prefill's bytes or an earlier packet of this stream), stamped with `stamp`.
    fn write(&mut self, buf: &mut [u8], stamp: Stamp);
    /// Marks the current packet sent (the sequence number and IP id move on).
    fn sent(&mut self);
    /// pktgen's `cur_pkt_size` for the Result line.
    fn pkt_size(&self) -> u32;
    /// With IMIX: bytes of all frames produced (the Result line's bps comes from them).
    fn imix_bytes(&self) -> Option<u64>;
    /// The walk's state for a `Current:` display, when there is one.
    fn generator(&self) -> Option<&Generator> {
        None
    }
    /// The smallest and the largest frame when they differ across the run's frames (the
    /// Result line then reads `(MIN..MAXbyte,...)`).
    fn size_range(&self) -> Option<(u32, u32)> {
        None
    }
    /// For a source with its own timing (`--replay-timing file`, streams): when the `k`-th
    /// frame of the run (from 0) is due, in ns after the start; `u64::MAX`: there is no
    /// frame `k` (the source has ended, and so does the run). None: the run's delay/burst
    /// schedule.
    fn due_ns(&mut self, _k: u64) -> Option<u64> {
        None
    }
}

/// The time a batch of frames is stamped with, taken once per batch: CLOCK_REALTIME in ns
/// (the stream signature's), and as pktgen's header writes it (seconds, microseconds). All
/// zero with NO_TIMESTAMP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    pub ns: u64,
    pub tv: (u32, u32),
}

impl Stamp {
    /// The stamp of the instant `realtime_ns`.
    pub fn at(realtime_ns: u64) -> Stamp {
        Stamp {
            ns: realtime_ns,
            tv: timeval(realtime_ns),
        }
    }

    /// A stamp of pktgen's header fields alone (the tests' frames).
    pub fn tv(sec: u32, usec: u32) -> Stamp {
        Stamp {
            ns: 0,
            tv: (sec, usec),
        }
    }
}

/// Either source, chosen once per run; dispatching on it is a predictable branch rather
/// than a virtual call per packet.
pub enum Frames {
    Fast(FastFrames),
    Pg(Box<PgFrames>),
    /// A pcap file's frames (`--replay`).
    Replay(Box<ReplayFrames>),
    /// Many streams on one queue, by their deadlines (`run --config`).
    Multi(Box<multi::MultiStream>),
    /// A kpktgend thread's devices on one timeline (a script's `eth0@0`, `eth0@1`).
    Devices(Box<devices::DeviceTimeline>),
}

macro_rules! each {
    ($self:ident, $f:ident => $e:expr) => {
        match $self {
            Frames::Fast($f) => $e,
            Frames::Pg($f) => $e,
            Frames::Replay($f) => $e,
            Frames::Multi($f) => $e,
            Frames::Devices($f) => $e,
        }
    };
}

impl FrameSource for Frames {
    fn prefill(&self) -> Vec<u8> {
        each!(self, f => f.prefill())
    }
    #[inline]
    fn advance(&mut self) -> usize {
        each!(self, f => f.advance())
    }
    fn size_range(&self) -> Option<(u32, u32)> {
        each!(self, f => f.size_range())
    }
    #[inline]
    fn write(&mut self, buf: &mut [u8], stamp: Stamp) {
        each!(self, f => f.write(buf, stamp))
    }
    #[inline]
    fn sent(&mut self) {
        each!(self, f => f.sent())
    }
    fn pkt_size(&self) -> u32 {
        each!(self, f => f.pkt_size())
    }
    fn imix_bytes(&self) -> Option<u64> {
        each!(self, f => f.imix_bytes())
    }
    fn generator(&self) -> Option<&Generator> {
        each!(self, f => f.generator())
    }
    #[inline]
    fn due_ns(&mut self, k: u64) -> Option<u64> {
        each!(self, f => f.due_ns(k))
    }
}

/// Why a configuration's frames cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramesError {
    #[error(transparent)]
    Start(#[from] StartError),
    #[error(transparent)]
    Size(#[from] FrameSizeError),
}

/// The frame source for a configuration on a device; `seed` drives the random draws.
pub fn for_config(
    c: &DevConfig,
    dev: &DeviceInfo,
    seed: u64,
    cpu: u16,
) -> Result<Frames, FramesError> {
    // Built first in any case: it checks the configuration and resolves the defaults.
    let walk = Generator::new(c, dev, seed)?;
    if fast_path_fits(c) {
        let template = Udp4Template::new(&FrameSpec {
            dst_mac: MacAddr(walk.dst_mac),
            src_mac: MacAddr(walk.src_mac),
            src_ip: walk.cur_saddr.into(),
            dst_ip: walk.cur_daddr.into(),
            tos: c.tos,
            pkt_size: c.min_pkt_size as usize,
            udp_csum: c.has(Flag::Udpcsum),
        })?;
        let stream = Stream::new(
            PortRange::new(c.udp_src_min, c.udp_src_max),
            PortRange::new(c.udp_dst_min, c.udp_dst_max),
        );
        return Ok(Frames::Fast(FastFrames::new(template, stream)));
    }
    let layout = Layout::new(c);
    let max_len = c.max_frame_len().max(layout.min_frame());
    Ok(Frames::Pg(Box::new(PgFrames::new(
        layout, walk, max_len, cpu,
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> DeviceInfo {
        DeviceInfo {
            mac: "02:00:00:99:00:01".parse().unwrap(),
            ipv4: Some("10.99.0.1".parse().unwrap()),
            tx_queues: 1,
        }
    }

    fn frames(src: &mut dyn FrameSource, n: usize) -> Vec<Vec<u8>> {
        let mut buf = src.prefill();
        (0..n)
            .map(|i| {
                let len = src.advance();
                src.write(&mut buf[..len], Stamp::tv(1000 + i as u32, 7));
                src.sent();
                buf[..len].to_vec()
            })
            .collect()
    }

    /// The fast path and the full walk make the same bytes where the fast path is used.
    #[test]
    fn fast_path_equals_the_walk() {
        for cmds in [
            vec![],
            vec!["udp_src_min 1000", "udp_src_max 1004", "flag UDPCSUM"],
            vec!["pkt_size 300", "tos 10", "udp_dst_min 5", "udp_dst_max 9"],
        ] {
            let mut c = DevConfig::new("veth0");
            c.command("dst 10.99.0.2").unwrap();
            c.command("dst_mac 02:00:00:99:00:02").unwrap();
            for cmd in &cmds {
                c.command(cmd).unwrap();
            }
            assert!(fast_path_fits(&c), "{cmds:?}");
            let mut fast = for_config(&c, &info(), 1, 0).unwrap();
            assert!(fast.generator().is_none(), "fast path chosen");
            let layout = Layout::new(&c);
            let mut slow = PgFrames::new(
                layout,
                Generator::new(&c, &info(), 1).unwrap(),
                c.max_frame_len(),
                0,
            );
            assert_eq!(fast.prefill().len(), slow.prefill().len());
            assert_eq!(frames(&mut fast, 9), frames(&mut slow, 9), "{cmds:?}");
        }
    }

    /// Random flags with nothing to draw keep the fast path; a random port range does not.
    #[test]
    fn only_draws_that_change_bytes_leave_the_fast_path() {
        let mut c = DevConfig::new("veth0");
        c.command("dst 10.99.0.2").unwrap();
        for f in [
            "QUEUE_MAP_RND",
            "UDPSRC_RND",
            "VID_RND",
            "TXSIZE_RND",
            "IPDST_RND",
        ] {
            c.command(&format!("flag {f}")).unwrap();
        }
        assert!(fast_path_fits(&c));
        c.command("udp_src_max 100").unwrap();
        assert!(!fast_path_fits(&c), "a random port range draws per packet");
    }

    #[test]
    fn walk_chosen_when_needed() {
        let mut c = DevConfig::new("veth0");
        c.command("dst 10.99.0.2").unwrap();
        c.command("vlan_id 3").unwrap();
        assert!(!fast_path_fits(&c));
        let mut s = for_config(&c, &info(), 1, 0).unwrap();
        assert!(s.generator().is_some());
        let f = frames(&mut s, 1);
        assert_eq!(f[0][12..14], [0x81, 0x00]);
    }

    #[test]
    fn varying_sizes_count_bytes() {
        let mut c = DevConfig::new("veth0");
        c.command("dst 10.99.0.2").unwrap();
        c.command("min_pkt_size 60").unwrap();
        c.command("max_pkt_size 62").unwrap();
        let mut s = for_config(&c, &info(), 1, 0).unwrap();
        let f = frames(&mut s, 3);
        assert_eq!(
            f.iter().map(Vec::len).collect::<Vec<_>>(),
            [61, 62, 60],
            "walk starts at min + 1"
        );
        assert_eq!(s.imix_bytes(), None, "a size walk is not IMIX");
        assert_eq!(s.prefill().len(), 62);
    }
}
