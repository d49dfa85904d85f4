//! Command-line interface.

use crate::backend::BackendKind;
use crate::lab::RxMode;
use crate::params;
use crate::wire::MacAddr;
use clap::{Args, Parser, Subcommand};
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
    Run(Box<RunArgs>),
    /// Simulate the seed's machine: a NIC's TX ring, its driver and the CPU (no root needed).
    Sim(Box<crate::sim::SimArgs>),
    /// Receive on an interface and report loss, duplicates, reordering and latency.
    #[command(long_about = crate::rx::cli::RX_ABOUT, after_help = crate::rx::cli::RX_HELP)]
    Rx(crate::rx::cli::RxArgs),
    /// Run a sweep file: a matrix of runs (or simulations), repeated, with a summary, plots
    /// and A/B comparisons (docs/sweep.md).
    Sweep(crate::sweep::SweepArgs),
    /// Compare two sets of runs: median change with a 95 % interval and a rank test (two
    /// `upktgen ndr` results files: the change in NDR per frame size).
    Compare(crate::sweep::CompareArgs),
    /// The no-drop and partial-drop rate per frame size (RFC 2544 throughput, MLRsearch-style
    /// search over real runs), with latency (docs/ndr.md).
    Ndr(Box<crate::ndr::NdrArgs>),
    /// Run a file of pktgen control commands (pgctrl, kpktgend_N, devices) as /proc/net/pktgen takes them.
    #[command(long_about = crate::script::SCRIPT_ABOUT, after_help = crate::script::SCRIPT_HELP)]
    Script(Box<crate::script::ScriptArgs>),
    /// Print a bash replacement for the kernel's samples/pktgen/functions.sh that drives upktgen.
    #[command(name = "functions-sh", long_about = crate::script::FUNCTIONS_SH_ABOUT)]
    FunctionsSh,
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

    /// pktgen's parameters, by pktgen's names (`--pkt-size` for pkt_size, ...).
    #[command(flatten)]
    pub pg: crate::pg::cli::PgArgs,

    /// Stop after this long (e.g. 10, 2.5s, 500ms, 3m), whichever of count/duration comes first.
    #[arg(long, value_parser = params::parse_duration, value_name = "TIME")]
    pub duration: Option<Duration>,

    /// Seed of the random draws (*_RND flags, IMIX, random flows, dst6 ranges), for a
    /// reproducible walk [a fresh one per run, printed in the report].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

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

    /// Pin the sending thread to this CPU (with -t N: threads on CPU, CPU+1, ...).
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<usize>,

    /// Sender threads, as the kernel's kpktgend_N: thread i sends as `DEV@i` on its own
    /// socket, pinned to CPU i, with `count` frames each; a rate (delay/rate/ratep) is the
    /// total, split evenly across the threads. In the lab, the veth pair gets one queue per
    /// thread.
    #[arg(short = 't', long = "threads", default_value_t = 1, value_name = "N")]
    pub threads: u16,

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

    /// Lab: run this shell command in the lab's receiving namespace once the lab is up,
    /// before the first frame is sent (e.g. an nftables rule on veth-rx's ingress that
    /// plays a device of known capacity; `upktgen ndr`'s tests use it). It must succeed.
    #[arg(long, value_name = "COMMAND")]
    pub lab_rx_setup: Option<String>,

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

    /// Write the frames the run would send to FILE (pcap, nanosecond timestamps, readable by
    /// tcpdump/tshark) instead of sending them, then exit. Frame k is stamped at the start's
    /// wall clock + its time on the run's schedule (delay/ratep/burst; 1 ns apart at delay
    /// 0), and so is pktgen's header in it. Needs no privilege and makes no lab: the source
    /// MAC/IPv4 default to the lab's sending end (02:00:00:99:00:01, 10.99.0.1), or with --dev
    /// to that interface's (read from sysfs; its IPv4 address needs CAP_NET_RAW; give --src
    /// otherwise).
    #[arg(long, value_name = "FILE", help_heading = "Capture and replay",
          conflicts_with_all = ["replay", "duration", "rx_analyze", "lab_rx"])]
    pub pcap: Option<std::path::PathBuf>,

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
    pub replay: Option<std::path::PathBuf>,

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
        value_enum,
        value_name = "MODE",
        requires = "replay",
        help_heading = "Capture and replay"
    )]
    pub replay_timing: Option<crate::replay::ReplayTiming>,

    /// With --replay-timing file: play the file X times as fast (0.5 = half speed) [1].
    #[arg(
        long,
        value_name = "X",
        requires = "replay",
        help_heading = "Capture and replay"
    )]
    pub replay_speed: Option<f64>,
}

impl RunArgs {
    /// The device configuration the options describe: pktgen's defaults but the seed's count,
    /// then every pktgen parameter in command-line order; in the lab, the destination
    /// defaults to the lab's receiving end.
    pub fn dev_config(&self, ifname: &str, lab: bool) -> Result<crate::pg::DevConfig, String> {
        let mut c = crate::pg::DevConfig::new(ifname);
        c.count = params::DEFAULT_COUNT;
        let rates: Vec<&str> = ["delay", "rate", "ratep"]
            .into_iter()
            .filter(|n| self.pg.has(n))
            .collect();
        if rates.len() > 1 {
            return Err(format!(
                "--{} and --{} both set the packet rate: give one of them",
                rates[0], rates[1]
            ));
        }
        // `rate` is Mb/s of min_pkt_size-byte frames, computed when it is applied (as in the
        // kernel); on the command line, where option order reads as irrelevant, it comes last
        // so that it uses the size given anywhere on the line.
        let (rates, rest): (Vec<_>, Vec<_>) = self.pg.items.iter().partition(|(n, _)| *n == "rate");
        for (name, value) in rest.into_iter().chain(rates) {
            c.set(name, value).map_err(|e| {
                let msg = e.strip_prefix("ERROR: ").unwrap_or(&e).to_string();
                format!("--{} {value}: {msg}", name.replace('_', "-"))
            })?;
        }
        if lab {
            if c.dst_min.is_empty() && !c.has(crate::pg::Flag::Ipv6) {
                c.dst_min = crate::lab::RX_IP.to_string();
            }
            if c.dst_mac == MacAddr::default() {
                c.dst_mac = crate::lab::RX_MAC;
            }
        }
        Ok(c)
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
        let d = c.run.dev_config("veth-tx", true).unwrap();
        assert_eq!(d.count, 4_000_000);
        assert_eq!((d.min_pkt_size, d.max_pkt_size), (60, 60));
        assert_eq!(d.dst_min, "10.99.0.2");
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
        let d = r.dev_config("eth9", false).unwrap();
        assert_eq!(d.count, 0);
        assert_eq!(d.udp_dst_max, 1010);
        assert_eq!(d.delay, 1_000_000);
        assert!(!d.has(crate::pg::Flag::Udpcsum));
        // --rate uses the frame size wherever it is given on the line.
        for args in [
            ["upktgen", "--rate", "100", "--pkt-size", "1500"],
            ["upktgen", "--pkt-size", "1500", "--rate", "100"],
        ] {
            let c = Cli::try_parse_from(args).unwrap();
            assert_eq!(
                c.run.dev_config("x", true).unwrap().delay,
                120_000,
                "{args:?}"
            );
        }
        assert_eq!(r.duration, Some(Duration::from_secs(2)));
    }

    #[test]
    fn bad_values_are_rejected_by_the_parser() {
        for args in [
            vec!["upktgen", "--batch", "0"],
            vec!["upktgen", "--duration", "soon"],
            vec!["upktgen", "--count", "-1"],
        ] {
            assert!(Cli::try_parse_from(&args).is_err(), "{args:?}");
        }
        // pktgen parameters are checked by the device language, naming the option.
        for (args, want) in [
            (vec!["upktgen", "--dst-mac", "zz"], "--dst-mac zz"),
            (vec!["upktgen", "--dst", "10.0.0.300"], "not an IPv4"),
            (vec!["upktgen", "--count", "many"], "--count many"),
            (vec!["upktgen", "--udp-src-min", "70000"], "65535"),
            (vec!["upktgen", "--delay", "10", "--ratep", "5"], "give one"),
            (vec!["upktgen", "--flag", "BOGUS"], "unknown"),
            (vec!["upktgen", "--vlan-p", "3"], "vlan_id first"),
        ] {
            let c = Cli::try_parse_from(&args).unwrap();
            let e = c.run.dev_config("veth-tx", true).unwrap_err();
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }
}
