//! pktgen's device parameters as command-line options: `--name-with-dashes VALUE` for every
//! parameter of the control language, applied in command-line order through
//! [`crate::pg::DevConfig::command`], so the command line and scripts cannot disagree.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

/// One parameter: pktgen's name, the option's value name, its help.
pub struct Param {
    pub name: &'static str,
    pub value: &'static str,
    pub help: &'static str,
}

const fn p(name: &'static str, value: &'static str, help: &'static str) -> Param {
    Param { name, value, help }
}

/// Every device parameter of pktgen's language, in the order `--help` lists them.
pub const PARAMS: &[Param] = &[
    p(
        "count",
        "N",
        "Frames to send (accepted or refused by the kernel); 0 = until Ctrl-C or --duration [the seed's 4000000; scripts: pktgen's 1000]",
    ),
    p(
        "pkt_size",
        "BYTES",
        "Frame size without FCS; sets min and max [60]. Below 42 is raised to 42; a frame always holds its headers and pktgen's 16-byte header",
    ),
    p(
        "min_pkt_size",
        "BYTES",
        "Smallest frame of a size walk (min..max inclusive, +1 per packet; TXSIZE_RND draws [min, max))",
    ),
    p("max_pkt_size", "BYTES", "Largest frame of a size walk"),
    p(
        "imix_weights",
        "SIZE,WEIGHT ...",
        "Internet mix: frame sizes with relative weights, e.g. \"64,7 576,4 1500,1\" (up to 20; binned into 100 slots as the kernel does)",
    ),
    p(
        "delay",
        "NS",
        "Gap between packets in ns on an absolute schedule (a late sender catches up); 2147483647 = never send",
    ),
    p(
        "rate",
        "MBPS",
        "Rate in Mb/s of min_pkt_size-byte frames (sets delay, as the kernel)",
    ),
    p(
        "ratep",
        "PPS",
        "Packets per second (sets delay = 1e9/ratep)",
    ),
    p(
        "burst",
        "N",
        "Send N frames back to back per tick; the rate stays the one requested (the kernel's burst multiplies it)",
    ),
    p("dst", "IPV4", "Destination IPv4 address (= dst_min)"),
    p(
        "dst_min",
        "IPV4",
        "First destination of a range [lab: 10.99.0.2; --dev: required]",
    ),
    p(
        "dst_max",
        "IPV4",
        "Last destination (sequential walk inclusive; IPDST_RND draws [min, max), skipping 0/8, 127/8, 224/4)",
    ),
    p(
        "src",
        "IPV4",
        "Source IPv4 address (= src_min; an upktgen spelling) [the interface's first address]",
    ),
    p("src_min", "IPV4", "First source of a range"),
    p(
        "src_max",
        "IPV4",
        "Last source (inclusive walk; IPSRC_RND draws [min, max))",
    ),
    p("dst6", "IPV6", "Destination IPv6 address (turns IPv6 on)"),
    p(
        "dst6_min",
        "IPV6",
        "IPv6 destinations: each 32-bit word drawn as (random | min) & max",
    ),
    p("dst6_max", "IPV6", "See --dst6-min"),
    p(
        "src6",
        "IPV6",
        "Source IPv6 address [the link-local address of the source MAC]",
    ),
    p(
        "dst_mac",
        "MAC",
        "Destination MAC [lab: veth-rx's; --dev: required]",
    ),
    p("src_mac", "MAC", "Source MAC [the sending interface's]"),
    p(
        "src_mac_count",
        "N",
        "Walk N source MACs: the offset 0..N-1 is added to the low bytes (MACSRC_RND: random)",
    ),
    p(
        "dst_mac_count",
        "N",
        "Walk N destination MACs (MACDST_RND: random)",
    ),
    p(
        "udp_src_min",
        "PORT",
        "UDP source port range [min, max): first packet min+1, then wraps to min; UDPSRC_RND draws [min, max) [9]",
    ),
    p("udp_src_max", "PORT", "See --udp-src-min [9]"),
    p(
        "udp_dst_min",
        "PORT",
        "UDP destination port range [min, max) [9]",
    ),
    p("udp_dst_max", "PORT", "See --udp-dst-min [9]"),
    p(
        "vlan_id",
        "ID",
        "802.1Q tag 0-4095 (above 4095 removes the VLAN and SVLAN tags); turns MPLS off",
    ),
    p("vlan_p", "0-7", "VLAN priority (set vlan_id first)"),
    p("vlan_cfi", "0-1", "VLAN CFI/DEI bit"),
    p(
        "svlan_id",
        "ID",
        "Outer (QinQ) tag, outside the VLAN tag (set vlan_id first)",
    ),
    p("svlan_p", "0-7", "SVLAN priority"),
    p("svlan_cfi", "0-1", "SVLAN CFI/DEI bit"),
    p(
        "mpls",
        "HEX,...",
        "MPLS label stack entries in hex, e.g. 0001000a,0002000a (up to 16; 0 clears; removes VLAN tags)",
    ),
    p("tos", "HEX", "IPv4 TOS byte, two hex digits"),
    p("traffic_class", "HEX", "IPv6 traffic class, two hex digits"),
    p(
        "flows",
        "N",
        "Concurrent flows (up to 65536): each keeps the destination it drew for flowlen packets",
    ),
    p(
        "flowlen",
        "N",
        "Packets per flow before it draws a new destination",
    ),
    p(
        "queue_map_min",
        "Q",
        "TX queue range (sequential or QUEUE_MAP_RND; QUEUE_MAP_CPU uses the CPU); af_xdp binds to queue_map_min",
    ),
    p("queue_map_max", "Q", "See --queue-map-min"),
    p(
        "flag",
        "FLAG",
        "Set a pktgen flag, or clear it with !FLAG; repeatable: IPSRC_RND IPDST_RND UDPSRC_RND UDPDST_RND MACSRC_RND MACDST_RND TXSIZE_RND IPV6 MPLS_RND VID_RND SVID_RND FLOW_SEQ (FLOW_RND = !FLOW_SEQ) QUEUE_MAP_RND QUEUE_MAP_CPU UDPCSUM NO_TIMESTAMP NODE SHARED",
    ),
    p(
        "frags",
        "N",
        "Accepted for scripts: frames are one linear buffer here, so Result shows 0frags",
    ),
    p(
        "clone_skb",
        "N",
        "Accepted for scripts: every frame is built anew here (it costs nothing), so it sends what clone_skb 0 sends",
    ),
    p(
        "xmit_mode",
        "MODE",
        "start_xmit (qdisc bypassed where the backend can), queue_xmit (through the qdisc), or netif_receive (into the device's receive path, as if it had received the frames: xdp_live only)",
    ),
    p(
        "skb_priority",
        "N",
        "SO_PRIORITY of the sending socket (af_packet, tx_ring): the priority of every skb",
    ),
    p(
        "node",
        "N",
        "Accepted for scripts: buffers come from the sending thread's node (pin it with --cpu)",
    ),
];

/// Option id/long name of a parameter: `pkt_size` -> `pkt-size`.
fn long(name: &str) -> String {
    name.replace('_', "-")
}

/// The pktgen parameters given on the command line, in the order given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PgArgs {
    /// (pktgen name, value) pairs.
    pub items: Vec<(&'static str, String)>,
}

impl PgArgs {
    /// Whether parameter `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.items.iter().any(|(n, _)| *n == name)
    }

    /// The last value given for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.items
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl FromArgMatches for PgArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut s = PgArgs::default();
        s.update_from_arg_matches(m)?;
        Ok(s)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        let mut found: Vec<(usize, &'static str, String)> = Vec::new();
        for p in PARAMS {
            let (Some(vals), Some(idx)) = (m.get_many::<String>(p.name), m.indices_of(p.name))
            else {
                continue;
            };
            for (v, i) in vals.zip(idx) {
                found.push((i, p.name, v.clone()));
            }
        }
        found.sort_by_key(|f| f.0);
        self.items.extend(found.into_iter().map(|(_, n, v)| (n, v)));
        Ok(())
    }
}

impl Args for PgArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for p in PARAMS {
            let mut arg = Arg::new(p.name)
                .long(long(p.name))
                .value_name(p.value)
                .help(p.help)
                .action(ArgAction::Append)
                .num_args(1)
                .help_heading("pktgen parameters");
            if p.name == "flag" {
                arg = arg.allow_hyphen_values(true);
            }
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::DevConfig;

    /// Every parameter in the table is one DevConfig understands (and the table is the
    /// whole device language but for the commands that are not parameters).
    #[test]
    fn table_matches_the_language() {
        for p in PARAMS {
            let mut d = DevConfig::new("x");
            let answer = d.set(p.name, "");
            let text = crate::pg::result_line(&answer);
            assert!(!text.contains("No such parameter"), "{}: {text}", p.name);
        }
    }

    #[derive(clap::Parser, Debug)]
    struct T {
        #[command(flatten)]
        pg: PgArgs,
    }

    #[test]
    fn order_is_kept() {
        use clap::Parser;
        let t = T::try_parse_from([
            "t",
            "--flag",
            "UDPCSUM",
            "--count",
            "5",
            "--flag",
            "!UDPCSUM",
            "--dst-min",
            "10.0.0.1",
        ])
        .unwrap();
        assert_eq!(
            t.pg.items,
            [
                ("flag", "UDPCSUM".to_string()),
                ("count", "5".into()),
                ("flag", "!UDPCSUM".into()),
                ("dst_min", "10.0.0.1".into())
            ]
        );
        assert_eq!(t.pg.get("flag"), Some("!UDPCSUM"));
    }
}
