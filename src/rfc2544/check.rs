//! What `upktgen rfc2544` accepts: its options (the command line's and a resumed file's header
//! alike, checked on the values), a resumed file's records, the frame sizes against the link,
//! and the options given beside `--resume`. Every refusal is one line naming the option, before
//! anything is sent.

use super::{Header, Rfc2544Args};
use crate::experiment::searching::line_pps;
use crate::experiment::suite::{Record, SuiteConfig, Test};
use crate::experiment::trial::FCS;
use crate::ndr::{MAX_TRIAL_S, MIN_TRIAL_S};
use anyhow::{Result, anyhow, bail};
use std::path::Path;

/// The most latency trials or back-to-back repetitions asked for.
pub const MAX_REPS: u32 = 1000;
/// Ethernet's header before the MTU's payload.
const ETH_HEADER: u32 = 14;

const DEFAULT_LATENCY_TRIALS: u32 = 3;
const DEFAULT_LATENCY_S: f64 = 2.0;
const DEFAULT_LOSS_STEP: &str = "10%";
const DEFAULT_B2B_TRIALS: u32 = 3;
const DEFAULT_B2B_S: f64 = 2.0;

/// `--tests a,b`: each known, none twice; throughput added (the others need it).
pub fn parse_tests(s: &str) -> Result<Vec<Test>> {
    let mut given = Vec::new();
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let t = Test::from_name(w).ok_or_else(|| {
            anyhow!("--tests {s}: '{w}' is not a test (throughput, latency, loss, back-to-back)")
        })?;
        if given.contains(&t) {
            bail!("--tests {s}: {w} is given twice");
        }
        given.push(t);
    }
    if given.is_empty() {
        bail!("--tests: give at least one test");
    }
    Ok(Test::ALL
        .into_iter()
        .filter(|t| *t == Test::Throughput || given.contains(t))
        .collect())
}

/// `10%` or `10`: a share of the maximum rate, above 0 and at most 50 %.
pub fn parse_step(s: &str) -> Result<f64> {
    let t = s.trim();
    let v: f64 = t
        .strip_suffix('%')
        .unwrap_or(t)
        .trim()
        .parse()
        .map_err(|_| anyhow!("--loss-step {s}: not a percentage (e.g. 10%)"))?;
    let r = v / 100.0;
    check_step(r).map_err(|e| anyhow!("--loss-step {s}: {e}"))?;
    Ok(r)
}

fn check_step(r: f64) -> Result<()> {
    if !(r.is_finite() && r > 0.0 && r <= 0.5) {
        bail!(
            "must be above 0 % and at most 50 % of the maximum rate (a step of 0 never reaches a rate that loses nothing)"
        );
    }
    if r < 1e-3 {
        bail!("below 0.1 %: more than 1000 steps");
    }
    Ok(())
}

fn secs(d: Option<std::time::Duration>, default: f64) -> f64 {
    d.map_or(default, |d| d.as_secs_f64())
}

/// The header of a new run: ndr's (the throughput search) and the suite's settings.
pub fn header_from(args: &Rfc2544Args) -> Result<Header> {
    let a = &args.ndr;
    if a.no_latency {
        bail!(
            "--no-latency is ndr's (its latency below the NDR); rfc2544 runs latency as a test: leave it out, or leave latency out of --tests"
        );
    }
    if a.repeat.is_some_and(|n| n != 1) {
        bail!(
            "--repeat is ndr's; rfc2544 repeats its tests itself (--latency-trials, --b2b-trials)"
        );
    }
    let mut search = crate::ndr::header_from(a)?;
    search.latency = false;
    let tests = parse_tests(
        args.tests
            .as_deref()
            .unwrap_or("throughput,latency,loss,back-to-back"),
    )?;
    let b2b_s = secs(args.b2b_trial, DEFAULT_B2B_S);
    let max_rates = max_rates(&search);
    let max_burst = match args.max_burst {
        Some(n) => n,
        None => max_rates
            .iter()
            .flatten()
            .map(|m| (m * b2b_s).floor() as u64)
            .min()
            .unwrap_or(1)
            .max(1),
    };
    let suite = SuiteConfig {
        tests,
        latency_trials: args.latency_trials.unwrap_or(DEFAULT_LATENCY_TRIALS),
        latency_s: secs(args.latency_trial, DEFAULT_LATENCY_S),
        loss_step: parse_step(args.loss_step.as_deref().unwrap_or(DEFAULT_LOSS_STEP))?,
        loss_s: secs(args.loss_trial, search.config.final_s),
        b2b_trials: args.b2b_trials.unwrap_or(DEFAULT_B2B_TRIALS),
        max_burst,
        b2b_s,
    };
    let h = Header {
        upktgen_rfc2544: super::FORMAT,
        search,
        suite,
    };
    header(&h)?;
    Ok(h)
}

/// The maximum rate of each size (--max-rate, else the line rate's), as the search has it.
fn max_rates(h: &crate::ndr::Header) -> Vec<Option<f64>> {
    h.sizes
        .iter()
        .map(|&s| {
            h.config
                .max_rate
                .or_else(|| h.line_rate_mbps.map(|m| line_pps(s, m).floor()))
        })
        .collect()
}

/// What rfc2544 accepts, on the values (a command line's and a resumed header's alike).
pub fn header(h: &Header) -> Result<()> {
    crate::ndr::check_header(&h.search)?;
    let s = &h.suite;
    if h.search.repeat != 1 {
        bail!("--repeat {}: rfc2544 runs one round", h.search.repeat);
    }
    if s.tests.first() != Some(&Test::Throughput) {
        bail!("--tests: throughput must be among the tests (the others run at its rate)");
    }
    for (opt, n) in [
        ("--latency-trials", s.latency_trials),
        ("--b2b-trials", s.b2b_trials),
    ] {
        if !(1..=MAX_REPS).contains(&n) {
            bail!("{opt} {n}: must be 1 to {MAX_REPS}");
        }
    }
    for (opt, v) in [
        ("--latency-trial", s.latency_s),
        ("--loss-trial", s.loss_s),
        ("--b2b-trial", s.b2b_s),
    ] {
        if !(v.is_finite() && (MIN_TRIAL_S..=MAX_TRIAL_S).contains(&v)) {
            bail!("{opt} {v} s: must be 100 ms to 24 h");
        }
    }
    check_step(s.loss_step).map_err(|e| anyhow!("--loss-step {} %: {e}", s.loss_step * 100.0))?;
    let needs_max = s
        .tests
        .iter()
        .any(|t| matches!(t, Test::Loss | Test::BackToBack));
    let rates = max_rates(&h.search);
    if needs_max && rates.iter().any(Option::is_none) {
        bail!(
            "--tests loss and back-to-back run from the maximum frame rate: give --max-rate PPS or --line-rate MBIT (veth has no line rate)"
        );
    }
    if s.tests.contains(&Test::BackToBack) {
        if s.max_burst == 0 {
            bail!("--max-burst 0: a burst has at least one frame");
        }
        for (&size, m) in h.search.sizes.iter().zip(&rates) {
            let m = m.unwrap_or(0.0);
            let can = (m * s.b2b_s).floor() as u64;
            if s.max_burst > can {
                bail!(
                    "--max-burst {}: more frames than the sender can queue for one back-to-back trial: {size}-byte frames at the maximum rate ({m} pps) for --b2b-trial {} s are {can}; give a longer --b2b-trial or a shorter --max-burst",
                    s.max_burst,
                    s.b2b_s
                );
            }
        }
    }
    Ok(())
}

/// Every frame size fits the sending link: its MTU plus the Ethernet header and FCS (the
/// lab's veth: 1500; `--dev IF`: its MTU from sysfs, when it says).
pub fn links(h: &Header) -> Result<()> {
    let run = &h.search.run_args;
    let dev = run
        .iter()
        .position(|a| a == "--dev")
        .and_then(|i| run.get(i + 1))
        .or_else(|| run.iter().find_map(|a| a.strip_prefix("--dev=").map(|_| a)))
        .map(|d| d.trim_start_matches("--dev=").to_string());
    let (mtu, what) = match &dev {
        Some(d) if !d.contains('/') && !d.starts_with('.') => {
            match std::fs::read_to_string(format!("/sys/class/net/{d}/mtu"))
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok())
            {
                Some(m) => (m, format!("--dev {d}")),
                None => return Ok(()),
            }
        }
        Some(_) => return Ok(()),
        None => (crate::lab::MTU, "the lab's link".to_string()),
    };
    let max = mtu + ETH_HEADER + FCS;
    if let Some(&big) = h.search.sizes.iter().find(|&&s| s > max) {
        bail!(
            "--sizes: a {big}-byte frame does not fit {what} (MTU {mtu}: at most {max} bytes with the Ethernet header and FCS)"
        );
    }
    Ok(())
}

/// A record of a resumed file, checked against what a trial can measure and the header.
pub fn record(h: &Header, r: &Record) -> Result<()> {
    if !h.suite.tests.contains(&r.test) {
        bail!("test {} is not one of the header's", r.test.name());
    }
    let t = crate::ndr::TrialRecord {
        size: r.size,
        round: 1,
        request: r.request,
        obs: r.obs.clone(),
        figures: r.figures.clone(),
        seconds: r.seconds,
    };
    crate::ndr::check_record(&h.search, &t)?;
    let reps = match r.test {
        Test::Latency => h.suite.latency_trials,
        Test::BackToBack => h.suite.b2b_trials,
        _ => 1,
    };
    if !(1..=reps).contains(&r.rep) {
        bail!("repetition {} is not 1 to {reps}", r.rep);
    }
    match (r.test, r.burst) {
        (Test::BackToBack, Some(n)) if (1..=h.suite.max_burst).contains(&n) => {}
        (Test::BackToBack, _) => bail!("its burst is not 1 to --max-burst"),
        (_, None) => {}
        (_, Some(_)) => bail!("a burst in a test that sends none"),
    }
    Ok(())
}

/// Refuses options given beside `--resume` that differ from the file's settings.
pub fn given_beside_resume(args: &Rfc2544Args, h: &Header, path: &Path) -> Result<()> {
    crate::ndr::check_given_beside_resume(&args.ndr, &h.search, path)?;
    let s = &h.suite;
    let mut differ: Vec<String> = Vec::new();
    if let Some(t) = &args.tests
        && parse_tests(t)? != s.tests
    {
        differ.push(format!("--tests {t}"));
    }
    if args.latency_trials.is_some_and(|n| n != s.latency_trials) {
        differ.push("--latency-trials".into());
    }
    if args.b2b_trials.is_some_and(|n| n != s.b2b_trials) {
        differ.push("--b2b-trials".into());
    }
    if args.max_burst.is_some_and(|n| n != s.max_burst) {
        differ.push("--max-burst".into());
    }
    for (opt, d, v) in [
        ("--latency-trial", args.latency_trial, s.latency_s),
        ("--loss-trial", args.loss_trial, s.loss_s),
        ("--b2b-trial", args.b2b_trial, s.b2b_s),
    ] {
        if d.is_some_and(|d| d.as_secs_f64() != v) {
            differ.push(opt.into());
        }
    }
    if let Some(st) = &args.loss_step
        && parse_step(st)? != s.loss_step
    {
        differ.push(format!("--loss-step {st}"));
    }
    if !differ.is_empty() {
        bail!(
            "--resume {}: given beside --resume, {} differ from the file's settings; a resumed run keeps them: leave these out, or start a new run",
            path.display(),
            differ.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[&str]) -> Result<Header> {
        use clap::Parser;
        let mut v = vec!["upktgen", "rfc2544"];
        v.extend_from_slice(extra);
        let c = crate::cli::Cli::try_parse_from(v).unwrap();
        let Some(crate::cli::Cmd::Rfc2544(a)) = c.cmd else {
            panic!()
        };
        header_from(&a)
    }

    #[test]
    fn bad_input_is_one_line_naming_the_option() {
        for (args, want) in [
            (
                &["--loss-step", "0", "--max-rate", "1000"][..],
                "--loss-step 0: must be above 0 %",
            ),
            (&["--loss-step", "x"], "--loss-step x: not a percentage"),
            (&["--tests", "latency,foo"], "'foo' is not a test"),
            (&["--tests", "loss"], "give --max-rate PPS or --line-rate"),
            (
                &["--max-rate", "1000", "--max-burst", "5000"],
                "--max-burst 5000: more frames than the sender can queue",
            ),
            (&["--max-rate", "1000", "--max-burst", "0"], "--max-burst 0"),
            (
                &["--latency-trials", "0", "--tests", "latency"],
                "--latency-trials 0",
            ),
            (&["--no-latency"], "--no-latency is ndr's"),
        ] {
            let e = parse(args).unwrap_err().to_string();
            assert!(e.contains(want), "{args:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let h = parse(&["--tests", "latency", "--sizes", "64"]).unwrap();
        assert_eq!(h.suite.tests, [Test::Throughput, Test::Latency]);
        let h = parse(&["--max-rate", "1000", "--b2b-trial", "3s"]).unwrap();
        assert_eq!(h.suite.max_burst, 3000);
        assert_eq!(h.suite.tests.len(), 4);
        // A frame the lab's link cannot carry.
        let h = parse(&["--sizes", "64,1519", "--tests", "latency"]).unwrap();
        let e = links(&h).unwrap_err().to_string();
        assert!(
            e.contains("a 1519-byte frame does not fit the lab's link (MTU 1500"),
            "{e}"
        );
        links(&parse(&["--sizes", "1518", "--tests", "latency"]).unwrap()).unwrap();
    }
}
