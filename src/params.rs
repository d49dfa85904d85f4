//! pktgen parameters as upktgen takes them, validated before anything is sent.

use crate::wire::{ETH_HLEN, ETH_ZLEN, MacAddr};
use std::time::Duration;

/// pktgen's default frame size (bytes without FCS).
pub const DEFAULT_PKT_SIZE: usize = 60;
/// The seed's packet count.
pub const DEFAULT_COUNT: u64 = 4_000_000;
/// pktgen's default UDP port (discard).
pub const DEFAULT_UDP_PORT: u16 = 9;

/// pktgen flags this version implements (the rest are refused with a clear message).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Flags {
    /// UDPCSUM: compute the UDP checksum (otherwise 0).
    pub udp_csum: bool,
    /// NO_TIMESTAMP: leave tv_sec/tv_usec zero.
    pub no_timestamp: bool,
}

/// Every flag name pktgen knows, for telling "unknown" from "not supported here yet".
const PKTGEN_FLAGS: &[&str] = &[
    "IPSRC_RND",
    "IPDST_RND",
    "UDPSRC_RND",
    "UDPDST_RND",
    "MACSRC_RND",
    "MACDST_RND",
    "TXSIZE_RND",
    "IPV6",
    "MPLS_RND",
    "VID_RND",
    "SVID_RND",
    "FLOW_SEQ",
    "IPSEC",
    "QUEUE_MAP_RND",
    "QUEUE_MAP_CPU",
    "NODE_ALLOC",
    "UDPCSUM",
    "NO_TIMESTAMP",
    "SHARED",
];

impl Flags {
    /// Applies one pktgen `flag` argument: `NAME` sets, `!NAME` clears.
    pub fn apply(&mut self, arg: &str) -> Result<(), String> {
        let (on, name) = match arg.strip_prefix('!') {
            Some(n) => (false, n),
            None => (true, arg),
        };
        match name {
            "UDPCSUM" => self.udp_csum = on,
            "NO_TIMESTAMP" => self.no_timestamp = on,
            n if PKTGEN_FLAGS.contains(&n) => {
                return Err(format!(
                    "--flag {n}: a pktgen flag this version of upktgen does not implement yet (implemented: UDPCSUM, NO_TIMESTAMP)"
                ));
            }
            n => {
                return Err(format!(
                    "--flag {n}: unknown flag (pktgen's flags: {}; prefix with ! to clear)",
                    PKTGEN_FLAGS.join(", ")
                ));
            }
        }
        Ok(())
    }
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

/// The inter-packet delay in ns from pktgen's `delay` (ns) or `ratep` (packets/s).
pub fn delay_ns(delay: Option<u64>, ratep: Option<u64>) -> Result<u64, String> {
    match (delay, ratep) {
        (Some(_), Some(_)) => {
            Err("--delay and --ratep both set the packet rate: give one of them".into())
        }
        (Some(d), None) => Ok(d),
        (None, Some(0)) => {
            Err("--ratep 0: the rate must be between 1 and 1000000000 packets/s".into())
        }
        (None, Some(r)) if r > 1_000_000_000 => Err(format!(
            "--ratep {r}: the rate must be between 1 and 1000000000 packets/s"
        )),
        (None, Some(r)) => Ok(1_000_000_000 / r),
        (None, None) => Ok(0),
    }
}

/// Checks `pkt_size` against the Ethernet minimum and the device's MTU.
pub fn check_pkt_size(pkt_size: usize, mtu: Option<u32>, dev: &str) -> Result<(), String> {
    if pkt_size < ETH_ZLEN {
        return Err(format!(
            "--pkt-size {pkt_size}: below the minimum Ethernet frame of {ETH_ZLEN} bytes (without FCS)"
        ));
    }
    if let Some(mtu) = mtu {
        let max = mtu as usize + ETH_HLEN;
        if pkt_size > max {
            return Err(format!(
                "--pkt-size {pkt_size}: above what {dev} can send ({mtu} MTU + {ETH_HLEN}-byte Ethernet header = {max})"
            ));
        }
    }
    Ok(())
}

/// Checks a pktgen port range `[min, max)`.
pub fn check_port_range(what: &str, min: u16, max: u16) -> Result<(), String> {
    if max < min {
        return Err(format!(
            "--{what}-max {max} is below --{what}-min {min} (the range is [min, max), walked in order)"
        ));
    }
    Ok(())
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
    fn flags_set_and_clear() {
        let mut f = Flags::default();
        f.apply("UDPCSUM").unwrap();
        f.apply("NO_TIMESTAMP").unwrap();
        assert!(f.udp_csum && f.no_timestamp);
        f.apply("!UDPCSUM").unwrap();
        assert!(!f.udp_csum && f.no_timestamp);
        assert!(
            f.apply("IPV6")
                .unwrap_err()
                .contains("does not implement yet")
        );
        assert!(f.apply("BOGUS").unwrap_err().contains("unknown flag"));
        assert!(f.apply("udpcsum").is_err(), "pktgen's flags are upper case");
    }

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

    #[test]
    fn rate_options() {
        assert_eq!(delay_ns(None, None), Ok(0));
        assert_eq!(delay_ns(Some(1000), None), Ok(1000));
        assert_eq!(delay_ns(None, Some(1000)), Ok(1_000_000));
        assert_eq!(delay_ns(None, Some(3)), Ok(333_333_333));
        assert!(delay_ns(None, Some(0)).is_err());
        assert!(delay_ns(None, Some(2_000_000_000)).is_err());
        assert!(delay_ns(Some(1), Some(1)).unwrap_err().contains("give one"));
    }

    #[test]
    fn pkt_size_bounds() {
        assert!(check_pkt_size(60, Some(1500), "veth0").is_ok());
        assert!(check_pkt_size(1514, Some(1500), "veth0").is_ok());
        let e = check_pkt_size(1515, Some(1500), "veth0").unwrap_err();
        assert!(e.contains("1500 MTU") && e.contains("1514"), "{e}");
        assert!(
            check_pkt_size(59, None, "x")
                .unwrap_err()
                .contains("minimum")
        );
    }

    #[test]
    fn port_ranges() {
        assert!(check_port_range("udp-src", 9, 9).is_ok());
        assert!(check_port_range("udp-src", 9, 10).is_ok());
        assert!(
            check_port_range("udp-dst", 10, 9)
                .unwrap_err()
                .contains("--udp-dst-max 9")
        );
    }
}
