use super::*;
use crate::stream::timeline::FP_ONE;

fn udp4(size: Size, rate: Rate) -> StreamSpec {
    StreamSpec {
        name: "f0".into(),
        headers: vec![
            Header::Ethernet(EthernetSpec::default()),
            Header::Ipv4(Ipv4Spec::default()),
            Header::Udp(UdpSpec::default()),
        ],
        size,
        rate,
        length: Length::Continuous,
        start_delay_ns: 0,
        fill: Fill::Zeros,
    }
}

fn err(s: &StreamSpec) -> String {
    s.check().unwrap_err().to_string()
}

#[test]
fn patterns_are_functions_of_the_packet_index() {
    let inc = Pattern::Increment {
        start: 254,
        step: 1,
        count: 4,
    };
    let v: Vec<u128> = (0..6).map(|k| inc.at(k, 8)).collect();
    assert_eq!(
        v,
        [254, 255, 0, 1, 254, 255],
        "wraps at the width, repeats after count"
    );
    let dec = Pattern::Decrement {
        start: 1,
        step: 1,
        count: 3,
    };
    assert_eq!(
        (0..4).map(|k| dec.at(k, 16)).collect::<Vec<_>>(),
        [1, 0, 0xffff, 1]
    );
    let list = Pattern::List(vec![7, 8]);
    assert_eq!((list.at(0, 8), list.at(3, 8)), (7, 8));
    let r = Pattern::Random {
        min: 10,
        max: 12,
        seed: 1,
    };
    let draws: Vec<u128> = (0..300).map(|k| r.at(k, 16)).collect();
    assert!(draws.iter().all(|d| (10..=12).contains(d)));
    assert!((10..=12).all(|x| draws.contains(&x)), "every value drawn");
    assert_eq!(r.at(17, 16), r.at(17, 16), "the same frame, the same value");
    let other = Pattern::Random {
        min: 10,
        max: 12,
        seed: 2,
    };
    assert_ne!(draws, (0..300).map(|k| other.at(k, 16)).collect::<Vec<_>>());
    let full = Pattern::Random {
        min: 0,
        max: u128::MAX,
        seed: 1,
    };
    assert!(
        (0..8).any(|k| full.at(k, 128) >> 64 != 0),
        "128-bit draws fill the top"
    );
    let m = Pattern::RandomMask {
        base: 0xab00,
        mask: 0x00f0,
        seed: 3,
    };
    assert!((0..50).all(|k| m.at(k, 16) & !0x00f0 == 0xab00));
}

#[test]
fn constant_patterns_are_known() {
    assert_eq!(Pattern::Value(3).constant(), Some(3));
    assert_eq!(Pattern::List(vec![4]).constant(), Some(4));
    let once = Pattern::Increment {
        start: 5,
        step: 9,
        count: 1,
    };
    assert_eq!(once.constant(), Some(5));
    assert_eq!(Pattern::List(vec![4, 5]).constant(), None);
    let m = Pattern::RandomMask {
        base: 1,
        mask: 0,
        seed: 0,
    };
    assert_eq!(m.constant(), Some(1));
}

#[test]
fn fields_are_checked_against_their_widths() {
    let mut s = udp4(Size::Fixed(64), Rate::Pps(1.0));
    if let Header::Ipv4(h) = &mut s.headers[1] {
        h.ttl = Pattern::Value(256);
    }
    assert_eq!(
        err(&s),
        "stream \"f0\": ipv4.time_to_live: value 0x100 does not fit 8 bits"
    );
    if let Header::Ipv4(h) = &mut s.headers[1] {
        h.ttl = Pattern::Increment {
            start: 1,
            step: 1,
            count: 0,
        };
    }
    assert!(err(&s).contains("ipv4.time_to_live: count 0"));
    if let Header::Ipv4(h) = &mut s.headers[1] {
        h.ttl = Pattern::List(vec![]);
    }
    assert!(err(&s).contains("a list needs 1 to"));
    if let Header::Ipv4(h) = &mut s.headers[1] {
        h.ttl = Pattern::Random {
            min: 9,
            max: 8,
            seed: 0,
        };
    }
    assert!(err(&s).contains("above max"));
}

#[test]
fn headers_come_in_order() {
    let mut s = udp4(Size::Fixed(64), Rate::Pps(1.0));
    s.headers.insert(2, Header::Vlan(VlanSpec::default()));
    assert!(err(&s).contains("header 2 is out of place"), "{}", err(&s));
    let mut s = udp4(Size::Fixed(64), Rate::Pps(1.0));
    s.headers.swap(1, 2);
    assert!(err(&s).contains("header 1: udp and tcp need an ip header"));
    let mut s = udp4(Size::Fixed(64), Rate::Pps(1.0));
    s.headers.remove(1);
    assert!(err(&s).contains("udp and tcp need an ip header"));
    let mut s = udp4(Size::Fixed(64), Rate::Pps(1.0));
    s.headers.remove(0);
    assert!(err(&s).contains("must start with ethernet"));
    let mut s = udp4(Size::Fixed(64), Rate::Pps(1.0));
    s.headers.insert(
        1,
        Header::Vlan(VlanSpec {
            tpid: 0x9100,
            ..VlanSpec::default()
        }),
    );
    assert!(err(&s).contains("vlan.tpid 0x9100"));
    let mut s = udp4(Size::Fixed(64), Rate::Pps(1.0));
    s.headers[2] = Header::Raw(vec![1]);
    assert!(err(&s).contains("ipv4.protocol: needed"));
    let mut s = udp4(Size::Fixed(64), Rate::Pps(1.0));
    if let Header::Ipv4(h) = &mut s.headers[1] {
        h.protocol = Some(Pattern::List(vec![6, 17]));
    }
    assert!(err(&s).contains("cannot vary under a udp or tcp header"));
    let mut s = udp4(Size::Fixed(80), Rate::Pps(1.0));
    s.headers[1] = Header::Ipv6(Ipv6Spec::default());
    s.headers[2] = Header::Udp(UdpSpec {
        checksum: false,
        ..UdpSpec::default()
    });
    assert!(err(&s).contains("IPv6 needs the UDP checksum"));
    for _ in 0..MAX_TAGS {
        s.headers.insert(1, Header::Vlan(VlanSpec::default()));
    }
    s.headers[MAX_TAGS + 2] = Header::Udp(UdpSpec::default());
    s.size = Size::Fixed(200);
    assert!(s.check().is_ok());
    s.headers.insert(1, Header::Vlan(VlanSpec::default()));
    assert!(err(&s).contains("at most 8 vlan tags"));
}

#[test]
fn sizes() {
    let s = Size::Increment {
        start: 64,
        end: 100,
        step: 10,
    };
    assert_eq!(s.bounds(), (64, 94));
    assert_eq!(
        (0..5).map(|k| s.seq().at(k)).collect::<Vec<_>>(),
        [64, 74, 84, 94, 64]
    );
    let w = Size::Weighted(vec![(64, 1), (1500, 0), (128, 3)]);
    assert_eq!(w.bounds(), (64, 128), "a weight of 0 is never sent");
    let mut q = udp4(
        Size::Increment {
            start: 64,
            end: 60,
            step: 1,
        },
        Rate::Pps(1.0),
    );
    assert!(err(&q).contains("needs start <= end"));
    q.size = Size::Weighted(vec![(64, 0)]);
    assert!(err(&q).contains("every weight is 0"));
    q.size = Size::Fixed(MAX_FRAME_LEN + 1);
    assert!(err(&q).contains("above the largest"));
    q.size = Size::Random {
        min: 70,
        max: 69,
        seed: 0,
    };
    assert!(err(&q).contains("min 70 is above max 69"));
}

#[test]
fn rates_and_lengths_resolve() {
    let line = Some(10e9);
    // 50 % of 10 Gbit/s with 1,000-byte frames: one frame per (1024 * 8) / 5e9 s.
    let s = udp4(Size::Fixed(1000), Rate::Percent(50.0));
    let sch = s.schedule(line).unwrap();
    assert_eq!(sch.pace.after(1000) / FP_ONE, 1638, "1638.4 ns");
    assert!(
        s.schedule(None)
            .unwrap_err()
            .to_string()
            .contains("needs the port's line rate")
    );
    // 60-byte frames (64 with the FCS): 10 Gbit/s holds 14,880,952 pps on the wire.
    let fast = udp4(Size::Fixed(60), Rate::Pps(14_880_952.0));
    assert!(fast.schedule(line).is_ok());
    let over = udp4(Size::Fixed(60), Rate::Pps(14_890_000.0));
    let e = over.schedule(line).unwrap_err().to_string();
    assert!(e.contains("above the line rate"), "{e}");
    assert!(
        over.schedule(None).is_ok(),
        "no line rate known, nothing to compare"
    );
    let mut b = udp4(Size::Fixed(64), Rate::Bps(1e9));
    b.length = Length::Bursts(Burst {
        packets: 4,
        gap: Gap::Bytes(1250),
        count: Some(2),
    });
    b.start_delay_ns = 77;
    let sch = b.schedule(line).unwrap();
    let shape = sch.burst.unwrap();
    assert_eq!((shape.packets, shape.count), (4, Some(2)));
    assert_eq!(
        shape.gap_fp / FP_ONE,
        1000,
        "1,250 bytes at 10 Gbit/s are 1 us"
    );
    assert_eq!(sch.start_delay_ns, 77);
    b.length = Length::Packets(0);
    assert!(err(&b).contains("0 packets sends nothing"));
    b.rate = Rate::Pps(f64::NAN);
    assert!(err(&b).contains("needs a positive number"));
    b.rate = Rate::Percent(100.5);
    assert!(err(&b).contains("above the line rate"));
}

#[test]
fn a_run_holds_at_most_max_streams_with_distinct_names() {
    let one = udp4(Size::Fixed(64), Rate::Pps(1.0));
    let many: Vec<StreamSpec> = (0..4096)
        .map(|i| StreamSpec {
            name: format!("f{i}"),
            ..one.clone()
        })
        .collect();
    assert!(check_set(&many).is_ok());
    let too_many = vec![one.clone(); MAX_STREAMS + 1];
    let e = check_set(&too_many).unwrap_err().to_string();
    assert!(e.ends_with("65537 streams: at most 65536 in a run"), "{e}");
}
