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
pub mod caps;
pub mod cli;
pub mod clock;
pub mod exit;
pub mod host;
pub mod input;
pub mod lab;
pub mod live;
pub mod manual;
pub mod merge;
pub mod metrics;
pub mod ndr;
pub mod out;
pub mod outfile;
pub mod pcap;
pub mod pg;
pub mod plot;
pub mod report;
pub mod rng;
pub mod run;
pub mod rx;
pub mod sample;
pub mod schema;
pub mod script;
pub mod sender;
pub mod sim;
pub mod start_at;
pub mod stats;
pub mod stream;
pub mod sweep;
#[allow(unsafe_code)]
pub mod sys;
pub mod text;
pub mod txq;
pub mod units;
pub mod wire;
