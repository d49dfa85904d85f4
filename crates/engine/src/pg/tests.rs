use super::*;

fn dev() -> DevConfig {
    DevConfig::new("veth0")
}

/// The Result line of a refused command, as the kernel shows it (`ERROR: ...`).
fn refused(a: Answer) -> String {
    assert!(a.is_err(), "not refused: {a:?}");
    result_line(&a)
}

#[test]
fn kernel_defaults() {
    let d = dev();
    assert_eq!(d.count, 1000);
    assert_eq!((d.min_pkt_size, d.max_pkt_size), (60, 60));
    assert_eq!((d.udp_src_min, d.udp_dst_max), (9, 9));
    assert_eq!((d.vlan_id, d.svlan_id), (NO_VLAN, NO_VLAN));
    assert_eq!(d.burst, 1);
    assert!(d.has(Flag::Shared));
    assert_eq!(d.flags, 1 << 18);
}

#[test]
fn answers_like_the_kernel() {
    let mut d = dev();
    assert_eq!(d.command("count 100000"), Ok("OK: count=100000".into()));
    assert_eq!(d.command("pkt_size 64"), Ok("OK: pkt_size=64".into()));
    assert_eq!((d.min_pkt_size, d.max_pkt_size), (64, 64));
    assert_eq!(d.command("dst 10.0.0.1"), Ok("OK: dst_min=10.0.0.1".into()));
    assert_eq!(
        d.command("dst_mac 02:00:00:00:00:01"),
        Ok("OK: dstmac 02:00:00:00:00:01".into())
    );
    assert_eq!(d.command("ratep 1000"), Ok("OK: rate=1000".into()));
    assert_eq!(d.delay, 1_000_000);
    assert_eq!(d.command("flag UDPCSUM"), Ok("OK: flags=0x40040".into()));
    assert_eq!(d.command("flag !UDPCSUM"), Ok("OK: flags=0x40000".into()));
    assert_eq!(d.command("tos 10"), Ok("OK: tos=0x10".into()));
    assert_eq!(
        refused(d.command("bogus 1")),
        "ERROR: No such parameter \"bogus\""
    );
}

#[test]
fn separators_and_quotes_as_the_kernel_allows() {
    let mut d = dev();
    assert!(d.command("  count=5").is_ok());
    assert_eq!(d.count, 5);
    assert!(d.command("\"count\" \"7\"\n").is_ok());
    assert_eq!(d.count, 7);
    assert!(d.command("").is_err());
}

#[test]
fn bad_numbers_are_errors_not_zero() {
    let mut d = dev();
    for bad in ["count abc", "count -1", "count", "pkt_size 1e3", "delay x"] {
        let e = refused(d.command(bad));
        assert!(e.starts_with("ERROR: "), "{bad}: {e}");
    }
    assert_eq!(d.count, 1000, "a refused value changes nothing");
}

#[test]
fn pkt_size_below_headers_is_raised_to_42() {
    let mut d = dev();
    assert_eq!(d.command("pkt_size 10"), Ok("OK: pkt_size=42".into()));
    assert_eq!(
        d.command("min_pkt_size 0"),
        Ok("OK: min_pkt_size=42".into())
    );
}

#[test]
fn rate_is_mbps_of_min_pkt_size() {
    let mut d = dev();
    d.command("pkt_size 1000").unwrap();
    d.command("rate 100").unwrap();
    // 1000 bytes * 8 bits at 100 Mb/s = 80 us.
    assert_eq!(d.delay, 80_000);
    assert!(d.command("rate 0").is_err());
    assert!(d.command("ratep 0").is_err());
}

#[test]
fn numbers_have_at_most_ten_digits_as_in_the_kernel() {
    let mut d = dev();
    assert!(d.command("delay 18446744073709551614").is_err());
    assert!(d.command("delay 9999999999").is_ok());
    assert!(
        d.command("imix_weights 64,18446744073709551615 128,1")
            .is_err()
    );
    d.command("imix_weights 64,9999999999 128,9999999999")
        .unwrap();
    // The table of two equal huge weights splits evenly, without overflow.
    let t = imix_distribution(&d.imix);
    assert_eq!(t.iter().filter(|&&x| x == 0).count(), 50);
}

#[test]
fn imix_and_a_size_walk_exclude_each_other() {
    let mut d = dev();
    d.command("dst 10.0.0.1").unwrap();
    d.command("imix_weights 1000,1 1400,1").unwrap();
    d.command("min_pkt_size 60").unwrap();
    d.command("max_pkt_size 64").unwrap();
    assert!(
        d.check_start()
            .unwrap_err()
            .to_string()
            .contains("give one")
    );
}

#[test]
fn delay_max_int_means_never() {
    let mut d = dev();
    d.command("delay 2147483647").unwrap();
    assert_eq!(d.delay, u64::MAX);
}

#[test]
fn flags_set_clear_and_aliases() {
    let mut d = dev();
    d.command("flag IPSRC_RND").unwrap();
    assert!(d.has(Flag::IpsrcRnd));
    d.command("flag !IPSRC_RND").unwrap();
    assert!(!d.has(Flag::IpsrcRnd));
    // FLOW_RND is !FLOW_SEQ.
    d.command("flag FLOW_SEQ").unwrap();
    d.command("flag FLOW_RND").unwrap();
    assert!(!d.has(Flag::FlowSeq));
    let e = refused(d.command("flag NOPE"));
    assert!(
        e.contains("Flag -:NOPE:- unknown") && e.contains("UDPCSUM"),
        "{e}"
    );
    assert!(d.command("flag udpcsum").is_err(), "flags are upper case");
    assert!(refused(d.command("flag IPSEC")).contains("IPsec"));
}

#[test]
fn shared_cannot_be_cleared_under_burst() {
    let mut d = dev();
    d.command("burst 8").unwrap();
    assert!(d.command("flag !SHARED").is_err());
    d.command("burst 1").unwrap();
    d.command("flag !SHARED").unwrap();
    assert!(d.command("burst 4").is_err(), "burst needs SHARED");
}

#[test]
fn ipv6_addresses_turn_ipv6_on() {
    let mut d = dev();
    assert_eq!(d.command("dst6 fd00::2"), Ok("OK: dst6=fd00::2".into()));
    assert!(d.has(Flag::Ipv6));
    assert!(d.check_start().is_ok());
    d.command("flag !IPV6").unwrap();
    assert!(d.check_start().unwrap_err().to_string().contains("IPV6"));
    assert!(d.command("dst6 10.0.0.1").is_err());
}

#[test]
fn ipv6_flag_without_address_is_refused_at_start() {
    let mut d = dev();
    d.command("flag IPV6").unwrap();
    assert!(d.check_start().unwrap_err().to_string().contains("dst6"));
}

#[test]
fn vlan_rules() {
    let mut d = dev();
    // svlan needs a vlan; trying turns both off.
    assert!(d.command("svlan_id 5").is_err());
    assert!(refused(d.command("vlan_p 3")).contains("vlan_id first"));
    d.command("vlan_id 100").unwrap();
    d.command("vlan_p 3").unwrap();
    assert!(refused(d.command("vlan_p 8")).contains("0-7"));
    assert!(refused(d.command("vlan_cfi 2")).contains("0-1"));
    d.command("svlan_id 200").unwrap();
    assert_eq!((d.vlan_id, d.svlan_id), (100, 200));
    assert_eq!(d.header_len(), 14 + 8 + 20 + 8);
    // Above 4095 removes both tags.
    d.command("vlan_id 4096").unwrap();
    assert_eq!((d.vlan_id, d.svlan_id), (NO_VLAN, NO_VLAN));
}

#[test]
fn mpls_and_vlan_exclude_each_other() {
    let mut d = dev();
    d.command("vlan_id 7").unwrap();
    assert_eq!(
        d.command("mpls 0001000a,0002000a"),
        Ok("OK: mpls=0001000a,0002000a".into())
    );
    assert_eq!(d.vlan_id, NO_VLAN);
    assert_eq!(d.mpls, vec![0x0001_000a, 0x0002_000a]);
    d.command("vlan_id 7").unwrap();
    assert!(d.mpls.is_empty());
    // 0 or nothing clears; the bottom-of-stack bit turns MPLS_RND on.
    d.command("mpls 0").unwrap();
    assert!(d.mpls.is_empty());
    d.command("mpls 00000100").unwrap();
    assert!(d.has(Flag::MplsRnd));
    assert!(d.command("mpls 12345678901").is_err());
    let many = vec!["00010000"; 17].join(",");
    assert!(d.command(&format!("mpls {many}")).is_err());
}

#[test]
fn imix_parsing() {
    let mut d = dev();
    assert_eq!(
        d.command("imix_weights 64,7 576,4 1500,1"),
        Ok("OK: imix_weights=64,7 576,4 1500,1".into())
    );
    assert_eq!(d.imix.len(), 3);
    d.command("imix_weights 10,1").unwrap();
    assert_eq!(d.imix[0].size, 42, "sizes below the headers are raised");
    assert!(refused(d.command("imix_weights 64,0")).contains("weight"));
    assert!(d.command("imix_weights 64").is_err());
    assert!(d.command("imix_weights").is_err());
    let many = vec!["64,1"; 21].join(" ");
    assert!(d.command(&format!("imix_weights {many}")).is_err());
    d.command("imix_weights 64,1").unwrap();
    assert!(d.command("clone_skb 5").is_err(), "not with imix");
}

#[test]
fn imix_binning_follows_the_kernel() {
    // 7:4:1 of 12 -> shares 58, 33 (cumulative 58, 91), the last closes at 100.
    let e = |size, weight| ImixEntry { size, weight };
    let t = imix_distribution(&[e(64, 7), e(576, 4), e(1500, 1)]);
    assert_eq!(t.iter().filter(|&&x| x == 0).count(), 58);
    assert_eq!(t.iter().filter(|&&x| x == 1).count(), 33);
    assert_eq!(t.iter().filter(|&&x| x == 2).count(), 9);
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
    // A share too small for a whole slot gets none (rounded down) ...
    let t = imix_distribution(&[e(64, 1), e(1500, 1000)]);
    assert!(t.iter().all(|&x| x == 1));
    // ... and, unlike the kernel's walk, which stalls on a zero-width share and would
    // give every slot to the second entry here, the heavy last entry keeps its slots.
    let t = imix_distribution(&[e(64, 1), e(128, 1), e(1500, 1000)]);
    assert!(t.iter().all(|&x| x == 2));
}

#[test]
fn upside_down_ranges_are_kept_and_noted() {
    let mut d = dev();
    assert!(d.range_notes().is_empty());
    d.command("udp_src_min 10").unwrap();
    d.command("udp_src_max 5").unwrap();
    d.command("min_pkt_size 100").unwrap();
    d.command("max_pkt_size 80").unwrap();
    let n = d.range_notes();
    assert_eq!(n.len(), 2, "{n:?}");
    assert!(n[0].contains("udp_src_max 5 is below udp_src_min 10"));
    assert!(n[1].contains("every frame has 100 bytes"));
}

#[test]
fn flows_are_capped_and_need_flowlen() {
    let mut d = dev();
    // Above the cap is refused with the cap named (the kernel clamps silently, but the help
    // says "up to 65536").
    let e = refused(d.command("flows 65537"));
    assert!(e.contains("65537") && e.contains("65536"), "{e}");
    assert_eq!(d.flows, 0, "a refused value changes nothing");
    assert!(d.command("flows 100000").is_err());
    d.command("flows 65536").unwrap();
    assert_eq!(d.flows, MAX_CFLOWS);
    d.command("dst 10.0.0.1").unwrap();
    assert!(d.check_start().unwrap_err().to_string().contains("flowlen"));
    d.command("flowlen 10").unwrap();
    assert!(d.check_start().is_ok());
}

#[test]
fn compatibility_settings_are_noted_once() {
    let mut d = dev();
    d.command("clone_skb 100").unwrap();
    d.command("clone_skb 200").unwrap();
    d.command("node 0").unwrap();
    assert_eq!(d.notes.len(), 2);
    assert!(d.notes[0].starts_with("clone_skb"));
    // netif_receive is refused while clone_skb is set, and clone_skb while it is the mode.
    assert!(refused(d.command("xmit_mode netif_receive")).contains("clone_skb"));
    d.command("clone_skb 0").unwrap();
    assert!(d.command("xmit_mode netif_receive").is_ok());
    assert!(refused(d.command("clone_skb 10")).contains("netif_receive"));
    assert!(d.command("xmit_mode queue_xmit").is_ok());
    assert!(refused(d.command("xmit_mode fast")).contains("unknown"));
}

#[test]
fn show_has_the_kernels_layout() {
    let mut d = dev();
    d.command("dst 10.0.0.2").unwrap();
    d.command("dst_mac 02:00:00:00:00:02").unwrap();
    d.command("vlan_id 5").unwrap();
    d.command("flag UDPCSUM").unwrap();
    let mac: MacAddr = "02:00:00:00:00:01".parse().unwrap();
    let s = show::show(&d, mac, None, &show::Current::default(), "");
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(
        lines[0],
        "Params: count 1000  min_pkt_size: 60  max_pkt_size: 60"
    );
    assert_eq!(
        lines[1],
        "     frags: 0  delay: 0  clone_skb: 0  ifname: veth0"
    );
    assert!(s.contains("     dst_min: 10.0.0.2  dst_max: \n"));
    assert!(s.contains("     src_mac: 02:00:00:00:00:01 dst_mac: 02:00:00:00:00:02\n"));
    assert!(s.contains("     vlan_id: 5  vlan_p: 0  vlan_cfi: 0\n"));
    assert!(s.contains("     Flags: UDPCSUM  SHARED  \n"));
    assert!(s.contains("Current:\n     pkts-sofar: 0  errors: 0\n"));
    assert!(s.ends_with("Result: Idle\n"));
}

/// A parameter that takes one value takes one word: `count "10 --dev x"` is not 10.
/// Blanks around the value separate it from the name (as in the kernel) and are ignored.
#[test]
fn a_value_is_one_word() {
    let mut d = dev();
    for (line, bad) in [
        (
            "count 10 --dev nosuchdev0",
            "'10 --dev nosuchdev0' is more than one value",
        ),
        ("count 10\t20", "is more than one value"),
        ("count 10abc", "'10abc' is not a non-negative whole number"),
        ("dst 10.0.0.1 10.0.0.2", "is more than one value"),
        ("flag UDPCSUM TXSIZE_RND", "is more than one value"),
        ("xmit_mode start_xmit extra", "is more than one value"),
        ("dst_mac 02:00:00:00:00:01 x", "is more than one value"),
        ("pkt_size 64 128", "is more than one value"),
    ] {
        let e = refused(d.command(line));
        assert!(e.starts_with("ERROR: ") && e.contains(bad), "{line}: {e}");
    }
    assert_eq!(d.count, 1000, "refused values change nothing");
    assert!(!d.has(Flag::Udpcsum));
    // The same through set(), as the command line calls it.
    assert!(d.set("count", "10 --dev x").is_err());
    assert!(d.set("count", "10abc").is_err());
    assert_eq!(d.set("count", " 10 "), Ok("OK: count=10".into()));
    assert_eq!(d.command("count   12  "), Ok("OK: count=12".into()));
    assert_eq!(d.command("count=\"13\"\n"), Ok("OK: count=13".into()));
    // Parameters whose value is a list keep taking several words.
    d.command("imix_weights 64,7 576,4").unwrap();
    assert_eq!(d.imix.len(), 2);
}

/// The kernel's selftest writes `min_pkt_size=1001`, `min_pkt_size =2002`,
/// `min_pkt_size= 3003` and `min_pkt_size = 4004`: '=' separates as a blank does.
#[test]
fn equals_separates_a_name_from_its_value_as_in_the_kernel() {
    let mut d = dev();
    for (cmd, n) in [
        ("min_pkt_size=1001", 1001),
        ("min_pkt_size =2002", 2002),
        ("min_pkt_size= 3003", 3003),
        ("min_pkt_size = 4004", 4004),
    ] {
        assert_eq!(d.command(cmd), Ok(format!("OK: min_pkt_size={n}")), "{cmd}");
        assert_eq!(d.min_pkt_size, n);
    }
    assert_eq!(split_command("add_device=lo@0"), ("add_device", "lo@0"));
    assert_eq!(split_command(" dst = 10.0.0.1 "), ("dst", "10.0.0.1"));
    assert_eq!(
        split_command("imix_weights 64,7 576,4"),
        ("imix_weights", "64,7 576,4")
    );
}

/// `frags 100`: the kernel takes any count (it uses at most MAX_SKB_FRAGS per frame).
/// (Before: "frags: 100 is above the largest value, 17".)
#[test]
fn frags_takes_any_count_as_the_kernel_does() {
    let mut d = dev();
    assert_eq!(d.command("frags 100"), Ok("OK: frags=100".into()));
    assert_eq!(d.frags, 100);
    assert!(d.command("frags 4294967296").is_err());
}

/// A loopback device lacks IFF_TX_SKB_SHARING: the kernel answers EOPNOTSUPP to
/// `clone_skb 1` (its selftest checks it on lo) and to `burst` above 1 with start_xmit;
/// an Ethernet device takes both. (Before: lo took `clone_skb 1`.)
#[test]
fn a_loopback_device_cannot_send_one_buffer_several_times() {
    let mut lo = DevConfig::new("lo@0");
    lo.loopback = true;
    let e = refused(lo.command("clone_skb 1"));
    assert!(e.contains("lo is a loopback device"), "{e}");
    assert!(e.contains("EOPNOTSUPP"), "{e}");
    assert_eq!(lo.clone_skb, 0);
    assert_eq!(lo.command("clone_skb 0"), Ok("OK: clone_skb=0".into()));
    assert!(refused(lo.command("burst 8")).contains("loopback"));
    assert_eq!(lo.command("burst 1"), Ok("OK: burst=1".into()));
    // Into the receive path nothing is shared: burst is allowed there, as in the kernel.
    lo.command("xmit_mode netif_receive").unwrap();
    assert_eq!(lo.command("burst 8"), Ok("OK: burst=8".into()));
    let mut eth = dev();
    assert_eq!(eth.command("clone_skb 1"), Ok("OK: clone_skb=1".into()));
    assert_eq!(eth.command("burst 8"), Ok("OK: burst=8".into()));
}

/// `node N` is refused, as the kernel's `ERROR: node not possible`, for a node the machine
/// cannot have; node 0 always can. (Before: every node up to 1023 was taken.)
#[test]
fn node_must_be_possible_on_this_machine() {
    assert!(node_in_list("0\n", 0));
    assert!(!node_in_list("0\n", 1));
    assert!(node_in_list("0-3,6", 2));
    assert!(node_in_list("0-3,6", 6));
    assert!(!node_in_list("0-3,6", 5));
    assert!(!node_in_list("0-x", 0));
    let mut d = dev();
    assert_eq!(d.command("node 0"), Ok("OK: node=0".into()));
    let far = (0..=1023)
        .find(|&n| !node_in_list(possible_nodes(), n))
        .expect("fewer than 1024 possible nodes");
    let e = refused(d.command(&format!("node {far}")));
    assert!(e.contains("node not possible"), "{e}");
    assert_eq!(d.node, 0, "a refused node changes nothing");
}
