//! upktgen's BPF programs as values: hand-assembled instructions ([`bpf::asm`]) and the
//! programs built from them ([`bpf::prog`]). Loading them is the system layer's
//! (`upktgen-sys`); nothing here makes a syscall.

#![forbid(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod bpf;

pub use upktgen_wire::wire;
