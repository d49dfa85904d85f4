//! `/proc/net/snmp`, `/proc/net/snmp6` and `/proc/net/netstat`: the IP stack's counters of
//! one network namespace (the forwarding counters of a device under test among them).
//!
//! `snmp` and `netstat` come in pairs of lines, a header naming the fields and a line of
//! values, both starting with the group (`Ip:`, `TcpExt:`); `snmp6` has one `Name value`
//! pair per line. Counters are named `Group.Field` (`Ip.ForwDatagrams`, `Ip6.InDiscards`,
//! `IpExt.InNoRoutes`); `snmp6`'s `Ip6InDiscards` becomes `Ip6.InDiscards`.

use super::ParseError;
use serde::Serialize;
use std::collections::BTreeMap;

/// Every counter of the three files, by `Group.Field`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SnmpSnapshot {
    pub counters: BTreeMap<String, i64>,
}

const PAIRED: &str = "/proc/net/snmp or /proc/net/netstat";
const SNMP6: &str = "/proc/net/snmp6";

impl SnmpSnapshot {
    /// Adds the paired-line format (`snmp`, `netstat`).
    pub fn parse_paired(&mut self, text: &str) -> Result<(), ParseError> {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if !lines.len().is_multiple_of(2) {
            return Err(ParseError::new(
                PAIRED,
                None,
                "a header line without its values",
            ));
        }
        for (i, pair) in lines.chunks(2).enumerate() {
            let (h, v) = (pair[0], pair[1]);
            let (Some((hg, hf)), Some((vg, vf))) = (h.split_once(':'), v.split_once(':')) else {
                return Err(ParseError::new(PAIRED, Some(2 * i + 1), "no group name"));
            };
            if hg != vg {
                return Err(ParseError::new(
                    PAIRED,
                    Some(2 * i + 2),
                    format!("values of {vg} after the header of {hg}"),
                ));
            }
            let names: Vec<&str> = hf.split_whitespace().collect();
            let values: Vec<&str> = vf.split_whitespace().collect();
            if names.len() != values.len() {
                return Err(ParseError::new(
                    PAIRED,
                    Some(2 * i + 2),
                    format!("{} names, {} values", names.len(), values.len()),
                ));
            }
            for (n, v) in names.iter().zip(values) {
                let v: i64 = v.parse().map_err(|_| {
                    ParseError::new(
                        PAIRED,
                        Some(2 * i + 2),
                        format!("{hg}.{n}: not a number: {v}"),
                    )
                })?;
                self.counters.insert(format!("{hg}.{n}"), v);
            }
        }
        Ok(())
    }

    /// Adds `snmp6`'s one-pair-per-line format.
    pub fn parse_snmp6(&mut self, text: &str) -> Result<(), ParseError> {
        for (i, l) in text.lines().enumerate() {
            let mut w = l.split_whitespace();
            let (Some(name), Some(v), None) = (w.next(), w.next(), w.next()) else {
                if l.trim().is_empty() {
                    continue;
                }
                return Err(ParseError::new(SNMP6, Some(i + 1), "not `Name value`"));
            };
            let v: i64 = v.parse().map_err(|_| {
                ParseError::new(SNMP6, Some(i + 1), format!("{name}: not a number"))
            })?;
            // Ip6InReceives -> Ip6.InReceives, Icmp6InMsgs -> Icmp6.InMsgs, Udp6... -> Udp6.
            let split = name
                .find('6')
                .map(|p| p + 1)
                .filter(|&p| p < name.len())
                .unwrap_or(0);
            let key = if split > 0 {
                format!("{}.{}", &name[..split], &name[split..])
            } else {
                name.to_string()
            };
            self.counters.insert(key, v);
        }
        Ok(())
    }

    /// The three files of the calling thread's network namespace (`snmp6` is absent when
    /// IPv6 is off: then only the other two).
    pub fn read() -> Result<Self, super::SampleError> {
        let mut s = SnmpSnapshot::default();
        for f in ["snmp", "netstat"] {
            let text = super::read_proc(&format!("/proc/thread-self/net/{f}"))?;
            s.parse_paired(&text)?;
        }
        if let Ok(text) = std::fs::read_to_string("/proc/thread-self/net/snmp6") {
            s.parse_snmp6(&text)?;
        }
        Ok(s)
    }

    pub fn get(&self, key: &str) -> i64 {
        self.counters.get(key).copied().unwrap_or(0)
    }

    /// The counters that changed from `self` (earlier) to `later`, with their change.
    pub fn changed(&self, later: &SnmpSnapshot) -> BTreeMap<String, i64> {
        later
            .counters
            .iter()
            .filter_map(|(k, &v)| {
                let d = v - self.get(k);
                (d != 0).then(|| (k.clone(), d))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNMP: &str = "Ip: Forwarding DefaultTTL InReceives InHdrErrors ForwDatagrams InDiscards OutNoRoutes\n\
Ip: 1 64 1000 2 990 3 4\n\
Udp: InDatagrams NoPorts\n\
Udp: 5 6\n";

    #[test]
    fn paired_lines_give_group_dot_field() {
        let mut s = SnmpSnapshot::default();
        s.parse_paired(SNMP).unwrap();
        assert_eq!(s.get("Ip.ForwDatagrams"), 990);
        assert_eq!(s.get("Ip.OutNoRoutes"), 4);
        assert_eq!(s.get("Udp.NoPorts"), 6);
        assert_eq!(s.get("Ip.Nope"), 0);
    }

    #[test]
    fn snmp6_names_split_after_the_6() {
        let mut s = SnmpSnapshot::default();
        s.parse_snmp6(
            "Ip6InReceives \t 12\nIp6OutForwDatagrams 7\nUdp6InErrors 1\nIcmp6InMsgs 2\n",
        )
        .unwrap();
        assert_eq!(s.get("Ip6.InReceives"), 12);
        assert_eq!(s.get("Ip6.OutForwDatagrams"), 7);
        assert_eq!(s.get("Udp6.InErrors"), 1);
        assert_eq!(s.get("Icmp6.InMsgs"), 2);
    }

    #[test]
    fn malformed_files_are_errors_not_panics() {
        for bad in [
            "Ip: A B\n",
            "Ip: A B\nIp: 1\n",
            "Ip: A B\nUdp: 1 2\n",
            "Ip: A\nIp: x\n",
            "nocolon\nnocolon\n",
        ] {
            assert!(
                SnmpSnapshot::default().parse_paired(bad).is_err(),
                "{bad:?}"
            );
        }
        assert!(SnmpSnapshot::default().parse_snmp6("a b c\n").is_err());
        assert!(SnmpSnapshot::default().parse_snmp6("Ip6X y\n").is_err());
    }

    #[test]
    fn changed_lists_only_what_moved() {
        let mut a = SnmpSnapshot::default();
        a.parse_paired(SNMP).unwrap();
        let mut b = a.clone();
        *b.counters.get_mut("Ip.ForwDatagrams").unwrap() += 500;
        *b.counters.get_mut("Ip.InDiscards").unwrap() += 2;
        b.counters.insert("Ip6.InReceives".into(), 3);
        let c = a.changed(&b);
        assert_eq!(c.len(), 3);
        assert_eq!(c["Ip.ForwDatagrams"], 500);
        assert_eq!(c["Ip6.InReceives"], 3);
    }

    #[test]
    fn this_hosts_files_parse() {
        let s = SnmpSnapshot::read().unwrap();
        assert!(s.counters.contains_key("Ip.ForwDatagrams"));
        assert!(s.counters.contains_key("IpExt.InOctets"));
    }
}
