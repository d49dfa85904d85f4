//! Tests of the snapshot API and of the parsers' robustness.

use super::*;

const VM_STAT_A: &str = include_str!("testdata/vm_stat_a.txt");
const VM_STAT_B: &str = include_str!("testdata/vm_stat_b.txt");
const VM_IRQ_A: &str = include_str!("testdata/vm_interrupts_a.txt");
const VM_IRQ_B: &str = include_str!("testdata/vm_interrupts_b.txt");
const VM_SOFT_A: &str = include_str!("testdata/vm_softirqs_a.txt");
const VM_SOFT_B: &str = include_str!("testdata/vm_softirqs_b.txt");
const VM_NET_A: &str = include_str!("testdata/vm_net_dev_a.txt");
const BIG_STAT_A: &str = include_str!("testdata/big_stat_a.txt");
const BIG_STAT_B: &str = include_str!("testdata/big_stat_b.txt");
const BIG_IRQ_A: &str = include_str!("testdata/big_interrupts_a.txt");
const BIG_IRQ_B: &str = include_str!("testdata/big_interrupts_b.txt");
const BIG_SOFT_A: &str = include_str!("testdata/big_softirqs_a.txt");
const BIG_SOFT_B: &str = include_str!("testdata/big_softirqs_b.txt");
const OLD_WIDE_NET: &str = include_str!("testdata/old_wide_net_dev.txt");

fn vm() -> (SystemSnapshot, SystemSnapshot) {
    (
        SystemSnapshot::parse(VM_STAT_A, VM_IRQ_A, VM_SOFT_A).unwrap(),
        SystemSnapshot::parse(VM_STAT_B, VM_IRQ_B, VM_SOFT_B).unwrap(),
    )
}

fn big() -> (SystemSnapshot, SystemSnapshot) {
    (
        SystemSnapshot::parse(BIG_STAT_A, BIG_IRQ_A, BIG_SOFT_A).unwrap(),
        SystemSnapshot::parse(BIG_STAT_B, BIG_IRQ_B, BIG_SOFT_B).unwrap(),
    )
}

#[test]
fn vm_system_delta_with_filter() {
    let (a, b) = vm();
    assert_eq!(a.skipped() + b.skipped(), 0);
    let d = a.delta(&b, Some("virtio1-req"));
    assert_eq!(d.interrupts, 42);
    assert_eq!(d.interrupts_all, 580);
    assert_eq!(d.irq_filter.as_deref(), Some("virtio1-req"));
    assert_eq!(d.irq_filter_rows, vec!["36".to_string()]);
    assert!(d.irq_filter_matched);
    let rows: Vec<(&str, &str, u64)> = d
        .irq_rows
        .iter()
        .map(|(n, desc, v)| (n.as_str(), desc.as_str(), *v))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("36", "PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0", 42),
            ("42", "PCI-MSIX-0000:00:04.0 2-edge virtio3-tx", 1),
            ("LOC", "Local timer interrupts", 354),
            ("RES", "Rescheduling interrupts", 36),
            ("CAL", "Function call interrupts", 124),
            ("TLB", "TLB shootdowns", 23),
        ]
    );
    assert_eq!(d.softirq_net_rx, 232_950);
    assert_eq!(d.softirq_net_tx, 0);
    assert_eq!(d.softirqs.len(), 10);
    assert_eq!(d.softirqs[1], ("TIMER".to_string(), 41));
    assert_eq!(d.softirqs.iter().map(|(_, v)| v).sum::<u64>(), 233_224);

    assert_eq!(d.jiffies_all.total(), 229);
    assert_eq!(
        d.cpu_all.top_line("Cpu(s)"),
        "Cpu(s): 10.0%us, 32.3%sy,  0.0%ni, 49.8%id,  0.0%wa,  0.0%hi,  7.9%si,  0.0%st"
    );
    let names: Vec<&str> = d.cpu_per_cpu.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["cpu0", "cpu1"]);
    assert_eq!(d.jiffies_per_cpu[1].0, "cpu1");
    assert_eq!(d.jiffies_per_cpu[1].1.total(), 115);
    // cpu0: user 1, system 4, idle 110 of 115.
    assert_eq!(
        d.cpu_per_cpu[0].1.top_line(&top_label("cpu0")),
        "Cpu0  :  0.9%us,  3.5%sy,  0.0%ni, 95.7%id,  0.0%wa,  0.0%hi,  0.0%si,  0.0%st"
    );
}

#[test]
fn vm_system_delta_without_filter_and_unmatched_filter() {
    let (a, b) = vm();
    let d = a.delta(&b, None);
    assert_eq!((d.interrupts, d.interrupts_all), (580, 580));
    assert!(d.irq_filter.is_none() && d.irq_filter_rows.is_empty() && d.irq_filter_matched);

    // A NIC name that does not exist on the VM: detectable before and after the run.
    assert!(!a.interrupts.matches("eth0-TxRx-0"));
    let d = a.delta(&b, Some("eth0-TxRx-0"));
    assert!(!d.irq_filter_matched);
    assert_eq!(d.interrupts, 0);
    assert_eq!(d.interrupts_all, 580);
    assert!(d.irq_filter_rows.is_empty());
    // A row that matched but had no interrupts is still a match.
    let d = a.delta(&b, Some("virtio2-output"));
    assert!(d.irq_filter_matched);
    assert_eq!(
        (d.interrupts, d.irq_filter_rows.clone()),
        (0, vec!["39".to_string()])
    );
}

#[test]
fn big_system_delta() {
    let (a, b) = big();
    let d = a.delta(&b, Some("eth0-TxRx"));
    assert_eq!(d.interrupts, 195_000);
    assert_eq!(d.interrupts_all, 200_942);
    assert_eq!(d.irq_filter_rows, vec!["121", "122", "123", "124"]);
    assert!(d.irq_filter_matched);
    assert_eq!(d.softirq_net_rx, 195_000);
    assert_eq!(d.softirq_net_tx, 1_234);
    let cpus: Vec<&str> = d.cpu_per_cpu.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(cpus, vec!["cpu0", "cpu1", "cpu4", "cpu6", "cpu7"]);
    assert_eq!(
        d.cpu_all.top_line("Cpu(s)"),
        "Cpu(s):  3.5%us, 19.8%sy,  0.0%ni, 60.0%id,  0.0%wa,  5.0%hi, 11.7%si,  0.0%st"
    );
    // A device that vanished during the run (rtc0, IRQ 8) still counts as matched.
    let d = a.delta(&b, Some("rtc0"));
    assert!(d.irq_filter_matched);
    assert_eq!(
        (d.interrupts, d.irq_filter_rows.clone()),
        (0, vec!["8".to_string()])
    );
    // A device that appeared during the run counts from 0.
    let d = a.delta(&b, Some("eth1"));
    assert!(d.irq_filter_matched);
    assert_eq!(d.interrupts, 777);
    assert!(!a.interrupts.matches("eth1") && b.interrupts.matches("eth1"));
    let d = a.delta(&b, None);
    assert_eq!(d.interrupts, 200_942);
    assert_eq!(d.irq_rows.len(), 13);
    assert_eq!(
        d.irq_rows.iter().find(|(n, _, _)| n == "ERR"),
        Some(&("ERR".to_string(), String::new(), 2))
    );
}

#[test]
fn system_delta_json() {
    let (a, b) = vm();
    let v = serde_json::to_value(a.delta(&b, Some("virtio3"))).unwrap();
    assert_eq!(v["interrupts"], 1);
    assert_eq!(v["interrupts_all"], 580);
    assert_eq!(v["irq_filter"], "virtio3");
    assert_eq!(v["irq_filter_matched"], true);
    assert_eq!(
        v["irq_rows"][2],
        serde_json::json!(["LOC", "Local timer interrupts", 354])
    );
    assert_eq!(v["cpu_per_cpu"][1][0], "cpu1");
    assert_eq!(v["jiffies_all"]["system"], 74);
    assert_eq!(v["jiffies_per_cpu"][0][1]["idle"], 110);
    assert_eq!(v["softirqs"][3], serde_json::json!(["NET_RX", 232_950]));
    assert_eq!(v["softirq_net_rx"], 232_950);
    assert!(v["cpu_all"]["us"].as_f64().unwrap() > 10.0);
    let v = serde_json::to_value(a.delta(&b, None)).unwrap();
    assert!(v["irq_filter"].is_null());
}

#[test]
fn top_labels_align() {
    assert_eq!(top_label("cpu"), "Cpu(s)");
    assert_eq!(top_label("cpu0"), "Cpu0  ");
    assert_eq!(top_label("cpu12"), "Cpu12 ");
    assert_eq!(top_label("cpu127"), "Cpu127");
    assert_eq!(top_label("cpu1023"), "Cpu1023");
    assert_eq!(top_label("x"), "x     ");
    let s = CpuShares {
        id: 100.0,
        ..Default::default()
    };
    let all = s.top_line("Cpu(s)");
    for name in ["cpu", "cpu0", "cpu7", "cpu12", "cpu255"] {
        let line = s.top_line(&top_label(name));
        assert_eq!(line.len(), all.len(), "{line}");
        assert_eq!(line.find(':'), all.find(':'));
    }
}

#[test]
fn parse_error_display() {
    let e = ParseError::new("/proc/stat", Some(3), "bad");
    assert_eq!(e.to_string(), "/proc/stat: line 3: bad");
    let any: SampleError = ParseError::new("/proc/softirqs", None, "empty file").into();
    assert_eq!(any.to_string(), "/proc/softirqs: empty file");
}

#[test]
fn helpers() {
    assert_eq!(parse_u64("0"), Some(0));
    assert_eq!(parse_u64("18446744073709551615"), Some(u64::MAX));
    for bad in [
        "",
        "+1",
        "-1",
        " 1",
        "1 ",
        "1a",
        "18446744073709551616",
        "١",
    ] {
        assert_eq!(parse_u64(bad), None, "{bad:?}");
    }
    assert_eq!(
        parse_cpu_header("   CPU0  CPU2 CPU3  "),
        Some(vec![0, 2, 3])
    );
    assert_eq!(parse_cpu_header("CPU0 CPU"), None);
    assert_eq!(parse_cpu_header("CPU99999999999"), None);
    assert_eq!(parse_cpu_header("  "), None);
    assert_eq!(
        common_cpus(&[0, 1, 4, 5], &[5, 0, 2]),
        vec![(5, 3, 0), (0, 0, 1)]
    );
    // Rows shorter than the CPU columns (never produced by the parsers) do not panic.
    assert_eq!(
        per_cpu_delta(&[(0, 0, 0), (1, 1, 1)], &[1], &[3, 4]),
        vec![(0, 2)]
    );
}

/// Feeds every parser with every prefix of every sample (truncated reads), with
/// cross-fed files and with pseudo-random junk: no panics, and deltas between whatever
/// parsed do not panic either.
#[test]
fn no_panics_on_truncated_or_junk_input() {
    let samples = [
        VM_STAT_A,
        VM_IRQ_A,
        VM_SOFT_A,
        VM_NET_A,
        BIG_STAT_B,
        BIG_IRQ_A,
        BIG_IRQ_B,
        BIG_SOFT_A,
        OLD_WIDE_NET,
    ];
    let full_irq = InterruptsSnapshot::parse(BIG_IRQ_A).unwrap();
    let full_soft = SoftirqsSnapshot::parse(BIG_SOFT_A).unwrap();
    let full_stat = StatSnapshot::parse(BIG_STAT_A).unwrap();
    let full_net = NetDevSnapshot::parse(OLD_WIDE_NET).unwrap();
    let mut inputs: Vec<String> = Vec::new();
    for s in samples {
        // Every third byte, and every cut just before or after a newline.
        let cuts = (0..=s.len())
            .filter(|&i| {
                let b = s.as_bytes();
                i % 3 == 0 || b.get(i) == Some(&b'\n') || (i > 0 && b[i - 1] == b'\n')
            })
            .filter(|&i| s.is_char_boundary(i));
        for end in cuts {
            inputs.push(s[..end].to_string());
        }
    }
    // Junk from a small LCG over characters that matter to the parsers.
    let alphabet: Vec<char> = "0123456789 :\n|CPUcpuERRLOCé\t-+x".chars().collect();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..1000 {
        let len = (state >> 40) as usize % 120;
        let s: String = (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                alphabet[(state >> 33) as usize % alphabet.len()]
            })
            .collect();
        inputs.push(format!("CPU0 CPU1\n{s}"));
        inputs.push(format!("|\n|\n{s}"));
        inputs.push(format!("cpu 1 2 3 4\n{s}"));
        inputs.push(s);
    }
    for s in &inputs {
        if let Ok(x) = StatSnapshot::parse(s) {
            let _ = full_stat.delta(&x).all.shares();
            let _ = x.delta(&full_stat);
        }
        if let Ok(x) = InterruptsSnapshot::parse(s) {
            let _ = full_irq.delta(&x).filtered_total("eth0");
            let _ = x.delta(&full_irq).total();
        }
        if let Ok(x) = SoftirqsSnapshot::parse(s) {
            let _ = full_soft.delta(&x);
            let _ = x.delta(&full_soft);
        }
        if let Ok(x) = NetDevSnapshot::parse(s) {
            let _ = full_net.delta(&x);
            let _ = x.delta(&full_net);
        }
    }
    // Truncation in the middle of a row: the row is skipped, earlier rows are kept.
    let cut = &BIG_IRQ_A[..BIG_IRQ_A.find("LOC:").unwrap() + 30];
    let s = InterruptsSnapshot::parse(cut).unwrap();
    assert_eq!(s.skipped, 1);
    assert_eq!(s.rows.last().unwrap().name, "NMI");
    let cut = &BIG_SOFT_A[..BIG_SOFT_A.find("NET_RX:").unwrap() + 20];
    let s = SoftirqsSnapshot::parse(cut).unwrap();
    assert_eq!((s.rows.len(), s.skipped), (3, 1));
}

/// Reads the live files of the machine running the tests.
#[test]
fn live_snapshot() {
    let a = SystemSnapshot::take().unwrap();
    let b = SystemSnapshot::take().unwrap();
    assert!(!a.stat.per_cpu.is_empty());
    assert!(!a.interrupts.cpus.is_empty());
    assert!(a.softirqs.get("NET_RX").is_some());
    assert!(a.interrupts.matches("LOC") || cfg!(not(target_arch = "x86_64")));
    let d = a.delta(&b, Some("no-such-device-name"));
    assert!(!d.irq_filter_matched);
    assert_eq!(d.interrupts, 0);
    assert!(d.cpu_per_cpu.iter().all(|(n, _)| n.starts_with("cpu")));
    let net = NetDevSnapshot::read().unwrap();
    assert!(net.get("lo").is_some());
}
