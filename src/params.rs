//! pktgen parameters as upktgen takes them, validated before anything is sent.

use crate::wire::MacAddr;
use std::time::Duration;

/// The seed's packet count.
pub const DEFAULT_COUNT: u64 = 4_000_000;

/// The two flags the report shows on their own (the device configuration has all of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Flags {
    /// UDPCSUM: compute the UDP checksum (otherwise 0).
    pub udp_csum: bool,
    /// NO_TIMESTAMP: leave tv_sec/tv_usec zero.
    pub no_timestamp: bool,
}

/// Parses a duration: `10` (seconds), `2.5s`, `500ms`, `100us`, `3m`, `1h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("'{s}' is not a duration (examples: 10, 2.5s, 500ms, 3m)");
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().map_err(|_| bad())?;
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        "ns" => 1e-9,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    let secs = v * scale;
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!("'{s}': the duration must be positive and finite"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The frame's addresses once defaults are resolved (IP addresses as text: one address, a
/// `min-max` range, or IPv6).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Addressing {
    pub src_mac: MacAddr,
    pub dst_mac: MacAddr,
    pub src_ip: String,
    pub dst_ip: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2.5s").unwrap(), Duration::from_millis(2500));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("3m").unwrap(), Duration::from_secs(180));
        for bad in ["", "s", "-1", "0", "1x", "1.2.3s", "nan", "1e999"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
