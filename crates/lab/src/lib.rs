//! upktgen's private lab (DESIGN.md §5): the network namespaces, veth pairs and device under
//! test a run creates for itself, with their XDP programs; removed on every exit path.

#![forbid(unsafe_code)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod lab;

pub use upktgen_bpf::bpf;
pub use upktgen_engine::{choice, errln, exit, out, rx, sample, text};
pub use upktgen_sys::sys;
pub use upktgen_wire::wire;
