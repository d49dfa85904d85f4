//! The `upktgen` binary: parse the command line, run, turn errors into one clear message.
//! Exit status: 0 done, 1 error, 130 interrupted, 141 when standard output's reader went
//! away (see `upktgen::out`); `script` has its own (see its help).

#![forbid(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use upktgen::cli::{Cli, Cmd};
use upktgen::exit::Exit;
use upktgen::out;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return parse_failed(&e),
    };
    let result = match &cli.cmd {
        Some(Cmd::Script(args)) => return upktgen::script::main(args),
        Some(Cmd::FunctionsSh) => out::print(upktgen::script::functions_sh())
            .map(|()| Exit::Done)
            .map_err(anyhow::Error::from),
        Some(Cmd::Agent(args)) => stop_flag()
            .and_then(|stop| upktgen::run::agent::main(args, &stop))
            .map(|_| Exit::Done),
        Some(Cmd::Man(args)) => upktgen::manual::man(args),
        Some(Cmd::Completions(args)) => upktgen::manual::completions(args),
        Some(Cmd::Sim(args)) => sim(args),
        Some(Cmd::Rx(args)) => stop_flag().and_then(|stop| upktgen::run::rx::run(args, &stop)),
        Some(Cmd::Sweep(args)) => stop_flag().and_then(|stop| upktgen::sweep::run_cli(args, &stop)),
        Some(Cmd::Merge(args)) => upktgen::merge::run_cli(args).map(|_| Exit::Done),
        Some(Cmd::Ndr(args)) => stop_flag().and_then(|stop| upktgen::ndr::run_cli(args, &stop)),
        Some(Cmd::Rfc2544(args)) => {
            stop_flag().and_then(|stop| upktgen::rfc2544::run_cli(args, &stop))
        }
        Some(Cmd::Compare(args)) => upktgen::experiment::compare::compare_cli(
            args,
            &[
                &upktgen::rfc2544::RESULTS,
                &upktgen::ndr::RESULTS,
                &upktgen::sweep::RESULTS,
            ],
        )
        .map(|_| Exit::Done),
        Some(Cmd::Otg(args)) => stop_flag().and_then(|stop| {
            let opts = upktgen::otgsrv::options(&args.allow, args.watchdog, args.capture_mib)?;
            let engine = upktgen::otgsrv::engine(
                args.fake_engine,
                upktgen::run::streams::Queues {
                    threads: args.threads,
                    oversubscribe: args.allow_oversubscribe,
                },
            )?;
            upktgen::otgsrv::main(args.listen, engine, opts, &stop).map(|()| Exit::Done)
        }),
        Some(Cmd::Run(args)) => stop_flag().and_then(|stop| upktgen::run::run(args, &stop)),
        None => stop_flag().and_then(|stop| upktgen::run::run(&cli.run, &stop)),
    };
    match result {
        Ok(Exit::Done) => ExitCode::SUCCESS,
        Ok(Exit::Interrupted) => ExitCode::from(130),
        Err(e) => out::fail(&*e, 1),
    }
}

/// The Ctrl-C flag ([`upktgen::exit::stop_flag`]), its error as every command's.
fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    Ok(upktgen::exit::stop_flag()?)
}

/// `upktgen sim`: what the flags ask, printed to standard output.
fn sim(args: &upktgen::sim::SimArgs) -> anyhow::Result<Exit> {
    let text = upktgen::sim::run_to_string(args)?;
    out::print(text)?;
    Ok(Exit::Done)
}

/// `--help`, `--version` and bad arguments, through the one output path: help and version
/// go to standard output (a write error is reported like a report's), errors to standard
/// error with clap's exit status (2).
fn parse_failed(e: &clap::Error) -> ExitCode {
    use std::io::IsTerminal as _;
    let text = e.render();
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    if e.use_stderr() {
        if std::io::stderr().is_terminal() {
            out::stderr(format_args!("{}", text.ansi()));
        } else {
            out::stderr(format_args!("{text}"));
        }
        return ExitCode::from(code);
    }
    let printed = if std::io::stdout().is_terminal() {
        out::print(text.ansi())
    } else {
        out::print(text)
    };
    match printed {
        Ok(()) => ExitCode::from(code),
        Err(o) => out::fail(&o, 1),
    }
}
