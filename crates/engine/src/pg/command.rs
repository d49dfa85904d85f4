//! pktgen's control language for one device: [`DevConfig::command`] takes a line
//! (`count 1000`, `min_pkt_size=1001`, `flag !UDPCSUM`) and answers as the kernel does; the
//! value parsers refuse what the kernel would silently read as 0.

use super::*;

/// Splits a command of pktgen's control language into its name and the rest, as the kernel
/// reads a write to a device's or a thread's file: blanks, quotes and `=` before the name,
/// the name up to the next of them, then the same separators skipped (so `name=value`,
/// `name = value` and `name value` are the same command). The rest keeps its inner blanks.
pub fn split_command(line: &str) -> (&str, &str) {
    let is_sep = |c: char| matches!(c, '"' | '\n' | '\r' | '\t' | ' ' | '=');
    let line = line.trim_start_matches(is_sep);
    let name_end = line.find(is_sep).unwrap_or(line.len());
    let (name, rest) = line.split_at(name_end);
    (
        name,
        rest.trim_start_matches(is_sep).trim_end_matches(is_sep),
    )
}

/// Whether NUMA node `n` is in `list`, the kernel's list format (`0-3,6`) as
/// /sys/devices/system/node/possible gives it.
pub fn node_in_list(list: &str, n: u64) -> bool {
    list.trim()
        .split(',')
        .any(|part| match part.split_once('-') {
            Some((a, b)) => match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(a), Ok(b)) => (a..=b).contains(&n),
                _ => false,
            },
            None => part.parse::<u64>() == Ok(n),
        })
}

/// The NUMA nodes this machine may have (/sys/devices/system/node/possible, read once); a
/// kernel without NUMA has node 0 only.
pub(super) fn possible_nodes() -> &'static str {
    static NODES: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NODES.get_or_init(|| {
        std::fs::read_to_string("/sys/devices/system/node/possible")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .map_or_else(|| "0".to_string(), |s| s.trim().to_string())
    })
}

/// Parses an unsigned decimal number, naming the parameter when it is not one.
fn num(name: &str, v: &str) -> Result<u64, CommandError> {
    if v.is_empty() {
        return Err(CommandError::NumberNeeded(name.to_string()));
    }
    v.parse::<u64>().map_err(|_| CommandError::NotANumber {
        name: name.to_string(),
        value: v.to_string(),
    })
}

/// The value of a parameter that takes one value: `v` (already trimmed: blanks around a
/// value separate it, as in the kernel) must be a single word, so that
/// `--count "10 --dev eth1"` is refused instead of being taken as 10.
fn one_word<'a>(name: &str, v: &'a str) -> Result<&'a str, CommandError> {
    if v.contains(char::is_whitespace) {
        let shown: String = v.chars().take(60).collect();
        let more = if shown.len() < v.len() { "..." } else { "" };
        return Err(CommandError::MoreThanOneValue {
            name: name.to_string(),
            shown: format!("{shown}{more}"),
        });
    }
    Ok(v)
}

fn num_max(name: &str, v: &str, max: u64) -> Result<u64, CommandError> {
    let n = num(name, v)?;
    if n > max {
        return Err(CommandError::AboveMax {
            name: name.to_string(),
            n,
            max,
        });
    }
    Ok(n)
}

fn ipv4(name: &str, v: &str) -> Result<Ipv4Addr, CommandError> {
    v.parse().map_err(|_| CommandError::NotIpv4 {
        name: name.to_string(),
        value: v.to_string(),
    })
}

fn ipv6(name: &str, v: &str) -> Result<Ipv6Addr, CommandError> {
    v.parse().map_err(|_| CommandError::NotIpv6 {
        name: name.to_string(),
        value: v.to_string(),
    })
}

/// Two hex digits, as the kernel's `tos`/`traffic_class` take them.
fn hex_byte(name: &str, v: &str) -> Result<u8, CommandError> {
    let v2 = v.strip_prefix("0x").unwrap_or(v);
    if v2.len() != 2 {
        return Err(CommandError::NotHexByte(name.to_string()));
    }
    u8::from_str_radix(v2, 16).map_err(|_| CommandError::NotHexByte(name.to_string()))
}

/// `imix_weights size,weight size,weight ...` (sizes below 42 are raised to 42, as in the
/// kernel; a zero weight or more than 20 entries is an error).
fn parse_imix(v: &str) -> Result<Vec<ImixEntry>, CommandError> {
    let mut out = Vec::new();
    for item in v.split_whitespace() {
        if out.len() == MAX_IMIX_ENTRIES {
            return Err(CommandError::ImixTooMany);
        }
        let (s, w) = item
            .split_once(',')
            .ok_or_else(|| CommandError::ImixNotPair(item.to_string()))?;
        let size = num_max("imix_weights size", s, 65535)?.max(u64::from(MIN_PKT_SIZE_SETTING));
        // At most ten digits, as the kernel reads it: the sums stay far inside u64.
        let weight = num_max("imix_weights weight", w, MAX_TEN_DIGITS)?;
        if weight == 0 {
            return Err(CommandError::ImixZeroWeight(item.to_string()));
        }
        out.push(ImixEntry {
            size: size as u32,
            weight,
        });
    }
    if out.is_empty() {
        return Err(CommandError::Refused(
            "imix_weights: give at least one size,weight pair (e.g. 64,7 576,4 1500,1)",
        ));
    }
    Ok(out)
}

/// `mpls 0001000a,0002000a`: up to 16 hex label-stack entries; an empty value, `0` or
/// anything that does not start with a hex digit clears the stack, as in the kernel.
fn parse_mpls(v: &str) -> Result<Vec<u32>, CommandError> {
    let mut out = Vec::new();
    for item in v.split(',') {
        let item = item.trim();
        let hex_len = item.chars().take_while(|c| c.is_ascii_hexdigit()).count();
        if hex_len == 0 {
            return Ok(Vec::new());
        }
        if hex_len != item.len() || hex_len > 8 {
            return Err(CommandError::MplsNotHex(item.to_string()));
        }
        let n = u32::from_str_radix(item, 16).expect("checked hex digits");
        if n == 0 {
            return Ok(Vec::new());
        }
        if out.len() == MAX_MPLS_LABELS {
            return Err(CommandError::MplsTooMany);
        }
        out.push(n);
    }
    Ok(out)
}

impl DevConfig {
    fn note(&mut self, what: &str, text: &str) {
        if !self.notes.iter().any(|n| n.starts_with(what)) {
            self.notes.push(format!("{what}: {text}"));
        }
    }

    /// Applies one command line of pktgen's device language (`name value...`); the name and
    /// value may be separated by spaces, tabs, `=` or quotes as the kernel allows
    /// (`min_pkt_size 100`, `min_pkt_size=100`, `min_pkt_size = 100`).
    pub fn command(&mut self, line: &str) -> Answer {
        let (name, rest) = split_command(line);
        if name.is_empty() {
            return Err(CommandError::Empty);
        }
        self.set(name, rest)
    }

    /// Sets parameter `name` to `value` (the rest of the line, unquoted).
    pub fn set(&mut self, name: &str, value: &str) -> Answer {
        let v = value.trim();
        // The value of a parameter that takes one: it must be one word.
        let w = || one_word(name, v);
        match name {
            "min_pkt_size" | "max_pkt_size" | "pkt_size" => {
                let n = num_max(name, w()?, 65535)?.max(u64::from(MIN_PKT_SIZE_SETTING)) as u32;
                match name {
                    "min_pkt_size" => self.min_pkt_size = n,
                    "max_pkt_size" => self.max_pkt_size = n,
                    _ => {
                        self.min_pkt_size = n;
                        self.max_pkt_size = n;
                    }
                }
                Ok(format!("OK: {name}={n}"))
            }
            "imix_weights" => {
                if self.clone_skb > 0 {
                    return Err(CommandError::Refused(
                        "imix_weights: not with clone_skb > 0",
                    ));
                }
                self.imix = parse_imix(v)?;
                let mut s = String::from("OK: imix_weights=");
                for e in &self.imix {
                    let _ = write!(s, "{},{} ", e.size, e.weight);
                }
                Ok(s.trim_end().to_string())
            }
            "debug" => {
                self.debug = num_max(name, w()?, u64::from(u32::MAX))? as u32;
                Ok(format!("OK: debug={}", self.debug))
            }
            "frags" => {
                // Any count, as the kernel takes it (it uses at most MAX_SKB_FRAGS when it
                // builds a frame); frames are linear here whatever it says.
                self.frags = num_max(name, w()?, u64::from(u32::MAX))? as u32;
                self.note(
                    "frags",
                    "upktgen hands every frame over as one linear buffer (AF_PACKET copies it into a linear skb), so the Result line shows 0frags",
                );
                Ok(format!("OK: frags={}", self.frags))
            }
            "delay" => {
                let n = num_max(name, w()?, MAX_TEN_DIGITS)?;
                self.delay = if n == DELAY_NEVER_SETTING {
                    u64::MAX
                } else {
                    n
                };
                Ok(format!("OK: delay={}", self.delay))
            }
            "rate" => {
                let n = num(name, w()?)?;
                if n == 0 {
                    return Err(CommandError::Refused("rate: must be at least 1 (Mb/s)"));
                }
                // The kernel's rule: the gap that sends min_pkt_size-byte frames at n Mb/s.
                self.delay = u64::from(self.min_pkt_size) * 8 * 1000 / n;
                Ok(format!("OK: rate={n}"))
            }
            "ratep" => {
                let n = num_max(name, w()?, 1_000_000_000)?;
                if n == 0 {
                    return Err(CommandError::Refused(
                        "ratep: must be at least 1 (packets/s)",
                    ));
                }
                self.delay = 1_000_000_000 / n;
                Ok(format!("OK: rate={n}"))
            }
            "udp_src_min" | "udp_src_max" | "udp_dst_min" | "udp_dst_max" => {
                let n = num_max(name, w()?, 65535)? as u16;
                match name {
                    "udp_src_min" => self.udp_src_min = n,
                    "udp_src_max" => self.udp_src_max = n,
                    "udp_dst_min" => self.udp_dst_min = n,
                    _ => self.udp_dst_max = n,
                }
                Ok(format!("OK: {name}={n}"))
            }
            "clone_skb" => {
                let n = num_max(name, w()?, u64::from(u32::MAX))? as u32;
                if n > 0 && self.loopback {
                    return Err(CommandError::NoSkbSharing {
                        name: "clone_skb",
                        dev: self.device().to_string(),
                    });
                }
                if n > 0 && !self.imix.is_empty() {
                    return Err(CommandError::Refused("clone_skb: not with imix_weights"));
                }
                if n > 0 && !self.has(Flag::Shared) {
                    return Err(CommandError::Refused("clone_skb: needs the SHARED flag"));
                }
                if n > 0 && self.xmit_mode == Some(XmitMode::NetifReceive) {
                    return Err(CommandError::Refused(
                        "clone_skb: not with xmit_mode netif_receive",
                    ));
                }
                self.clone_skb = n;
                if n > 0 {
                    self.note(
                        "clone_skb",
                        "upktgen builds every frame anew (its frames are rewritten in place at no cost), so it sends what clone_skb 0 sends",
                    );
                }
                Ok(format!("OK: clone_skb={n}"))
            }
            "count" => {
                self.count = num(name, w()?)?;
                Ok(format!("OK: count={}", self.count))
            }
            "src_mac_count" | "dst_mac_count" => {
                let n = num_max(name, w()?, u64::from(u32::MAX))? as u32;
                if name == "src_mac_count" {
                    self.src_mac_count = n;
                } else {
                    self.dst_mac_count = n;
                }
                Ok(format!("OK: {name}={n}"))
            }
            "burst" => {
                let n = num_max(name, w()?, 1 << 16)? as u32;
                if n > 1 && self.loopback && self.xmit_mode != Some(XmitMode::NetifReceive) {
                    return Err(CommandError::NoSkbSharing {
                        name: "burst",
                        dev: self.device().to_string(),
                    });
                }
                if n > 1 && !self.has(Flag::Shared) {
                    return Err(CommandError::Refused("burst: needs the SHARED flag"));
                }
                self.burst = n.max(1);
                Ok(format!("OK: burst={}", self.burst))
            }
            "node" => {
                let n = num_max(name, w()?, 1023)?;
                // As the kernel: a node this machine cannot have is refused.
                if !node_in_list(possible_nodes(), n) {
                    return Err(CommandError::NodeNotPossible {
                        n,
                        possible: possible_nodes().to_string(),
                    });
                }
                let n = n as i32;
                self.node = n;
                self.note(
                    "node",
                    "frame buffers are allocated by the sending thread; pin it with --cpu to choose the NUMA node",
                );
                Ok(format!("OK: node={n}"))
            }
            "xmit_mode" => match w()? {
                "start_xmit" => {
                    self.xmit_mode = Some(XmitMode::StartXmit);
                    Ok("OK: xmit_mode=start_xmit".into())
                }
                "queue_xmit" => {
                    self.xmit_mode = Some(XmitMode::QueueXmit);
                    Ok("OK: xmit_mode=queue_xmit".into())
                }
                "netif_receive" => {
                    if self.clone_skb > 0 {
                        return Err(CommandError::Refused(
                            "xmit_mode netif_receive: not with clone_skb > 0 (set clone_skb 0 first)",
                        ));
                    }
                    self.xmit_mode = Some(XmitMode::NetifReceive);
                    Ok("OK: xmit_mode=netif_receive".into())
                }
                other => Err(CommandError::UnknownXmitMode(other.to_string())),
            },
            "flag" => self.flag(w()?),
            "dst_min" | "dst" | "dst_max" | "src_min" | "src" | "src_max" => {
                let w = w()?;
                ipv4(name, w)?;
                let field = match name {
                    "dst_min" | "dst" => &mut self.dst_min,
                    "dst_max" => &mut self.dst_max,
                    "src_min" | "src" => &mut self.src_min,
                    _ => &mut self.src_max,
                };
                *field = w.to_string();
                // `src` is upktgen's spelling of src_min (the kernel has only src_min).
                let shown = match name {
                    "dst" => "dst_min",
                    "src" => "src_min",
                    n => n,
                };
                Ok(format!("OK: {shown}={w}"))
            }
            "dst6" | "dst6_min" | "dst6_max" | "src6" => {
                let a = ipv6(name, w()?)?;
                match name {
                    "dst6" => self.dst6 = a,
                    "dst6_min" => self.dst6_min = a,
                    "dst6_max" => self.dst6_max = a,
                    _ => self.src6 = a,
                }
                // As in the kernel, an IPv6 address turns IPv6 mode on.
                self.set_flag(Flag::Ipv6, true);
                Ok(format!("OK: {name}={a}"))
            }
            "dst_mac" | "src_mac" => {
                let m: MacAddr = w()?
                    .parse()
                    .map_err(|e| CommandError::NotMac(name.to_string(), e))?;
                if name == "dst_mac" {
                    self.dst_mac = m;
                    Ok(format!("OK: dstmac {m}"))
                } else {
                    self.src_mac = m;
                    Ok(format!("OK: srcmac {m}"))
                }
            }
            "clear_counters" => Ok("OK: Clearing counters.".into()),
            "flows" => {
                self.flows = num_max(name, w()?, u64::from(MAX_CFLOWS))? as u32;
                Ok(format!("OK: flows={}", self.flows))
            }
            "flowlen" => {
                self.flowlen = num_max(name, w()?, u64::from(u32::MAX))? as u32;
                Ok(format!("OK: flowlen={}", self.flowlen))
            }
            "queue_map_min" | "queue_map_max" => {
                let n = num_max(name, w()?, 65535)? as u16;
                if name == "queue_map_min" {
                    self.queue_map_min = n;
                } else {
                    self.queue_map_max = n;
                }
                Ok(format!("OK: {name}={n}"))
            }
            "mpls" => {
                let labels = parse_mpls(v)?;
                if labels.iter().any(|l| l & MPLS_STACK_BOTTOM != 0) {
                    // Kernel quirk kept: a label given with the bottom-of-stack bit set turns
                    // MPLS_RND on.
                    self.set_flag(Flag::MplsRnd, true);
                }
                self.mpls = labels;
                if !self.mpls.is_empty() {
                    // MPLS and VLAN tags exclude each other.
                    self.vlan_id = NO_VLAN;
                    self.svlan_id = NO_VLAN;
                }
                let shown: Vec<String> = self.mpls.iter().map(|l| format!("{l:08x}")).collect();
                Ok(format!("OK: mpls={}", shown.join(",")))
            }
            "vlan_id" => {
                let n = num(name, w()?)?;
                if n <= 4095 {
                    self.vlan_id = n as u16;
                    self.mpls.clear();
                    Ok(format!("OK: vlan_id={n}"))
                } else {
                    // Above 4095 removes the tags, as in the kernel.
                    self.vlan_id = NO_VLAN;
                    self.svlan_id = NO_VLAN;
                    Ok("OK: vlan_id removed (VLAN and SVLAN off)".into())
                }
            }
            "svlan_id" => {
                let n = num(name, w()?)?;
                if n <= 4095 && self.vlan_id != NO_VLAN {
                    self.svlan_id = n as u16;
                    self.mpls.clear();
                    Ok(format!("OK: svlan_id={n}"))
                } else {
                    self.vlan_id = NO_VLAN;
                    self.svlan_id = NO_VLAN;
                    if n <= 4095 {
                        Err(CommandError::Refused(
                            "svlan_id: set vlan_id first (an SVLAN tag goes outside a VLAN tag); VLAN and SVLAN are now off, as in the kernel",
                        ))
                    } else {
                        Ok("OK: svlan_id removed (VLAN and SVLAN off)".into())
                    }
                }
            }
            "vlan_p" | "svlan_p" | "vlan_cfi" | "svlan_cfi" => {
                let (max, tag_on) = match name {
                    "vlan_p" => (7, self.vlan_id != NO_VLAN),
                    "svlan_p" => (7, self.svlan_id != NO_VLAN),
                    "vlan_cfi" => (1, self.vlan_id != NO_VLAN),
                    _ => (1, self.svlan_id != NO_VLAN),
                };
                let n = num(name, w()?).ok().filter(|&n| n <= max);
                match (n, tag_on) {
                    (Some(n), true) => {
                        let n = n as u8;
                        match name {
                            "vlan_p" => self.vlan_p = n,
                            "svlan_p" => self.svlan_p = n,
                            "vlan_cfi" => self.vlan_cfi = n,
                            _ => self.svlan_cfi = n,
                        }
                        Ok(format!("OK: {name}={n}"))
                    }
                    (Some(_), false) => Err(CommandError::TagFirst {
                        name: name.to_string(),
                        first: if name.starts_with('s') {
                            "svlan_id"
                        } else {
                            "vlan_id"
                        },
                    }),
                    (None, _) => Err(CommandError::OutOfRange {
                        name: name.to_string(),
                        max,
                    }),
                }
            }
            "tos" => {
                self.tos = hex_byte(name, w()?)?;
                Ok(format!("OK: tos=0x{:02x}", self.tos))
            }
            "traffic_class" => {
                self.traffic_class = hex_byte(name, w()?)?;
                Ok(format!("OK: traffic_class=0x{:02x}", self.traffic_class))
            }
            "skb_priority" => {
                self.skb_priority = num_max(name, w()?, u64::from(u32::MAX))? as u32;
                self.note(
                    "skb_priority",
                    "set as the sending socket's SO_PRIORITY (af_packet, tx_ring), which the kernel copies to every skb",
                );
                Ok(format!("OK: skb_priority={}", self.skb_priority))
            }
            "spi" => Err(CommandError::Refused(
                "spi: upktgen does not do IPsec (the kernel's xfrm transforms are not reachable from userspace)",
            )),
            _ => Err(CommandError::NoSuchParameter(name.to_string())),
        }
    }

    /// `flag NAME` / `flag !NAME`.
    fn flag(&mut self, f: &str) -> Answer {
        let (off, name) = match f.strip_prefix('!') {
            Some(n) => (true, n),
            None => (false, f),
        };
        let (flag, on) = if name == "FLOW_RND" {
            (Flag::FlowSeq, off)
        } else {
            match FLAG_NAMES.iter().position(|n| *n == name) {
                Some(i) => (Flag::from_index(i), !off),
                None => {
                    return Err(CommandError::UnknownFlag(f.to_string()));
                }
            }
        };
        match flag {
            Flag::Ipsec if on => {
                return Err(CommandError::Refused("flag IPSEC: upktgen does not do IPsec (the kernel's xfrm transforms are not reachable from userspace)"));
            }
            Flag::Shared if !on && (self.clone_skb > 0 || self.burst > 1) => {
                return Err(CommandError::Refused("flag !SHARED: not while clone_skb or burst is set"));
            }
            Flag::Node if on => self.note(
                "NODE",
                "frame buffers are allocated by the sending thread; pin it with --cpu to choose the NUMA node",
            ),
            _ => {}
        }
        self.set_flag(flag, on);
        Ok(format!("OK: flags=0x{:x}", self.flags))
    }
}
