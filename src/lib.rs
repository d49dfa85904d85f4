//! upktgen: a userspace packet generator for Linux with the kernel pktgen's vocabulary.
//!
//! Data flows one way: command line ([`cli`]) -> one plan ([`run::plan`]) -> frame stream
//! -> transmit queue ([`txq`]) -> backend ([`backend`]) -> wire, with samplers of /proc
//! around it ([`sample`]) and reports after it ([`report`]).
//!
//! `unsafe` lives only in [`sys`]; all output goes through [`out`].

#![deny(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod backend;
pub mod bpf;
pub(crate) mod caps;
pub mod cli;
pub(crate) mod clock;
pub mod exit;
pub(crate) mod host;
pub mod http;
pub(crate) mod input;
pub mod lab;
pub mod live;
pub mod manual;
pub mod merge;
pub mod metrics;
pub mod ndr;
pub mod otg;
pub mod out;
pub(crate) mod outdir;
pub(crate) mod outfile;
pub mod pcap;
pub mod pg;
pub(crate) mod plot;
pub mod report;
pub(crate) mod rng;
pub mod run;
pub mod rx;
pub(crate) mod sample;
pub mod schema;
pub mod script;
pub mod sender;
pub mod sim;
pub(crate) mod start_at;
pub(crate) mod stats;
pub mod stream;
pub mod sweep;
#[allow(unsafe_code)]
pub mod sys;
pub(crate) mod text;
pub mod txq;
pub(crate) mod units;
pub mod wire;
