//! upktgen: a userspace packet generator for Linux with the kernel pktgen's vocabulary.
//!
//! Data flows one way: command line ([`cli`]) -> one plan ([`run::plan`]) -> frame stream
//! -> transmit queue ([`txq`]) -> backend ([`backend`]) -> wire, with samplers of /proc
//! around it ([`sample`]) and reports after it ([`report`]).
//!
//! `unsafe` lives only in [`sys`]; all output goes through [`out`].

#![forbid(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod cli;
pub mod experiment;
pub mod http;
pub mod live;
pub mod manual;
pub mod merge;
pub mod metrics;
pub mod ndr;
pub mod otg;
pub mod otgsrv;
pub(crate) mod outdir;
pub(crate) mod plot;
pub mod report;
pub mod rfc2544;
pub mod run;
pub mod schema;
pub mod script;
pub mod sim;
pub(crate) mod stats;
pub mod sweep;

// The layers below, under the names the commands have always used (DESIGN.md §4). The
// compiler holds their order: a lower crate cannot name a higher one.
pub use upktgen_bpf::bpf;
pub use upktgen_engine::{
    backend, caps, choice, clock, errln, exit, host, input, out, outfile, pcap, pg, rx, sample,
    sender, start_at, stream, text, txq, units,
};
pub use upktgen_lab::lab;
pub use upktgen_sys::sys;
pub use upktgen_wire::{rng, wire};
