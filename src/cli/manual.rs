//! `upktgen man` and `upktgen completions`' options.

use std::path::PathBuf;

pub const MAN_ABOUT: &str = "Write the manual pages (roff), made from this command line's own definition: \
upktgen.1 and one page per subcommand (upktgen-run.1, upktgen-rx.1, ...). Without --out, print \
upktgen.1 on standard output (`upktgen man | man -l -`).";

pub const COMPLETIONS_ABOUT: &str = "Print a completion script for SHELL on standard output, made \
from this command line's own definition. Load it with, for example:
  bash: source <(upktgen completions bash)   (or save it as /usr/share/bash-completion/completions/upktgen)
  zsh:  upktgen completions zsh > ~/.zfunc/_upktgen   (a directory on $fpath)
  fish: upktgen completions fish > ~/.config/fish/completions/upktgen.fish";

#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write every page into DIR (created when missing) instead of printing upktgen.1.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The shells `upktgen completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}
