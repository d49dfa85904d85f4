//! `ndr --config FILE`: the search on the aggregate of an OTG config's flows. Each trial is
//! `run --config FILE --config-rate R --duration T` (every flow continuous, its rate scaled
//! by one factor so that the flows add up to R frames per second), and its loss is the sum of
//! the flows' (sent by all, received of all at their receiving port). The frame sizes are
//! the flows': the search's one "size" is their mean, weighted by their rates. The
//! search's ceiling, unless `--max-rate` or `--line-rate` says otherwise, is the sending
//! port's line rate at that mean frame ([`ceiling_line`]): its `layer1` speed, else the
//! speed its interface's driver reports (`run::plan::streams::line_rate`).

use crate::run::plan::streams::port_line_bps;
use anyhow::{Result, anyhow, bail};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What the report says of the config: its file, its flows, and the frame size the search
/// stands on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aggregate {
    pub file: PathBuf,
    pub flows: Vec<String>,
    /// The flows' mean frame size in bytes with the FCS, weighted by their rates in frames
    /// per second, rounded up to a byte (so a ceiling at the line rate reckoned at it is
    /// never above the line).
    pub mean_frame: u32,
    /// The sending port's line rate in bits per second, when its `layer1` entry names a
    /// speed or its interface's driver reports one (a config whose flows leave from several
    /// ports is refused when read; one port sending to several before the first trial).
    pub line_bps: Option<u64>,
    /// The mean frame unrounded.
    #[serde(skip)]
    pub mean_exact: f64,
    /// The sending port's `layer1` speed: the line `run` holds every trial's flows to.
    #[serde(skip)]
    pub layer1_bps: Option<u64>,
}

/// The `--config FILE` among run options `run` (either spelling), when given.
pub fn config_in(run: &[String]) -> Option<PathBuf> {
    run.iter().enumerate().find_map(|(i, a)| {
        if a == "--config" {
            run.get(i + 1).map(PathBuf::from)
        } else {
            a.strip_prefix("--config=").map(PathBuf::from)
        }
    })
}

/// The rate-weighted mean of frames of `flows` (mean size in bytes, frames per second).
pub fn mean_frame(flows: &[(f64, f64)]) -> Option<f64> {
    let total: f64 = flows.iter().map(|f| f.1).sum();
    (total > 0.0 && total.is_finite())
        .then(|| flows.iter().map(|(size, pps)| size * pps).sum::<f64>() / total)
}

/// The config at `path`, read as `run --config` reads it.
pub fn read(path: &Path) -> Result<Aggregate> {
    let cfg = crate::run::plan::streams::read(path)?;
    let mut flows = Vec::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        let mean = f.size.mean();
        let pps = f
            .rate
            .pps(mean, port_line_bps(&cfg, &f.tx_port))
            .ok_or_else(|| {
                anyhow!(
                    "{}: flows[{i}].rate.percentage: a rate in percent needs the port's line rate (its layer1 speed, or the speed its interface's driver reports): give pps or a bit rate",
                    path.display()
                )
            })?;
        flows.push((mean, pps));
    }
    let Some(mean) = mean_frame(&flows) else {
        bail!("{}: no flow to send", path.display());
    };
    let tx = cfg.flows.first().map(|f| f.tx_port.as_str());
    if let (Some(tx), Some((i, other))) = (
        tx,
        cfg.flows
            .iter()
            .enumerate()
            .find(|(_, f)| Some(f.tx_port.as_str()) != tx),
    ) {
        // Said first: a missing ceiling (which several ports also leave unknown) is not why.
        bail!(
            "{}: flows[{i}].tx_rx.port.tx_name: the search sends one port's flows (flows[0] leaves from {tx:?}, this one from {:?}): give ndr a config of one sending port",
            path.display(),
            other.tx_port
        );
    }
    Ok(Aggregate {
        file: path.to_path_buf(),
        flows: cfg.flows.iter().map(|f| f.name.clone()).collect(),
        mean_frame: mean.ceil() as u32,
        line_bps: tx.and_then(|p| port_line_bps(&cfg, p)),
        mean_exact: mean,
        layer1_bps: tx.and_then(|p| cfg.line_bps(p)),
    })
}

/// The line rate (Mb/s) a config's search reckons with: `--line-rate` when given (it wins:
/// the link as it is, whatever the config says), else the sending port's (its `layer1`
/// speed, or what its interface reports).
/// Without `--max-rate` the search's ceiling is this line rate at the flows' mean frame on
/// the wire (with its preamble, delimiter and least gap: `line_pps`).
pub fn ceiling_line(line_rate: Option<f64>, layer1_bps: Option<u64>) -> Option<f64> {
    line_rate.or(layer1_bps.map(|b| b as f64 / 1e6))
}

/// `--sizes` may not be given beside `--config`: the flows give the frame sizes.
pub fn check_sizes(sizes: Option<&str>) -> Result<()> {
    if let Some(s) = sizes {
        bail!(
            "--sizes {s}: not with --config, whose flows give the frame sizes (the search is on their aggregate)"
        );
    }
    Ok(())
}

/// What ndr's options may not be beside `--config`, and the ceiling it needs: `max_rate`,
/// or `line` (`--line-rate`, or the sending port's `layer1` speed: [`ceiling_line`]).
pub fn check_options(sizes: Option<&str>, max_rate: Option<f64>, line: Option<f64>) -> Result<()> {
    check_sizes(sizes)?;
    if max_rate.is_none() && line.is_none() {
        bail!(
            "--config: give --max-rate PPS (or --line-rate MBIT, or a layer1 speed for the sending port): the flows' aggregate has no unpaced ceiling trial"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_config_is_found_among_the_run_options() {
        assert_eq!(
            config_in(&s(&["--lab", "dut", "--config", "a.yaml"])),
            Some(PathBuf::from("a.yaml"))
        );
        assert_eq!(
            config_in(&s(&["--config=b.json"])),
            Some(PathBuf::from("b.json"))
        );
        assert_eq!(config_in(&s(&["--lab", "dut"])), None);
    }

    #[test]
    fn the_mean_frame_is_weighted_by_the_rates() {
        // 1,000 pps of 64 bytes and 3,000 of 1,518: (64,000 + 4,554,000) / 4,000 = 1,154.5.
        assert_eq!(
            mean_frame(&[(64.0, 1000.0), (1518.0, 3000.0)]),
            Some(1154.5)
        );
        assert_eq!(mean_frame(&[]), None);
    }

    #[test]
    fn sizes_and_no_ceiling_are_refused() {
        let e = check_options(Some("64"), Some(1000.0), None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--sizes 64: not with --config"), "{e}");
        let e = check_options(None, None, None).unwrap_err().to_string();
        assert!(e.contains("--max-rate"), "{e}");
        check_options(None, Some(1000.0), None).unwrap();
        check_options(None, None, Some(1000.0)).unwrap();
    }

    #[test]
    fn the_ceilings_line_is_the_line_rate_given_else_the_layer1_speed() {
        assert_eq!(ceiling_line(None, Some(10_000_000)), Some(10.0));
        assert_eq!(ceiling_line(Some(40.0), Some(10_000_000)), Some(40.0));
        assert_eq!(ceiling_line(Some(40.0), None), Some(40.0));
        assert_eq!(ceiling_line(None, None), None);
        // At the flows' mean frame of 881 bytes, 10 Mb/s on the wire is 10^7 / (901 x 8)
        // = 1,387.3 frames a second: the ceiling trial asks 1,387.
        let line = ceiling_line(None, Some(10_000_000)).unwrap();
        assert_eq!(
            crate::experiment::searching::line_pps(881, line).floor(),
            1387.0
        );
    }
}
