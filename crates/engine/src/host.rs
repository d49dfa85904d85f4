//! What every JSON document records of where it was made: upktgen's version and the host's
//! name (below the reports and the receiver, which both write such documents).

/// upktgen's version, as every JSON document records it (`version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// This host's name (its UTS namespace's), as every JSON document records it (`host`);
/// empty when unreadable.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}
