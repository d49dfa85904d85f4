//! `xdp_live`: `BPF_PROG_RUN` with `BPF_F_TEST_XDP_LIVE_FRAMES` (Linux 5.18+).
//!
//! The kernel copies one prepared frame into the pages of a page pool and runs a
//! hand-assembled XDP program on each, `repeat` times per syscall; the program returns
//! `bpf_redirect(ifindex)`, and every `batch` frames the kernel flushes what was redirected
//! to the device's `ndo_xdp_xmit`. No socket, no skb: the cheapest transmit path Linux has.
//!
//! **Per-packet fields.** The sender writes nothing ([`TxBackend::fills_frames`] is false):
//! the program does, from a state map ([`prog::State`]): the pktgen sequence number (from 1,
//! continuing across syscalls), the IPv4 id (from 0) and header checksum, the timestamp
//! unless NO_TIMESTAMP, the UDP checksum with UDPCSUM, and every field pktgen's walk moves
//! ([`walk_spec`] compiles the general walk, [`crate::pg::generate`], into a
//! [`prog::Spec`]): MACs with counts, VLAN/QinQ ids, MPLS labels, IPv4 and IPv6 addresses,
//! UDP ports, in order or at random, flows, and the frame size (the prepared frame is the
//! largest; `bpf_xdp_adjust_tail` shrinks each copy). Random draws come from the kernel's
//! per-CPU `bpf_get_prandom_u32`, which `--seed` cannot reproduce (the backend's report line
//! says so). Each frame of a batch gets a page of its own from the kernel's page pool, and
//! the program writes every varying field whole and every constant header byte back on
//! every run, so every field is exact per frame. The clock is read (`bpf_ktime_get_ns` plus
//! the CLOCK_REALTIME offset userspace
//! stores before each syscall) at the first frame of each syscall and then every `batch`
//! frames, the same "once per batch" as the other backends. The counter lives in a plain
//! array map rather than a per-CPU one: one thread runs the program, its syscalls are
//! serialised, and the sequence must continue when the thread moves to another CPU (with
//! `-t N` each thread loads its own program and maps: its own counters and flows).
//! `--xdp-live-plain` loads a program without per-packet writes (every frame identical,
//! sequence number 1): comparing the two measures what the writes cost.
//!
//! **A config's streams** ([`XdpLive::for_streams`]). Streams differ in everything
//! (headers, sizes, patterns), and the timeline decides whose frame is next, so the
//! program does not rewrite fields: the sender writes each frame, as it does for the other
//! backends ([`TxBackend::fills_frames`] is true). Between syscalls it takes the next
//! frames due from the timeline (each stream's own sequence and length) and writes each
//! whole, with its signature and checksums, straight into a slot of an mmap-able array map
//! ([`bpf::SlotMap`]: no syscall per frame); one syscall then runs the streams program
//! ([`prog::slots`]) that many times, and run `i` copies slot `i` into its page
//! (`bpf_xdp_adjust_tail` to the frame's length, `bpf_xdp_store_bytes`) and redirects it.
//! There are [`SLOTS`] slots, each as large as the largest frame: a syscall runs at most
//! that many frames, and the send loop's pacing sizes each to the frames due now. The
//! program stamps each frame again (unless NO_TIMESTAMP), as the walk's does: the
//! signature's send time is the kernel's clock at the first frame of the syscall and then
//! every `batch` frames, and it corrects the checksum that covers it (the streams' checksum
//! offsets are in a map of their own), so the set-up of a syscall is not counted as
//! latency. Each stream's tally counts the frames handed to the kernel, as on the other
//! backends; a frame the driver refuses is one of the run's errors (the tracepoint counts
//! refusals per flush, not per stream).
//!
//! **What counts as sent.** A redirect can still fail: the device may lack XDP transmit,
//! be down, or refuse frames — a veth whose peer has no NAPI refuses them all, and its
//! counters never show it. So *sent* is what the driver's `ndo_xdp_xmit` accepted, counted
//! by a raw tracepoint program on `xdp:xdp_devmap_xmit` (which reports exactly that after
//! each flush) for the calls made from the sending thread; *errors* are the frames the
//! program redirected (its own counter, exact even when a signal cuts a syscall short) that
//! the driver did not accept. A run whose first frames are all refused stops with a message
//! that names the cause. If the tracepoint cannot be attached, sent = redirected, and the
//! report's detail says so; the interface counters then tell what arrived.
//!
//! **Into the receive path** (`xmit_mode netif_receive`, [`XdpLiveConfig::receive`]). The
//! same program, written the same way, returns XDP_PASS instead of redirecting
//! ([`prog::Verdict::Pass`]), and each syscall names the device as the frames' ingress
//! device (the `xdp_md` context's `ingress_ifindex`): the kernel builds an skb of every
//! frame and hands them, `batch` at a time, to that device's receive path
//! (`netif_receive_skb_list`), as if the device had received them. *sent* is then the frames
//! the program passed; the tracepoint is not used (nothing reaches a driver); what the
//! stack did with them is the receive path's account in the report
//! ([`crate::report::receive`]).
//!
//! **Speed.** Each syscall runs the program up to a million times (sized to last about
//! 4 ms); the program is kept in the kernel's XDP dispatcher for the whole run (`Pin`),
//! without which every syscall would sleep through two RCU grace periods. Nothing stays
//! behind: programs, maps, the tracepoint attachment and the pin are file descriptors,
//! closed on every exit path (the kernel closes them even after SIGKILL).

/// The programs, in [`crate::bpf::prog::xdp_live`].
pub use crate::bpf::prog::xdp_live as prog;

use super::{BackendInfo, BackendStats, Submitted, TxBackend};
use crate::pg::Flag;
use crate::pg::generate::{Generator, Layout};
use crate::stream::multi::MultiStream;
use crate::sys::{self, bpf};
use prog::{Draw, Driver, Field, Flows, Offsets, PortWalk, Size, SlotSpec, Spec, State};
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

/// Largest frame the kernel runs live: a 4 KiB page less the XDP headroom, its page
/// header and the shared info at the end.
pub const MAX_FRAME: usize = 3_000;
/// Frames per syscall: grows from the batch up to this, aiming at [`RUN_TARGET_NS`].
const MAX_PER_RUN: u32 = 1 << 20;
/// Target time of one syscall: long enough to amortise its set-up, short enough for
/// --duration and Ctrl-C to be prompt.
const RUN_TARGET_NS: u64 = 4_000_000;

/// Settings of the xdp_live backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XdpLiveConfig {
    /// Interface to redirect to (in the sending thread's network namespace); with
    /// `receive`, the interface whose receive path the frames enter.
    pub ifindex: u32,
    /// pktgen's `xmit_mode netif_receive`: the program returns XDP_PASS and the kernel
    /// hands each frame, as an skb, to the receive path of `ifindex` (as if the device had
    /// received it) instead of transmitting it.
    pub receive: bool,
    /// Frames the kernel runs between flushes to the driver (1 to 256), and between
    /// clock readings.
    pub batch: u32,
    /// No per-packet writes (every frame is the first packet).
    pub plain: bool,
    /// Write the wall clock into each frame (false with NO_TIMESTAMP).
    pub timestamps: bool,
    /// Keep the UDP checksum right (UDPCSUM).
    pub udp_csum: bool,
    /// UDP source and destination port ranges `[min, max)`.
    pub udp_src: (u16, u16),
    pub udp_dst: (u16, u16),
}

/// An option or value xdp_live cannot honour, refused before anything is set up: the
/// message names the option and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XdpLiveRefusal {
    #[error(
        "xdp_live cannot --replay: its program rewrites one frame; af_packet, tx_ring and af_xdp send a file's frames"
    )]
    Replay,
    /// `opt` asks for something xdp_live does not have (`what`).
    #[error(
        "{opt}: xdp_live has no {what} (the kernel runs an XDP program on copies of one frame); drop the option or use another --backend"
    )]
    NotHere {
        opt: &'static str,
        what: &'static str,
    },
    #[error(
        "--xdp-live-plain sends one identical frame: only a plain IPv4/UDP stream of one size with fixed addresses and ports (drop --xdp-live-plain to have the program walk the fields)"
    )]
    PlainNotPlainStream,
    #[error(
        "--batch {0}: xdp_live runs 1 to {max} frames between flushes to the driver",
        max = bpf::LIVE_FRAMES_MAX_BATCH
    )]
    Batch(u32),
    #[error(
        "--pkt-size {0}: xdp_live sends frames of at most {MAX_FRAME} bytes (the kernel runs live frames in one page); use --backend af_packet"
    )]
    PktSize(usize),
    #[error(
        "--xdp-live-plain sends one identical frame: it cannot walk UDP port ranges (drop --xdp-live-plain, or the --udp-*-max options)"
    )]
    PlainPortRanges,
    #[error(
        "--xdp-live-plain sends one identical frame, not a config's streams (drop --xdp-live-plain)"
    )]
    PlainStreams,
    #[error(
        "a config's largest frame is {0} bytes: xdp_live sends frames of at most {MAX_FRAME} bytes (the kernel runs live frames in one page); use --backend af_packet"
    )]
    StreamFrame(usize),
}

/// What xdp_live cannot honour, refused before anything is set up.
pub fn check_config(c: &XdpLiveConfig, pkt_size: usize) -> Result<(), XdpLiveRefusal> {
    if c.batch == 0 || c.batch > bpf::LIVE_FRAMES_MAX_BATCH {
        return Err(XdpLiveRefusal::Batch(c.batch));
    }
    if pkt_size > MAX_FRAME {
        return Err(XdpLiveRefusal::PktSize(pkt_size));
    }
    let ranges = PortWalk::new(c.udp_src.0, c.udp_src.1).varies()
        || PortWalk::new(c.udp_dst.0, c.udp_dst.1).varies();
    if c.plain && ranges {
        return Err(XdpLiveRefusal::PlainPortRanges);
    }
    Ok(())
}

/// Frames between flushes to the driver unless --batch.
pub const DEFAULT_BATCH: u16 = 64;

/// The batch unless --batch: in netif_receive mode pktgen's `burst` (frames handed to the
/// receive path at once; the kernel's runs up to 256), else [`DEFAULT_BATCH`].
fn receive_batch(receive: bool, burst: u32) -> u32 {
    if receive && burst > 1 {
        burst.min(bpf::LIVE_FRAMES_MAX_BATCH)
    } else {
        u32::from(DEFAULT_BATCH)
    }
}

impl super::Backend for XdpLive {
    const KIND: super::BackendKind = super::BackendKind::XdpLive;
    type Config = XdpLiveConfig;

    /// `ifindex` is filled in by the open step.
    fn plan(
        o: &super::TxOptions,
        pg: &crate::pg::DevConfig,
        _: super::SenderSlot,
    ) -> Result<XdpLiveConfig, super::Refusal> {
        if o.replay {
            return Err(XdpLiveRefusal::Replay.into());
        }
        let not_here = |opt, what| Err(XdpLiveRefusal::NotHere { opt, what }.into());
        if o.sndbuf.is_some() {
            return not_here("--sndbuf", "socket");
        }
        if o.qdisc_bypass.is_some() {
            return not_here("--qdisc-bypass", "qdisc on its path");
        }
        if o.ring.given() {
            return not_here("--ring/--stop-thresh/--start-thresh", "TX ring of its own");
        }
        if o.streams {
            if o.xdp_live_plain {
                return Err(XdpLiveRefusal::PlainStreams.into());
            }
            if pg.max_frame_len() > MAX_FRAME {
                return Err(XdpLiveRefusal::StreamFrame(pg.max_frame_len()).into());
            }
        }
        if o.xdp_live_plain && !crate::stream::fast_path_fits(pg) {
            return Err(XdpLiveRefusal::PlainNotPlainStream.into());
        }
        let receive = pg.xmit_mode == Some(crate::pg::XmitMode::NetifReceive);
        if pg.burst > 1 && !receive {
            return not_here(
                "--burst",
                "burst of its own (it sends --batch frames per syscall)",
            );
        }
        let c = XdpLiveConfig {
            ifindex: 0,
            receive,
            batch: o
                .batch
                .map_or_else(|| receive_batch(receive, pg.burst), u32::from),
            plain: o.xdp_live_plain,
            timestamps: !pg.has(Flag::NoTimestamp),
            udp_csum: pg.has(Flag::Udpcsum),
            udp_src: (pg.udp_src_min, pg.udp_src_max),
            udp_dst: (pg.udp_dst_min, pg.udp_dst_max),
        };
        check_config(&c, pg.max_frame_len())?;
        Ok(c)
    }

    fn open(
        c: &XdpLiveConfig,
        at: &super::OpenAt,
        frames: &crate::stream::Frames,
    ) -> Result<XdpLive, super::OpenError> {
        let cfg = XdpLiveConfig {
            ifindex: at.ifindex,
            ..*c
        };
        match frames {
            crate::stream::Frames::Fast(fast) => {
                let frame = first_frame(fast.template(), fast.stream());
                XdpLive::new(&frame, cfg).map_err(super::OpenError::XdpLive)
            }
            crate::stream::Frames::Pg(pg) => {
                use crate::stream::FrameSource;
                let frame = pg.prefill();
                let g = pg.generator().expect("the walk's frames have a generator");
                let spec = walk_spec(g, pg.layout(), &cfg, &frame);
                XdpLive::with_spec(&frame, spec, cfg).map_err(super::OpenError::XdpLive)
            }
            crate::stream::Frames::Replay(_) => Err(super::OpenError::XdpLiveReplay),
            crate::stream::Frames::Multi(m) => {
                XdpLive::for_streams(m, cfg).map_err(super::OpenError::XdpLive)
            }
            crate::stream::Frames::Devices(_) => Err(super::OpenError::XdpLiveDevices),
        }
    }
}

/// The program's spec for the general walk `g` (its state before the first packet),
/// written by layout `l` into the prepared `frame` (the walk's first packet, in a buffer of
/// the largest frame's length): the same fields, ranges and rules as
/// [`Generator::advance`], at the offsets the layout gives.
pub fn walk_spec(g: &Generator, l: &Layout, cfg: &XdpLiveConfig, frame: &[u8]) -> Spec {
    use crate::wire::{ethernet, ipv4, ipv6, mpls, udp, vlan};
    let at = Offsets {
        l3: l.l3,
        ipv6: l.ipv6,
    };
    // In order [0, count): from offset 0 (MACs) or from min + 1 (pktgen's other walks).
    let seq = |min: u64, span: u64, start: u64| Draw::Seq {
        min,
        span,
        start: start % span,
    };
    let mut fields = Vec::new();
    for (off, base, count, rnd) in [
        (0, g.dst_mac_base, g.dst_mac_count, Flag::MacdstRnd),
        (6, g.src_mac_base, g.src_mac_count, Flag::MacsrcRnd),
    ] {
        if count > 1 {
            let draw = if g.has(rnd) {
                Draw::Rnd {
                    min: 0,
                    span: u64::from(count),
                }
            } else {
                seq(0, u64::from(count), 0)
            };
            fields.push(Field::Mac { off, base, draw });
        }
    }
    if let Some((pcp, dei)) = l.vlan {
        // The TCI's PCP and DEI bits, as the wire module lays them out.
        let keep = |pcp: u8, dei: u8| {
            let mut b = [0u8; vlan::HEADER_LEN];
            vlan::Repr {
                pcp,
                dei: dei != 0,
                vid: 0,
                ethertype: 0,
            }
            .emit(&mut vlan::Packet::new_unchecked(&mut b[..]));
            u16::from_be_bytes([b[vlan::field::TCI.start], b[vlan::field::TCI.start + 1]])
        };
        let mut p = ethernet::HEADER_LEN;
        if let Some((spcp, sdei)) = l.svlan {
            if g.has(Flag::SvidRnd) {
                fields.push(Field::RandomVid {
                    off: p + vlan::field::TCI.start,
                    keep: keep(spcp, sdei),
                });
            }
            p += vlan::HEADER_LEN;
        }
        if g.has(Flag::VidRnd) {
            fields.push(Field::RandomVid {
                off: p + vlan::field::TCI.start,
                keep: keep(pcp, dei),
            });
        }
    } else if g.has(Flag::MplsRnd) {
        let n = g.mpls_rnd_mask.len();
        for (i, &rnd) in g.mpls_rnd_mask.iter().enumerate() {
            if rnd {
                fields.push(Field::RandomMpls {
                    off: ethernet::HEADER_LEN + i * mpls::HEADER_LEN + mpls::field::ENTRY.start,
                    bottom: i + 1 == n,
                });
            }
        }
    }
    for (f, (lo, hi), rnd) in [
        (udp::field::SRC_PORT, g.udp_src, Flag::UdpsrcRnd),
        (udp::field::DST_PORT, g.udp_dst, Flag::UdpdstRnd),
    ] {
        if lo < hi {
            let draw = if g.has(rnd) {
                Draw::Rnd {
                    min: u64::from(lo),
                    span: u64::from(hi - lo),
                }
            } else {
                PortWalk::new(lo, hi).draw()
            };
            fields.push(Field::U16 {
                off: at.l4() + f.start,
                draw,
            });
        }
    }
    let mut flows = None;
    if !l.ipv6 {
        let (lo, hi) = g.saddr;
        if lo < hi {
            let draw = if g.has(Flag::IpsrcRnd) {
                Draw::Rnd {
                    min: u64::from(lo),
                    span: u64::from(hi - lo),
                }
            } else {
                seq(u64::from(lo), u64::from(hi - lo) + 1, 1)
            };
            fields.push(Field::U32 {
                off: l.l3 + ipv4::field::SRC_ADDR.start,
                draw,
            });
        }
        let (lo, hi) = g.daddr;
        if lo < hi {
            let off = l.l3 + ipv4::field::DST_ADDR.start;
            fields.push(if g.has(Flag::IpdstRnd) {
                Field::Ipv4Segments {
                    off,
                    segs: g.dst_rnd.0.clone(),
                    total: g.dst_rnd.1,
                }
            } else {
                Field::U32 {
                    off,
                    draw: seq(u64::from(lo), u64::from(hi - lo) + 1, 1),
                }
            });
            // Flows change bytes only through the destination they keep.
            if !g.flows.is_empty() {
                flows = Some(Flows {
                    n: g.flows.len() as u32,
                    flowlen: g.flowlen,
                    seq: g.has(Flag::FlowSeq),
                    field: fields.len() - 1,
                });
            }
        }
    } else if let Some((min, max)) = g.dst6_range {
        let (min, max) = (min.octets(), max.octets());
        for w in 0..4 {
            let b = 4 * w;
            fields.push(Field::Ipv6Word {
                off: l.l3 + ipv6::field::DST_ADDR.start + b,
                min: min[b..b + 4].try_into().expect("4 bytes"),
                max: max[b..b + 4].try_into().expect("4 bytes"),
            });
        }
    }
    let (lo, hi) = g.size;
    let min_frame = l.min_frame() as u32;
    let size = if lo < hi {
        Some(Size::Draw(if g.has(Flag::TxsizeRnd) {
            Draw::Rnd {
                min: u64::from(lo),
                span: u64::from(hi - lo),
            }
        } else {
            seq(u64::from(lo), u64::from(hi - lo) + 1, 1)
        }))
    } else if !g.imix_sizes.is_empty() {
        Some(Size::Imix(
            g.imix_table
                .iter()
                .map(|&e| g.imix_sizes[e as usize].max(min_frame) as u16)
                .collect(),
        ))
    } else {
        None
    };
    Spec::new(
        cfg.ifindex,
        cfg.timestamps,
        cfg.batch,
        cfg.udp_csum,
        at,
        fields,
        size,
        flows,
        frame,
    )
}

/// The frame the kernel copies: the template with the stream's first packet written
/// (fixed ports, sequence number 1, timestamp zero: the program writes the rest).
pub fn first_frame(t: &crate::wire::Udp4Template, s: &crate::stream::Stream) -> Vec<u8> {
    let mut f = t.frame().to_vec();
    t.write(&mut f, &s.clone().next_fields((0, 0)));
    f
}

/// Frames the program refused or the driver did not accept, by cause; they add up over
/// senders as the backend's own counters in [`BackendStats`] (the last error: the latest non-zero one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct XdpLiveCounters {
    /// Frames the XDP program ran on (each returned XDP_REDIRECT; with netif_receive,
    /// XDP_PASS).
    pub redirected: u64,
    /// Frames the driver accepted (tracepoint), when observed.
    pub driver_sent: u64,
    /// Frames the driver refused (tracepoint).
    pub driver_drops: u64,
    /// Calls to the driver's ndo_xdp_xmit.
    pub driver_calls: u64,
    /// The last error a driver call returned (negative errno), 0 if none.
    pub last_err: i32,
    /// Bytes of the frames counted as sent (when the size varies: what the program made,
    /// in proportion of the frames the driver accepted).
    pub bytes: u64,
}

impl XdpLiveCounters {
    /// As the backend's own counters in [`BackendStats`].
    fn own(&self) -> super::OwnCounters {
        use super::Counter;
        super::OwnCounters::of(
            "xdp_live",
            vec![
                Counter::sum("redirected", self.redirected),
                Counter::sum("driver_sent", self.driver_sent),
                Counter::sum("driver_drops", self.driver_drops),
                Counter::sum("driver_calls", self.driver_calls),
                Counter::last_non_zero("last_err", i64::from(self.last_err)),
                Counter::sum("bytes", self.bytes),
            ],
        )
    }
}

/// How the program gets each frame's bytes.
enum Writes {
    /// From the one prepared frame, the fields `spec` says rewritten in the program (the
    /// walk, or the fast path's stream).
    Walk(Spec),
    /// Whole from a slot the sender wrote (a config's streams, [`prog::slots`]).
    Slots(Slots),
}

/// The slots of the streams program and the lengths of the frames written into them.
struct Slots {
    map: bpf::SlotMap,
    /// Each stream's checksum over its signature, for the program's send times.
    _patch: bpf::ValueMap,
    spec: SlotSpec,
    lens: Vec<u32>,
}

/// The patch map's value for streams of these (signature id, checksum over the
/// signature): an entry for every id up to the largest.
pub fn patch_entries(csums: &[(u16, Option<(usize, bool)>)]) -> Vec<u8> {
    use prog::slots::patch;
    let ids = csums
        .iter()
        .map(|&(id, _)| usize::from(id) + 1)
        .max()
        .unwrap_or(1);
    let mut v = vec![0u8; ids * patch::ENTRY];
    for &(id, c) in csums {
        let at = usize::from(id) * patch::ENTRY;
        v[at..at + patch::ENTRY].copy_from_slice(&patch::entry(c));
    }
    v
}

/// Slots of the streams program: a syscall runs at most this many frames. Measured here
/// (1 and 1,024 streams of 60-byte frames, flat out into the lab): 256 sent more than 64,
/// 512, 1,024 or 4,096 (the slots stay in the cache between the sender's writes and the
/// program's reads; 4,096 sent about a fifth less).
pub const SLOTS: u32 = 256;

pub struct XdpLive {
    cfg: XdpLiveConfig,
    writes: Writes,
    frame: Vec<u8>,
    state: bpf::ValueMap,
    /// Flow state (pktgen's flows), when the walk has flows.
    _flows: Option<bpf::ValueMap>,
    prog: OwnedFd,
    driver: bpf::ValueMap,
    /// The tracepoint program and its attachment (closing detaches); None when the
    /// tracepoint could not be attached, with the reason.
    tracepoint: Result<(OwnedFd, OwnedFd), Unobserved>,
    /// Keeps the program in the kernel's XDP dispatcher for the whole run (see [`Pin`]).
    pin: Result<Pin, Unpinned>,
    /// The state map's whole value as last read (walk slots, IMIX table); `mirror` is its
    /// first part.
    value: Vec<u8>,
    mirror: State,
    drv: Driver,
    per_run: u32,
    totals: XdpLiveCounters,
    stats: BackendStats,
    insns: usize,
}

/// The XDP program loaded, with what watches it: the driver's counters, the tracepoint
/// (unless the frames are passed to a receive path), the pin.
struct Loaded {
    prog: OwnedFd,
    driver: bpf::ValueMap,
    tracepoint: Result<(OwnedFd, OwnedFd), Unobserved>,
    pin: Result<Pin, Unpinned>,
}

impl Loaded {
    fn new(insns: &[crate::bpf::asm::Insn], cfg: &XdpLiveConfig) -> io::Result<Loaded> {
        let prog = bpf::load_prog(bpf::ProgType::Xdp, "upktgen_live", insns)
            .map_err(|e| explain_bpf("loading the XDP program", e))?;
        let driver = bpf::ValueMap::create("upktgen_drv", prog::driver::SIZE)
            .map_err(|e| explain_bpf("creating the driver map", e))?;
        let tracepoint = if cfg.receive {
            Err(Unobserved::NotUsed)
        } else {
            attach_tracepoint(&driver)
        };
        let pin = Pin::new(&prog);
        Ok(Loaded {
            prog,
            driver,
            tracepoint,
            pin,
        })
    }
}

impl XdpLive {
    /// Loads the programs for `frame` (the template with the first packet's fields
    /// written: fixed ports, sequence number 1) of a plain IPv4/UDP stream. Must run on the
    /// thread that will send, in the network namespace of `cfg.ifindex`.
    pub fn new(frame: &[u8], cfg: XdpLiveConfig) -> io::Result<XdpLive> {
        let spec = Spec::udp4(
            cfg.ifindex,
            frame,
            cfg.timestamps,
            cfg.batch,
            cfg.udp_csum,
            PortWalk::new(cfg.udp_src.0, cfg.udp_src.1),
            PortWalk::new(cfg.udp_dst.0, cfg.udp_dst.1),
        );
        XdpLive::with_spec(frame, spec, cfg)
    }

    /// Loads the programs for `spec` and its prepared `frame` (the largest frame, with the
    /// first packet's fields), e.g. from [`walk_spec`].
    pub fn with_spec(frame: &[u8], mut spec: Spec, cfg: XdpLiveConfig) -> io::Result<XdpLive> {
        check_config(&cfg, frame.len())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        if frame.len() < spec.at.min_frame() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a {}-byte frame is too short for xdp_live", frame.len()),
            ));
        }
        if cfg.plain && (spec.varies() || spec.flows.is_some()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "--xdp-live-plain sends one identical frame: it cannot walk these fields (drop --xdp-live-plain)",
            ));
        }
        spec.plain = cfg.plain;
        spec.verdict = if cfg.receive {
            prog::Verdict::Pass
        } else {
            prog::Verdict::Redirect
        };
        probe_live_frames()?;
        let state = bpf::ValueMap::create("upktgen_state", spec.state_size())
            .map_err(|e| explain_bpf("creating the state map", e))?;
        let flows = match spec.flows_size() {
            0 => None,
            n => Some(
                bpf::ValueMap::create("upktgen_flows", n)
                    .map_err(|e| explain_bpf("creating the flow map", e))?,
            ),
        };
        let insns = prog::xdp_program_with_flows(
            &spec,
            state.raw_fd(),
            flows.as_ref().map_or(-1, |f| f.raw_fd()),
        )
        .map_err(io::Error::other)?;
        let mut frame = frame.to_vec();
        if cfg.plain && cfg.timestamps {
            // Every frame carries the start time: the one write plain mode makes, once.
            let (s, u) = crate::stream::timeval(sys::realtime_ns());
            let t = spec.at.tv_sec();
            frame[t..t + 4].copy_from_slice(&s.to_be_bytes());
            frame[t + 4..t + 8].copy_from_slice(&u.to_be_bytes());
            fix_plain_checksum(&mut frame, &spec);
        }
        // Each walk starts where the general walk does (see Spec::initial_state).
        let value = spec.initial_state();
        state.write(&value)?;
        let mirror = State::from_bytes(value[..prog::state::SIZE].try_into().expect("header"));
        let loaded = Loaded::new(&insns, &cfg)?;
        Ok(XdpLive {
            per_run: cfg.batch.max(1) * 16,
            cfg,
            writes: Writes::Walk(spec),
            frame,
            state,
            _flows: flows,
            prog: loaded.prog,
            driver: loaded.driver,
            tracepoint: loaded.tracepoint,
            pin: loaded.pin,
            value,
            mirror,
            drv: Driver::default(),
            totals: XdpLiveCounters::default(),
            stats: BackendStats::default(),
            insns: insns.len(),
        })
    }

    /// Loads the streams program ([`prog::slots`]) for the streams `m`: the sender writes
    /// each frame whole into a slot ([`TxBackend::frame`]), each run of the program
    /// stamps one (unless NO_TIMESTAMP) and copies it into its page. Must run on the
    /// thread that will send, in the network namespace of `cfg.ifindex`.
    pub fn for_streams(m: &MultiStream, cfg: XdpLiveConfig) -> io::Result<XdpLive> {
        let (min_len, max_len) = (m.min_len(), m.max_len());
        check_config(&cfg, max_len).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        if cfg.plain {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                XdpLiveRefusal::PlainStreams,
            ));
        }
        probe_live_frames()?;
        let state = bpf::ValueMap::create("upktgen_state", prog::slots::state::SIZE)
            .map_err(|e| explain_bpf("creating the state map", e))?;
        // Each stream's checksum over its signature, by signature id, for the program's
        // send times.
        let entries = patch_entries(&m.signature_checksums());
        let patch = bpf::ValueMap::create("upktgen_patch", entries.len())
            .map_err(|e| explain_bpf("creating the patch map", e))?;
        patch.write(&entries)?;
        let spec = SlotSpec {
            stamp: cfg.timestamps.then_some(prog::slots::Stamp {
                patch_fd: patch.raw_fd(),
                streams: (entries.len() / prog::slots::patch::ENTRY) as u32,
                every: cfg.batch,
            }),
            ifindex: cfg.ifindex,
            verdict: if cfg.receive {
                prog::Verdict::Pass
            } else {
                prog::Verdict::Redirect
            },
            slots: SLOTS,
            min_len,
            max_len,
        };
        let map = bpf::SlotMap::create(
            "upktgen_slots",
            prog::slots::layout::value_size(max_len),
            spec.slots,
        )
        .map_err(|e| explain_bpf("creating the slot map", e))?;
        let insns =
            prog::slots_program(&spec, state.raw_fd(), map.raw_fd()).map_err(io::Error::other)?;
        let loaded = Loaded::new(&insns, &cfg)?;
        let value = vec![0; prog::slots::state::SIZE];
        state.write(&value)?;
        Ok(XdpLive {
            per_run: spec.slots,
            cfg,
            writes: Writes::Slots(Slots {
                map,
                _patch: patch,
                spec,
                lens: vec![0; spec.slots as usize],
            }),
            // The page the kernel prepares; every run overwrites it.
            frame: vec![0; max_len],
            state,
            _flows: None,
            prog: loaded.prog,
            driver: loaded.driver,
            tracepoint: loaded.tracepoint,
            pin: loaded.pin,
            value,
            mirror: State::default(),
            drv: Driver::default(),
            totals: XdpLiveCounters::default(),
            stats: BackendStats::default(),
            insns: insns.len(),
        })
    }

    /// Counters by cause, for reports and tests.
    pub fn counters(&self) -> XdpLiveCounters {
        self.totals
    }

    /// Whether the driver's acceptance is observed (the tracepoint is attached).
    pub fn observes_driver(&self) -> bool {
        self.tracepoint.is_ok()
    }

    /// What the program writes, when it rewrites one prepared frame (not a config's
    /// streams, which it copies whole).
    pub fn spec(&self) -> Option<&Spec> {
        match &self.writes {
            Writes::Walk(s) => Some(s),
            Writes::Slots(_) => None,
        }
    }

    /// Bytes of the frames the program has made (the state's counter; kept only when the
    /// size varies).
    fn bytes_made(&self) -> u64 {
        let o = prog::state::BYTES as usize;
        match self.value.get(o..o + 8) {
            Some(b) => u64::from_ne_bytes(b.try_into().expect("8 bytes")),
            None => 0,
        }
    }

    fn read_state(&mut self) -> io::Result<()> {
        self.state.read(&mut self.value)?;
        match &self.writes {
            Writes::Walk(_) => {
                self.mirror = State::from_bytes(
                    self.value[..prog::state::SIZE]
                        .try_into()
                        .expect("the header"),
                )
            }
            Writes::Slots(_) => {
                let o = prog::slots::state::FRAMES as usize;
                self.mirror.frames =
                    u64::from_ne_bytes(self.value[o..o + 8].try_into().expect("8 bytes"));
            }
        }
        let mut d = [0u8; prog::driver::SIZE];
        self.driver.read(&mut d)?;
        self.drv = Driver::from_bytes(&d);
        Ok(())
    }

    /// One BPF_PROG_RUN of `n` frames.
    fn run(&self, n: u32) -> io::Result<()> {
        let ingress = if self.cfg.receive {
            self.cfg.ifindex
        } else {
            0
        };
        bpf::prog_run_xdp_live_on(&self.prog, &self.frame, n, self.cfg.batch, ingress)
    }

    /// Why no frame was accepted, with what to do about it.
    fn refusal(&self, ran: u64) -> io::Error {
        let why = if !self.observes_driver() {
            "the redirect failed for all of them (the driver's answer is not observed here)"
                .to_string()
        } else if self.drv.calls == 0 {
            "the kernel did not hand them to the device: it offers no XDP transmit \
             (ndo_xdp_xmit) now — a veth does only while its peer has NAPI (attach an XDP \
             program to the peer, or turn GRO on there: `ethtool -K PEER gro on`); other \
             drivers may lack XDP redirect support — or it is down, or its MTU is below the frame size"
                .to_string()
        } else {
            let e = io::Error::from_raw_os_error(-self.drv.last_err);
            let hint = if self.drv.last_err == -libc::ENXIO {
                " — on veth this means the peer has no NAPI: attach an XDP program to the peer \
                 or turn GRO on there (`ethtool -K PEER gro on`)"
            } else {
                ""
            };
            format!("the driver refused them ({e}){hint}")
        };
        io::Error::other(format!(
            "xdp_live: none of the first {ran} frames was accepted: {why}; --backend af_packet works on any interface"
        ))
    }
}

fn is_eintr(r: &io::Result<()>) -> bool {
    matches!(r, Err(e) if e.raw_os_error() == Some(libc::EINTR))
}

/// Runs a two-instruction XDP_DROP program once with live frames: EINVAL means the kernel
/// has no live frames (before 5.18).
fn probe_live_frames() -> io::Result<()> {
    /// The kernel's internal "not supported" errno, which can leak out of bpf().
    const ENOTSUPP: i32 = 524;
    let drop = crate::bpf::prog::verdict(crate::bpf::prog::XDP_DROP);
    let p = bpf::load_prog(bpf::ProgType::Xdp, "upktgen_probe", &drop)
        .map_err(|e| explain_bpf("loading a probe XDP program", e))?;
    let frame = [0u8; 60];
    bpf::prog_run_xdp_live(&p, &frame, 1, 1).map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL) | Some(ENOTSUPP) | Some(libc::EOPNOTSUPP) => io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "xdp_live: this kernel ({}) does not run XDP programs on live frames \
                 (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES needs Linux 5.18 or later): {e}; \
                 use --backend af_packet (or tx_ring, af_xdp)",
                kernel_release()
            ),
        ),
        _ => explain_bpf("running the live-frames probe", e),
    })
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Adds what to do to a bpf() failure.
fn explain_bpf(what: &str, e: io::Error) -> io::Error {
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) if !e.to_string().contains("verifier") => {
            ": needs CAP_BPF and CAP_NET_ADMIN (CAP_SYS_ADMIN on older kernels): run as root"
        }
        Some(libc::ENOSYS) => ": this kernel has no bpf() syscall (CONFIG_BPF_SYSCALL)",
        _ => "",
    };
    io::Error::new(e.kind(), format!("xdp_live: {what}: {e}{hint}"))
}

/// Each `BPF_PROG_RUN` of an XDP program with repeat > 1 adds the program to the kernel's
/// XDP dispatcher (a patched trampoline) and removes it afterwards, and each change waits
/// for an RCU grace period: about 25 ms per syscall measured here, 99 % of it asleep.
/// A program already in the dispatcher is only reference-counted. So for the run the
/// program is also attached, in generic mode, to the loopback device of a private, empty
/// network namespace of its own, where it never sees a packet (the device is down).
/// Dropping the pin detaches the program (link first) and removes the namespace.
struct Pin {
    _link: OwnedFd,
    _netns: std::fs::File,
}

impl Pin {
    fn new(prog: &OwnedFd) -> Result<Pin, Unpinned> {
        let prog = prog.try_clone().map_err(Unpinned::Dup)?;
        let (netns, link) = sys::netns::in_new_netns(move || {
            let lo = sys::if_nametoindex("lo")?;
            bpf::attach_xdp_generic_link(&prog, lo)
        })
        .map_err(Unpinned::Attach)?;
        Ok(Pin {
            _link: link,
            _netns: netns,
        })
    }
}

/// Why the program is not kept in the XDP dispatcher (the run goes on, slower; the
/// report's detail says why).
#[derive(Debug, thiserror::Error)]
enum Unpinned {
    #[error("duplicating the program's descriptor: {0}")]
    Dup(io::Error),
    #[error("pinning the program in the XDP dispatcher: {0}")]
    Attach(io::Error),
}

/// Why the driver's acceptance is not observed (sent = frames redirected; the report's
/// detail says why).
#[derive(Debug, thiserror::Error)]
enum Unobserved {
    #[error("not used: netif_receive passes the frames to the receive path")]
    NotUsed,
    /// The tracepoint program does not assemble (its assembler's words).
    #[error("assembling the xdp_devmap_xmit program: {0}")]
    Assemble(crate::bpf::asm::AsmError),
    #[error("loading the xdp_devmap_xmit program: {0}")]
    Load(io::Error),
    #[error("attaching to the xdp_devmap_xmit tracepoint: {0}")]
    Attach(io::Error),
}

fn attach_tracepoint(driver: &bpf::ValueMap) -> Result<(OwnedFd, OwnedFd), Unobserved> {
    let insns = prog::devmap_xmit_program(driver.raw_fd()).map_err(Unobserved::Assemble)?;
    let p = bpf::load_prog(bpf::ProgType::RawTracepoint, "upktgen_drvtx", &insns)
        .map_err(Unobserved::Load)?;
    let link = bpf::raw_tracepoint_open(c"xdp_devmap_xmit", &p).map_err(Unobserved::Attach)?;
    Ok((p, link))
}

/// Plain mode writes the timestamp once, userspace side: the UDP checksum (UDPCSUM) has to
/// follow. The IPv4 header is unchanged.
fn fix_plain_checksum(frame: &mut [u8], spec: &Spec) {
    use crate::wire::checksum;
    if !spec.udp_csum {
        return;
    }
    let (seq, csum) = (
        spec.at.seq(),
        spec.at.l4() + crate::wire::udp::field::CHECKSUM.start,
    );
    // Back to big-endian terms: the base is kept in host order for the program.
    let s = u32::from(u16::from_be_bytes(spec.udp_base.to_ne_bytes()));
    let s = checksum::add(s, checksum::sum(&frame[seq..seq + 12]));
    let c = checksum::finish_udp(s);
    frame[csum..csum + 2].copy_from_slice(&c.to_be_bytes());
}

impl TxBackend for XdpLive {
    fn info(&self) -> BackendInfo {
        let writes = match &self.writes {
            _ if self.cfg.plain => {
                "plain redirect, no per-packet writes (every frame identical)".to_string()
            }
            Writes::Slots(sl) => format!(
                "each frame copied whole from one of {} slots the sender writes (the streams' frames in the timeline's order, {} to {} bytes){}",
                sl.spec.slots,
                sl.spec.min_len,
                sl.spec.max_len,
                if sl.spec.stamp.is_some() {
                    ", its send time stamped by the program"
                } else {
                    ""
                }
            ),
            Writes::Walk(spec) => {
                let random = if spec.draws_random() {
                    "; random fields from the kernel's per-CPU bpf_get_prandom_u32: --seed does not reproduce them"
                } else {
                    ""
                };
                format!(
                    "per-packet writes in the program: {}{random}",
                    spec.describe()
                )
            }
        };
        let counting = match &self.tracepoint {
            _ if self.cfg.receive => "xmit_mode netif_receive: XDP_PASS, each frame built into an skb and handed to the device's receive path; sent = frames passed".to_string(),
            Ok(_) => "sent = frames the driver accepted (xdp_devmap_xmit)".to_string(),
            Err(e) => {
                format!("sent = frames redirected; the driver's acceptance is not observed ({e})")
            }
        };
        let pin = match &self.pin {
            Ok(_) => String::new(),
            Err(e) => format!("; slow: every syscall waits for RCU ({e})"),
        };
        let per_run = self.max_batch();
        BackendInfo {
            name: "xdp_live",
            detail: format!(
                "BPF_PROG_RUN live frames, {} instructions, batch {}; {writes}; {counting}{pin}",
                self.insns, self.cfg.batch
            ),
            queue: if self.cfg.receive {
                format!(
                    "none: each syscall runs the program up to {per_run} times, the kernel hands every {} \
                     frames to the receive path at once (netif_receive_skb_list), on the sending CPU",
                    self.cfg.batch
                )
            } else {
                format!(
                    "none in userspace: each syscall runs the program up to {per_run} times, the kernel \
                     flushes every {} frames to the driver's ndo_xdp_xmit (veth: the peer's 256-frame XDP ring); \
                     a frame the driver refuses is an error",
                    self.cfg.batch
                )
            },
        }
    }

    fn max_batch(&self) -> usize {
        match &self.writes {
            Writes::Walk(_) => MAX_PER_RUN as usize,
            Writes::Slots(sl) => sl.spec.slots as usize,
        }
    }

    fn reserve(&mut self, want: usize, _stop: &AtomicBool) -> io::Result<usize> {
        Ok(want.min(self.per_run as usize))
    }

    /// A config's streams are written by the sender, each frame whole into its slot; the
    /// walk's fields are written by the program.
    fn fills_frames(&self) -> bool {
        matches!(self.writes, Writes::Slots(_))
    }

    fn frame(&mut self, i: usize, len: usize) -> &mut [u8] {
        match &mut self.writes {
            Writes::Slots(sl) => {
                sl.lens[i] = len as u32;
                prog::slots::layout::frame_mut(sl.map.value_mut(i as u32), len)
            }
            // Never called (fills_frames is false); the program writes the fields.
            Writes::Walk(_) => &mut self.frame,
        }
    }

    fn submit(&mut self, n: usize, stop: &AtomicBool) -> io::Result<Submitted> {
        if n == 0 {
            return Ok(Submitted::default());
        }
        let n = u32::try_from(n)
            .unwrap_or(u32::MAX)
            .min(self.max_batch() as u32);
        let tid = sys::gettid() as u32;
        if self.tracepoint.is_ok() && self.drv.tid != tid {
            self.read_state()?;
            self.drv.tid = tid;
            self.driver.write(&self.drv.to_bytes())?;
        }
        match &self.writes {
            Writes::Walk(_) => {
                // A fresh clock reading at the first frame of this run, with the current
                // offset between the wall clock and the monotonic clock the program reads.
                let mono = sys::monotonic_ns();
                let real = sys::realtime_ns();
                self.mirror.rt_offset = real.wrapping_sub(mono);
                self.mirror.clock_at = 0;
                self.value[..prog::state::SIZE].copy_from_slice(&self.mirror.to_bytes());
            }
            Writes::Slots(_) => {
                // The first run copies slot 0 and reads the clock, with the current offset
                // between the wall clock and the monotonic clock the program reads.
                use prog::slots::state;
                let offset = sys::realtime_ns().wrapping_sub(sys::monotonic_ns());
                for (at, v) in [
                    (state::NEXT, 0),
                    (state::RT_OFFSET, offset),
                    (state::CLOCK_AT, 0),
                ] {
                    let o = at as usize;
                    self.value[o..o + 8].copy_from_slice(&v.to_ne_bytes());
                }
            }
        }
        self.state.write(&self.value)?;
        let bytes0 = self.bytes_made();
        let (frames0, sent0, drops0, calls0) = (
            self.mirror.frames,
            self.drv.sent,
            self.drv.drops,
            self.drv.calls,
        );

        let t0 = sys::monotonic_ns();
        let mut r = self.run(n);
        let dt = sys::monotonic_ns() - t0;
        self.stats.kicks += 1;
        self.read_state()?;
        let mut ran = self.mirror.frames.wrapping_sub(frames0);
        if let Writes::Slots(_) = &self.writes {
            // The frames are the streams' next ones, counted already: a signal that cuts
            // the run short does not drop the rest (unless it stops the run). The program
            // moved its slot on past the frames it ran.
            while ran < u64::from(n) && is_eintr(&r) && !stop.load(Relaxed) {
                r = self.run(n - ran as u32);
                self.stats.kicks += 1;
                self.read_state()?;
                ran = self.mirror.frames.wrapping_sub(frames0);
            }
        }
        match r {
            Ok(()) => {
                if n == self.per_run && matches!(self.writes, Writes::Walk(_)) {
                    if dt < RUN_TARGET_NS / 2 {
                        self.per_run = (self.per_run * 2).min(MAX_PER_RUN);
                    } else if dt > RUN_TARGET_NS * 2 {
                        self.per_run = (self.per_run / 2).max(self.cfg.batch);
                    }
                }
            }
            // A signal: the frames run so far are in the program's counter.
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) if self.cfg.receive && self.stats.kicks == 1 => {
                return Err(explain_bpf(
                    "BPF_PROG_RUN with live frames into the receive path (needs Linux 5.18+, and the device in the sending thread's network namespace)",
                    e,
                ));
            }
            Err(e) => return Err(explain_bpf("BPF_PROG_RUN with live frames", e)),
        }
        let drv_sent = self.drv.sent.wrapping_sub(sent0);
        let drv_drops = self.drv.drops.wrapping_sub(drops0);
        self.totals.redirected += ran;
        self.totals.driver_sent += drv_sent;
        self.totals.driver_drops += drv_drops;
        self.totals.driver_calls += self.drv.calls.wrapping_sub(calls0);
        self.totals.last_err = self.drv.last_err;
        let sent = if self.tracepoint.is_ok() {
            drv_sent.min(ran)
        } else {
            ran
        };
        if ran > 0 && sent == 0 && self.stats.queue.posted == 0 {
            return Err(self.refusal(ran));
        }
        // The bytes the program made (when the size varies, or the slots' lengths), in
        // proportion of the frames the driver accepted.
        let made = match &self.writes {
            Writes::Walk(spec) if spec.size.is_some() => {
                Some(self.bytes_made().wrapping_sub(bytes0))
            }
            Writes::Walk(_) => None,
            Writes::Slots(sl) => Some(sl.lens[..ran as usize].iter().map(|&l| u64::from(l)).sum()),
        };
        self.totals.bytes += match made {
            Some(made) => (u128::from(made) * u128::from(sent) / u128::from(ran.max(1))) as u64,
            None => sent * self.frame.len() as u64,
        };
        self.stats.queue.posted += sent;
        self.stats.queue.completed += sent;
        Ok(Submitted {
            sent,
            errors: ran - sent,
        })
    }

    fn drain(&mut self, _timeout: Duration) -> io::Result<()> {
        // Redirected frames are flushed to the driver inside each syscall.
        Ok(())
    }

    fn bytes_sent(&self) -> Option<u64> {
        match &self.writes {
            Writes::Walk(spec) => spec.size.is_some().then_some(self.totals.bytes),
            // The sender's frame source counts the frames it wrote.
            Writes::Slots(_) => None,
        }
    }

    fn stats(&self) -> BackendStats {
        BackendStats {
            own: self.totals.own(),
            ..self.stats.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> XdpLiveConfig {
        XdpLiveConfig {
            ifindex: 2,
            receive: false,
            batch: 64,
            plain: false,
            timestamps: true,
            udp_csum: false,
            udp_src: (9, 9),
            udp_dst: (9, 9),
        }
    }

    #[test]
    fn refuses_what_it_cannot_honour() {
        assert!(check_config(&cfg(), 60).is_ok());
        let e = check_config(
            &XdpLiveConfig {
                batch: 257,
                ..cfg()
            },
            60,
        )
        .unwrap_err();
        let e = e.to_string();
        assert!(e.contains("--batch 257") && e.contains("256"), "{e}");
        let e = check_config(&cfg(), 4000).unwrap_err().to_string();
        assert!(
            e.contains("--pkt-size 4000") && e.contains("af_packet"),
            "{e}"
        );
        let plain_ranges = XdpLiveConfig {
            plain: true,
            udp_dst: (1000, 1010),
            ..cfg()
        };
        let e = check_config(&plain_ranges, 60).unwrap_err().to_string();
        assert!(e.contains("--xdp-live-plain"), "{e}");
        // A range without plain mode is walked by the program.
        assert!(
            check_config(
                &XdpLiveConfig {
                    udp_dst: (1000, 1010),
                    ..cfg()
                },
                60
            )
            .is_ok()
        );
    }

    #[test]
    fn plain_frame_checksum_is_right() {
        use crate::wire::{FrameSpec, PacketFields, Udp4Template};
        let t = Udp4Template::new(&FrameSpec {
            dst_mac: "02:00:00:99:00:02".parse().unwrap(),
            src_mac: "02:00:00:99:00:01".parse().unwrap(),
            src_ip: std::net::Ipv4Addr::new(10, 99, 0, 1),
            dst_ip: std::net::Ipv4Addr::new(10, 99, 0, 2),
            tos: 0,
            pkt_size: 60,
            udp_csum: true,
        })
        .unwrap();
        let mut f = t.frame().to_vec();
        let first = PacketFields {
            ip_id: 0,
            udp_src: 9,
            udp_dst: 9,
            seq: 1,
            tv_sec: 0,
            tv_usec: 0,
        };
        t.write(&mut f, &first);
        let mut spec = Spec::udp4(
            1,
            &f,
            true,
            64,
            true,
            PortWalk::new(9, 9),
            PortWalk::new(9, 9),
        );
        spec.plain = true;
        let o = crate::wire::udp4::OFF_TV_SEC;
        f[o..o + 4].copy_from_slice(&1_700_000_000u32.to_be_bytes());
        f[o + 4..o + 8].copy_from_slice(&654_321u32.to_be_bytes());
        fix_plain_checksum(&mut f, &spec);
        let mut want = t.frame().to_vec();
        t.write(
            &mut want,
            &PacketFields {
                tv_sec: 1_700_000_000,
                tv_usec: 654_321,
                ..first
            },
        );
        assert_eq!(f, want);
    }
}

#[cfg(test)]
mod streams_tests;
#[cfg(test)]
mod walk_tests;
