//! `/proc/net/dev`: per-interface counters of one network namespace.

use super::{ParseError, SampleError, parse_u64, read_proc};
use serde::Serialize;
use std::collections::BTreeMap;

const FILE: &str = "/proc/net/dev";

/// The 16 counters of one `/proc/net/dev` row, in file order, named after the file's
/// header (`/sys/class/net/<if>/statistics/` calls them `rx_errors`, `rx_dropped`,
/// `rx_fifo_errors`, `rx_frame_errors`, `multicast`, `collisions`, `tx_carrier_errors`...).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct IfaceCounters {
    pub rx_bytes: u64,
    pub rx_packets: u64,
    /// Receive errors of any kind (the sum of the driver's error counters).
    pub rx_errs: u64,
    /// Packets dropped on receive (no buffer, or by the stack: unknown protocol, ...).
    pub rx_drop: u64,
    /// Receive FIFO overruns.
    pub rx_fifo: u64,
    /// Length, overrun, CRC and frame alignment errors.
    pub rx_frame: u64,
    pub rx_compressed: u64,
    /// Multicast packets received.
    pub rx_multicast: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errs: u64,
    /// Packets dropped on transmit (driver-dependent: may or may not include qdisc drops).
    pub tx_drop: u64,
    pub tx_fifo: u64,
    pub tx_colls: u64,
    /// Carrier, aborted, window and heartbeat errors.
    pub tx_carrier: u64,
    pub tx_compressed: u64,
}

impl IfaceCounters {
    /// Builds from the 16 numbers of a row, in file order; extra trailing numbers are
    /// ignored; fewer than 16 is `None`.
    pub fn from_fields(f: &[u64]) -> Option<Self> {
        let &[
            rx_bytes,
            rx_packets,
            rx_errs,
            rx_drop,
            rx_fifo,
            rx_frame,
            rx_compressed,
            rx_multicast,
            tx_bytes,
            tx_packets,
            tx_errs,
            tx_drop,
            tx_fifo,
            tx_colls,
            tx_carrier,
            tx_compressed,
            ..,
        ] = f
        else {
            return None;
        };
        Some(Self {
            rx_bytes,
            rx_packets,
            rx_errs,
            rx_drop,
            rx_fifo,
            rx_frame,
            rx_compressed,
            rx_multicast,
            tx_bytes,
            tx_packets,
            tx_errs,
            tx_drop,
            tx_fifo,
            tx_colls,
            tx_carrier,
            tx_compressed,
        })
    }

    /// `later - self`, field by field, saturating at 0 (a driver reset or an interface
    /// re-created between samples would otherwise wrap).
    pub fn delta(&self, later: &IfaceCounters) -> IfaceCounters {
        self.zip_with(later, |e, l| l.saturating_sub(e))
    }

    /// Field-wise sum (counters of several devices together).
    pub fn plus(&self, o: &IfaceCounters) -> IfaceCounters {
        self.zip_with(o, u64::saturating_add)
    }

    fn zip_with(&self, o: &IfaceCounters, f: impl Fn(u64, u64) -> u64) -> IfaceCounters {
        IfaceCounters {
            rx_bytes: f(self.rx_bytes, o.rx_bytes),
            rx_packets: f(self.rx_packets, o.rx_packets),
            rx_errs: f(self.rx_errs, o.rx_errs),
            rx_drop: f(self.rx_drop, o.rx_drop),
            rx_fifo: f(self.rx_fifo, o.rx_fifo),
            rx_frame: f(self.rx_frame, o.rx_frame),
            rx_compressed: f(self.rx_compressed, o.rx_compressed),
            rx_multicast: f(self.rx_multicast, o.rx_multicast),
            tx_bytes: f(self.tx_bytes, o.tx_bytes),
            tx_packets: f(self.tx_packets, o.tx_packets),
            tx_errs: f(self.tx_errs, o.tx_errs),
            tx_drop: f(self.tx_drop, o.tx_drop),
            tx_fifo: f(self.tx_fifo, o.tx_fifo),
            tx_colls: f(self.tx_colls, o.tx_colls),
            tx_carrier: f(self.tx_carrier, o.tx_carrier),
            tx_compressed: f(self.tx_compressed, o.tx_compressed),
        }
    }
}

/// One `/proc/net/dev` sample.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetDevSnapshot {
    /// Interfaces by name.
    pub ifaces: BTreeMap<String, IfaceCounters>,
    /// Rows skipped as malformed (no colon, bad name, non-numeric or fewer than 16 counters)
    /// or as a duplicate name.
    pub skipped: usize,
}

/// Parses one interface row. The name ends at the first colon (interface names cannot
/// contain one), which old kernels' `%6s:%8lu` format may glue to a wide first number:
/// `eth0:123456789012 ...`.
fn parse_row(line: &str) -> Option<(String, IfaceCounters)> {
    let (name, rest) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(parse_u64)
        .collect::<Option<_>>()?;
    Some((name.to_string(), IfaceCounters::from_fields(&fields)?))
}

impl NetDevSnapshot {
    /// Parses `/proc/net/dev` text. The two header lines (`Inter-|   Receive ...`,
    /// ` face |bytes ...`) are required; malformed rows are skipped and counted.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut lines = text.lines();
        for n in 1..=2 {
            match lines.next() {
                Some(l) if l.contains('|') => {}
                Some(_) => {
                    return Err(ParseError::new(
                        FILE,
                        Some(n),
                        "expected the `Inter-|  Receive ...` header",
                    ));
                }
                None if n == 1 && text.is_empty() => {
                    return Err(ParseError::new(FILE, None, "empty file"));
                }
                None => return Err(ParseError::new(FILE, None, "truncated header")),
            }
        }
        let mut ifaces = BTreeMap::new();
        let mut skipped = 0;
        for line in lines {
            if line.trim().is_empty() {
                continue;
            }
            match parse_row(line) {
                Some((name, c)) if !ifaces.contains_key(&name) => {
                    ifaces.insert(name, c);
                }
                _ => skipped += 1,
            }
        }
        Ok(Self { ifaces, skipped })
    }

    /// Reads `/proc/thread-self/net/dev`: the network namespace of the calling *thread*
    /// (which may have `setns()`ed elsewhere). Falls back to `/proc/net/dev` on kernels
    /// without `thread-self` (before 3.17).
    pub fn read() -> Result<Self, SampleError> {
        let text = match std::fs::read_to_string("/proc/thread-self/net/dev") {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => read_proc(FILE)?,
            Err(err) => {
                return Err(SampleError::Read {
                    path: "/proc/thread-self/net/dev".to_string(),
                    err,
                });
            }
        };
        Ok(Self::parse(&text)?)
    }

    /// One interface's counters.
    pub fn get(&self, iface: &str) -> Option<&IfaceCounters> {
        self.ifaces.get(iface)
    }

    /// One interface's counters, or an error naming the interfaces there are.
    pub fn iface(&self, iface: &str) -> Result<IfaceCounters, SampleError> {
        self.get(iface).copied().ok_or_else(|| {
            let names: Vec<&str> = self.ifaces.keys().map(String::as_str).collect();
            SampleError::NoIface {
                iface: iface.to_string(),
                have: names.join(", "),
            }
        })
    }

    /// From `self` (earlier) to `later`, for interfaces in both samples.
    #[cfg(test)]
    pub fn delta(&self, later: &NetDevSnapshot) -> BTreeMap<String, IfaceCounters> {
        later
            .ifaces
            .iter()
            .filter_map(|(name, l)| Some((name.clone(), self.ifaces.get(name)?.delta(l))))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VM_A: &str = include_str!("testdata/vm_net_dev_a.txt");
    const VM_B: &str = include_str!("testdata/vm_net_dev_b.txt");
    const OLD_WIDE: &str = include_str!("testdata/old_wide_net_dev.txt");

    #[test]
    fn vm_sample_exact() {
        let s = NetDevSnapshot::parse(VM_A).unwrap();
        assert_eq!(s.skipped, 0);
        assert_eq!(
            s.ifaces.keys().map(String::as_str).collect::<Vec<_>>(),
            vec!["eth0", "ifb0", "ifb1", "lo"]
        );
        let eth0 = s.get("eth0").unwrap();
        assert_eq!(
            *eth0,
            IfaceCounters {
                rx_bytes: 33_883_416,
                rx_packets: 1823,
                tx_bytes: 128_549,
                tx_packets: 1345,
                ..Default::default()
            }
        );
        assert_eq!(s.get("ifb0"), Some(&IfaceCounters::default()));
        assert!(s.get("eth1").is_none());
        assert_eq!(s.iface("lo").unwrap().rx_packets, 29);
        let e = s.iface("eth1").unwrap_err().to_string();
        assert_eq!(
            e,
            "no interface eth1 in /proc/net/dev of this network namespace (have: eth0, ifb0, ifb1, lo)"
        );
    }

    #[test]
    fn vm_delta_exact() {
        let a = NetDevSnapshot::parse(VM_A).unwrap();
        let b = NetDevSnapshot::parse(VM_B).unwrap();
        let d = a.delta(&b);
        assert_eq!(d.len(), 4);
        let lo = d["lo"];
        assert_eq!(
            lo,
            IfaceCounters {
                rx_bytes: 21_431_400,
                rx_packets: 232_950,
                tx_bytes: 21_431_400,
                tx_packets: 232_950,
                ..Default::default()
            }
        );
        // 232950 UDP datagrams of 64 bytes + 8 UDP + 20 IPv4 (lo counts without the
        // Ethernet header: loopback_xmit() counts after eth_type_trans() pulled it).
        assert_eq!(lo.rx_bytes, lo.rx_packets * (64 + 8 + 20));
        assert_eq!(d["eth0"], IfaceCounters::default());
    }

    #[test]
    fn old_format_wide_numbers() {
        let s = NetDevSnapshot::parse(OLD_WIDE).unwrap();
        assert_eq!(s.skipped, 0);
        assert_eq!(s.ifaces.len(), 3);
        let eth0 = s.get("eth0").unwrap();
        assert_eq!(
            *eth0,
            IfaceCounters {
                rx_bytes: 123_456_789_012,
                rx_packets: 987_654_321,
                rx_errs: 1,
                rx_drop: 2,
                rx_fifo: 3,
                rx_frame: 4,
                rx_compressed: 5,
                rx_multicast: 6,
                tx_bytes: 210_987_654_321,
                tx_packets: 123_456_789,
                tx_errs: 7,
                tx_drop: 8,
                tx_fifo: 9,
                tx_colls: 10,
                tx_carrier: 11,
                tx_compressed: 12,
            }
        );
        assert_eq!(s.get("lo").unwrap().rx_bytes, 1_234_567);
        assert_eq!(s.get("lo").unwrap().tx_packets, 8_910);
        assert_eq!(s.get("bond0.100").unwrap().rx_packets, 42);
    }

    #[test]
    fn delta_saturates_and_ignores_vanished() {
        let hdr = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n";
        let a = NetDevSnapshot::parse(&format!(
            "{hdr}  eth0: 100 10 0 0 0 0 0 0 200 20 0 5 0 0 0 0\n  veth1: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n"
        ))
        .unwrap();
        let b = NetDevSnapshot::parse(&format!(
            "{hdr}  eth0: 50 5 0 0 0 0 0 0 260 26 0 7 0 0 0 0\n  veth2: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n"
        ))
        .unwrap();
        let d = a.delta(&b);
        assert_eq!(d.keys().collect::<Vec<_>>(), vec!["eth0"]);
        assert_eq!(
            d["eth0"],
            IfaceCounters {
                tx_bytes: 60,
                tx_packets: 6,
                tx_drop: 2,
                ..Default::default()
            }
        );
    }

    #[test]
    fn malformed() {
        let e = NetDevSnapshot::parse("").unwrap_err();
        assert_eq!(e.to_string(), "/proc/net/dev: empty file");
        let e = NetDevSnapshot::parse("Inter-|   Receive\n").unwrap_err();
        assert_eq!(e.to_string(), "/proc/net/dev: truncated header");
        let e = NetDevSnapshot::parse("lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(NetDevSnapshot::parse("garbage\nmore garbage\n").is_err());
        let hdr = "Inter-|\n face |\n";
        let s = NetDevSnapshot::parse(&format!(
            "{hdr}\
             lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n\
             eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n\
             eth1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n\
             eth2: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 x\n\
             : 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n\
             lo: 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9\n\
             \n\
             eth3: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 99999999999999999999\n\
             eth4: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
        ))
        .unwrap();
        assert_eq!(s.skipped, 6);
        assert_eq!(s.ifaces.len(), 2);
        // Extra numbers beyond the 16 known columns are ignored.
        assert_eq!(s.get("lo").unwrap().tx_compressed, 16);
        assert_eq!(s.get("eth4").unwrap().rx_bytes, 1);
        // Header only: no interfaces.
        assert!(NetDevSnapshot::parse(hdr).unwrap().ifaces.is_empty());
    }
}
