//! `upktgen rx`'s options and help.

use super::run::LiveArgs;
use crate::rx::DEFAULT_XSK_FRAMES;
use crate::rx::recv::RxBackend;
use crate::rx::sink::FlowKeyMode;
use crate::units::parse_duration;
use clap::Args;
use std::time::Duration;

pub const RX_ABOUT: &str = "Receive on an interface and report what arrived: frames and bytes, frames with pktgen's header, \
lost / duplicated / reordered packets per flow (from the header's sequence number), first and last sequence number, \
one-way latency from the header's timestamp (min, p50, p90, p99, p99.9, max; meaningful when sender and receiver \
share a clock), and the socket's own drops (XDP_STATISTICS or PACKET_STATISTICS). Two receive backends: \
af_xdp (AF_XDP sockets on every RX queue fed by a hand-assembled XDP redirect program, zero-copy where the driver \
has it, else copy mode) and af_packet (TPACKET_V3 ring); auto takes af_xdp where it works. Runs until Ctrl-C \
(exit status 0), --count or --duration, then prints the report. Needs CAP_NET_RAW (af_xdp: also CAP_NET_ADMIN, \
CAP_BPF or CAP_SYS_ADMIN).";

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
    #[arg(long, value_parser = parse_duration, value_name = "TIME")]
    pub duration: Option<Duration>,

    /// Print one JSON document instead of the text report.
    #[arg(long)]
    pub json: bool,

    /// Also print the whole latency histogram (in JSON: `sink.histogram`).
    #[arg(long)]
    pub hist: bool,

    /// What makes a flow (one sender sequence).
    #[arg(long, value_parser = super::choice::<FlowKeyMode>(), default_value_t = FlowKeyMode::Addr, value_name = "KEY")]
    pub flow_key: FlowKeyMode,

    /// Senders start at this sequence number (pktgen: 1): packets missing before the first
    /// one received then count as lost. Default: the first one received opens the flow.
    #[arg(long, value_name = "SEQ")]
    pub expect_first: Option<u32>,

    /// Bind to every protocol (ETH_P_ALL: a tap before tc/nftables ingress) instead of IPv4
    /// (af_packet only).
    #[arg(long)]
    pub all_frames: bool,

    /// Count the streams a sender's config names (`run --config`), once each in the order
    /// of their ids, by the 16-byte signature at each frame's end, whatever the headers (a
    /// DUT may rewrite or wrap them): frames, bytes, loss, duplicates, reordering, latency
    /// and jitter per stream. Their sequences start at 0.
    #[arg(long = "stream", value_name = "NAME")]
    pub streams: Vec<String>,

    /// The sender's clock minus this host's, ns, added to each frame's receive time before
    /// its stream's latency is taken (`run` passes the offset it measured when this
    /// receiver is a far end on another host; 0: one clock). At most 10^15 either way.
    #[arg(long, value_name = "NS", default_value_t = 0, allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(-1_000_000_000_000_000..=1_000_000_000_000_000))]
    pub clock_offset_ns: i64,

    /// Receive backend: af_xdp, af_packet, or auto (af_xdp where the socket binds and the
    /// program attaches, else af_packet; standard error says which and why).
    #[arg(long, value_parser = super::choice::<RxBackend>(), default_value_t = RxBackend::Auto, value_name = "B")]
    pub rx_backend: RxBackend,

    /// af_xdp: zero-copy or copy mode (auto: zero-copy where the driver has it).
    #[arg(long, value_enum, default_value_t = XdpModeArg::Auto, value_name = "MODE")]
    pub xdp_mode: XdpModeArg,

    /// af_xdp: UMEM frames (2 KiB each) and RX/fill ring entries per queue (a power of two).
    #[arg(long, default_value_t = DEFAULT_XSK_FRAMES, value_name = "N")]
    pub xsk_frames: u32,

    #[command(flatten)]
    pub live: LiveArgs,

    /// Blocks in the receive ring (a block is handed over when full or after 4 ms: at low
    /// rates the ring holds N x 4 ms of traffic for a receiver that is not scheduled).
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub ring_blocks: usize,

    /// Bytes per ring block (a power of two, at least 4096).
    #[arg(long, default_value_t = 1 << 18, value_name = "BYTES")]
    pub block_size: usize,

    #[command(flatten)]
    pub metrics: crate::metrics::MetricsArgs,
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
