//! Command-line interface.

use crate::backend::BackendKind;
use crate::lab::RxMode;
use crate::params;
use crate::wire::MacAddr;
use clap::{Args, Parser, Subcommand};
use std::net::Ipv4Addr;
use std::time::Duration;

const ABOUT: &str = "A userspace packet generator for Linux with the kernel pktgen's vocabulary and Result arithmetic.

With no arguments, upktgen reproduces the 2007 pktgen benchmark it was born from: in a private lab \
(two network namespaces joined by a veth pair, created for the run and removed after it) it sends \
4,000,000 UDP packets of 60 bytes and prints pktgen's Result line with top's Cpu(s) line and the \
interrupt count, then what pktgen never showed: packets delivered, transmit-queue stops and wakes, \
softirqs. Needs root (CAP_NET_ADMIN, CAP_NET_RAW, CAP_SYS_ADMIN).";

const TIME_HELP: &str = "Time accounting (pktgen's Result line `OK: E(cB+dI) usec`):
  E  elapsed: from the first send to the end of the final wait for completions
  dI idle: time the sender was blocked — waiting for room while the transmit queue was stopped
     (af_packet: the socket send buffer full, EAGAIN until poll says writable; tx_ring/af_xdp:
     fewer than --stop-thresh descriptors free, until --start-thresh are reclaimed — kicks made
     meanwhile count here too, as pktgen counted the softirq work it did while stopped),
     sleeping or spinning for the rate limiter (--delay/--ratep), and the final wait for
     completions
  cB busy: E - I, i.e. preparing frames and inside the send syscalls
  pps = sent*1e9/elapsed_ns, bps = pps*8*pkt_size (frame bytes, not link utilisation),
  Mb/sec = bps/1e6, all in integer arithmetic as the kernel does.
Cpu(s): /proc/stat deltas over the run, all CPUs, top's fields (us sy ni id wa hi si st).
Interrupts: the sum of all /proc/interrupts counters over the run (--irq NAME: only matching lines).";

#[derive(Parser, Debug)]
#[command(name = "upktgen", version, about = ABOUT, after_help = TIME_HELP, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
    /// With no subcommand: `run` with these options.
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Send packets (in a private lab, or on --dev IFACE) and report like pktgen.
    #[command(after_help = TIME_HELP)]
    Run(RunArgs),
    /// Simulate the seed's machine: a NIC's TX ring, its driver and the CPU (no root needed).
    Sim(crate::sim::SimArgs),
    /// Receive on an interface and report loss, duplicates, reordering and latency.
    #[command(long_about = crate::rx::cli::RX_ABOUT, after_help = crate::rx::cli::RX_HELP)]
    Rx(crate::rx::cli::RxArgs),
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
    #[arg(long, value_enum, value_name = "MODE")]
    pub lab_rx: Option<RxMode>,

    /// Transmit path.
    #[arg(long, value_enum, default_value_t = BackendKind::AfPacket, value_name = "NAME")]
    pub backend: BackendKind,

    /// Ring backends: descriptors in the TX ring (a power of two) [tx_ring: 1024; af_xdp: 2048].
    #[arg(long, value_name = "N")]
    pub ring: Option<u32>,

    /// Ring backends: stop producing when fewer than S descriptors are free.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub stop_thresh: u32,

    /// Ring backends: after a stop, resume only when at least W descriptors are free
    /// (W >= S; W = S means no hysteresis) [half the ring].
    #[arg(long, value_name = "W")]
    pub start_thresh: Option<u32>,

    /// xdp_live: redirect one identical frame (sequence number 1, no per-packet writes),
    /// to measure what the program's per-packet writes cost.
    #[arg(long)]
    pub xdp_live_plain: bool,

    /// Frames to send (accepted or refused by the kernel); 0 = until Ctrl-C or --duration.
    #[arg(long, default_value_t = params::DEFAULT_COUNT, value_name = "N")]
    pub count: u64,

    /// Stop after this long (e.g. 10, 2.5s, 500ms, 3m), whichever of count/duration comes first.
    #[arg(long, value_parser = params::parse_duration, value_name = "TIME")]
    pub duration: Option<Duration>,

    /// Frame size in bytes without FCS (60 to MTU + 14).
    #[arg(long, default_value_t = params::DEFAULT_PKT_SIZE, value_name = "BYTES")]
    pub pkt_size: usize,

    /// Destination IPv4 address [lab: 10.99.0.2; --dev: required].
    #[arg(long, value_name = "IPV4")]
    pub dst: Option<Ipv4Addr>,

    /// Source IPv4 address [lab: 10.99.0.1; --dev: the interface's first address, else 0.0.0.0].
    #[arg(long, value_name = "IPV4")]
    pub src: Option<Ipv4Addr>,

    /// Destination MAC [lab: veth-rx's; --dev: required (pktgen's default of all zeros is
    /// dropped by every receiver)].
    #[arg(long, value_name = "MAC")]
    pub dst_mac: Option<MacAddr>,

    /// Source MAC [the sending interface's].
    #[arg(long, value_name = "MAC")]
    pub src_mac: Option<MacAddr>,

    /// UDP source port range [min, max), walked in order; max <= min means fixed at min.
    #[arg(long, default_value_t = params::DEFAULT_UDP_PORT, value_name = "PORT")]
    pub udp_src_min: u16,
    /// See --udp-src-min [default: the min].
    #[arg(long, value_name = "PORT")]
    pub udp_src_max: Option<u16>,
    /// UDP destination port range [min, max), walked in order.
    #[arg(long, default_value_t = params::DEFAULT_UDP_PORT, value_name = "PORT")]
    pub udp_dst_min: u16,
    /// See --udp-dst-min [default: the min].
    #[arg(long, value_name = "PORT")]
    pub udp_dst_max: Option<u16>,

    /// Gap between packets in ns, on an absolute schedule (a late sender catches up).
    #[arg(long, value_name = "NS", conflicts_with = "ratep")]
    pub delay: Option<u64>,

    /// Packets per second (sets delay = 1e9/ratep).
    #[arg(long, value_name = "PPS")]
    pub ratep: Option<u64>,

    /// pktgen flag; repeatable; `!NAME` clears. Implemented: UDPCSUM (compute the UDP
    /// checksum), NO_TIMESTAMP (zero timestamps).
    #[arg(long = "flag", value_name = "FLAG", allow_hyphen_values = true)]
    pub flags: Vec<String>,

    /// Frames handed to the kernel per syscall at most [af_packet, tx_ring: 64; af_xdp: 32,
    /// what the kernel moves per kick in copy mode; xdp_live: the kernel's batch size of live
    /// frames, 1 to 256, default 64].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024), value_name = "N")]
    pub batch: Option<u16>,

    /// SO_SNDBUF of the sending socket in bytes [the system default].
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<u32>,

    /// PACKET_QDISC_BYPASS: hand frames straight to the driver, skipping the qdisc
    /// [af_packet: false; tx_ring: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub qdisc_bypass: Option<bool>,

    /// Pin the sending thread to this CPU.
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<usize>,

    /// Also print one Cpu line per CPU.
    #[arg(long)]
    pub per_cpu: bool,

    /// Count only /proc/interrupts lines whose name or description contains NAME
    /// (e.g. a NIC queue like eth0-TxRx-0 or virtio0-output.0).
    #[arg(long, value_name = "NAME")]
    pub irq: Option<String>,

    /// Print one JSON document with every raw counter instead of the text report.
    #[arg(long)]
    pub json: bool,

    /// Lab: receive on veth-rx with upktgen's own receiver (--rx-backend: AF_XDP, or
    /// AF_PACKET TPACKET_V3) and add its figures to the report: frames, lost,
    /// duplicated and reordered sequence numbers, latency percentiles, the socket ring's
    /// drops, and the path from sent to received with each difference named. Implies
    /// --lab-rx stack.
    #[arg(long)]
    pub rx_analyze: bool,

    /// With --rx-analyze: also print the whole latency histogram.
    #[arg(long, requires = "rx_analyze")]
    pub hist: bool,

    /// With --rx-analyze: the receiver's backend, af_xdp (AF_XDP sockets fed by an XDP
    /// redirect program on veth-rx, copy mode on veth; before tc/nftables ingress),
    /// af_packet (TPACKET_V3 ring, after them) or auto (af_xdp where it works).
    #[arg(long, value_enum, default_value_t = crate::rx::recv::RxBackend::Auto, value_name = "B", requires = "rx_analyze")]
    pub rx_backend: crate::rx::recv::RxBackend,

    /// Print live statistics on standard error every --interval (TX pps and Mb/s from the
    /// sending interface, RX pps from the receiving one, the receiver's loss so far, CPU
    /// busy), and a last line for the whole run. On by default when standard error is a
    /// terminal.
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
    #[arg(long, value_parser = params::parse_duration, default_value = "1s", value_name = "TIME")]
    pub interval: Duration,
}

impl RunArgs {
    /// The validated pktgen flags.
    pub fn flags(&self) -> Result<params::Flags, String> {
        let mut f = params::Flags::default();
        for a in &self.flags {
            f.apply(a)?;
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn no_arguments_is_the_seed_run() {
        let c = Cli::try_parse_from(["upktgen"]).unwrap();
        assert!(c.cmd.is_none());
        assert_eq!(c.run.count, 4_000_000);
        assert_eq!(c.run.pkt_size, 60);
        assert!(c.run.dev.is_none());
    }

    #[test]
    fn pktgen_spellings() {
        let c = Cli::try_parse_from([
            "upktgen",
            "run",
            "--dev",
            "eth9",
            "--count",
            "0",
            "--pkt-size",
            "128",
            "--dst",
            "10.0.0.2",
            "--dst-mac",
            "02:00:00:00:00:02",
            "--udp-dst-min",
            "1000",
            "--udp-dst-max",
            "1010",
            "--ratep",
            "1000",
            "--flag",
            "UDPCSUM",
            "--flag",
            "!UDPCSUM",
            "--duration",
            "2s",
        ])
        .unwrap();
        let Some(Cmd::Run(r)) = c.cmd else { panic!() };
        assert_eq!(r.count, 0);
        assert_eq!(r.udp_dst_max, Some(1010));
        assert!(!r.flags().unwrap().udp_csum);
        assert_eq!(r.duration, Some(Duration::from_secs(2)));
    }

    #[test]
    fn bad_values_are_rejected_by_the_parser() {
        for args in [
            vec!["upktgen", "--dst-mac", "zz"],
            vec!["upktgen", "--dst", "10.0.0.300"],
            vec!["upktgen", "--count", "-1"],
            vec!["upktgen", "--udp-src-min", "70000"],
            vec!["upktgen", "--delay", "10", "--ratep", "5"],
            vec!["upktgen", "--batch", "0"],
            vec!["upktgen", "--duration", "soon"],
        ] {
            assert!(Cli::try_parse_from(&args).is_err(), "{args:?}");
        }
    }
}
