//! `upktgen run`'s options. The groups [`TxArgs`] (the transmit path and its ring) and
//! [`LiveArgs`] are flattened into every command that takes them.

use crate::backend::BackendKind;
use crate::lab::RxMode;
use crate::units::parse_duration;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// A TX ring and its thresholds (tx_ring, af_xdp).
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct RingArgs {
    /// Ring backends: descriptors in the TX ring (a power of two) [tx_ring: 1024; af_xdp: 2048].
    #[arg(long, value_name = "N")]
    pub ring: Option<u32>,

    /// Ring backends: stop producing when fewer than S descriptors are free [1].
    #[arg(long, value_name = "S")]
    pub stop_thresh: Option<u32>,

    /// Ring backends: after a stop, resume only when at least W descriptors are free
    /// (W >= S; W = S means no hysteresis) [half the ring].
    #[arg(long, value_name = "W")]
    pub start_thresh: Option<u32>,
}

/// The transmit path and how frames are handed to it.
#[derive(Args, Debug, Clone)]
pub struct TxArgs {
    /// Transmit path [default: af_packet; with --xmit-mode netif_receive: xdp_live, the one
    /// path into a device's receive path].
    #[arg(long, value_parser = super::choice::<BackendKind>(), value_name = "NAME")]
    pub backend: Option<BackendKind>,

    #[command(flatten)]
    pub ring: RingArgs,

    /// Frames handed to the kernel per syscall at most [af_packet, tx_ring: 64; af_xdp: 32,
    /// what the kernel moves per kick in copy mode; xdp_live: the kernel's batch size of live
    /// frames, 1 to 256, default 64].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024), value_name = "N")]
    pub batch: Option<u16>,

    /// SO_SNDBUF of the sending socket in bytes (af_packet) [the system default].
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<u32>,

    /// PACKET_QDISC_BYPASS: hand frames straight to the driver, skipping the qdisc (a
    /// device's xmit_mode also chooses it) [af_packet: false; tx_ring: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub qdisc_bypass: Option<bool>,
}

/// Live statistics on standard error.
#[derive(Args, Debug, Clone)]
pub struct LiveArgs {
    /// Print live statistics on standard error every --interval (run: TX pps and Mb/s from
    /// the sending interface, RX pps from the receiving one; rx: RX pps and Mb/s of the
    /// frames read, the socket's drops; both: the receiver's loss so far, CPU busy), and a
    /// last line for the whole run; on a terminal a counted run (--count) also gets a
    /// progress bar with an ETA. On by default when standard error is a terminal.
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
    #[arg(long, value_parser = parse_duration, default_value = "1s", value_name = "TIME")]
    pub interval: Duration,
}

/// Which lab `run` makes when no --dev is given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LabKind {
    /// Two namespaces joined by a veth pair.
    #[default]
    Pair,
    /// Three: sender -> a device under test forwarding IPv4 and IPv6 -> receiver.
    Dut,
}

/// The far end of a two-ended run, and the lab's device under test.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Two ends, and a device under test")]
pub struct FarArgs {
    /// Receive at the far end with upktgen's receiver, through its agent (`upktgen agent`,
    /// docs/agent.md): `netns:NAME` (ip netns exec), `ssh://[user@]host[:port]` (the
    /// system's OpenSSH client: your keys and ~/.ssh/config; BatchMode, never a prompt) or
    /// `local`. The report then reconciles both ends: sent, the far interface's rx_packets,
    /// the far socket and sink, loss per flow, latency (one-way across hosts only with the
    /// clock offset's bound). Needs --dev and --peer-dev.
    #[arg(long, value_name = "URI", requires = "peer_dev", group = "receiver")]
    pub peer: Option<crate::agent::transport::PeerUri>,

    /// The far end's receiving interface.
    #[arg(long, value_name = "IFACE", requires = "peer")]
    pub peer_dev: Option<String>,

    /// The agent program at the far end [over ssh: `upktgen` on the far end's PATH; on
    /// this host: this binary].
    #[arg(long, value_name = "PATH", requires = "peer")]
    pub peer_agent: Option<String>,

    /// ssh -F FILE: the ssh client's configuration for --peer ssh://.
    #[arg(long, value_name = "FILE", requires = "peer")]
    pub ssh_config: Option<PathBuf>,

    /// Receive on a second interface of this host (two NIC ports joined by a cable): the
    /// same as --peer local --peer-dev IFACE. Needs --dev.
    #[arg(long, value_name = "IFACE", group = "receiver")]
    pub rx_dev: Option<String>,

    /// The private lab: `pair` (sender and receiver namespaces joined by a veth pair) or
    /// `dut` (sender -> device under test -> receiver: three namespaces, two veth pairs,
    /// the DUT forwarding IPv4 and IPv6 with static neighbours; the frames go to the DUT's
    /// MAC and the receiver's address, 10.99.1.2 / fd00:99:1::2, and the report adds the
    /// DUT's counters, so a loss is named where it happened).
    #[arg(long, value_enum, default_value_t = LabKind::Pair, value_name = "KIND")]
    pub lab: LabKind,

    /// --lab dut: run COMMAND (sh -c) inside the DUT namespace once it is built, before the
    /// run (an nftables ruleset, a tc qdisc on dut-in/dut-out, an XDP program, sysctls).
    /// Its output goes to standard error; a failure stops the run. Repeatable, in order.
    #[arg(long, value_name = "COMMAND")]
    pub dut_setup: Vec<String>,

    /// --lab dut: run FILE with sh inside the DUT namespace (after every --dut-setup).
    #[arg(long, value_name = "FILE")]
    pub dut_setup_file: Vec<PathBuf>,

    /// --lab dut: how long each --dut-setup or --dut-setup-file may run. One that runs
    /// longer is killed with every process of its group, and the run fails; SIGINT or
    /// SIGTERM meanwhile kills it too (the run is then interrupted). What a set-up leaves
    /// running in the background is killed when the lab is removed [60s].
    #[arg(long, value_parser = parse_duration, value_name = "TIME")]
    pub dut_setup_timeout: Option<Duration>,

    /// --lab dut: the DUT forwards through a delay line instead of its kernel: every IPv4
    /// and IPv6 frame that reaches dut-in is held TIME from its kernel receive timestamp,
    /// then sent out of dut-out in arrival order, rewritten as forwarding would (MACs, TTL
    /// or hop limit, IPv4 checksum). A device whose latency is known: TIME plus the lab's
    /// own (measure it with 0). dut-out's tc and nftables egress still apply (an nft
    /// `limit rate over` there polices without queueing); dut-in's ingress hooks see
    /// nothing the line takes. At most 64 Ki frames (32 MiB) are held; beyond, dropped and
    /// counted. 0 to 1s; the report adds the line's counts.
    #[arg(long, value_parser = crate::units::parse_duration_or_zero, value_name = "TIME")]
    pub dut_delay: Option<Duration>,
}

/// pktgen's parameters, spelled as pktgen spells them with `-` for `_`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Send on this interface (in the current network namespace) instead of a private lab.
    #[arg(long, value_name = "IFACE")]
    pub dev: Option<String>,

    /// Receiver at the far end of the lab's veth pair: `drop` (an XDP program drops every
    /// frame; rx_packets still counts it; measures the sender) or `stack` (frames climb the
    /// receiving namespace's IP/UDP stack; xdp_live adds an XDP_PASS program so veth-rx has
    /// the NAPI live frames need). Lab only [drop; stack with --rx-analyze].
    #[arg(long, value_parser = super::choice::<RxMode>(), value_name = "MODE")]
    pub lab_rx: Option<RxMode>,

    #[command(flatten)]
    pub tx: TxArgs,

    /// xdp_live: redirect one identical frame (sequence number 1, no per-packet writes),
    /// to measure what the program's per-packet writes cost.
    #[arg(long)]
    pub xdp_live_plain: bool,

    /// pktgen's parameters, by pktgen's names (`--pkt-size` for pkt_size, ...).
    #[command(flatten)]
    pub pg: crate::cli::pg::PgArgs,

    /// Stop after this long (e.g. 10, 2.5s, 500ms, 3m), whichever of count/duration comes first.
    #[arg(long, value_parser = parse_duration, value_name = "TIME")]
    pub duration: Option<Duration>,

    /// Start every sender at this wall-clock instant (CLOCK_REALTIME), after the set-up:
    /// RFC 3339 (`2026-12-01T10:30:00Z`, `...+01:00`), nanoseconds since the epoch, or
    /// `+DURATION` from now (`+5s`). Give several hosts one instant to start them together.
    /// Refused in the past and more than an hour ahead. A set-up that ends after the
    /// instant starts at once, with a warning; the report records each thread's start
    /// error and the clock's synchronisation (adjtimex).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub start_at: Option<String>,

    /// Seed of the random draws (*_RND flags, IMIX, random flows, dst6 ranges), for a
    /// reproducible walk [a fresh one per run, printed in the report].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Pin the sending thread to this CPU (with -t N: threads on CPU, CPU+1, ...).
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<usize>,

    /// Sender threads, as the kernel's kpktgend_N: thread i sends as `DEV@i` on its own
    /// socket, pinned to CPU i, with `count` frames each; a rate (delay/rate/ratep) is the
    /// total, split evenly across the threads. In the lab, the veth pair gets one queue per
    /// thread. With --config: each sending port's flows spread over N transmit queues, a
    /// flow on one queue only (largest rate first onto the least-loaded queue), each queue a
    /// thread with its own socket and timeline (more threads than a port's flows: one per
    /// flow); a port sending to several ports has N for each of them.
    /// At most as many threads in all (ports × legs × N with a config) as CPUs this
    /// process may run on (its affinity mask), unless --allow-oversubscribe; with af_xdp
    /// at most as many threads on an interface as it has TX queues.
    #[arg(short = 't', long = "threads", default_value_t = 1, value_name = "N")]
    pub threads: u16,

    /// The -t given, when a config's port of fewer flows lowered `threads` to them (a
    /// refusal then names what was typed).
    #[arg(skip)]
    pub threads_given: Option<u16>,

    /// Allow -t N above the CPUs this process may run on (threads then share CPUs, and
    /// their figures are no longer one CPU's each).
    #[arg(long)]
    pub allow_oversubscribe: bool,

    /// Also print one Cpu line per CPU.
    #[arg(long)]
    pub per_cpu: bool,

    /// Count only /proc/interrupts lines whose name or description contains NAME
    /// (e.g. a NIC queue like eth0-TxRx-0 or virtio0-output.0).
    #[arg(long, value_name = "NAME")]
    pub irq: Option<String>,

    /// Print one JSON document with every raw counter instead of the text report
    /// (`upktgen.run/3`; with a --config whose flows leave from several ports, or from one
    /// port to several, one `upktgen.run-ports/1` document of every leg's run, flow and
    /// port).
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub metrics: crate::metrics::MetricsArgs,

    /// Lab: receive on veth-rx with upktgen's own receiver (--rx-backend: AF_XDP, or
    /// AF_PACKET TPACKET_V3) and add its figures to the report: frames, lost,
    /// duplicated and reordered sequence numbers, latency percentiles, the socket ring's
    /// drops, and the path from sent to received with each difference named. Implies
    /// --lab-rx stack.
    #[arg(long, group = "receiver")]
    pub rx_analyze: bool,

    /// With --rx-analyze, --peer or --rx-dev: also print the whole latency histogram.
    #[arg(long, requires = "receiver")]
    pub hist: bool,

    /// With --rx-analyze, --peer or --rx-dev: the receiver's backend, af_xdp (AF_XDP
    /// sockets fed by an XDP redirect program on the receiving interface, copy mode on
    /// veth; before tc/nftables ingress), af_packet (TPACKET_V3 ring, after them) or auto
    /// (af_xdp where it works).
    #[arg(long, value_parser = super::choice::<crate::rx::recv::RxBackend>(), default_value_t = crate::rx::recv::RxBackend::Auto, value_name = "B", requires = "receiver")]
    pub rx_backend: crate::rx::recv::RxBackend,

    #[command(flatten)]
    pub far: FarArgs,

    #[command(flatten)]
    pub live: LiveArgs,

    /// Write the frames the run would send to FILE (pcap, nanosecond timestamps, readable by
    /// tcpdump/tshark) instead of sending them, then exit. Frame k is stamped at the start's
    /// wall clock + its time on the run's schedule (delay/ratep/burst; 1 ns apart at delay
    /// 0), and so is pktgen's header in it. Needs no privilege and makes no lab: the source
    /// MAC/IPv4 default to the lab's sending end (02:00:00:99:00:01, 10.99.0.1), or with --dev
    /// to that interface's (read from sysfs; its IPv4 address needs CAP_NET_RAW; give --src
    /// otherwise).
    #[arg(long, value_name = "FILE", help_heading = "Capture and replay",
          conflicts_with_all = ["replay", "duration", "rx_analyze", "lab_rx"])]
    pub pcap: Option<PathBuf>,

    /// With --pcap: frames to write [count; count 0 needs this].
    #[arg(
        long,
        value_name = "N",
        requires = "pcap",
        help_heading = "Capture and replay"
    )]
    pub pcap_count: Option<u64>,

    /// Send the frames of a pcap file (classic pcap, Ethernet; not pcapng) in order, looping,
    /// exactly as recorded: sequence numbers, addresses and timestamps are not rewritten.
    /// --count caps the frames sent (0 = until Ctrl-C/--duration), --replay-loops the passes
    /// over the file; --ratep/--delay/--burst pace them (or --replay-timing file). pktgen's
    /// frame parameters do not apply. Frames longer than the device's
    /// MTU + 14 (+ 4 per VLAN tag) are refused before sending. af_packet, tx_ring, af_xdp
    /// (not xdp_live).
    #[arg(long, value_name = "FILE", help_heading = "Capture and replay")]
    pub replay: Option<PathBuf>,

    /// Send the flows of an Open Traffic Generator config (JSON or YAML: the `Config` a
    /// snappi script sets), each a stream of its own on its sending port's timeline (-t N:
    /// N queues' timelines), each
    /// counted and timed at its receiving port by the signature at its frames' end. The
    /// ports' locations say where: `lab:tx` and `lab:rx` (the private lab; `--lab dut` puts
    /// a device under test between them), an interface (`eth1`), `netns:NAME/IFACE` (sent
    /// from and received inside that namespace), a receiving `ssh://host/IFACE`; a port may
    /// send and receive (flows both ways), several may send to one, and one may send to
    /// several; each sending port and port it sends to is a run of its own, side by side,
    /// with one --json document and one --metrics-listen endpoint, its series labelled by
    /// `port` and `rx_port`. OTG sizes count the FCS. What upktgen does not implement is
    /// refused with its path (docs/otg.md).
    #[arg(long, value_name = "FILE", help_heading = "Streams", conflicts_with_all = ["replay", "pcap"])]
    pub config: Option<PathBuf>,

    /// With --config: send every flow continuously from the start (its duration and start
    /// delay replaced), its rate scaled by one common factor so that the flows' rates add
    /// up to PPS frames per second in all (a flow's share is its rate in frames per second
    /// at its mean size; a bit rate or a percentage is converted so). The run's --duration
    /// then ends them all. `upktgen ndr --config` runs its trials so. One sending port only.
    #[arg(
        long,
        value_name = "PPS",
        requires = "config",
        help_heading = "Streams"
    )]
    pub config_rate: Option<f64>,

    /// With --replay: send the whole file N times (0 = no limit; --count still caps) [0].
    #[arg(
        long,
        value_name = "N",
        requires = "replay",
        help_heading = "Capture and replay"
    )]
    pub replay_loops: Option<u64>,

    /// With --replay: `rate` paces the frames by the rate options (as fast as possible
    /// without); `file` follows the file's gaps between records (the loop back to the first
    /// record takes the file's mean gap), on an absolute schedule [rate].
    #[arg(
        long,
        value_parser = super::choice::<crate::stream::replay::ReplayTiming>(),
        value_name = "MODE",
        requires = "replay",
        help_heading = "Capture and replay"
    )]
    pub replay_timing: Option<crate::stream::replay::ReplayTiming>,

    /// With --replay-timing file: play the file X times as fast (0.5 = half speed) [1].
    #[arg(
        long,
        value_name = "X",
        requires = "replay",
        help_heading = "Capture and replay"
    )]
    pub replay_speed: Option<f64>,
}
