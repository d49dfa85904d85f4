//! The `upktgen` binary: parse the command line, run, turn errors into one clear message.

use clap::Parser;
use std::process::ExitCode;
use upktgen::app::{self, Exit};
use upktgen::cli::{Cli, Cmd};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.cmd {
        Some(Cmd::Script(args)) => return upktgen::script::main(args),
        Some(Cmd::FunctionsSh) => {
            print!("{}", upktgen::script::functions_sh());
            return ExitCode::SUCCESS;
        }
        Some(Cmd::Sim(args)) => upktgen::sim::run_cli(args).map(|_| Exit::Done),
        Some(Cmd::Rx(args)) => app::stop_flag().and_then(|stop| upktgen::rx::cli::run(args, &stop)),
        Some(Cmd::Sweep(args)) => {
            app::stop_flag().and_then(|stop| upktgen::sweep::run_cli(args, &stop))
        }
        Some(Cmd::Ndr(args)) => {
            app::stop_flag().and_then(|stop| upktgen::ndr::run_cli(args, &stop))
        }
        Some(Cmd::Compare(args)) => upktgen::sweep::compare_cli(args).map(|_| Exit::Done),
        Some(Cmd::Run(args)) => app::stop_flag().and_then(|stop| app::run(args, &stop)),
        None => app::stop_flag().and_then(|stop| app::run(&cli.run, &stop)),
    };
    match result {
        Ok(Exit::Done) => ExitCode::SUCCESS,
        Ok(Exit::Interrupted) => ExitCode::from(130),
        Err(e) => {
            eprintln!("upktgen: {e:#}");
            ExitCode::FAILURE
        }
    }
}
