//! Reports: pktgen's Result line, top's Cpu(s) line, the seed-style run report and JSON.

pub mod cpu;
pub mod dut;
pub mod result;
pub mod run;

pub use cpu::CpuShares;
pub use result::PktgenResult;
