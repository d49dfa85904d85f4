//! Reports: pktgen's Result line, top's Cpu(s) line, the seed-style run report and JSON.

pub mod cpu;
pub mod dut;
pub mod result;
pub mod run;

pub use cpu::CpuShares;
pub use result::PktgenResult;

/// upktgen's version, as every JSON document records it (`version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// This host's name (its UTS namespace's), as every JSON document records it (`host`);
/// empty when unreadable.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}
