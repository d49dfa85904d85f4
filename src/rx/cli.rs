//! `upktgen rx`: receive on a named interface and report what arrived.

use super::recv::{Receiver, RxBackend, RxConfig};
use super::sink::FlowKeyMode;
use crate::app::Exit;
use crate::caps::{self, Cap};
use crate::sys::{self, rx_ring::RxRingConfig};
use anyhow::{Result, anyhow, bail};
use clap::Args;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub const RX_ABOUT: &str = "Receive on an interface and report what arrived: frames and bytes, frames with pktgen's header, \
lost / duplicated / reordered packets per flow (from the header's sequence number), first and last sequence number, \
one-way latency from the header's timestamp (min, p50, p90, p99, p99.9, max; meaningful when sender and receiver \
share a clock), and the socket's own drops (XDP_STATISTICS or PACKET_STATISTICS). Two receive backends: \
af_xdp (AF_XDP sockets on every RX queue fed by a hand-assembled XDP redirect program, zero-copy where the driver \
has it, else copy mode) and af_packet (TPACKET_V3 ring); auto takes af_xdp where it works. Runs until Ctrl-C \
(exit status 0), --count or --duration, then prints the report. Needs CAP_NET_RAW (af_xdp: also CAP_NET_ADMIN, \
CAP_BPF or CAP_SYS_ADMIN).";

/// UMEM frames per queue of the AF_XDP receiver.
pub const DEFAULT_XSK_FRAMES: u32 = super::af_xdp::DEFAULT_FRAMES;

pub const RX_HELP: &str = "Flows: one sequence per sender. By default a flow is (source IP, destination IP, VLAN id): \
upktgen and pktgen number packets per sender while walking UDP ports. --flow-key addr-ports adds both ports.
Counters: lost = sequence holes still open (a late arrival closes its hole and counts as reordered); \
packets lost after the last one received cannot be seen by a receiver. Sequence numbers wrap modulo 2^32; \
a small number far behind, or a lower number stamped later than the highest, is a new run of the sender (restarts).
Capture point: af_packet bound to ETH_P_IP sees frames after tc and nftables ingress (what the IP stack gets); \
--all-frames binds ETH_P_ALL, a tap that sees every frame before those hooks. af_xdp takes IPv4/UDP frames \
(untagged) in XDP, before tc and nftables ingress: the stack never sees them while it runs; other frames \
(ARP, TCP, ...) go on to the stack, counted. The program is attached by a BPF link: it goes away when upktgen \
exits, whatever the exit. af_xdp has no kernel receive timestamp: latency is taken when the batch is read.";

/// `upktgen rx` options.
#[derive(Args, Debug, Clone)]
pub struct RxArgs {
    /// Receive on this interface (in the current network namespace).
    #[arg(long, value_name = "IFACE")]
    pub dev: String,

    /// Stop after this many frames (0 = until Ctrl-C or --duration); checked per ring
    /// block, so the frames of the last block are all counted.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub count: u64,

    /// Stop after this long (e.g. 10, 2.5s, 500ms, 3m).
    #[arg(long, value_parser = crate::params::parse_duration, value_name = "TIME")]
    pub duration: Option<Duration>,

    /// Print one JSON document instead of the text report.
    #[arg(long)]
    pub json: bool,

    /// Also print the whole latency histogram (in JSON: `sink.histogram`).
    #[arg(long)]
    pub hist: bool,

    /// What makes a flow (one sender sequence).
    #[arg(long, value_enum, default_value_t = FlowKeyMode::Addr, value_name = "KEY")]
    pub flow_key: FlowKeyMode,

    /// Senders start at this sequence number (pktgen: 1): packets missing before the first
    /// one received then count as lost. Default: the first one received opens the flow.
    #[arg(long, value_name = "SEQ")]
    pub expect_first: Option<u32>,

    /// Bind to every protocol (ETH_P_ALL: a tap before tc/nftables ingress) instead of IPv4
    /// (af_packet only).
    #[arg(long)]
    pub all_frames: bool,

    /// Receive backend: af_xdp, af_packet, or auto (af_xdp where the socket binds and the
    /// program attaches, else af_packet; standard error says which and why).
    #[arg(long, value_enum, default_value_t = RxBackend::Auto, value_name = "B")]
    pub rx_backend: RxBackend,

    /// af_xdp: zero-copy or copy mode (auto: zero-copy where the driver has it).
    #[arg(long, value_enum, default_value_t = XdpModeArg::Auto, value_name = "MODE")]
    pub xdp_mode: XdpModeArg,

    /// af_xdp: UMEM frames (2 KiB each) and RX/fill ring entries per queue (a power of two).
    #[arg(long, default_value_t = DEFAULT_XSK_FRAMES, value_name = "N")]
    pub xsk_frames: u32,

    /// Print live statistics on standard error every --interval (RX pps and Mb/s of the
    /// frames read, loss so far, the socket's drops, CPU busy), and a last line for the
    /// whole run; on a terminal a counted run (--count) also gets a progress bar with an
    /// ETA. On by default when standard error is a terminal.
    #[arg(long, conflicts_with = "no_live")]
    pub live: bool,

    /// No live statistics, even on a terminal.
    #[arg(long)]
    pub no_live: bool,

    /// Live statistics as one JSON object per line (on standard error), the last with
    /// "final": true.
    #[arg(long, conflicts_with = "no_live")]
    pub json_lines: bool,

    /// Interval of the live statistics (e.g. 1s, 500ms).
    #[arg(long, value_parser = crate::params::parse_duration, default_value = "1s", value_name = "TIME")]
    pub interval: Duration,

    /// Blocks in the receive ring.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub ring_blocks: usize,

    /// Bytes per ring block (a power of two, at least 4096).
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    pub block_size: usize,
}

/// `--xdp-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum XdpModeArg {
    Auto,
    Copy,
    #[value(name = "zero-copy")]
    ZeroCopy,
}

impl XdpModeArg {
    pub fn zerocopy(self) -> Option<bool> {
        match self {
            XdpModeArg::Auto => None,
            XdpModeArg::Copy => Some(false),
            XdpModeArg::ZeroCopy => Some(true),
        }
    }
}

/// Checks --xsk-frames.
pub fn check_xsk_frames(n: u32) -> Result<u32> {
    if !n.is_power_of_two() || !(64..=1 << 20).contains(&n) {
        bail!("--xsk-frames {n}: needs a power of two from 64 to 1048576");
    }
    Ok(n)
}

impl RxArgs {
    pub fn config(&self) -> Result<RxConfig> {
        check_xsk_frames(self.xsk_frames)?;
        if self.interval.is_zero() {
            bail!("--interval: must be above 0");
        }
        super::recv::candidates(self.rx_backend, self.all_frames).map_err(|e| anyhow!(e))?;
        if !self.block_size.is_power_of_two() || self.block_size < 4096 {
            bail!(
                "--block-size {}: needs a power of two of at least 4096",
                self.block_size
            );
        }
        if self.ring_blocks == 0 || self.ring_blocks > 4096 {
            bail!("--ring-blocks {}: needs 1 to 4096", self.ring_blocks);
        }
        Ok(RxConfig {
            backend: self.rx_backend,
            xsk_frames: self.xsk_frames,
            zerocopy: self.xdp_mode.zerocopy(),
            ring: RxRingConfig {
                block_size: self.block_size,
                blocks: self.ring_blocks,
                all_frames: self.all_frames,
                ..RxRingConfig::default()
            },
            flow_key: self.flow_key,
            expect_first: self.expect_first,
            count: self.count,
            duration: self.duration,
            hist: self.hist,
        })
    }
}

/// Runs `upktgen rx`.
pub fn run(a: &RxArgs, stop: &Arc<AtomicBool>) -> Result<Exit> {
    let cfg = a.config()?;
    caps::require(&[Cap::NetRaw], &format!("receiving on {}", a.dev))?;
    let ifindex = sys::if_nametoindex(&a.dev).map_err(|e| match e.raw_os_error() {
        Some(libc::ENODEV) | Some(libc::ENXIO) => anyhow!("--dev {}: no such interface", a.dev),
        _ => anyhow!("--dev {}: {e}", a.dev),
    })?;
    let mut rx = Receiver::open(ifindex, &a.dev, cfg)
        .map_err(|e| anyhow!("--dev {}: cannot set up the receiver: {e}", a.dev))?;
    if let Some(c) = &rx.choice {
        crate::errln!("upktgen: {c}");
    }
    let live = crate::live::start_for_rx(a, rx.progress())?;
    let why = rx.run(stop)?;
    let report = rx.report(&a.dev, why)?;
    if let Some(m) = live {
        m.finish();
    }
    if a.json {
        crate::out::println(serde_json::to_string_pretty(&report)?)?;
    } else {
        crate::out::print(report.text(a.hist))?;
    }
    // Ctrl-C is the normal end of `rx`: exit status 0, with the full report.
    Ok(Exit::Done)
}
