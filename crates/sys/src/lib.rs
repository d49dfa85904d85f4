//! upktgen's system layer: every `unsafe` block of the project lives here, each with the
//! invariant that makes it sound written beside it. Above it, every crate forbids unsafe
//! code, so the compiler holds that rule.

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod sys;

pub use upktgen_bpf::bpf;
