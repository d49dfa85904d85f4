//! The lowest layer of upktgen (DESIGN.md §4): wire formats, one module per header in
//! smoltcp's style ([`wire`]), and the seeded random numbers the frame walk and the tests
//! share ([`rng`]). Pure: no syscalls, nothing above it.

#![forbid(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod rng;
pub mod wire;
