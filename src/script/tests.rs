//! Parser, interpreter and session rules; a property test of random lines.

use super::interp::{self, Effect, Interp};
use super::parse::{Line, Target, parse_line, parse_target, words};
use super::{log_line, quote, start_specs};
use crate::pg::DevConfig;

fn w(t: &str, c: &str) -> Line {
    Line::Write {
        target: parse_target(t).unwrap(),
        cmd: c.into(),
    }
}

fn dev(name: &str) -> Target {
    Target::Dev(name.into())
}

#[test]
fn targets_in_every_spelling() {
    assert_eq!(parse_target("pgctrl"), Ok(Target::Pgctrl));
    assert_eq!(parse_target("/proc/net/pktgen/pgctrl"), Ok(Target::Pgctrl));
    assert_eq!(parse_target("kpktgend_0"), Ok(Target::Thread(0)));
    assert_eq!(
        parse_target("/proc/net/pktgen/kpktgend_12"),
        Ok(Target::Thread(12))
    );
    assert_eq!(parse_target("eth0"), Ok(dev("eth0")));
    assert_eq!(parse_target("/proc/net/pktgen/eth0@3"), Ok(dev("eth0@3")));
    for bad in [
        "kpktgend_",
        "kpktgend_x",
        "kpktgend_-1",
        "kpktgend_99999999999999999999999",
        "/etc/passwd",
        "/proc/net/pktgen/a/b",
        "@1",
        "averyveryverylongname",
        "eth0@averyveryverylongtagthatistoolong",
        "eth:0",
        "..",
    ] {
        assert!(parse_target(bad).is_err(), "{bad}");
    }
}

#[test]
fn lines_comments_and_quoting() {
    assert_eq!(parse_line(""), Ok(Line::Empty));
    assert_eq!(parse_line("   # a comment"), Ok(Line::Empty));
    assert_eq!(parse_line("pgctrl start # go"), Ok(w("pgctrl", "start")));
    assert_eq!(
        parse_line("\teth0   count   10 "),
        Ok(w("eth0", "count 10"))
    );
    assert_eq!(parse_line("eth0 \"count 10\""), Ok(w("eth0", "count 10")));
    assert_eq!(
        parse_line("eth0 'imix_weights 64,7 576,4'"),
        Ok(w("eth0", "imix_weights 64,7 576,4"))
    );
    // A '#' inside a word or quotes is not a comment.
    assert_eq!(parse_line("eth0 'a#b'"), Ok(w("eth0", "a#b")));
    assert_eq!(parse_line("eth0 flag!#x"), Ok(w("eth0", "flag!#x")));
    assert!(
        parse_line("eth0 \"count 10")
            .unwrap_err()
            .to_string()
            .contains("unterminated")
    );
    assert!(
        parse_line("eth0")
            .unwrap_err()
            .to_string()
            .contains("no command")
    );
    assert!(parse_line("eth0 ''").is_err());
    assert_eq!(words("a 'b c'd e").unwrap(), ["a", "b cd", "e"]);
}

#[test]
fn echo_and_cat_spellings() {
    assert_eq!(
        parse_line("echo \"count 10\" > /proc/net/pktgen/eth0@1"),
        Ok(w("eth0@1", "count 10"))
    );
    assert_eq!(
        parse_line("echo -n add_device eth0 >/proc/net/pktgen/kpktgend_1"),
        Ok(w("kpktgend_1", "add_device eth0"))
    );
    assert_eq!(parse_line("echo start > pgctrl"), Ok(w("pgctrl", "start")));
    assert_eq!(
        parse_line("cat /proc/net/pktgen/eth0"),
        Ok(Line::Show(dev("eth0")))
    );
    assert_eq!(
        parse_line("show kpktgend_0"),
        Ok(Line::Show(Target::Thread(0)))
    );
    assert!(
        parse_line("echo count 10")
            .unwrap_err()
            .to_string()
            .contains("no '>")
    );
    assert!(parse_line("echo count 10 > eth0 junk").is_err());
    assert!(parse_line("echo > eth0").is_err());
    assert!(parse_line("show").is_err());
    assert!(parse_line("cat a b").is_err());
}

/// `start_specs`'s argument for the private lab.
const LAB: bool = true;

fn two_cpus() -> Interp {
    Interp::permissive(vec![0, 1])
}

fn ok(e: Effect) -> String {
    match e {
        Effect::Answer(Ok(s)) => s,
        other => panic!("not OK: {other:?}"),
    }
}

fn error(e: Effect) -> String {
    match e {
        Effect::Answer(Err(e)) => format!("ERROR: {e}"),
        other => panic!("not an ERROR answer: {other:?}"),
    }
}

#[test]
fn add_device_once_per_name_on_online_cpus() {
    let mut it = two_cpus();
    assert_eq!(
        ok(it.apply(&w("kpktgend_0", "add_device eth0@0"))),
        "OK: add_device=eth0@0"
    );
    // The same name on any thread: the kernel's refusal.
    assert_eq!(
        error(it.apply(&w("kpktgend_1", "add_device eth0@0"))),
        "ERROR: can not add device eth0@0"
    );
    assert_eq!(
        error(it.apply(&w("kpktgend_0", "add_device eth0@0"))),
        "ERROR: can not add device eth0@0"
    );
    assert!(ok(it.apply(&w("kpktgend_1", "add_device eth0@1"))).contains("eth0@1"));
    // CPU 2 is not online: no such file.
    assert!(matches!(
        it.apply(&w("kpktgend_2", "add_device eth0@2")),
        Effect::Missing(m) if m.contains("0-1")
    ));
    assert!(error(it.apply(&w("kpktgend_0", "add_device"))).contains("give a device"));
    assert!(error(it.apply(&w("kpktgend_0", "bogus"))).contains("No such parameter"));
    assert!(ok(it.apply(&w("kpktgend_0", "max_before_softirq 100"))).contains("obsolete"));
    let names: Vec<&str> = it.devices().iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["eth0@0", "eth0@1"]);
    // The thread's file lists its devices and its last answer.
    let t = it.text(&Target::Thread(0)).unwrap();
    assert!(t.contains("Stopped: eth0@0 \n"), "{t}");
    assert!(t.ends_with("Result: OK: Note! max_before_softirq is obsolete and does nothing\n"));
    assert!(
        it.text(&Target::Thread(1))
            .unwrap()
            .contains("Result: OK: add_device=eth0@1")
    );
    assert!(it.text(&Target::Thread(2)).is_none());
}

#[test]
fn add_device_needs_an_existing_interface_when_checked() {
    let mut it = Interp::new(
        vec![0],
        Box::new(|d| d == "lo"),
        Box::new(|_| crate::wire::MacAddr::default()),
    );
    assert!(ok(it.apply(&w("kpktgend_0", "add_device lo@5"))).contains("lo@5"));
    assert_eq!(
        error(it.apply(&w("kpktgend_0", "add_device nosuch0"))),
        "ERROR: can not add device nosuch0"
    );
}

#[test]
fn rem_device_all_removes_one_threads_devices() {
    let mut it = two_cpus();
    ok(it.apply(&w("kpktgend_0", "add_device a@0")));
    ok(it.apply(&w("kpktgend_0", "add_device b@0")));
    ok(it.apply(&w("kpktgend_1", "add_device a@1")));
    assert_eq!(
        ok(it.apply(&w("kpktgend_0", "rem_device_all"))),
        "OK: rem_device_all"
    );
    let names: Vec<&str> = it.devices().iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["a@1"]);
    assert!(matches!(it.apply(&w("a@0", "count 1")), Effect::Missing(_)));
    // The name is free again.
    ok(it.apply(&w("kpktgend_1", "add_device a@0")));
}

#[test]
fn device_commands_answer_and_update_the_file() {
    let mut it = two_cpus();
    assert!(
        matches!(it.apply(&w("eth0", "count 5")), Effect::Missing(m) if m.contains("add_device eth0"))
    );
    ok(it.apply(&w("kpktgend_0", "add_device eth0")));
    assert_eq!(ok(it.apply(&w("eth0", "count 5"))), "OK: count=5");
    assert_eq!(it.device("eth0").unwrap().cfg.count, 5);
    let e = error(it.apply(&w("eth0", "count lots")));
    assert!(e.starts_with("ERROR: count"), "{e}");
    assert_eq!(it.device("eth0").unwrap().cfg.count, 5);
    let t = it.text(&dev("eth0")).unwrap();
    assert!(t.starts_with("Params: count 5  min_pkt_size: 60"), "{t}");
    assert!(t.ends_with(&format!("Result: {e}\n")), "{t}");
    match it.apply(&Line::Show(dev("eth0"))) {
        Effect::Show(s) => assert_eq!(s, t),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        it.apply(&Line::Show(dev("eth1"))),
        Effect::Missing(_)
    ));
}

#[test]
fn pgctrl_start_stop_reset() {
    let mut it = two_cpus();
    assert!(error(it.apply(&w("pgctrl", "start"))).contains("no device"));
    ok(it.apply(&w("kpktgend_1", "add_device eth0")));
    assert_eq!(it.apply(&w("pgctrl", "start")), Effect::Start);
    assert_eq!(ok(it.apply(&w("pgctrl", "stop"))), "OK: stop");
    assert!(error(it.apply(&w("pgctrl", "go"))).contains("unknown"));
    assert_eq!(ok(it.apply(&w("pgctrl", "reset"))), "OK: reset");
    assert!(it.devices().is_empty());
    assert!(matches!(
        it.apply(&w("eth0", "count 1")),
        Effect::Missing(_)
    ));
    assert!(it.text(&Target::Pgctrl).unwrap().contains("upktgen"));
    // Every thread's file exists, and pgctrl's.
    let files: Vec<String> = it.files().into_iter().map(|(n, _)| n).collect();
    assert_eq!(files, ["pgctrl", "kpktgend_0", "kpktgend_1"]);
}

#[test]
fn start_specs_pin_threads_and_map_to_the_lab() {
    let mut it = two_cpus();
    ok(it.apply(&w("kpktgend_1", "add_device eth0@1")));
    ok(it.apply(&w("kpktgend_0", "add_device eth0@0")));
    ok(it.apply(&w("eth0@1", "dst 198.18.0.42")));
    let s = start_specs(&it, LAB).unwrap();
    let got: Vec<(&str, &str, Option<usize>)> = s
        .iter()
        .map(|(n, s)| (n.as_str(), s.cfg.ifname.as_str(), s.cpu))
        .collect();
    assert_eq!(
        got,
        [
            ("eth0@0", "veth-tx@0", Some(0)),
            ("eth0@1", "veth-tx@1", Some(1))
        ]
    );
    // The lab's receiver where the script gave no destination; the script's where it did.
    assert_eq!(s[0].1.cfg.dst_min, crate::lab::RX_IP.to_string());
    assert_eq!(s[0].1.cfg.dst_mac, crate::lab::RX_MAC);
    assert_eq!(s[1].1.cfg.dst_min, "198.18.0.42");
    // Real devices need a destination MAC.
    assert!(
        start_specs(&it, !LAB)
            .unwrap_err()
            .to_string()
            .contains("dst_mac")
    );
    // Combinations are checked at start, naming the device.
    ok(it.apply(&w("eth0@0", "flows 10")));
    let e = start_specs(&it, LAB).unwrap_err().to_string();
    assert!(
        e.starts_with("ERROR: start: eth0@0: ") && e.contains("flowlen"),
        "{e}"
    );
}

#[test]
fn sections_of_a_device_file() {
    let c = DevConfig::new("eth0");
    let cur = crate::pg::show::Current {
        sofar: 7,
        started_us: 100,
        stopped_us: 200,
        ..Default::default()
    };
    let text = crate::pg::show::show(
        &c,
        Default::default(),
        None,
        &cur,
        "OK: 1(c1+d0) usec\n  2pps",
    );
    let section = interp::current_section(&text).unwrap();
    assert!(section.starts_with("Current:\n     pkts-sofar: 7"));
    assert!(!section.contains("Result"));
    assert_eq!(
        interp::result_section(&text).unwrap(),
        "OK: 1(c1+d0) usec\n  2pps"
    );
    let idle = crate::pg::show::show(&c, Default::default(), None, &Default::default(), "");
    assert_eq!(interp::result_section(&idle).unwrap(), "");
    assert_eq!(
        interp::splice_current(&idle, &section)
            .matches("pkts-sofar: 7")
            .count(),
        1
    );
}

#[test]
fn cpu_lists() {
    assert_eq!(interp::parse_cpu_list("0-3,6\n"), Some(vec![0, 1, 2, 3, 6]));
    assert_eq!(interp::parse_cpu_list("1"), Some(vec![1]));
    assert_eq!(interp::parse_cpu_list(""), None);
    assert_eq!(interp::parse_cpu_list("3-1"), None);
    assert_eq!(interp::parse_cpu_list("x"), None);
    assert_eq!(interp::cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
    assert_eq!(interp::cpu_list(&[]), "none");
}

#[test]
fn session_log_quoting_round_trips() {
    for cmd in [
        "count 10",
        "a#b",
        "imix_weights 64,7",
        "x'y",
        "x\"y",
        " lead",
    ] {
        let line = format!("eth0 {}", quote(cmd));
        match parse_line(&line) {
            Ok(Line::Write { cmd: got, .. }) => assert_eq!(got.trim(), cmd.trim(), "{line}"),
            other => panic!("{line}: {other:?}"),
        }
    }
    // Both quote kinds: the double quote, a separator to pktgen, becomes a blank.
    assert_eq!(
        parse_line(&format!("eth0 {}", quote("x'y\"z#"))),
        Ok(w("eth0", "x'y z#"))
    );
}

/// The crate's generator with a fixed state, so the property test needs no crate and any
/// failure names its case.
struct Rng(crate::rng::Rng);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        self.0.index(n)
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const PARAMS: &[&str] = &[
    "count",
    "pkt_size",
    "min_pkt_size",
    "max_pkt_size",
    "frags",
    "delay",
    "rate",
    "ratep",
    "burst",
    "dst",
    "dst_min",
    "dst_max",
    "src_min",
    "src_max",
    "dst6",
    "dst6_min",
    "dst6_max",
    "src6",
    "dst_mac",
    "src_mac",
    "src_mac_count",
    "dst_mac_count",
    "udp_src_min",
    "udp_src_max",
    "udp_dst_min",
    "udp_dst_max",
    "vlan_id",
    "vlan_p",
    "vlan_cfi",
    "svlan_id",
    "svlan_p",
    "svlan_cfi",
    "mpls",
    "tos",
    "traffic_class",
    "flows",
    "flowlen",
    "queue_map_min",
    "queue_map_max",
    "imix_weights",
    "flag",
    "clone_skb",
    "skb_priority",
    "node",
    "xmit_mode",
    "clear_counters",
    "debug",
    "spi",
    "add_device",
    "rem_device_all",
    "max_before_softirq",
    "start",
    "stop",
    "reset",
];

const VALUES: &[&str] = &[
    "0",
    "1",
    "60",
    "4095",
    "4096",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "0x10",
    "ff",
    "10.0.0.1",
    "255.255.255.255",
    "1.2.3",
    "fd00::1",
    "::",
    "fe80::1%eth0",
    "02:00:00:00:00:01",
    "zz:zz",
    "64,7",
    "64,0 576,4",
    "1500,1 64,7 576,4",
    ",",
    "0001000a,0002000a",
    "0",
    "ffffffff,",
    "IPV6",
    "!IPV6",
    "UDPCSUM",
    "IPSEC",
    "!SHARED",
    "FLOW_RND",
    "QUEUE_MAP_CPU",
    "TXSIZE_RND",
    "eth0",
    "eth0@1",
    "lo@@",
    "start_xmit",
    "netif_receive",
    "",
    " ",
    "\"",
    "'",
    "#",
    "=",
];

const TARGETS: &[&str] = &[
    "pgctrl",
    "kpktgend_0",
    "kpktgend_1",
    "kpktgend_9",
    "eth0",
    "eth0@1",
    "/proc/net/pktgen/eth0",
    "echo",
    "show",
    "cat",
    "/proc/net/pktgen/",
    ">",
    "kpktgend_",
    "x@y",
];

fn random_line(r: &mut Rng) -> String {
    match r.below(4) {
        // Random bytes (lossily made UTF-8, as a file's line is).
        0 => {
            let n = r.below(40);
            let bytes: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }
        // Random printable tokens.
        1 => {
            let n = r.below(6);
            (0..n)
                .map(|_| {
                    let len = r.below(8);
                    (0..len)
                        .map(|_| (b' ' + r.below(95) as u8) as char)
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join(" ")
        }
        // Real targets and parameters with random values.
        _ => {
            let mut s = format!("{} {}", r.pick(TARGETS), r.pick(PARAMS));
            for _ in 0..r.below(4) {
                s.push(if r.below(5) == 0 { '=' } else { ' ' });
                s.push_str(r.pick(VALUES));
            }
            if r.below(10) == 0 {
                s = format!("echo \"{s}\" > /proc/net/pktgen/{}", r.pick(TARGETS));
            }
            s
        }
    }
}

#[test]
fn random_lines_never_panic() {
    let mut r = Rng(crate::rng::Rng::from_state(0x5eed_1234_abcd_0001));
    let mut it = two_cpus();
    // Devices to aim at, re-added after resets.
    let setup = ["kpktgend_0 add_device eth0", "kpktgend_1 add_device eth0@1"];
    for case in 0..30_000 {
        if case % 500 == 0 {
            for l in setup {
                let _ = it.apply(&parse_line(l).unwrap());
            }
        }
        let line = random_line(&mut r);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Ok(p) = parse_line(&line) {
                // What the session log writes reads back as the same command.
                if let Line::Write { target, cmd } = &p {
                    let again = parse_line(&log_line(target, cmd));
                    let want = if cmd.contains('\'') && cmd.contains('"') {
                        cmd.replace('"', " ")
                    } else {
                        cmd.clone()
                    };
                    assert_eq!(
                        again,
                        Ok(Line::Write {
                            target: target.clone(),
                            cmd: want
                        })
                    );
                }
                let _ = it.apply(&p);
                // Reading every file and planning a start must not panic either.
                for (_, text) in it.files() {
                    let _ = interp::current_section(&text);
                    let _ = interp::result_section(&text);
                }
                let _ = start_specs(&it, LAB);
            }
        }));
        assert!(result.is_ok(), "case {case}: panicked on line {line:?}");
    }
}

/// A missing interface: the kernel's Result, and what the kernel would log, once.
#[test]
fn a_missing_interface_is_refused_with_the_kernels_answer_and_a_note() {
    let mut it = Interp::new(
        vec![0],
        Box::new(|d| d == "lo"),
        Box::new(|_| crate::wire::MacAddr::default()),
    );
    assert_eq!(
        error(it.apply(&w("kpktgend_0", "add_device nosuch0@1"))),
        "ERROR: can not add device nosuch0@1"
    );
    let note = it.take_note().unwrap();
    assert!(
        note.starts_with("no such netdevice: \"nosuch0\" in this network namespace")
            && note.contains("--lab"),
        "{note}"
    );
    assert_eq!(it.take_note(), None);
    assert!(
        it.text(&Target::Thread(0))
            .unwrap()
            .ends_with("Result: ERROR: can not add device nosuch0@1\n")
    );
    // A name already added is refused without a note (the interface exists).
    ok(it.apply(&w("kpktgend_0", "add_device lo")));
    error(it.apply(&w("kpktgend_0", "add_device lo")));
    assert_eq!(it.take_note(), None);
}

/// With --lab a device's file names the lab's interface and what it stands for.
#[test]
fn in_the_lab_a_device_file_names_the_labs_interface() {
    let mut it = Interp::permissive(vec![0]).in_lab();
    assert!(it.is_lab());
    ok(it.apply(&w("kpktgend_0", "add_device eth1@3")));
    let t = it.text(&dev("eth1@3")).unwrap();
    assert!(
        t.contains(
            "ifname: veth-tx@3\n     lab: eth1@3 stands for veth-tx@3, the private lab's sending interface (--lab)\n     flows: "
        ),
        "{t}"
    );
    assert!(!t.contains("ifname: eth1"), "{t}");
    // Without --lab the file names the device itself.
    let mut it = two_cpus();
    ok(it.apply(&w("kpktgend_0", "add_device eth1@3")));
    let t = it.text(&dev("eth1@3")).unwrap();
    assert!(t.contains("ifname: eth1@3\n     flows: "), "{t}");
    assert_eq!(super::interp::lab_ifname("eth1"), "veth-tx");
}

/// An interpreter whose check takes `lo` as a loopback device, `eth0` as Ethernet and
/// refuses `tun0` as neither (what the kernel's add_device takes and refuses).
fn with_loopback() -> Interp {
    Interp::checked(
        vec![0],
        Box::new(|d| match d {
            "lo" => Ok(interp::IfaceKind::Loopback),
            "eth0" => Ok(interp::IfaceKind::Ethernet),
            _ => Err(interp::IfaceRefused::NotEthernet(d.to_string())),
        }),
        Box::new(|_| crate::wire::MacAddr::default()),
    )
}

/// The kernel's add_device takes loopback devices beside Ethernet ones (its selftest drives
/// `lo@0`); a loopback device's start needs no dst_mac and no destination (the kernel sends
/// all zeros and 0.0.0.0 there); other kinds are refused. (Before: `lo` was refused, "not
/// an ethernet device".)
#[test]
fn a_loopback_device_is_added_and_starts_without_a_destination() {
    let mut it = with_loopback();
    assert_eq!(
        ok(it.apply(&w("kpktgend_0", "add_device lo@0"))),
        "OK: add_device=lo@0"
    );
    assert!(it.device("lo@0").unwrap().cfg.loopback);
    let s = start_specs(&it, !LAB).unwrap();
    assert_eq!(s[0].1.cfg.dst_mac, crate::wire::MacAddr::default());
    assert!(s[0].1.cfg.dst_min.is_empty());
    // Its file answers as the kernel's does on lo.
    assert!(error(it.apply(&w("lo@0", "clone_skb 1"))).contains("loopback"));
    // An Ethernet device still needs a dst_mac.
    ok(it.apply(&w("kpktgend_0", "add_device eth0")));
    assert!(!it.device("eth0").unwrap().cfg.loopback);
    assert!(
        start_specs(&it, !LAB)
            .unwrap_err()
            .to_string()
            .contains("dst_mac")
    );
    assert_eq!(
        error(it.apply(&w("kpktgend_0", "add_device tun0"))),
        "ERROR: can not add device tun0"
    );
    assert_eq!(
        it.take_note().as_deref(),
        Some("not an ethernet or loopback device: \"tun0\"")
    );
}

/// A thread's commands are read as the kernel reads them: `add_device=lo@0` as
/// `add_device lo@0`; a prefix of a command is no command (the selftest writes every
/// prefix of `max_before_softirq`: EINVAL until it is whole).
#[test]
fn thread_commands_are_read_as_the_kernel_reads_them() {
    let mut it = with_loopback();
    assert_eq!(
        ok(it.apply(&w("kpktgend_0", "add_device=lo@0"))),
        "OK: add_device=lo@0"
    );
    let full = "max_before_softirq";
    for i in 1..full.len() {
        let e = error(it.apply(&w("kpktgend_0", &full[..i])));
        assert!(e.contains("No such parameter"), "{e}");
    }
    assert!(ok(it.apply(&w("kpktgend_0", full))).contains("obsolete"));
}
