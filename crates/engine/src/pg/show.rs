//! Reading a device: the kernel's `Params:`, `Current:` and `Result:` sections, in its layout.

use super::generate::Generator;
use super::{DevConfig, FLAG_NAMES, Flag, NO_VLAN, XmitMode};
use crate::wire::MacAddr;
use std::fmt::Write as _;
use std::net::Ipv4Addr;

/// Run-time figures for the `Current:` section.
#[derive(Debug, Clone, Default)]
pub struct Current {
    pub sofar: u64,
    pub errors: u64,
    /// CLOCK_MONOTONIC at start and stop, microseconds.
    pub started_us: u64,
    pub stopped_us: u64,
    pub idle_us: u64,
}

/// Compressed IPv6 text as the kernel's `%pI6c` prints it (Rust's Display compresses the
/// same way, and prints `::` for all zeros).
fn v6(a: &std::net::Ipv6Addr) -> String {
    a.to_string()
}

/// The device's text: `Params:` from the configuration, `Current:` from the walk's state and
/// the run's counters, `Result:` the last answer or run result (`Idle` when none).
pub fn show(
    c: &DevConfig,
    dev_mac: MacAddr,
    g: Option<&Generator>,
    cur: &Current,
    result: &str,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Params: count {}  min_pkt_size: {}  max_pkt_size: {}",
        c.count, c.min_pkt_size, c.max_pkt_size
    );
    if !c.imix.is_empty() {
        s.push_str("     imix_weights: ");
        for e in &c.imix {
            let _ = write!(s, "{},{} ", e.size, e.weight);
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "     frags: {}  delay: {}  clone_skb: {}  ifname: {}",
        c.frags, c.delay, c.clone_skb, c.ifname
    );
    let _ = writeln!(s, "     flows: {} flowlen: {}", c.flows, c.flowlen);
    let _ = writeln!(
        s,
        "     queue_map_min: {}  queue_map_max: {}",
        c.queue_map_min, c.queue_map_max
    );
    if c.skb_priority != 0 {
        let _ = writeln!(s, "     skb_priority: {}", c.skb_priority);
    }
    if c.has(Flag::Ipv6) {
        let _ = writeln!(
            s,
            "     saddr: {}  min_saddr: ::  max_saddr: ::\n     daddr: {}  min_daddr: {}  max_daddr: {}",
            v6(&c.src6),
            v6(&c.dst6),
            v6(&c.dst6_min),
            v6(&c.dst6_max)
        );
    } else {
        let _ = writeln!(s, "     dst_min: {}  dst_max: {}", c.dst_min, c.dst_max);
        let _ = writeln!(s, "     src_min: {}  src_max: {}", c.src_min, c.src_max);
    }
    let src_mac = if c.src_mac == MacAddr::default() {
        dev_mac
    } else {
        c.src_mac
    };
    let _ = writeln!(s, "     src_mac: {src_mac} dst_mac: {}", c.dst_mac);
    let _ = writeln!(
        s,
        "     udp_src_min: {}  udp_src_max: {}  udp_dst_min: {}  udp_dst_max: {}",
        c.udp_src_min, c.udp_src_max, c.udp_dst_min, c.udp_dst_max
    );
    let _ = writeln!(
        s,
        "     src_mac_count: {}  dst_mac_count: {}",
        c.src_mac_count, c.dst_mac_count
    );
    if !c.mpls.is_empty() {
        let labels: Vec<String> = c.mpls.iter().map(|l| format!("{l:08x}")).collect();
        let _ = writeln!(s, "     mpls: {}", labels.join(", "));
    }
    if c.vlan_id != NO_VLAN {
        let _ = writeln!(
            s,
            "     vlan_id: {}  vlan_p: {}  vlan_cfi: {}",
            c.vlan_id, c.vlan_p, c.vlan_cfi
        );
    }
    if c.svlan_id != NO_VLAN {
        // The kernel labels the SVLAN's priority and CFI "vlan_p"/"vlan_cfi" here.
        let _ = writeln!(
            s,
            "     svlan_id: {}  vlan_p: {}  vlan_cfi: {}",
            c.svlan_id, c.svlan_p, c.svlan_cfi
        );
    }
    if c.tos != 0 {
        let _ = writeln!(s, "     tos: 0x{:02x}", c.tos);
    }
    if c.traffic_class != 0 {
        let _ = writeln!(s, "     traffic_class: 0x{:02x}", c.traffic_class);
    }
    if c.burst > 1 {
        let _ = writeln!(s, "     burst: {}", c.burst);
    }
    if c.node >= 0 {
        let _ = writeln!(s, "     node: {}", c.node);
    }
    match c.xmit_mode {
        Some(XmitMode::QueueXmit) => s.push_str("     xmit_mode: xmit_queue\n"),
        Some(XmitMode::NetifReceive) => s.push_str("     xmit_mode: netif_receive\n"),
        _ => {}
    }
    s.push_str("     Flags: ");
    for (i, name) in FLAG_NAMES.iter().enumerate() {
        let on = c.flags & (1 << i) != 0;
        if i == Flag::FlowSeq as usize {
            if c.flows == 0 {
                continue;
            }
            s.push_str(if on { "FLOW_SEQ  " } else { "FLOW_RND  " });
            continue;
        }
        if on {
            let _ = write!(s, "{name}  ");
        }
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "Current:\n     pkts-sofar: {}  errors: {}",
        cur.sofar, cur.errors
    );
    if let Some(g) = g
        && !c.imix.is_empty()
    {
        s.push_str("     imix_size_counts: ");
        for (e, n) in c.imix.iter().zip(&g.imix_counts) {
            let _ = write!(s, "{},{} ", e.size, n);
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "     started: {}us  stopped: {}us idle: {}us",
        cur.started_us, cur.stopped_us, cur.idle_us
    );
    let (seq, dmo, smo) = g.map_or((0, 0, 0), |g| {
        (g.seq, g.cur_dst_mac_offset, g.cur_src_mac_offset)
    });
    let _ = writeln!(
        s,
        "     seq_num: {seq}  cur_dst_mac_offset: {dmo}  cur_src_mac_offset: {smo}"
    );
    match g {
        Some(g) if c.has(Flag::Ipv6) => {
            let _ = writeln!(
                s,
                "     cur_saddr: {}  cur_daddr: {}",
                v6(&g.cur_saddr6),
                v6(&g.cur_daddr6)
            );
        }
        Some(g) => {
            let _ = writeln!(
                s,
                "     cur_saddr: {}  cur_daddr: {}",
                Ipv4Addr::from(g.cur_saddr),
                Ipv4Addr::from(g.cur_daddr)
            );
        }
        None if c.has(Flag::Ipv6) => s.push_str("     cur_saddr: ::  cur_daddr: ::\n"),
        None => s.push_str("     cur_saddr: 0.0.0.0  cur_daddr: 0.0.0.0\n"),
    }
    let (ud, us, qm, nf) = g.map_or((0, 0, 0, 0), |g| {
        (g.cur_udp_dst, g.cur_udp_src, g.cur_queue_map, g.nflows)
    });
    let _ = writeln!(s, "     cur_udp_dst: {ud}  cur_udp_src: {us}");
    let _ = writeln!(s, "     cur_queue_map: {qm}");
    let _ = writeln!(s, "     flows: {nf}");
    if result.is_empty() {
        s.push_str("Result: Idle\n");
    } else {
        let _ = writeln!(s, "Result: {result}");
    }
    s
}
