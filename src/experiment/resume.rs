//! `ndr --resume FILE`: what a results file may decide, and what only the command line may;
//! and [`Replay`], the recorded outcomes answered again while they match the planner's trials.
//!
//! A results file is data: people share them. Its header's run options go to every trial,
//! so the options of `run` that run a command, name a program or a file, or choose where
//! frames go on this host ([`GIVEN_AGAIN`]) are taken from the command line only: the file's
//! must be given again after `--`, exactly as recorded, or the resume is refused naming them.
//! Any other run option given beside `--resume` must be the file's too (a resumed search
//! keeps its settings); one that differs is refused, not dropped. The options are read as
//! `run` itself reads them (its clap definition), so `--dut-setup=X` and `--dut-setup X` are
//! one option, and nothing can hide from the check by its spelling.

use anyhow::{Result, anyhow, bail};
use std::path::Path;

/// The options of `run` a resumed file may not bring, by clap id, with what they do.
pub const GIVEN_AGAIN: [(&str, &str); 11] = [
    (
        "config",
        "names a config file, whose ports choose where frames go",
    ),
    ("dut_setup", "runs a command"),
    ("dut_setup_file", "runs a file with sh"),
    ("peer", "starts a far end's agent, by ip netns exec or ssh"),
    ("peer_agent", "names the program run as the far end's agent"),
    (
        "ssh_config",
        "names ssh's configuration, which may run commands",
    ),
    ("pcap", "writes a file"),
    ("replay", "names a file to read and send"),
    ("dev", "names an interface of this host to send on"),
    ("rx_dev", "names an interface of this host to receive on"),
    ("metrics_listen", "opens a listening socket"),
];

/// One option as `run` read it: its clap id, its spelling, and its values as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    pub id: String,
    pub long: String,
    pub values: Vec<String>,
}

impl Given {
    /// `--dut-setup "a" --dut-setup "b"`, control characters escaped.
    pub fn text(&self) -> String {
        if self.values.is_empty() {
            return self.long.clone();
        }
        self.values
            .iter()
            .map(|v| format!("{} \"{}\"", self.long, crate::text::printable(v)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `args` as `upktgen run` reads them: each option given, in `run`'s order of definition.
pub fn run_options(args: &[String]) -> Result<Vec<Given>> {
    use clap::CommandFactory;
    use clap::parser::ValueSource;
    let top = crate::cli::Cli::command();
    let run = top
        .find_subcommand("run")
        .ok_or_else(|| anyhow!("no `run` command"))?
        .clone()
        .no_binary_name(true)
        // What is missing or in conflict is the trial's to refuse (the whole list is
        // checked as a trial's elsewhere); here only the options given are wanted.
        .ignore_errors(true);
    let m = run
        .clone()
        .try_get_matches_from(args)
        .map_err(|e| anyhow!("run options {}: {}", args.join(" "), first_line(&e)))?;
    let mut out = Vec::new();
    for a in run.get_arguments() {
        let id = a.get_id().as_str();
        if m.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let values = m
            .get_raw(id)
            .map(|v| v.map(|x| x.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let long = a
            .get_long()
            .map(|l| format!("--{l}"))
            .or_else(|| a.get_short().map(|c| format!("-{c}")))
            .unwrap_or_else(|| id.to_string());
        out.push(Given {
            id: id.to_string(),
            long,
            values,
        });
    }
    Ok(out)
}

/// A clap error's own line (not its usage or its "For more information" line).
pub fn first_line(e: &clap::Error) -> String {
    let msg = e.to_string();
    msg.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string()
}

fn why(id: &str) -> Option<&'static str> {
    GIVEN_AGAIN.iter().find(|(i, _)| *i == id).map(|(_, w)| *w)
}

/// Refuses to resume `path` unless every option of [`GIVEN_AGAIN`] in the file's run
/// options (`file`) is given again on the command line (`given`) with the same values, and
/// every other run option on the command line is the file's.
pub fn check_run_options(path: &Path, file: &[String], given: &[String]) -> Result<()> {
    let f = run_options(file)?;
    let g = run_options(given)?;
    let find = |v: &[Given], id: &str| v.iter().find(|x| x.id == id).cloned();
    let mut not_given = Vec::new();
    for x in f.iter().filter(|x| why(&x.id).is_some()) {
        if find(&g, &x.id).as_ref() != Some(x) {
            not_given.push(x.clone());
        }
    }
    if !not_given.is_empty() {
        let list = not_given
            .iter()
            .map(|x| format!("{} ({})", x.text(), why(&x.id).unwrap_or("")))
            .collect::<Vec<_>>()
            .join("; ");
        let again = not_given
            .iter()
            .map(Given::text)
            .collect::<Vec<_>>()
            .join(" ");
        bail!(
            "--resume {}: the file's run options hold {list}. A results file is data and may not run commands, name programs or files, or choose this host's interfaces: to resume with these, give them again after `--`, exactly as recorded ({again}), or start a new search",
            path.display()
        );
    }
    let mut differ = Vec::new();
    for y in &g {
        match find(&f, &y.id) {
            Some(x) if x == *y => {}
            Some(x) => differ.push(format!("{} (the file's: {})", y.text(), x.text())),
            None => differ.push(format!("{} (the file has no {})", y.text(), y.long)),
        }
    }
    if !differ.is_empty() {
        bail!(
            "--resume {}: run options given beside --resume differ from the file's: {}. A resumed search keeps the file's run options: leave these out (or give them as recorded), or start a new search",
            path.display(),
            differ.join("; ")
        );
    }
    Ok(())
}

/// Says that a replay's records stopped matching at a trial (with how many are dropped).
type Mismatch = Box<dyn FnMut(&super::Trial, usize)>;

/// A resumed experiment's recorded outcomes, answered in order instead of running their
/// trials while each is the one the planner asks for; at the first that is not, the rest
/// are dropped (`mismatch` says so) and every trial from there runs.
pub struct Replay<O> {
    stored: std::collections::VecDeque<O>,
    answers: fn(&O, &super::Trial) -> bool,
    mismatch: Mismatch,
}

impl<O> Replay<O> {
    /// Nothing recorded: every trial runs.
    pub fn none() -> Replay<O> {
        Replay::new(Vec::new(), |_, _| false, |_, _| {})
    }

    /// `stored` answered while `answers(record, trial)`; `mismatch(trial, dropped)` when
    /// they stop matching.
    pub fn new(
        stored: Vec<O>,
        answers: fn(&O, &super::Trial) -> bool,
        mismatch: impl FnMut(&super::Trial, usize) + 'static,
    ) -> Replay<O> {
        Replay {
            stored: stored.into(),
            answers,
            mismatch: Box::new(mismatch),
        }
    }

    /// The recorded outcome of `t`, if it is the next one recorded.
    pub fn answer(&mut self, t: &super::Trial) -> Option<O> {
        let front = self.stored.front()?;
        if (self.answers)(front, t) {
            return self.stored.pop_front();
        }
        (self.mismatch)(t, self.stored.len());
        self.stored.clear();
        None
    }
}

/// What a results file of JSON lines holds: a header, then one record per trial.
pub struct Journal<'a> {
    /// The command that writes it (`ndr`, `rfc2544`), as messages name it.
    pub cmd: &'a str,
    /// The file, as messages name it (`an ndr results file`).
    pub file: &'static str,
    /// The header's and the records' schema tags.
    pub header: &'static str,
    pub record: &'static str,
    /// A record, as a message names it when it is not JSON.
    pub record_what: &'a str,
    /// The results format this upktgen reads.
    pub format: u32,
}

/// Reads a results file through the bounded reader: its header (of results format
/// `j.format`, as `format_of` reads it, and accepted by `check_header`) and every record
/// (accepted by `check_record`), each line's schema checked. Every refusal names the file and
/// the line.
pub fn read_journal<H, R, E1, E2>(
    path: &Path,
    j: &Journal,
    format_of: impl Fn(&H) -> u32,
    check_header: impl Fn(&H) -> std::result::Result<(), E1>,
    check_record: impl Fn(&H, &R) -> std::result::Result<(), E2>,
) -> Result<(H, Vec<R>)>
where
    H: serde::de::DeserializeOwned,
    R: serde::de::DeserializeOwned,
    E1: std::fmt::Display,
    E2: std::fmt::Display,
{
    use anyhow::Context;
    let cmd = j.cmd;
    let file = j.file;
    let text = crate::input::read_text(path, crate::input::MAX_JSON, file)
        .map_err(|e| anyhow!("reading {}: {e}", path.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines
        .next()
        .ok_or_else(|| anyhow!("{}: empty, not {file}", path.display()))?;
    let line = |i: usize, l: &str, want: &'static str, what: &str| -> Result<serde_json::Value> {
        let at = format!("{}:{}", path.display(), i + 1);
        let v: serde_json::Value =
            serde_json::from_str(l).with_context(|| format!("{at}: not {what}"))?;
        crate::schema::expect(&at, &v, want, what)?;
        Ok(v)
    };
    let what = format!("{file}'s header");
    let header: H = serde_json::from_value(line(0, first, j.header, &what)?)
        .with_context(|| format!("{}:1: not {what}", path.display()))?;
    if format_of(&header) != j.format {
        bail!(
            "{}: results format {} (this upktgen reads {})",
            path.display(),
            format_of(&header),
            j.format
        );
    }
    check_header(&header).map_err(|e| {
        anyhow!(
            "{}:1: the header holds what {cmd} refuses on its command line: {e}",
            path.display()
        )
    })?;
    let mut records = Vec::new();
    for (i, l) in lines {
        let r: R = serde_json::from_value(line(i, l, j.record, j.record_what)?)
            .with_context(|| format!("{}:{}: not a trial record", path.display(), i + 1))?;
        check_record(&header, &r).map_err(|e| {
            anyhow!(
                "{}:{}: not a trial {cmd} could have recorded: {e}",
                path.display(),
                i + 1
            )
        })?;
        records.push(r);
    }
    Ok((header, records))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_are_read_as_run_reads_them() {
        let o = run_options(&v(&[
            "--lab",
            "dut",
            "--dut-setup=a",
            "--dut-setup",
            "b",
            "--rx-analyze",
            "-t",
            "2",
        ]))
        .unwrap();
        let ids: Vec<&str> = o.iter().map(|g| g.id.as_str()).collect();
        assert!(ids.contains(&"dut_setup") && ids.contains(&"lab"), "{o:?}");
        let d = o.iter().find(|g| g.id == "dut_setup").unwrap();
        assert_eq!(d.values, ["a", "b"]);
        assert_eq!(d.text(), "--dut-setup \"a\" --dut-setup \"b\"");
        // What conflicts is no matter here (a trial refuses it): --peer without --peer-dev.
        let o = run_options(&v(&["--peer", "netns:x"])).unwrap();
        assert_eq!(o[0].long, "--peer");
    }

    #[test]
    fn a_file_may_not_bring_a_command_a_program_or_a_file() {
        let p = Path::new("r.jsonl");
        let file = v(&["--lab", "dut", "--dut-setup", "id > PWNED.txt"]);
        // Not given again: refused, the option and its value named.
        let e = check_run_options(p, &file, &[]).unwrap_err().to_string();
        assert!(
            e.contains("--dut-setup \"id > PWNED.txt\" (runs a command)"),
            "{e}"
        );
        // Given again, differently: refused.
        let e = check_run_options(p, &file, &v(&["--dut-setup", "true"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--dut-setup \"id > PWNED.txt\""), "{e}");
        // Given again as recorded (in any spelling): accepted.
        check_run_options(p, &file, &v(&["--dut-setup=id > PWNED.txt"])).unwrap();
        for (id, _) in GIVEN_AGAIN {
            let long = format!("--{}", id.replace('_', "-"));
            let value = match id {
                "peer" => "netns:x",
                "metrics_listen" => "127.0.0.1:9",
                _ => "x",
            };
            let file = v(&[&long, value]);
            let e = check_run_options(p, &file, &[]).unwrap_err().to_string();
            assert!(e.contains(&format!("{long} \"{value}\"")), "{id}: {e}");
            check_run_options(p, &file, &file).unwrap();
        }
        // Control characters in a value are shown escaped.
        let e = check_run_options(p, &v(&["--dut-setup", "\x1b[2Jx"]), &[])
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\x1b') && e.contains("\\x1b[2Jx"), "{e}");
    }

    #[test]
    fn other_options_beside_resume_must_be_the_files() {
        let p = Path::new("r.jsonl");
        let file = v(&["--backend", "tx_ring", "--lab", "dut"]);
        check_run_options(p, &file, &[]).unwrap();
        check_run_options(p, &file, &v(&["--backend", "tx_ring"])).unwrap();
        let e = check_run_options(p, &file, &v(&["--backend", "af_packet"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--backend \"af_packet\" (the file's: --backend \"tx_ring\")"),
            "{e}"
        );
        let e = check_run_options(p, &file, &v(&["--seed", "3"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("the file has no --seed"), "{e}");
        // A dangerous option the file does not hold is not taken from the command line.
        let e = check_run_options(p, &file, &v(&["--dut-setup", "true"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("the file has no --dut-setup"), "{e}");
    }
}
