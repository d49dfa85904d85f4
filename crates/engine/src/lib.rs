//! upktgen's engine (DESIGN.md §4): pktgen's parameters and walk ([`pg`]), the frame
//! sources ([`stream`]), the TX ring model ([`txq`]), the transmit backends ([`backend`]),
//! the send loop ([`sender`]), the receiver ([`rx`]), the samplers of /proc ([`sample`]), and
//! the small pieces below them all: the one output path ([`out`]), the safe output writer
//! ([`outfile`]), bounded inputs ([`input`]). It knows nothing of the command line: the
//! commands above it hand it plain values.

#![forbid(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod backend;
pub mod caps;
pub mod choice;
pub mod clock;
pub mod exit;
pub mod host;
pub mod input;
pub mod out;
pub mod outfile;
pub mod pcap;
pub mod pg;
pub mod rx;
pub mod sample;
pub mod sender;
pub mod start_at;
pub mod stream;
pub mod tally;
pub mod text;
pub mod txq;
pub mod units;

pub use upktgen_bpf::bpf;
pub use upktgen_sys::sys;
pub use upktgen_wire::{rng, wire};
