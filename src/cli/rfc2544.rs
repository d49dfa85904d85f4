//! `upktgen rfc2544`'s options (the tests themselves are [`crate::rfc2544`]).

const ABOUT: &str =
    "RFC 2544's four benchmarks of what lies between the sender and the receiver, per \
frame size: throughput (the no-drop rate, searched as `upktgen ndr` searches it), latency at that \
rate (min, mean, median, p99, max, with RFC 8219's PDV and IPDV), the frame loss rate from the \
maximum rate down in steps until two steps lose nothing, and back-to-back frames (the longest \
burst at the maximum rate that loses nothing, searched, repeated, with RFC 9004's corrected \
buffer-time estimate from the measured throughput).

Every trial is a real child `upktgen run --json` with the RUN OPTIONS given after the options (or \
after `--`), untouched, as ndr's: the far end is whatever they choose (the private lab, \
`--lab dut --dut-setup CMD`, `--peer URI --peer-dev IF`, `--dev IF --rx-dev IF2`). The loss and \
back-to-back tests need the maximum rate: --max-rate PPS or --line-rate MBIT (veth has none).";

const HELP: &str = "RFC 2544 asks 20 latency trials of 120 s and 50 back-to-back repetitions of at \
least 2 s each; the defaults here are shorter (3 x 2 s, 3 repetitions) and the report says what \
ran. Every trial is appended to the results file as it ends; `--resume FILE` continues from it \
(its commands, programs, files and interfaces must be given again after `--`, as for ndr). \
Ctrl-C prints the tables so far and exits with status 130. `upktgen compare A B` compares two \
results files (or --out directories). See docs/rfc2544.md.";

/// `upktgen rfc2544`.
#[derive(clap::Args, Debug, Clone)]
#[command(long_about = ABOUT, after_help = HELP)]
pub struct Rfc2544Args {
    /// The tests, comma-separated: throughput, latency, loss, back-to-back (throughput always
    /// runs: the others need it) [all four].
    #[arg(long, value_name = "LIST")]
    pub tests: Option<String>,
    /// Latency trials per frame size at the throughput rate (1 to 1000; RFC 2544: 20) [3].
    #[arg(long, value_name = "N")]
    pub latency_trials: Option<u32>,
    /// Length of a latency trial (RFC 2544: 120 s) [2s].
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "TIME")]
    pub latency_trial: Option<std::time::Duration>,
    /// The frame loss test's step down, in percent of the maximum rate (above 0, at most 50;
    /// RFC 2544: 10) [10%].
    #[arg(long, value_name = "PCT")]
    pub loss_step: Option<String>,
    /// Length of a frame loss trial [--trial].
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "TIME")]
    pub loss_trial: Option<std::time::Duration>,
    /// Back-to-back repetitions, each an independent search of the burst length (1 to 1000;
    /// RFC 2544: 50) [3].
    #[arg(long, value_name = "N")]
    pub b2b_trials: Option<u32>,
    /// A back-to-back trial's cap: the longest a burst may take at the maximum rate (RFC 2544:
    /// at least 2 s) [2s].
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "TIME")]
    pub b2b_trial: Option<std::time::Duration>,
    /// The longest burst searched, in frames [the maximum rate x --b2b-trial].
    #[arg(long, value_name = "FRAMES")]
    pub max_burst: Option<u64>,
    /// ndr's options (the throughput search) and the run options.
    #[command(flatten)]
    pub ndr: super::ndr::NdrArgs,
}
