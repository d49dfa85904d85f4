//! The modes of `upktgen agent --fake MODE` (hidden; the far end that misbehaves on
//! purpose is `crate::run::fake_agent`), here so that the command line can name them.

/// What the fake far end does wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Names itself with escape sequences (hostname, kernel) and writes them to standard
    /// error with a forged `Result:` line.
    Escapes,
    /// Before answering hello, one standard-error line of FLOOD_BYTES without a newline.
    StderrLine,
    /// Once rx.start is answered, FLOOD_BYTES of answer lines to no request.
    StdoutFlood,
    /// Answers every request with another id.
    WrongIds,
    /// Answers with "jsonrpc":"1.0".
    LieVersion,
    /// The interface counters after rx.start say 2^64 − 1 frames came in.
    LieCounters,
    /// rx.stop's report says a million times more frames came than were sent.
    LieReport,
    /// Exits (status 3) 300 ms after answering rx.start, in the middle of the run.
    ExitMidRun,
    /// Answers everything, then takes 10 s to exit after its input ends.
    SlowExit,
    /// Starts a child that keeps its pipes open (`sleep 600`, its pid on standard error),
    /// then never answers and never exits by itself.
    ForkHang,
}
