//! `upktgen sweep`'s and `upktgen compare`'s options.

use std::path::PathBuf;

/// Where the CPUs' cpufreq directories are.
pub const SYSFS_CPU: &str = "/sys/devices/system/cpu";

/// `upktgen sweep`: run a sweep file, or redraw a finished sweep's report.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "See docs/sweep.md for the file format. Repetitions are interleaved \
(repetition 1 of every point, then repetition 2, ...) so slow drift spreads over all points."
)]
pub struct SweepArgs {
    /// The sweep file (TOML): [sweep], [base], [[dimension]], [compare].
    #[arg(value_name = "FILE", required_unless_present = "redraw")]
    pub file: Option<PathBuf>,

    /// Write runs.json, runs.csv, summary.csv, SVG plots and index.html into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Run even when the sweep has more than 200 runs.
    #[arg(long)]
    pub yes: bool,

    /// Print the points and the command line of each, run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Redraw the tables, plots and index.html of DIR from its runs.json, without rerunning.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["file", "out", "dry_run"])]
    pub redraw: Option<PathBuf>,

    /// Where the CPUs' cpufreq directories are (for tests).
    #[arg(long, hide = true, default_value = SYSFS_CPU, value_name = "DIR")]
    pub cpufreq_root: PathBuf,
}

/// `upktgen compare`: A/B between two sets of runs.
#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "Each FILE is a sweep's runs.json (pick a point with --a/--b \
NAME=VALUE[,NAME=VALUE], or a label), one run's JSON (upktgen run --json, upktgen sim --json) \
or a JSON array of such runs. With one runs.json and no selectors, its [compare] section is used."
)]
pub struct CompareArgs {
    /// Sample A (the baseline).
    #[arg(value_name = "A.json")]
    pub a: PathBuf,
    /// Sample B [the same file as A, with --b].
    #[arg(value_name = "B.json")]
    pub b: Option<PathBuf>,
    /// Which point of A's runs.json: NAME=VALUE[,NAME=VALUE] or a point's label.
    #[arg(long = "a", value_name = "SELECTOR")]
    pub sel_a: Option<String>,
    /// Which point of B's runs.json.
    #[arg(long = "b", value_name = "SELECTOR")]
    pub sel_b: Option<String>,
}
