//! `upktgen script`'s and `upktgen functions-sh`'s options and help.

use super::run::TxArgs;
use crate::lab::RxMode;
use crate::units::parse_duration;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

pub const SCRIPT_ABOUT: &str =
    "Run a file of pktgen control commands, one per line, as the kernel's \
/proc/net/pktgen takes them.

A line is `TARGET COMMAND...` (what `echo \"COMMAND\" > /proc/net/pktgen/TARGET` does; that \
spelling is accepted too, and TARGET may be written /proc/net/pktgen/TARGET), `show TARGET` or \
`cat /proc/net/pktgen/TARGET` (prints the file), or a `#` comment. Targets:
  pgctrl       start (run every added device at once and wait for the end; Ctrl-C stops it),
               stop, reset (remove every device)
  kpktgend_N   the thread on CPU N: add_device DEV[@TAG], rem_device_all, max_before_softirq
  DEV[@TAG]    a device as added: count 1000, pkt_size 60, dst 10.0.0.2, flag UDPCSUM, ...
               (every pktgen parameter; see `upktgen run --help`)

Every command answers as pktgen does (`OK: ...` or `ERROR: ...`). ERROR answers go to standard \
error with the line number; OK answers to standard output with --verbose. A failed command does \
not stop the script (as a failed echo does not), unless --strict; the exit status is 1 when any \
command failed, 130 after Ctrl-C.

Where it runs: as with the kernel's pktgen, the devices are the interfaces of the current \
network namespace: `add_device eth1` adds eth1 if it exists there (else it answers \
`ERROR: can not add device eth1`, as the kernel does) and a start sends on it (standard error \
says so once). With --lab the script runs in a private lab instead (two network namespaces \
joined by a veth pair, created for each start and removed after it), where every device name \
stands for the lab's sending interface veth-tx (its @TAG kept: eth0@1 is veth-tx@1), so a \
script written for eth0 runs unchanged; the report and the device files then name veth-tx and \
say which name stands for it.";

pub const SCRIPT_HELP: &str = "Example:
  # two threads, one flow each
  pgctrl reset
  kpktgend_0 add_device eth0@0
  kpktgend_1 add_device eth0@1
  eth0@0 count 100000
  eth0@0 src_min 198.18.1.1
  eth0@1 count 100000
  echo \"src_min 198.18.2.1\" > /proc/net/pktgen/eth0@1
  pgctrl start
  cat /proc/net/pktgen/eth0@0
  show eth0@1

`upktgen script --lab two.pg` runs it in the private lab; without --lab it sends on eth0 (with \
a dst_mac set: pktgen's 00:00:00:00:00:00 is refused).

To run the kernel's samples/pktgen scripts: `upktgen functions-sh > functions.sh` beside them.";

/// `upktgen script`.
#[derive(Args, Debug, Clone)]
pub struct ScriptArgs {
    /// The script (`-` for standard input).
    #[arg(value_name = "FILE", required_unless_present = "write")]
    pub file: Option<PathBuf>,

    /// Run in a private lab: every device name stands for the lab's sending interface
    /// (veth-tx, its @TAG kept), and any name may be added. Without it the devices are
    /// the interfaces of the current network namespace, as the kernel's.
    #[arg(long, conflicts_with = "real")]
    pub lab: bool,

    /// The default, kept so that older command lines still work: the devices are the
    /// interfaces the script names, in the current network namespace.
    #[arg(long)]
    pub real: bool,

    /// Also print OK answers.
    #[arg(short, long)]
    pub verbose: bool,

    /// Stop at the first command that fails.
    #[arg(long)]
    pub strict: bool,

    /// Apply every command but do not send: `pgctrl start` only checks that the devices
    /// could start: each device's settings, the number of senders (a lab gives each a veth
    /// queue, at most 4096), the backend's options (ring, thresholds, batch, ...), each
    /// frame against the MTU, the walk. Only a start checks the privileges, creating the
    /// lab, opening the backend (sockets, rings, XDP programs), and without --lab the
    /// device's address.
    #[arg(long)]
    pub check: bool,

    /// Keep the state between invocations in DIR (used by functions-sh): replay DIR/log,
    /// run the commands, append them to the log, and write each file's text to DIR/proc/.
    #[arg(long, value_name = "DIR", hide = true)]
    pub session: Option<PathBuf>,

    /// With --session: one command for TARGET (the text after --write TARGET --line).
    #[arg(long, value_name = "TARGET", requires_all = ["session", "line"], hide = true)]
    pub write: Option<String>,

    /// With --write: the command, as echo would write it.
    #[arg(
        long,
        value_name = "COMMAND",
        requires = "write",
        allow_hyphen_values = true,
        hide = true
    )]
    pub line: Option<String>,

    /// The transmit path of every device, and its ring: as `upktgen run` takes them.
    #[command(flatten)]
    pub tx: TxArgs,

    /// With --lab, the lab's receiver: drop (XDP drops every frame) or stack [drop].
    #[arg(long, value_parser = super::choice::<RxMode>(), value_name = "MODE", requires = "lab")]
    pub lab_rx: Option<RxMode>,

    /// Stop every start after this long (count 0 runs until then), e.g. 2s, 500ms.
    #[arg(long, value_parser = parse_duration, value_name = "TIME")]
    pub duration: Option<Duration>,

    /// Seed of the random draws, for a reproducible walk.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Start each `pgctrl start`'s senders at this wall-clock instant (as `run --start-at`).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub start_at: Option<String>,

    /// Print each start's report as JSON.
    #[arg(long)]
    pub json: bool,

    /// No live statistics during a start, even on a terminal.
    #[arg(long)]
    pub no_live: bool,
}

pub const FUNCTIONS_SH_ABOUT: &str =
    "Print a bash replacement for the kernel's samples/pktgen/functions.sh.

Save it as functions.sh beside the kernel's sample scripts (pktgen_sample01_simple.sh ...) and \
they run unchanged, driving upktgen: pg_ctrl, pg_thread, pg_set, proc_cmd and pgset record the \
commands in a session kept by `upktgen script --session` (each answers at once, as the kernel \
would), `pg_ctrl start` sends and prints upktgen's report, and `cat /proc/net/pktgen/DEV` prints \
the device in the kernel's layout. Environment: UPKTGEN (the binary; default: this one), \
UPKTGEN_ARGS (options for `upktgen script`, e.g. `--backend tx_ring --ring 256 --start-thresh 16` or `--lab`), UPKTGEN_STATE \
(a directory that keeps the session, for -a append runs). As with the kernel, `-i eth1` sends \
on eth1 of the current network namespace (a device that does not exist is refused); with \
UPKTGEN_ARGS=--lab the scripts run in a private lab, every device name standing for the lab's \
sending interface veth-tx.

Example: upktgen functions-sh > samples/pktgen/functions.sh && \
UPKTGEN_ARGS=--lab samples/pktgen/pktgen_sample01_simple.sh -i eth0 -n 1000";
