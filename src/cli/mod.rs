//! The command line: clap structs and help text only. Nothing here decides a default that
//! a run depends on or refuses a combination of options: [`crate::run::plan`] does, once.
//! Nothing below the run layer imports this module.
//!
//! - [`run`]: `upktgen run`'s options, in groups (`#[command(flatten)]`) that `script` shares.
//! - [`rx`], [`script`], [`sweep`], [`manual`]: those subcommands' options (`rx` shares
//!   [`LiveArgs`]).
//!   `sim` keeps its own beside its code ([`crate::sim::SimArgs`]), which does not import
//!   this module.

pub(crate) mod manual;
pub(crate) mod ndr;
pub mod otg;
pub mod pg;
pub(crate) mod rfc2544;
pub(crate) mod run;
pub(crate) mod rx;
pub(crate) mod script;
pub(crate) mod sweep;

pub use run::{LiveArgs, RingArgs, RunArgs, TxArgs};
pub use script::ScriptArgs;
pub use sweep::{CompareArgs, SweepArgs};

use crate::choice::Choice;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};

/// The value parser of an option whose values are a lower layer's [`Choice`] (the engine and
/// the lab know no clap): its names as possible values, each with its doc comment as help,
/// for `--help`, the manual pages and the completions alike.
pub fn choice<T: Choice + Clone>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(
        T::ALL
            .iter()
            .map(|v| PossibleValue::new(v.name()).help(v.help())),
    )
    .try_map(|s| {
        T::from_name(&s).ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("unknown value '{s}'\n"),
            )
        })
    })
}

const ABOUT: &str = "A userspace packet generator for Linux with the kernel pktgen's vocabulary and Result arithmetic.

With no arguments, upktgen reproduces the 2007 pktgen benchmark it was born from: in a private lab \
(two network namespaces joined by a veth pair, created for the run and removed after it) it sends \
4,000,000 UDP packets of 60 bytes and prints pktgen's Result line with top's Cpu(s) line and the \
interrupt count, then what pktgen never showed: packets delivered, transmit-queue stops and wakes, \
softirqs. Needs root (CAP_NET_ADMIN, CAP_NET_RAW, CAP_SYS_ADMIN).";

pub const TIME_HELP: &str = "Time accounting (pktgen's Result line `OK: E(cB+dI) usec`):
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
    #[command(long_about = rx::RX_ABOUT, after_help = rx::RX_HELP)]
    Rx(rx::RxArgs),
    /// Run a sweep file: a matrix of runs (or simulations), repeated, with a summary, plots
    /// and A/B comparisons (docs/sweep.md).
    Sweep(SweepArgs),
    /// Compare two sets of runs: median change with a 95 % interval and a rank test (two
    /// `upktgen ndr` results files: the change in NDR per frame size).
    Compare(CompareArgs),
    /// Merge the JSON reports of several hosts' runs and receivers into one: per-host and
    /// total Result lines, the start skew, the reconciliation (docs/fleet.md).
    Merge(crate::merge::MergeArgs),
    /// The no-drop and partial-drop rate per frame size (RFC 2544 throughput, MLRsearch-style
    /// search over real runs), with latency (docs/ndr.md).
    Ndr(Box<ndr::NdrArgs>),
    /// RFC 2544's throughput, latency (with RFC 8219's PDV and IPDV), frame loss rate and
    /// back-to-back frames (with RFC 9004's buffer time) per frame size (docs/rfc2544.md).
    Rfc2544(Box<rfc2544::Rfc2544Args>),
    /// Run a file of pktgen control commands (pgctrl, kpktgend_N, devices) as /proc/net/pktgen takes them.
    #[command(long_about = script::SCRIPT_ABOUT, after_help = script::SCRIPT_HELP)]
    Script(Box<ScriptArgs>),
    /// Print a bash replacement for the kernel's samples/pktgen/functions.sh that drives upktgen.
    #[command(name = "functions-sh", long_about = script::FUNCTIONS_SH_ABOUT)]
    FunctionsSh,
    /// The far end of a two-ended run: JSON-RPC 2.0 on standard input and output, started by
    /// `run --peer` through `ip netns exec` or ssh (docs/agent.md). Ends when its input closes.
    #[command(long_about = AGENT_ABOUT)]
    Agent(AgentArgs),
    /// Serve the Open Traffic Generator API, so that snappi scripts drive upktgen
    /// (docs/otg-server.md).
    #[command(long_about = otg::OTG_ABOUT, after_help = otg::OTG_HELP)]
    Otg(Box<otg::OtgArgs>),
    /// Write the manual pages: upktgen.1 and one per subcommand.
    #[command(long_about = manual::MAN_ABOUT)]
    Man(manual::ManArgs),
    /// Print a shell completion script (bash, zsh, fish).
    #[command(long_about = manual::COMPLETIONS_ABOUT)]
    Completions(manual::CompletionsArgs),
}

/// `upktgen agent`'s options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AgentArgs {
    /// Serve each receiver's live counters (one endpoint for the agent's whole session; a
    /// new rx.start counts on from the previous receivers' totals, rx.stop sets the final
    /// figures) and linger after the session ends with --metrics-linger.
    #[command(flatten)]
    pub metrics: crate::metrics::MetricsArgs,

    /// While a receiver runs, stop it and exit when no request has come for TIME (the
    /// controller is gone without closing the channel: a lost management link); 0 never.
    /// The controller calls at least every 5 s while it sends.
    #[arg(long, value_parser = crate::units::parse_duration, default_value = crate::agent::proto::WATCHDOG, value_name = "TIME")]
    pub watchdog: std::time::Duration,

    /// A far end that misbehaves on purpose, for testing controllers (hidden).
    #[arg(long, value_name = "MODE", hide = true)]
    pub fake: Option<crate::agent::fake::Mode>,
}

const AGENT_ABOUT: &str = "The far end of a two-ended run. Reads JSON-RPC 2.0 requests from standard input, one per \
line, and answers each on standard output: hello (version check), clock, counters (interface counters), rx.start \
(a receiver with `upktgen rx`'s options), rx.stats, rx.stop (its report), shutdown. `upktgen run --peer URI` starts it \
through `ip netns exec NAME` (netns:NAME) or the system's ssh client (ssh://[user@]host[:port]); nobody needs to run it \
by hand. It ends when its input closes (the controller gone, a kill -9 included), on shutdown, on SIGINT/SIGTERM (at once, \
even inside rx.stop's wait) or when no request has come for --watchdog while a receiver runs (a lost management link), and \
every receiver it started stops with it (no XDP program is left attached). The protocol: docs/agent.md.";

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
