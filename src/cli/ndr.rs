//! `upktgen ndr`'s options (the search itself is [`crate::ndr`]).

use std::path::PathBuf;

/// RFC 2544's frame sizes for Ethernet (bytes, with the FCS).
pub const RFC2544_SIZES: &str = "64,128,256,512,1024,1280,1518";

const NDR_ABOUT: &str = "The no-drop rate (NDR) and partial-drop rate (PDR) of what lies between the \
sender and the receiver, per frame size, with latency at and below it: RFC 2544's throughput test, \
searched as FD.io's MLRsearch does (short trials first, a full-length trial to confirm).

Each trial is a real run: `upktgen run --json --rx-analyze --ratep R --duration T --pkt-size S` \
followed by the RUN OPTIONS given after the ndr options (or after `--`), untouched: the far end \
is whatever they choose (by default the private lab, upktgen's own receiver on veth-rx). The loss \
of a trial is the receiver's sequence holes plus the tail after the last frame received, as a share \
of the frames sent. It is attributed: frames the receiver's own socket or ring dropped are the \
receiver's, frames counted as sent that never left the sending interface are the sender's, and \
the rest the path's (the DUT's). A trial whose loss is the receiver's, or where the sender \
fell short of the asked rate by more than --rate-tolerance, is no DUT result: it is tried once \
more, then the search is capped there and the table says what bounded it (under a receiver's cap \
the highest pass below, confirmed at full length, is the result).";

const NDR_HELP: &str = "Frame sizes are RFC 2544's: the Ethernet frame with its 4-byte FCS \
(64 to 1518 for a 1500-byte MTU). upktgen's --pkt-size (pktgen's pkt_size) excludes the FCS: \
a 64-byte frame is --pkt-size 60. Mb/s in the table count the frame with its FCS; % of line \
rate adds the 20 bytes of preamble and inter-frame gap each frame takes on the wire.

Every trial is appended to the results file (JSON lines: a header, then one line per trial) as \
it ends; `--resume FILE` continues an interrupted search from it with the file's own settings \
(the trials it holds are not run again). A results file is data: the run options it holds that \
run a command, name a program or a file, or choose this host's interfaces (--dut-setup, \
--dut-setup-file, --peer, --peer-agent, --ssh-config, --replay, --dev, --rx-dev, \
--metrics-listen) are used only when given again after `--`, exactly as recorded; other options \
given beside --resume must be the file's. A search that failed (its trials gave no report) \
ends with status 1 after the table. Ctrl-C stops the running trial, prints what was found \
so far and exits with status 130. `upktgen compare A.jsonl B.jsonl` compares two results: the \
change in NDR per frame size. See docs/ndr.md.";

/// `upktgen ndr`.
#[derive(clap::Args, Debug, Clone)]
#[command(long_about = NDR_ABOUT, after_help = NDR_HELP)]
pub struct NdrArgs {
    /// Frame sizes in bytes with the FCS, comma-separated (64 to 9018)
    /// [64,128,256,512,1024,1280,1518].
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// The NDR's loss in percent: the share of frames a trial may lose and pass (0 = none;
    /// `0.001%`; the sign is optional) [0].
    #[arg(long, value_name = "PCT")]
    pub loss: Option<String>,
    /// The PDR's loss, searched beside the NDR (`none`: no PDR) [0.5%].
    #[arg(long, value_name = "PCT")]
    pub pdr: Option<String>,
    /// Length of a final trial (the one that confirms a result; 100 ms to 24 h) [10s].
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "TIME")]
    pub trial: Option<std::time::Duration>,
    /// Length of a searching trial [a tenth of --trial, at least 1 s, at most --trial].
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "TIME")]
    pub search_trial: Option<std::time::Duration>,
    /// Precision: a share of the rate (`1%`; 0.001 % to 50 %) or packets per second
    /// (`500`, `500pps`; at least 1) [1%].
    #[arg(long, value_name = "P")]
    pub precision: Option<String>,
    /// The first trial's rate in packets per second [the line rate when one is known
    /// (--line-rate, --dev's speed, a --config's layer1 speed or its sending interface's
    /// reported speed); else the sender's own ceiling, measured by an unpaced trial]. With
    /// a --config, at most its layer1 speed at the flows' mean frame.
    #[arg(long, value_name = "PPS")]
    pub max_rate: Option<f64>,
    /// The link's rate in Mb/s, for % of line rate and the default --max-rate [a
    /// --config's sending port's layer1 speed, else its interface's reported speed;
    /// --dev's /sys/class/net/IFACE/speed when it says; none in the lab]. With a --config,
    /// at most its layer1 speed.
    #[arg(long, value_name = "MBIT")]
    pub line_rate: Option<f64>,
    /// The lowest rate tried: a target losing there has no result [1 % of the first trial's].
    #[arg(long, value_name = "PPS")]
    pub min_rate: Option<f64>,
    /// How far the achieved rate may fall short of the asked one before the trial is the
    /// sender's [2%].
    #[arg(long, value_name = "PCT")]
    pub rate_tolerance: Option<String>,
    /// Search each frame size N times (rounds interleaved), for the spread of the NDR and
    /// for `compare` (1 to 100) [1].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100), value_name = "N")]
    pub repeat: Option<u32>,
    /// No latency trials at 10, 50 and 90 % of the NDR.
    #[arg(long)]
    pub no_latency: bool,
    /// The results file (JSON lines) [DIR/trials.jsonl with --out, else
    /// upktgen-ndr-<time>.jsonl here].
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    pub results: Option<PathBuf>,
    /// Continue the search recorded in FILE (appending to it); its commands, programs, files
    /// and interfaces must be given again after `--` (see below).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Print the result as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Write the table (CSV), every trial (CSV), SVG plots and index.html into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Search on the aggregate of an Open Traffic Generator config's flows (`run --config`):
    /// each trial sends every flow continuously, its rate scaled by one common factor so
    /// that they add up to the trial's rate; its loss is the sum of the flows', its latency
    /// that of all their frames together. Their sizes are the frames (not with --sizes);
    /// the ceiling is the sending port's line rate at their mean frame (its layer1 speed, or
    /// what its interface reports), or --max-rate (or --line-rate), one of which is needed
    /// where no speed is known (the private lab's ends).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// `upktgen run` options for every trial (the far end, backend, addresses, ...).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "RUN OPTIONS"
    )]
    pub run: Vec<String>,
}
