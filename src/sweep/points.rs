//! From a sweep file to the points it runs: every combination of the dimensions' values,
//! each turned into the options of one `upktgen run` / `upktgen sim`, a trial of the
//! experiment core ([`crate::experiment::Trial`]) checked by the real command-line
//! definitions and the run's plan before anything runs.

use super::file::{Command, Spec, Val, ValueError};
use crate::cli::Cli;
use crate::experiment::trial::{self, Ask, Coords, Trial};
use anyhow::{Result, bail};
use clap::{ArgAction, CommandFactory};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};

/// A sweep given up on Ctrl-C before it ran (while its file was read or checked).
#[derive(Debug, Clone, Copy)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Built-in parameters the sweep itself implements (not options of the command).
pub const LOAD: &str = "load";
pub const CPU_MHZ: &str = "cpu_mhz";
/// Most competing busy threads a `load` value may ask for.
pub const MAX_LOAD: i64 = 256;

/// Options the sweep sets itself; a file may not.
const RESERVED: [&str; 8] = [
    "json",
    "live",
    "no_live",
    "json_lines",
    "interval",
    "preset",
    "sweep",
    "help",
];

/// One combination of the dimensions' values.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    /// 0-based, in expansion order (the first dimension varies slowest).
    pub index: usize,
    /// The dimensions' labels joined by ", " (e.g. "hysteresis, load=1").
    pub label: String,
    /// The value of every dimension, in file order.
    pub values: Vec<(String, Val)>,
    /// Arguments after the program name (`run ... --json --no-live`).
    pub args: Vec<String>,
    /// Competing busy threads during the run.
    pub load: u32,
    /// CPU clock to set, in MHz.
    pub cpu_mhz: Option<f64>,
}

/// Most runs (points x repetitions) one sweep may hold, `--yes` or not.
pub const MAX_RUNS: usize = 100_000;

/// Total points of `spec` (the product of the dimensions' sizes; 1 without dimensions), or
/// `None` when that product overflows.
#[cfg(test)]
pub fn count(spec: &Spec) -> Option<usize> {
    let sizes: Vec<usize> = spec.dimensions.iter().map(|d| d.values.len()).collect();
    count_of(&sizes)
}

fn count_of(sizes: &[usize]) -> Option<usize> {
    sizes.iter().try_fold(1usize, |n, &k| n.checked_mul(k))
}

/// Points and runs (points x repetitions) of `spec`, refused above [`MAX_RUNS`] with an
/// error naming the file. Cheap: nothing is expanded.
pub fn size(spec: &Spec) -> Result<(usize, usize)> {
    let sizes: Vec<usize> = spec.dimensions.iter().map(|d| d.values.len()).collect();
    size_of(&spec.lines.file, &sizes, spec.repetitions)
}

/// [`size`] from the dimensions' sizes alone (what the file parser knows before it looks at
/// a value).
pub fn size_of(file: &str, sizes: &[usize], reps: u32) -> Result<(usize, usize)> {
    let reps = reps as usize;
    match count_of(sizes).and_then(|n| Some((n, n.checked_mul(reps)?))) {
        Some((n, runs)) if runs <= MAX_RUNS => Ok((n, runs)),
        Some((n, runs)) => bail!(
            "{file}: {runs} runs ({n} points x {reps} repetitions): more than {MAX_RUNS}, the most \
             one sweep may run; use fewer values or dimensions"
        ),
        None => bail!(
            "{file}: the dimensions' values ({}) make too many points to count; one sweep may run \
             at most {MAX_RUNS}",
            sizes
                .iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
                .join(" x ")
        ),
    }
}

/// The subcommand's clap definition.
fn command_def(cmd: Command) -> clap::Command {
    Cli::command()
        .find_subcommand(cmd.name())
        .cloned()
        .expect("run and sim are subcommands")
}

/// Whether `name` (with `_`) is a long option of `cmd`, and whether it takes no value.
fn option_kind(def: &clap::Command, name: &str) -> Option<bool> {
    let long = name.replace('_', "-");
    def.get_arguments()
        .find(|a| a.get_long() == Some(long.as_str()))
        .map(|a| matches!(a.get_action(), ArgAction::SetTrue | ArgAction::SetFalse))
}

/// Arguments for one parameter (`--name=value`, a bare `--name` for switches, repeated for
/// lists), or a message saying what is wrong with the value.
fn param_args(
    def: &clap::Command,
    name: &str,
    v: &Val,
) -> std::result::Result<Vec<String>, ValueError> {
    let flag = format!("--{}", name.replace('_', "-"));
    let switch = option_kind(def, name).unwrap_or(false);
    Ok(match v {
        Val::Bool(true) if switch => vec![flag],
        Val::Bool(false) if switch => vec![],
        _ if switch => return Err(ValueError::NotSwitch(name.to_string())),
        Val::List(items) => items
            .iter()
            .map(|x| format!("{flag}={}", x.text()))
            .collect(),
        v => vec![format!("{flag}={}", v.text())],
    })
}

/// Checks a name used in [base] or as a dimension.
fn check_name(
    def: &clap::Command,
    cmd: Command,
    name: &str,
) -> std::result::Result<(), ValueError> {
    if name == LOAD || name == CPU_MHZ {
        if cmd == Command::Sim {
            return Err(ValueError::RunOnly(name.to_string()));
        }
        return Ok(());
    }
    if RESERVED.contains(&name) {
        return Err(ValueError::Reserved(name.to_string()));
    }
    if option_kind(def, name).is_none() {
        let mut known: Vec<String> = def
            .get_arguments()
            .filter_map(|a| a.get_long())
            .map(|l| l.replace('-', "_"))
            .filter(|l| !RESERVED.contains(&l.as_str()))
            .collect();
        if cmd == Command::Run {
            known.push(LOAD.into());
            known.push(CPU_MHZ.into());
        }
        return Err(ValueError::Unknown {
            name: name.to_string(),
            command: cmd.name(),
            known,
        });
    }
    Ok(())
}

fn builtin(name: &str, v: &Val) -> std::result::Result<(Option<u32>, Option<f64>), ValueError> {
    match name {
        LOAD => match v {
            Val::Int(n) if (0..=MAX_LOAD).contains(n) => Ok((Some(*n as u32), None)),
            _ => Err(ValueError::Load {
                value: v.text(),
                max: MAX_LOAD,
            }),
        },
        CPU_MHZ => match v.as_f64() {
            Some(f) if f > 0.0 && f.is_finite() => Ok((None, Some(f))),
            _ => Err(ValueError::CpuMhz(v.text())),
        },
        _ => Ok((None, None)),
    }
}

/// Whether `args` (`run ...` or `sim ...`) parse as the subcommand, and for `run` whether
/// its pktgen parameters are accepted as `run` accepts them.
fn parses(args: &[String]) -> std::result::Result<(), trial::Refused> {
    trial::parse(args).map(drop)
}

/// What every point shares, once its names and values are checked.
pub struct Checked {
    def: clap::Command,
    base_args: Vec<String>,
    base_load: u32,
    base_mhz: Option<f64>,
}

/// Checks `spec`'s size ([`size`]), names and values (each alone) without building a point:
/// cheap, so it runs before the sweep asks to be confirmed. Errors name the line of the
/// offending key or value. Given up with [`Interrupted`] once `stop` is set (Ctrl-C).
pub fn check_until(spec: &Spec, stop: &AtomicBool) -> Result<Checked> {
    size(spec)?;
    let def = command_def(spec.command);
    let l = &spec.lines;
    // Names first: an unknown parameter is the commonest mistake.
    for (i, (name, v)) in spec.base.iter().enumerate() {
        let (kl, vl) = l.base.get(i).copied().unwrap_or((l.sweep, l.sweep));
        check_name(&def, spec.command, name).map_err(|e| l.at(kl, e))?;
        builtin(name, v).map_err(|e| l.at(vl, e))?;
    }
    for (i, d) in spec.dimensions.iter().enumerate() {
        let (nl, vls) = l.dims.get(i).cloned().unwrap_or((l.sweep, vec![]));
        check_name(&def, spec.command, &d.name).map_err(|e| l.at(nl, e))?;
        for (k, v) in d.values.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                bail!(Interrupted);
            }
            let vl = vls.get(k).copied().unwrap_or(nl);
            builtin(&d.name, v).map_err(|e| l.at(vl, e))?;
            // Each value alone must parse: the error then points at the value's line.
            if d.name != LOAD && d.name != CPU_MHZ {
                let mut args = vec![spec.command.name().to_string()];
                args.extend(param_args(&def, &d.name, v).map_err(|e| l.at(vl, e))?);
                if let Err(e) = parses(&args)
                    && !e.only_missing()
                {
                    return Err(l.at(vl, format!("{} = {}: {}", d.name, v.text(), e.first_line())));
                }
            }
        }
    }
    let mut base_args = Vec::new();
    let (mut base_load, mut base_mhz) = (0u32, None);
    for (i, (name, v)) in spec.base.iter().enumerate() {
        let vl = l.base.get(i).map(|x| x.1).unwrap_or(l.sweep);
        let (ld, mhz) = builtin(name, v).map_err(|e| l.at(vl, e))?;
        if name == LOAD || name == CPU_MHZ {
            base_load = ld.unwrap_or(base_load);
            base_mhz = mhz.or(base_mhz);
            continue;
        }
        let a = param_args(&def, name, v).map_err(|e| l.at(vl, e))?;
        let mut one = vec![spec.command.name().to_string()];
        one.extend(a.iter().cloned());
        if let Err(e) = parses(&one)
            && !e.only_missing()
        {
            return Err(l.at(vl, format!("{name} = {}: {}", v.text(), e.first_line())));
        }
        base_args.extend(a);
    }
    Ok(Checked {
        def,
        base_args,
        base_load,
        base_mhz,
    })
}

/// Expands `spec` into its points and checks every one with the command's real option
/// parser. Errors name the line of the offending key or value.
#[cfg(test)]
pub fn expand(spec: &Spec) -> Result<Vec<Point>> {
    expand_until(spec, &AtomicBool::new(false)).map(|(p, _)| p)
}

/// [`expand`], with each point's trial checked by the run's plan (`trials[i]` is point
/// `i`'s), given up with [`Interrupted`] once `stop` is set (Ctrl-C).
pub fn expand_until(spec: &Spec, stop: &AtomicBool) -> Result<(Vec<Point>, Vec<Trial>)> {
    let Checked {
        def,
        base_args,
        base_load,
        base_mhz,
    } = check_until(spec, stop)?;
    let l = &spec.lines;
    let (total, _) = size(spec)?;
    let mut points = Vec::with_capacity(total);
    let mut trials = Vec::with_capacity(total);
    for index in 0..total {
        if stop.load(Ordering::Relaxed) {
            bail!(Interrupted);
        }
        // The first dimension varies slowest, the last fastest.
        let mut idx = vec![0; spec.dimensions.len()];
        let mut rest = index;
        for (k, d) in spec.dimensions.iter().enumerate().rev() {
            idx[k] = rest % d.values.len();
            rest /= d.values.len();
        }
        let mut options = base_args.clone();
        let (mut load, mut cpu_mhz) = (base_load, base_mhz);
        let mut values = Vec::new();
        let mut labels = Vec::new();
        for (k, d) in spec.dimensions.iter().enumerate() {
            let v = &d.values[idx[k]];
            values.push((d.name.clone(), v.clone()));
            labels.push(d.labels[idx[k]].clone());
            let (ld, mhz) = builtin(&d.name, v)?;
            if d.name == LOAD {
                load = ld.unwrap_or(0);
            } else if d.name == CPU_MHZ {
                cpu_mhz = mhz;
            } else {
                options.extend(param_args(&def, &d.name, v)?);
            }
        }
        let ask = Ask::point(spec.command, options);
        let args = ask.argv();
        let label = if labels.is_empty() {
            "all".to_string()
        } else {
            labels.join(", ")
        };
        let t = Trial::new(
            label.clone(),
            Coords::Point {
                point: index,
                rep: 1,
            },
            ask,
        );
        let t = match t.checked() {
            Ok(t) => t,
            Err(e) => {
                // A combination the parser or the plan refuses (e.g. two options that conflict).
                let line = idx
                    .iter()
                    .enumerate()
                    .map(|(k, &i)| l.dims.get(k).and_then(|d| d.1.get(i).copied()))
                    .next()
                    .flatten()
                    .unwrap_or(l.sweep);
                bail!(
                    "{}:{}: point {} ({label}): {}",
                    l.file,
                    line,
                    index + 1,
                    e.first_line()
                );
            }
        };
        trials.push(t);
        points.push(Point {
            index,
            label,
            values,
            args,
            load,
            cpu_mhz,
        });
    }
    Ok((points, trials))
}

#[cfg(test)]
mod tests {
    use super::super::file::{self, parse};
    use super::*;

    fn expand_src(src: &str) -> Result<Vec<Point>> {
        expand(&parse("s.toml", src)?)
    }

    fn err(src: &str) -> String {
        format!("{:#}", expand_src(src).unwrap_err())
    }

    #[test]
    fn grid_order_and_arguments() {
        let p = expand_src(
            "[sweep]\ncommand = \"run\"\n[base]\nbackend = \"tx_ring\"\ncount = 1000\nflag = [\"UDPCSUM\"]\nper_cpu = true\n\
             [[dimension]]\nname = \"start_thresh\"\nvalues = [1, 16]\nlabels = [\"a\", \"b\"]\n\
             [[dimension]]\nname = \"load\"\nvalues = [0, 2]\n",
        )
        .unwrap();
        assert_eq!(p.len(), 4);
        let labels: Vec<_> = p.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["a, load=0", "a, load=2", "b, load=0", "b, load=2"]);
        assert_eq!(
            p[3].args,
            [
                "run",
                "--backend=tx_ring",
                "--count=1000",
                "--flag=UDPCSUM",
                "--per-cpu",
                "--start-thresh=16",
                "--json",
                "--no-live"
            ]
        );
        assert_eq!((p[3].load, p[2].load), (2, 0));
    }

    #[test]
    fn a_point_the_plan_refuses_fails_the_sweep_before_any_runs_naming_it() {
        // 39 rates at one thread, then the same at two: with --rx-analyze two threads are
        // refused by the run's plan (not by the option parser), first at point 40.
        let rates: Vec<String> = (1..=39).map(|i| (i * 1000).to_string()).collect();
        let src = format!(
            "[sweep]\ncommand = \"run\"\n[base]\ncount = 1000\nrx_analyze = true\n\
             [[dimension]]\nname = \"threads\"\nvalues = [1, 2]\n\
             [[dimension]]\nname = \"ratep\"\nvalues = [{}]\n",
            rates.join(", ")
        );
        let e = err(&src);
        assert!(e.contains(": point 40 ("), "{e}");
        assert!(e.contains("--rx-analyze with -t 2"), "{e}");
        // The 39 points before it plan: without the 40th the sweep is accepted.
        let ok = src.replace("values = [1, 2]", "values = [1]");
        assert_eq!(expand_src(&ok).unwrap().len(), 39);
    }

    #[test]
    fn sim_points_and_no_dimensions() {
        let p = expand_src("[sweep]\ncommand = \"sim\"\n[base]\ncount = 10\n").unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].args, ["sim", "--count=10", "--json"]);
        assert_eq!(p[0].label, "all");
    }

    #[test]
    fn unknown_parameter_names_its_line() {
        let e = err("[sweep]\ncommand = \"run\"\n[base]\ncount = 1\nfoo = 3\n");
        assert!(e.starts_with("s.toml:5: unknown parameter \"foo\""), "{e}");
        let e = err("[sweep]\ncommand = \"sim\"\n\n[[dimension]]\nname = \"rng\"\nvalues = [1]\n");
        assert!(e.starts_with("s.toml:5: unknown parameter \"rng\""), "{e}");
        let e = err("[sweep]\ncommand = \"sim\"\n[base]\nload = 1\n");
        assert!(
            e.starts_with("s.toml:4: ") && e.contains("only for command = \"run\""),
            "{e}"
        );
        let e = err("[sweep]\n[base]\njson = true\n");
        assert!(
            e.starts_with("s.toml:3: ") && e.contains("set by the sweep"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_their_line() {
        let e = err(
            "[sweep]\n[[dimension]]\nname = \"backend\"\nvalues = [\"tx_ring\",\n  \"warp\"]\n",
        );
        assert!(e.starts_with("s.toml:5: backend = warp: "), "{e}");
        let e = err("[sweep]\n[base]\ncount = -3\n");
        assert!(e.starts_with("s.toml:3: count = -3"), "{e}");
        let e = err("[sweep]\n[base]\nper_cpu = 3\n");
        assert!(e.starts_with("s.toml:3: per_cpu: a switch"), "{e}");
        let e = err("[sweep]\n[[dimension]]\nname = \"load\"\nvalues = [1, -1]\n");
        assert!(e.starts_with("s.toml:4: load = -1"), "{e}");
        let e = err("[sweep]\n[[dimension]]\nname = \"cpu_mhz\"\nvalues = [0]\n");
        assert!(e.starts_with("s.toml:4: cpu_mhz = 0"), "{e}");
    }

    /// A file of `dims` dimensions of `k` values each, `reps` repetitions.
    fn grid(dims: usize, k: usize, reps: u32) -> String {
        let mut src = format!("[sweep]\ncommand = \"sim\"\nrepetitions = {reps}\n");
        let vals: Vec<String> = (1..=k).map(|v| v.to_string()).collect();
        for d in 0..dims {
            src += &format!(
                "[[dimension]]\nname = \"d{d}\"\nvalues = [{}]\n",
                vals.join(", ")
            );
        }
        src
    }

    #[test]
    fn huge_grids_are_refused_before_anything_is_built() {
        // 10^23 overflows usize (a panic in debug); 2^64 wraps to 0 points in release.
        for (dims, k) in [(23, 10), (64, 2)] {
            // The file parser refuses it from the sizes alone, before any value is looked at.
            let e = format!("{:#}", parse("big.toml", &grid(dims, k, 1)).unwrap_err());
            assert!(
                e.starts_with("big.toml: the dimensions' values (") && e.contains("100000"),
                "{e}"
            );
            // A spec made otherwise is refused by size and expand too.
            let mut spec = parse("big.toml", &grid(1, k, 1)).unwrap();
            let d = spec.dimensions[0].clone();
            spec.dimensions = (0..dims)
                .map(|i| file::Dimension {
                    name: format!("d{i}"),
                    ..d.clone()
                })
                .collect();
            assert_eq!(count(&spec), None);
            let e = format!("{:#}", size(&spec).unwrap_err());
            assert!(
                e.starts_with("big.toml: the dimensions' values (") && e.contains("100000"),
                "{e}"
            );
            // Refused before the names are even looked at (d0 is no option of sim).
            let e = format!("{:#}", expand(&spec).unwrap_err());
            assert!(e.contains("too many points"), "{e}");
        }
        let spec = parse("big.toml", &grid(5, 10, 1)).unwrap();
        assert_eq!(size(&spec).unwrap(), (100_000, 100_000));
        let e = format!("{:#}", parse("big.toml", &grid(5, 10, 2)).err().unwrap());
        assert_eq!(
            e,
            "big.toml: 200000 runs (100000 points x 2 repetitions): more than 100000, the most \
             one sweep may run; use fewer values or dimensions"
        );
    }

    #[test]
    fn conflicting_combinations_are_caught_before_running() {
        let e = err("[sweep]\n[base]\ndelay = 10\n[[dimension]]\nname = \"ratep\"\nvalues = [5]\n");
        assert!(e.starts_with("s.toml:6: point 1"), "{e}");
    }
}
