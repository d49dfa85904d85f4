//! `upktgen man` and `upktgen completions`: manual pages (clap_mangen) and shell completion
//! scripts (clap_complete) made from the one command-line definition ([`crate::cli::Cli`]),
//! so they cannot drift from `--help`. Printed through [`crate::out`]; files written with
//! [`crate::outfile`] (a link at a page's name is replaced, never followed).

use crate::cli::Cli;
use crate::cli::manual::{CompletionsArgs, ManArgs, Shell};
use crate::exit::Exit;
use anyhow::{Context, Result};
use clap::CommandFactory;

/// Every manual page: (file name, roff), upktgen.1 first, then one per subcommand
/// (`upktgen-run.1`, ...), in the order of `--help`.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    let mut todo = vec![cmd];
    while let Some(c) = todo.pop() {
        let subs: Vec<clap::Command> = c
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .cloned()
            .collect();
        let man = clap_mangen::Man::new(c);
        let mut roff = Vec::new();
        man.render(&mut roff).context("rendering a manual page")?;
        out.push((man.get_filename(), roff));
        todo.extend(subs.into_iter().rev());
    }
    Ok(out)
}

/// `upktgen man [--out DIR]`.
pub fn man(a: &ManArgs) -> Result<Exit> {
    let pages = pages()?;
    let Some(dir) = &a.out else {
        crate::out::print(String::from_utf8_lossy(&pages[0].1))?;
        return Ok(Exit::Done);
    };
    crate::outfile::out_dir(dir, "--out")?;
    for (name, roff) in &pages {
        let path = dir.join(name);
        crate::outfile::write(&path, roff)
            .with_context(|| format!("--out {}: writing {name}", dir.display()))?;
    }
    crate::errln!(
        "upktgen: wrote {} manual pages to {} ({})",
        pages.len(),
        dir.display(),
        pages
            .iter()
            .map(|p| p.0.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(Exit::Done)
}

/// The completion script for `shell`.
pub fn completion_script(shell: Shell) -> Result<String> {
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "upktgen", &mut script);
    String::from_utf8(script).context("a completion script that is not UTF-8")
}

/// `upktgen completions SHELL`.
pub fn completions(a: &CompletionsArgs) -> Result<Exit> {
    crate::out::print(completion_script(a.shell)?)?;
    Ok(Exit::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_per_subcommand_each_with_its_sections() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|p| p.0.as_str()).collect();
        for want in [
            "upktgen.1",
            "upktgen-run.1",
            "upktgen-rx.1",
            "upktgen-script.1",
            "upktgen-sweep.1",
            "upktgen-man.1",
            "upktgen-completions.1",
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        assert_eq!(names[0], "upktgen.1");
        for (name, roff) in &pages {
            let t = String::from_utf8(roff.clone()).unwrap();
            assert!(
                t.starts_with(".ie \\n(.g .ds Aq") || t.contains(".TH "),
                "{name}"
            );
            for s in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION"] {
                assert!(t.contains(s), "{name} has {s}");
            }
        }
        let run = String::from_utf8(
            pages
                .iter()
                .find(|p| p.0 == "upktgen-run.1")
                .unwrap()
                .1
                .clone(),
        )
        .unwrap();
        assert!(run.contains("ratep"), "run's options are on its page");
    }

    #[test]
    fn completion_scripts_name_the_subcommands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let s = completion_script(shell).unwrap();
            for word in ["run", "rx", "script", "completions", "--ratep"] {
                assert!(s.contains(word), "{shell:?} completes {word}");
            }
        }
        assert!(
            completion_script(Shell::Zsh)
                .unwrap()
                .starts_with("#compdef upktgen")
        );
    }
}
