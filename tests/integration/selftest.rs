//! The kernel's own selftest of pktgen's control language
//! (`tools/testing/selftests/net/proc_net_pktgen.c`, Linux 6.15 and later), replayed
//! through upktgen: every write of every `TEST_F`, each case on a fresh `lo@0` as the
//! selftest's fixture makes one (`kpktgend_0 add_device lo@0` first, `kpktgend_0
//! rem_device_all` last), once through `upktgen script --check` and once through real
//! starts on `lo@0`, inside a network namespace of the test's own with `lo` up.
//!
//! [`cases`] is the table: for each write what the kernel answers (the write's return, and
//! what its Result line then says) and what upktgen answers. Where they differ the row says
//! why ([`Write::differs`]); the writes a script line cannot make are in [`NOT_A_LINE`]. The
//! test fails when upktgen answers otherwise than the row says, in either direction.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// What the kernel answers to one write.
#[derive(Debug, Clone, Copy)]
enum Kernel {
    /// The write returns its length; the file's Result line says `OK: ...`.
    Ok,
    /// The write returns its length and leaves the Result line as it was; what it did.
    Quiet(&'static str),
    /// The write returns its length; the Result line says the command was refused
    /// (`ERROR: ...`, or `... unknown`).
    ResultSaysNo,
    /// The write fails with this errno.
    Fails(&'static str),
}

impl Kernel {
    /// Whether the kernel took the command (what upktgen's OK answer means).
    fn takes(self) -> bool {
        matches!(self, Kernel::Ok | Kernel::Quiet(_))
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kernel::Ok => f.write_str("length; Result OK"),
            Kernel::Quiet(what) => write!(f, "length; Result unchanged ({what})"),
            Kernel::ResultSaysNo => f.write_str("length; Result ERROR/unknown"),
            Kernel::Fails(errno) => write!(f, "-1 {errno}"),
        }
    }
}

/// The file a write goes to.
#[derive(Debug, Clone, Copy)]
enum File {
    Pgctrl,
    Thread,
    Device,
}

impl File {
    fn target(self) -> &'static str {
        match self {
            File::Pgctrl => "pgctrl",
            File::Thread => "kpktgend_0",
            File::Device => "lo@0",
        }
    }
}

/// One write of a case, as a script line `TARGET 'COMMAND'`.
#[derive(Debug, Clone)]
struct Write {
    file: File,
    cmd: String,
    kernel: Kernel,
    /// What upktgen's answer says (a part of it).
    says: &'static str,
    /// Why upktgen answers otherwise than the kernel (OK where the kernel refuses, or ERROR
    /// where it takes the command); None: it answers as the kernel does.
    differs: Option<&'static str>,
}

impl Write {
    fn differs(mut self, why: &'static str) -> Write {
        self.differs = Some(why);
        self
    }

    /// Whether upktgen must answer OK.
    fn upktgen_takes(&self) -> bool {
        self.kernel.takes() != self.differs.is_some()
    }
}

fn w(file: File, cmd: &str, kernel: Kernel, says: &'static str) -> Write {
    Write {
        file,
        cmd: cmd.to_string(),
        kernel,
        says,
        differs: None,
    }
}

fn dev(cmd: &str, kernel: Kernel, says: &'static str) -> Write {
    w(File::Device, cmd, kernel, says)
}

fn dev_ok(cmd: &str, says: &'static str) -> Write {
    dev(cmd, Kernel::Ok, says)
}

/// What a start after the case's writes does on `lo@0` (the selftest starts nothing but in
/// `ctrl_cmd`; a start shows that what the writes left is what upktgen can send).
#[derive(Debug, Clone, Copy)]
enum Start {
    /// `pgctrl start` is appended and sends this many frames.
    Sends(u64),
    /// Appended; sends some frames but fewer than its count before `--duration` ends it
    /// (a rate of a few hundred frames a second).
    Paced,
    /// Appended; upktgen refuses it (saying this), where the kernel would send, because:
    Refused(&'static str, &'static str),
    /// The case's own writes start (and send this many frames); nothing is appended.
    InCase(u64),
}

struct Case {
    /// The selftest's TEST_F.
    name: &'static str,
    writes: Vec<Write>,
    start: Start,
}

fn case(name: &'static str, writes: Vec<Write>, start: Start) -> Case {
    Case {
        name,
        writes,
        start,
    }
}

/// Every prefix (1 byte and longer) of a wrong command: the kernel fails each with EINVAL.
fn prefixes(file: File, cmd: &str, says: &'static str) -> Vec<Write> {
    (1..=cmd.len())
        .map(|i| w(file, &cmd[..i], Kernel::Fails("EINVAL"), says))
        .collect()
}

/// Writes of the selftest that no script line can make, and why: each is replayed as the
/// line it otherwise is (or not at all).
const NOT_A_LINE: &[(&str, &str, &str)] = &[
    (
        "wrong_ctrl_cmd, wrong_thr_cmd, legacy_thr_cmd, wrong_dev_cmd",
        "the zero-byte write (EINVAL)",
        "a line with no command is a blank line, which writes nothing",
    ),
    (
        "every case that writes a command with and without its trailing NUL byte",
        "the write with the NUL",
        "a script line is text and carries no NUL byte; both writes are the one line replayed",
    ),
];

/// The documented choice behind most differences (docs/scripts.md, "Bad values are
/// refused").
const NOT_ZERO: &str = "a missing number is refused, where the kernel reads it as 0 (raised to 42): upktgen refuses values the kernel silently takes (docs/scripts.md)";

/// The selftest's cases in its order, with the kernel's answers.
fn cases() -> Vec<Case> {
    use Kernel::*;
    use Start::*;
    let node100 = std::fs::read_to_string("/sys/devices/system/node/possible")
        .is_ok_and(|l| upktgen::pg::node_in_list(&l, 100));
    vec![
        case(
            "wrong_ctrl_cmd",
            prefixes(
                File::Pgctrl,
                "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789",
                "unknown command",
            ),
            Sends(1000),
        ),
        case(
            "ctrl_cmd",
            vec![
                w(File::Pgctrl, "stop", Ok, "OK: stop"),
                w(File::Pgctrl, "start", Ok, "OK: start"),
                w(File::Pgctrl, "reset", Ok, "OK: reset"),
            ],
            InCase(1000),
        ),
        case(
            "wrong_thr_cmd",
            prefixes(File::Thread, "forsureawrongcommand", "No such parameter"),
            Sends(1000),
        ),
        case(
            "legacy_thr_cmd",
            {
                let full = "max_before_softirq";
                let mut v = prefixes(File::Thread, &full[..full.len() - 1], "No such parameter");
                v.push(w(File::Thread, full, Ok, "max_before_softirq is obsolete"));
                v
            },
            Sends(1000),
        ),
        case(
            "wrong_dev_cmd",
            prefixes(File::Device, "forsurewrongcommand", "No such parameter"),
            Sends(1000),
        ),
        case(
            "dev_cmd_min_pkt_size",
            vec![
                dev("min_pkt_size", Ok, "a number is needed").differs(NOT_ZERO),
                dev("min_pkt_size ", Ok, "a number is needed").differs(NOT_ZERO),
                dev_ok("min_pkt_size 0", "OK: min_pkt_size=42"),
                dev_ok("min_pkt_size 1", "OK: min_pkt_size=42"),
                dev_ok("min_pkt_size 100", "OK: min_pkt_size=100"),
                dev_ok("min_pkt_size=1001", "OK: min_pkt_size=1001"),
                dev_ok("min_pkt_size =2002", "OK: min_pkt_size=2002"),
                dev_ok("min_pkt_size= 3003", "OK: min_pkt_size=3003"),
                dev_ok("min_pkt_size = 4004", "OK: min_pkt_size=4004"),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_max_pkt_size",
            vec![dev_ok("max_pkt_size 200", "OK: max_pkt_size=200")],
            Sends(1000),
        ),
        case(
            "dev_cmd_pkt_size",
            vec![dev_ok("pkt_size 300", "OK: pkt_size=300")],
            Sends(1000),
        ),
        case(
            "dev_cmd_imix_weights",
            vec![
                dev_ok("imix_weights 0,7 576,4 1500,1", "OK: imix_weights=42,7 576,4 1500,1"),
                dev_ok(
                    "imix_weights 101,1 102,2 103,3 104,4 105,5 106,6 107,7 108,8 109,9 110,10 111,11 112,12 113,13 114,14 115,15 116,16 117,17 118,18 119,19 120,20",
                    "119,19 120,20",
                ),
                dev(
                    "imix_weights 100,1 102,2 103,3 104,4 105,5 106,6 107,7 108,8 109,9 110,10 111,11 112,12 113,13 114,14 115,15 116,16 117,17 118,18 119,19 120,20 121,21",
                    Fails("E2BIG"),
                    "imix_weights: at most 20 entries",
                ),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_debug",
            vec![dev_ok("debug 1", "OK: debug=1"), dev_ok("debug 0", "OK: debug=0")],
            Sends(1000),
        ),
        case(
            "dev_cmd_frags",
            vec![dev_ok("frags 100", "OK: frags=100")],
            Sends(1000),
        ),
        case(
            "dev_cmd_delay",
            vec![
                dev_ok("delay 100", "OK: delay=100"),
                // 0x7fffffff: never transmit; the start sends nothing until --duration.
                dev_ok("delay 2147483647", "OK: delay=18446744073709551615"),
            ],
            Sends(0),
        ),
        case(
            "dev_cmd_rate",
            vec![
                dev("rate 0", Fails("EINVAL"), "rate: must be at least 1"),
                dev_ok("rate 100", "OK: rate=100"),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_ratep",
            vec![
                dev("ratep 0", Fails("EINVAL"), "ratep: must be at least 1"),
                // The kernel answers ratep with `rate=`; so does upktgen.
                dev_ok("ratep 200", "OK: rate=200"),
            ],
            Paced,
        ),
        case(
            "dev_cmd_udp_src_min",
            vec![dev_ok("udp_src_min 1", "OK: udp_src_min=1")],
            Sends(1000),
        ),
        case(
            "dev_cmd_udp_dst_min",
            vec![dev_ok("udp_dst_min 2", "OK: udp_dst_min=2")],
            Sends(1000),
        ),
        case(
            "dev_cmd_udp_src_max",
            vec![dev_ok("udp_src_max 3", "OK: udp_src_max=3")],
            Sends(1000),
        ),
        case(
            "dev_cmd_udp_dst_max",
            vec![dev_ok("udp_dst_max 4", "OK: udp_dst_max=4")],
            Sends(1000),
        ),
        case(
            "dev_cmd_clone_skb",
            vec![
                // lo has no IFF_TX_SKB_SHARING.
                dev("clone_skb 1", Fails("EOPNOTSUPP"), "lo is a loopback device"),
                dev_ok("clone_skb 0", "OK: clone_skb=0"),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_count",
            vec![dev_ok("count 100", "OK: count=100")],
            Sends(100),
        ),
        case(
            "dev_cmd_src_mac_count",
            vec![dev_ok("src_mac_count 100", "OK: src_mac_count=100")],
            Sends(1000),
        ),
        case(
            "dev_cmd_dst_mac_count",
            vec![dev_ok("dst_mac_count 100", "OK: dst_mac_count=100")],
            Sends(1000),
        ),
        case(
            "dev_cmd_burst",
            vec![dev_ok("burst 0", "OK: burst=1")],
            Sends(1000),
        ),
        case(
            "dev_cmd_node",
            vec![if node100 {
                dev_ok("node 100", "OK: node=100")
            } else {
                // The kernel: `ERROR: node not possible` (a machine with fewer nodes).
                dev("node 100", ResultSaysNo, "node not possible")
            }],
            Sends(1000),
        ),
        case(
            "dev_cmd_xmit_mode",
            vec![
                dev_ok("xmit_mode start_xmit", "OK: xmit_mode=start_xmit"),
                dev_ok("xmit_mode netif_receive", "OK: xmit_mode=netif_receive"),
                dev_ok("xmit_mode queue_xmit", "OK: xmit_mode=queue_xmit"),
                dev("xmit_mode nonsense", ResultSaysNo, "xmit_mode -:nonsense:- unknown"),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_flag",
            vec![
                dev_ok("flag UDPCSUM", "OK: flags=0x"),
                dev_ok("flag !UDPCSUM", "OK: flags=0x"),
                dev("flag nonsense", ResultSaysNo, "Flag -:nonsense:- unknown"),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_dst_min",
            vec![dev_ok("dst_min 101.102.103.104", "OK: dst_min=101.102.103.104")],
            Sends(1000),
        ),
        case(
            "dev_cmd_dst",
            vec![dev_ok("dst 101.102.103.104", "OK: dst_min=101.102.103.104")],
            Sends(1000),
        ),
        case(
            "dev_cmd_dst_max",
            vec![dev_ok("dst_max 201.202.203.204", "OK: dst_max=201.202.203.204")],
            Sends(1000),
        ),
        case(
            "dev_cmd_dst6",
            vec![dev_ok(
                "dst6 2001:db38:1234:0000:0000:0000:0000:0000",
                "OK: dst6=2001:db38:1234::",
            )],
            Sends(1000),
        ),
        case(
            "dev_cmd_dst6_min",
            vec![dev_ok(
                "dst6_min 2001:db8:1234:0000:0000:0000:0000:0000",
                "OK: dst6_min=2001:db8:1234::",
            )],
            Refused(
                "dst6_min and dst6_max go together",
                "combinations that cannot be meant are refused at start (docs/scripts.md); the kernel's random walk masks with an unset dst6_max and sends to ::",
            ),
        ),
        case(
            "dev_cmd_dst6_max",
            vec![dev_ok(
                "dst6_max 2001:db8:1234:0000:0000:0000:0000:0000",
                "OK: dst6_max=2001:db8:1234::",
            )],
            Refused(
                "IPV6 is set but no IPv6 destination",
                "combinations that cannot be meant are refused at start (docs/scripts.md); the kernel sends IPv6 frames to ::",
            ),
        ),
        case(
            "dev_cmd_src6",
            vec![dev_ok(
                "src6 2001:db38:1234:0000:0000:0000:0000:0000",
                "OK: src6=2001:db38:1234::",
            )],
            Refused(
                "IPV6 is set but no IPv6 destination",
                "combinations that cannot be meant are refused at start (docs/scripts.md); the kernel sends IPv6 frames to ::",
            ),
        ),
        case(
            "dev_cmd_src_min",
            vec![dev_ok("src_min 101.102.103.104", "OK: src_min=101.102.103.104")],
            Sends(1000),
        ),
        case(
            "dev_cmd_src_max",
            vec![dev_ok("src_max 201.202.203.204", "OK: src_max=201.202.203.204")],
            Sends(1000),
        ),
        case(
            "dev_cmd_dst_mac",
            vec![dev_ok("dst_mac 01:02:03:04:05:06", "OK: dstmac 01:02:03:04:05:06")],
            Sends(1000),
        ),
        case(
            "dev_cmd_src_mac",
            vec![dev_ok("src_mac 11:12:13:14:15:16", "OK: srcmac 11:12:13:14:15:16")],
            Sends(1000),
        ),
        case(
            "dev_cmd_clear_counters",
            vec![dev_ok("clear_counters", "OK: Clearing counters.")],
            Sends(1000),
        ),
        case(
            "dev_cmd_flows",
            vec![dev_ok("flows 100", "OK: flows=100")],
            Refused(
                "flows is set but flowlen is 0",
                "combinations that cannot be meant are refused at start (docs/scripts.md); the kernel sends flows of length 0 (every frame starts the next flow)",
            ),
        ),
        case(
            "dev_cmd_spi",
            vec![dev("spi 100", Ok, "upktgen does not do IPsec").differs(
                "no IPsec here: the kernel's xfrm transforms are not reachable from userspace (the selftest itself says it needs CONFIG_XFRM)",
            )],
            Sends(1000),
        ),
        case(
            "dev_cmd_flowlen",
            vec![dev_ok("flowlen 100", "OK: flowlen=100")],
            Sends(1000),
        ),
        case(
            "dev_cmd_queue_map_min",
            vec![dev_ok("queue_map_min 1", "OK: queue_map_min=1")],
            Sends(1000),
        ),
        case(
            "dev_cmd_queue_map_max",
            vec![dev_ok("queue_map_max 2", "OK: queue_map_max=2")],
            Sends(1000),
        ),
        case(
            "dev_cmd_mpls",
            vec![
                dev_ok("mpls 00000001", "OK: mpls=00000001"),
                dev_ok("mpls 00000001,000000f2", "OK: mpls=00000001,000000f2"),
                dev_ok(
                    "mpls 00000f00,00000f01,00000f02,00000f03,00000f04,00000f05,00000f06,00000f07,00000f08,00000f09,00000f0a,00000f0b,00000f0c,00000f0d,00000f0e,00000f0f",
                    "00000f0e,00000f0f",
                ),
                dev(
                    "mpls 00000f00,00000f01,00000f02,00000f03,00000f04,00000f05,00000f06,00000f07,00000f08,00000f09,00000f0a,00000f0b,00000f0c,00000f0d,00000f0e,00000f0f,00000f10",
                    Fails("E2BIG"),
                    "mpls: at most 16 labels",
                ),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_vlan_id",
            vec![
                dev_ok("vlan_id 1", "OK: vlan_id=1"),
                dev_ok("vlan_p 1", "OK: vlan_p=1"),
                dev_ok("vlan_cfi 1", "OK: vlan_cfi=1"),
                dev(
                    "vlan_id 4096",
                    Quiet("VLAN and SVLAN tags off"),
                    "OK: vlan_id removed (VLAN and SVLAN off)",
                ),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_svlan_id",
            vec![
                dev(
                    "svlan_id 1",
                    Quiet("no VLAN tag to go outside of: both tags stay off"),
                    "svlan_id: set vlan_id first",
                )
                .differs(
                    "an SVLAN id without a VLAN tag is refused, where the kernel drops it without a word; in both, both tags are then off",
                ),
                dev("svlan_p 1", ResultSaysNo, "svlan_p: set svlan_id first"),
                dev("svlan_cfi 1", ResultSaysNo, "svlan_cfi: set svlan_id first"),
                dev(
                    "svlan_id 4096",
                    Quiet("VLAN and SVLAN tags off"),
                    "OK: svlan_id removed (VLAN and SVLAN off)",
                ),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_tos",
            vec![
                // One hex digit: `ERROR: tos must be 00-ff`.
                dev("tos 0", ResultSaysNo, "tos must be 00-ff"),
                dev_ok("tos 0f", "OK: tos=0x0f"),
                // The kernel reads two digits and ignores the rest: `OK: tos=0x0f`.
                dev("tos 0ff", Ok, "tos must be 00-ff").differs(
                    "characters after the two hex digits are refused, where the kernel ignores them and takes 0x0f: upktgen refuses values the kernel silently takes (docs/scripts.md)",
                ),
            ],
            Sends(1000),
        ),
        case(
            "dev_cmd_traffic_class",
            vec![dev_ok("traffic_class f0", "OK: traffic_class=0xf0")],
            Sends(1000),
        ),
        case(
            "dev_cmd_skb_priority",
            vec![dev_ok("skb_priority 999", "OK: skb_priority=999")],
            Sends(1000),
        ),
    ]
}

/// The table, as text: one row a write (a run of prefixes as one row), then each start that
/// upktgen refuses, then the writes no line can make. Printed by the test.
fn table(cases: &[Case]) -> String {
    let mut t = String::from("TEST_F | write | kernel | upktgen | why upktgen differs\n");
    for c in cases {
        let mut i = 0;
        while i < c.writes.len() {
            let wr = &c.writes[i];
            // A run of prefixes with the same answers is one row.
            let mut j = i + 1;
            while j < c.writes.len()
                && c.writes[j].says == wr.says
                && c.writes[j].cmd.starts_with(&wr.cmd)
                && c.writes[j].upktgen_takes() == wr.upktgen_takes()
            {
                j += 1;
            }
            let what = if j - i > 1 {
                format!(
                    "`{}`..`{}` ({} prefixes)",
                    wr.cmd,
                    c.writes[j - 1].cmd,
                    j - i
                )
            } else {
                format!("`{}`", wr.cmd)
            };
            let answer = match (wr.upktgen_takes(), wr.says.starts_with("OK")) {
                (_, true) => wr.says.to_string(),
                (true, false) => format!("OK: ...{}...", wr.says),
                (false, _) => format!("ERROR: ...{}...", wr.says),
            };
            t.push_str(&format!(
                "{} | {what} | {} | {answer} | {}\n",
                c.name,
                wr.kernel,
                wr.differs.unwrap_or("")
            ));
            i = j;
        }
        if let Start::Refused(says, why) = c.start {
            t.push_str(&format!(
                "{} | (a start after it) | sends | ERROR: {says} | {why}\n",
                c.name
            ));
        }
    }
    for (cases, write, why) in NOT_A_LINE {
        t.push_str(&format!("{cases} | {write} | - | not replayed | {why}\n"));
    }
    t
}

/// A network namespace of the test's own with only `lo`, up; removed when dropped.
struct LoopbackNs(String);

impl LoopbackNs {
    fn new(tag: &str) -> LoopbackNs {
        let ns = LoopbackNs(format!("upkt-e2e-selftest-{}-{tag}", std::process::id()));
        let ip = |args: &[&str]| {
            let st = Command::new("ip").args(args).status().unwrap();
            assert!(st.success(), "ip {args:?}");
        };
        ip(&["netns", "add", &ns.0]);
        ip(&["-n", &ns.0, "link", "set", "lo", "up"]);
        ns
    }

    /// Frames `lo` has transmitted.
    fn lo_tx(&self) -> u64 {
        let o = Command::new("ip")
            .args(["netns", "exec", &self.0, "cat", "/proc/net/dev"])
            .output()
            .unwrap();
        let text = stdout(&o);
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("lo:"))
            .unwrap_or_else(|| panic!("no lo in {text}"));
        // Receive: bytes packets errs drop fifo frame compressed multicast; then transmit.
        line.split(':')
            .nth(1)
            .unwrap()
            .split_whitespace()
            .nth(9)
            .unwrap()
            .parse()
            .unwrap()
    }
}

impl Drop for LoopbackNs {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// A case's script: the fixture, its writes, the start (unless the case has its own), the
/// fixture's end. Returns the text and the line number of each write and of the start.
fn script(c: &Case) -> (String, Vec<usize>, Option<usize>) {
    let mut text = String::from("kpktgend_0 'add_device lo@0'\n");
    let mut lines = Vec::new();
    for (i, wr) in c.writes.iter().enumerate() {
        text.push_str(&format!("{} '{}'\n", wr.file.target(), wr.cmd));
        lines.push(i + 2);
    }
    let start = match c.start {
        Start::InCase(_) => None,
        _ => {
            text.push_str("pgctrl start\n");
            Some(c.writes.len() + 2)
        }
    };
    text.push_str("kpktgend_0 rem_device_all\n");
    (text, lines, start)
}

/// The answers of a run, by line: (OK?, the answer) from `FILE:LINE: TARGET: ...` lines.
fn answers(path: &Path, o: &std::process::Output) -> Vec<(usize, bool, String)> {
    let prefix = format!("{}:", path.display());
    let mut v = Vec::new();
    for (ok, text) in [(true, stdout(o)), (false, stderr(o))] {
        for l in text.lines() {
            let Some(rest) = l.strip_prefix(&prefix) else {
                continue;
            };
            let Some((n, answer)) = rest.split_once(": ") else {
                continue;
            };
            let Ok(n) = n.parse::<usize>() else { continue };
            let answer = answer.split_once(": ").map_or(answer, |(_, a)| a);
            assert_eq!(
                answer.starts_with("OK"),
                ok,
                "an OK answer on standard error or an ERROR on standard output: {l}"
            );
            v.push((n, ok, answer.to_string()));
        }
    }
    v
}

/// The frames the starts of a run sent: the N of each `Result: OK: ... usec, N (` line.
fn sent(out: &str) -> u64 {
    out.lines()
        .filter_map(|l| l.strip_prefix("Result: OK: "))
        .filter_map(|l| l.split_once(" usec, "))
        .map(|(_, r)| r.split(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

/// Replays every case, with `--check` (`real`: false) or with real starts, and checks
/// each answer against the table. Returns the cases that failed, with why.
fn replay(ns: &LoopbackNs, dir: &Path, real: bool) -> Vec<String> {
    let mut failures = Vec::new();
    for c in cases() {
        let (text, lines, start_line) = script(&c);
        let path = dir.join(format!(
            "{}-{}.pg",
            c.name,
            if real { "start" } else { "check" }
        ));
        std::fs::write(&path, &text).unwrap();
        let p = path.to_str().unwrap();
        let before = ns.lo_tx();
        let args: Vec<&str> = if real {
            vec!["script", "--verbose", "--no-live", "--duration", "2s", p]
        } else {
            vec!["script", "--verbose", "--check", p]
        };
        let o = in_ns(&ns.0, &args);
        let lo_sent = ns.lo_tx() - before;
        let got = answers(&path, &o);
        let mut fail = |what: String| {
            failures.push(format!(
                "{} ({}): {what}",
                c.name,
                if real { "start" } else { "--check" }
            ))
        };
        let answer = |line: usize| got.iter().find(|(n, _, _)| *n == line);
        for (line, want) in [
            (1, true),
            (lines.len() + 2 + usize::from(start_line.is_some()), true),
        ] {
            if answer(line).map(|a| a.1) != Some(want) {
                fail(format!("the fixture's line {line}: {:?}", answer(line)));
            }
        }
        for (wr, &line) in c.writes.iter().zip(&lines) {
            match answer(line) {
                Some((_, ok, a)) if *ok == wr.upktgen_takes() && a.contains(wr.says) => {}
                other => fail(format!(
                    "`{}`: the kernel {:?}{}; want upktgen to answer {} with \"{}\", got {other:?}",
                    wr.cmd,
                    wr.kernel,
                    wr.differs
                        .map_or(String::new(), |d| format!(" (upktgen differs: {d})")),
                    if wr.upktgen_takes() { "OK" } else { "ERROR" },
                    wr.says
                )),
            }
        }
        if let Some(line) = start_line {
            let a = answer(line);
            match (c.start, a) {
                (Start::Refused(says, _), Some((_, false, t))) if t.contains(says) => {}
                (Start::Refused(..), _) => fail(format!("the start: want it refused, got {a:?}")),
                (_, Some((_, true, t))) if t.starts_with("OK: start") => {}
                _ => fail(format!("the start: {a:?}\n{}", stderr(&o))),
            }
        }
        if real {
            // What the starts sent, as their Result lines say and as lo counted it.
            let n = sent(&stdout(&o));
            let ok = match c.start {
                Start::Sends(k) | Start::InCase(k) => n == k,
                Start::Paced => n > 0 && n < 1000,
                Start::Refused(..) => n == 0,
            };
            if !ok || lo_sent != n {
                fail(format!(
                    "sent {n} (lo counted {lo_sent}), want {:?}\n{}",
                    c.start,
                    stdout(&o)
                ));
            }
        } else if lo_sent != 0 {
            fail(format!("--check sent {lo_sent} frames"));
        }
    }
    failures
}

/// Every case of the kernel's selftest, through `script --check` and through real starts
/// on `lo@0`, answers as the kernel does or as the table says and why. (Before: `add_device
/// lo@0` was refused, "not an ethernet device", so every case failed at its fixture; with
/// `--lab`, where lo stands for the lab's veth, `frags 100` was refused, `node 100` taken
/// and `clone_skb 1` taken.)
fn the_kernels_selftest_cases_answer_as_the_kernel_does() {
    if !root_or_skip() {
        return;
    }
    let ns = LoopbackNs::new("lo");
    let dir = tmp_dir("selftest", "cases");
    let mut failures = replay(&ns, &dir, false);
    failures.extend(replay(&ns, &dir, true));
    eprintln!("{}", table(&cases()));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

pub(crate) const TESTS: &[crate::harness::Test] =
    crate::tests![the_kernels_selftest_cases_answer_as_the_kernel_does];
