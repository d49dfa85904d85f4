//! `xmit_mode netif_receive`: what the device's receive path did with the frames passed
//! into it, from the IP and UDP counters of its network namespace (`/proc/net/snmp`,
//! `/proc/net/snmp6`) and its interface counters, taken before and after the run.

use crate::sample::{IfaceCounters, SnmpSnapshot};
use crate::wire::MacAddr;
use serde::Serialize;
use std::fmt::Write;

/// The IP layer's account (IPv4's `Ip.*`, or IPv6's `Ip6.*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IpCounters {
    /// Datagrams that reached IP.
    pub in_receives: u64,
    /// Handed to a transport protocol (UDP here).
    pub in_delivers: u64,
    /// Bad headers (version, length, checksum).
    pub in_hdr_errors: u64,
    /// Not for this host, and not forwarded (a destination that is no local address, a
    /// source that is one).
    pub in_addr_errors: u64,
    pub in_discards: u64,
}

/// The UDP layer's account (`Udp.*`, or `Udp6.*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UdpCounters {
    /// Read from a socket by an application: the kernel counts a datagram when it is read,
    /// not when it is queued (one still waiting at a socket is in IP's InDelivers and in no
    /// UDP counter).
    pub in_datagrams: u64,
    /// No socket on the destination port.
    pub no_ports: u64,
    /// Not delivered for another reason (the two below among them).
    pub in_errors: u64,
    /// The socket's receive buffer was full.
    pub rcvbuf_errors: u64,
    /// The UDP checksum was wrong.
    pub in_csum_errors: u64,
}

/// The receive path's account of one netif_receive run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReceivePath {
    /// The device whose receive path took the frames, and its network namespace (None:
    /// the current one).
    pub device: String,
    pub netns: Option<String>,
    /// Frames the program passed into it (the run's sent).
    pub passed: u64,
    /// The device's own MAC and the frames' destination MAC: when they differ, the stack
    /// takes the frames for another host's and drops them before IP.
    pub device_mac: MacAddr,
    pub dst_mac: MacAddr,
    /// The frames' IPv4 source is the device's own address (pktgen's default): the stack
    /// drops such frames as martians after counting them in InReceives.
    pub source_is_own: bool,
    /// IPv6 counters (the frames are IPv6) rather than IPv4's.
    pub ipv6: bool,
    pub ip: IpCounters,
    pub udp: UdpCounters,
    /// The device's own counters over the run: frames injected after its driver are not in
    /// rx_packets; rx_dropped counts what the core dropped (no protocol handler, ...).
    pub rx_packets: u64,
    pub rx_dropped: u64,
}

impl ReceivePath {
    /// The account from the namespace's counters before and after, and the device's.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: &str,
        netns: Option<String>,
        passed: u64,
        (device_mac, dst_mac): (MacAddr, MacAddr),
        ipv6: bool,
        before: &SnmpSnapshot,
        after: &SnmpSnapshot,
        dev: &IfaceCounters,
    ) -> ReceivePath {
        let (ip, udp) = if ipv6 { ("Ip6", "Udp6") } else { ("Ip", "Udp") };
        let d = |group: &str, field: &str| {
            let k = format!("{group}.{field}");
            u64::try_from(after.get(&k).saturating_sub(before.get(&k))).unwrap_or(0)
        };
        ReceivePath {
            device: device.to_string(),
            netns,
            passed,
            device_mac,
            dst_mac,
            source_is_own: false,
            ipv6,
            ip: IpCounters {
                in_receives: d(ip, "InReceives"),
                in_delivers: d(ip, "InDelivers"),
                in_hdr_errors: d(ip, "InHdrErrors"),
                in_addr_errors: d(ip, "InAddrErrors"),
                in_discards: d(ip, "InDiscards"),
            },
            udp: UdpCounters {
                in_datagrams: d(udp, "InDatagrams"),
                no_ports: d(udp, "NoPorts"),
                in_errors: d(udp, "InErrors"),
                rcvbuf_errors: d(udp, "RcvbufErrors"),
                in_csum_errors: d(udp, "InCsumErrors"),
            },
            rx_packets: dev.rx_packets,
            rx_dropped: dev.rx_drop,
        }
    }

    /// Whether the frames carry the device's own MAC (PACKET_HOST to the stack).
    pub fn for_this_host(&self) -> bool {
        self.dst_mac == self.device_mac
    }

    /// The report's `Receive path:` lines.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let where_ = match &self.netns {
            Some(ns) => format!(" in netns {ns}"),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "Receive path: {} frames passed into {}'s receive path (xmit_mode netif_receive){where_}",
            self.passed, self.device
        );
        let (ip, udp) = if self.ipv6 {
            ("IPv6:", "UDP6:")
        } else {
            ("IP:", "UDP:")
        };
        let i = &self.ip;
        let _ = writeln!(
            s,
            "  {ip:<11} InReceives {}, InDelivers {}, InHdrErrors {}, InAddrErrors {}, InDiscards {}",
            i.in_receives, i.in_delivers, i.in_hdr_errors, i.in_addr_errors, i.in_discards
        );
        let u = &self.udp;
        let _ = writeln!(
            s,
            "  {udp:<11} InDatagrams {}, NoPorts {}, InErrors {}, RcvbufErrors {}, InCsumErrors {}",
            u.in_datagrams, u.no_ports, u.in_errors, u.rcvbuf_errors, u.in_csum_errors
        );
        let _ = writeln!(
            s,
            "  {:<11} rx_packets {}, rx_dropped {} (its driver's counters: injected frames enter after the driver)",
            format!("{}:", self.device),
            self.rx_packets,
            self.rx_dropped
        );
        if !self.for_this_host() {
            let _ = writeln!(
                s,
                "  note:       the frames' destination MAC {} is not {}'s ({}): the stack takes them for another host's and drops them before IP (only the ingress hooks see them); give the device's MAC as dst_mac for the stack to take them",
                self.dst_mac, self.device, self.device_mac
            );
        }
        if self.source_is_own && self.for_this_host() {
            let _ = writeln!(
                s,
                "  note:       the frames' source address is {}'s own (pktgen's default): the stack drops them as martians after InReceives; give src_min (--src) another address",
                self.device
            );
        }
        let _ = writeln!(
            s,
            "  (the IP and UDP counters are the whole namespace's: other traffic there counts too; \
             InDatagrams counts what applications have read, so datagrams still queued at a socket \
             are in InDelivers only)"
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(text: &str) -> SnmpSnapshot {
        let mut s = SnmpSnapshot::default();
        s.parse_paired(text).unwrap();
        s
    }

    #[test]
    fn counts_are_the_changes_of_the_namespaces_counters() {
        let before = snap(
            "Ip: InReceives InHdrErrors InAddrErrors InDiscards InDelivers\nIp: 10 0 1 0 10\n\
             Udp: InDatagrams NoPorts InErrors RcvbufErrors InCsumErrors\nUdp: 5 2 0 0 0\n",
        );
        let after = snap(
            "Ip: InReceives InHdrErrors InAddrErrors InDiscards InDelivers\nIp: 110 0 1 0 110\n\
             Udp: InDatagrams NoPorts InErrors RcvbufErrors InCsumErrors\nUdp: 95 12 3 3 0\n",
        );
        let mac: MacAddr = "02:00:00:99:00:02".parse().unwrap();
        let dev = IfaceCounters {
            rx_drop: 1,
            ..IfaceCounters::default()
        };
        let r = ReceivePath::new(
            "veth-rx",
            None,
            100,
            (mac, mac),
            false,
            &before,
            &after,
            &dev,
        );
        assert_eq!((r.ip.in_receives, r.ip.in_delivers), (100, 100));
        assert_eq!(
            r.udp,
            UdpCounters {
                in_datagrams: 90,
                no_ports: 10,
                in_errors: 3,
                rcvbuf_errors: 3,
                in_csum_errors: 0
            }
        );
        assert_eq!((r.rx_packets, r.rx_dropped), (0, 1));
        let t = r.text();
        assert!(
            t.contains("InDatagrams 90, NoPorts 10, InErrors 3, RcvbufErrors 3, InCsumErrors 0"),
            "{t}"
        );
        assert!(!t.contains("note:"), "{t}");
        let other = ReceivePath {
            dst_mac: "90:e2:ba:ff:ff:ff".parse().unwrap(),
            ..r
        };
        assert!(other.text().contains("not veth-rx's (02:00:00:99:00:02)"));
    }
}
